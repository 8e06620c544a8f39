"""Benchmark: a full UPOS probing sweep (every layer) of one model, timed by stage.

Runs :func:`probing.probes.probe_layers` for ``--task`` on ``--dataset`` with the CLI's
defaults (2,000 training sentences, full dev and test split, 20k training words per fit,
control task, scalar mix, 1,000 bootstrap draws) against an EMPTY feature cache, so that
extraction is really measured, and reports:

- extraction wall and CPU time, words encoded and words per second;
- probe-fitting wall and CPU time (all linear probes, control probes, baselines, scalar mix);
- peak resident memory of the process (``ru_maxrss``);
- the machine's load average before and after (other jobs share the CPUs).

Prints a markdown table row for ``docs/benchmarks.md`` (``--append FILE`` adds it there) and
a JSON record (``--json FILE``).

    OMP_WAIT_POLICY=PASSIVE python -m bench.probe_sweep --model minilm-l6

``--max-train-sentences 0 --max-train-words 0`` uses every training word (204,577 for UD
EWT); ``--warm`` runs the sweep a second time on the now-filled cache (warm time, same
process: peak RSS then covers both); ``--dtype bfloat16`` extracts with bf16 autocast;
``--threads`` sets torch's intra-op threads (default 2, the machine's cores).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from probing.probes.linear import LinearProbe
    from probing.probes.results import ProbeResults

HEADER = (
    "| date | machine | model | task | layers | train sents / fit words | test words | "
    "extract s (cpu s) | words/s | fit s (cpu s) | total s | peak RSS | load avg | notes |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def machine() -> str:
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    try:
        import torch

        gpu = "GPU" if torch.cuda.is_available() else "no GPU"
    except ImportError:  # pragma: no cover
        gpu = "?"
    return f"{os.cpu_count()} cores, {mem_gib:.0f} GiB, {gpu} ({platform.machine()})"


class RssTracer:
    """Samples the process's resident memory every 0.1 s and keeps the highest reading with
    the sweep stage it happened in (``stage`` is set from the progress callback)."""

    def __init__(self) -> None:
        import threading

        self.stage, self.peak = "start", (0, "start")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            rss = _rss_mib()
            if rss > self.peak[0]:
                self.peak = (rss, self.stage)

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        return {"rss_mib": self.peak[0], "stage": self.peak[1]}


def _rss_mib() -> int:
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 2**20
    except OSError:  # not Linux: the tracer reports 0
        return 0


def main(argv: list[str] | None = None) -> int:
    from probing.probes.run import DEFAULT_MAX_TRAIN_SENTENCES, DEFAULT_MAX_TRAIN_WORDS

    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--model", default="minilm-l6")
    p.add_argument("--task", default="pos")
    p.add_argument("--dataset", default="ud-ewt")
    p.add_argument("--max-train-sentences", type=int, default=DEFAULT_MAX_TRAIN_SENTENCES)
    p.add_argument("--max-train-words", type=int, default=DEFAULT_MAX_TRAIN_WORDS)
    p.add_argument(
        "--cache-dir",
        help="feature cache to fill (must be empty to measure extraction; default: a new "
        "temporary folder, removed afterwards)",
    )
    p.add_argument("--append", help="append the markdown row to this file")
    p.add_argument("--json", help="write the measurements as JSON here")
    p.add_argument("--note", default="", help="free text for the notes column")
    p.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    p.add_argument("--dtype", default="float32", help="float32, bfloat16 or auto")
    p.add_argument("--warm", action="store_true", help="also time a second, warm-cache run")
    p.add_argument("--n-boot", type=int, default=1000)
    p.add_argument("--table", help="write the run's full results table (CSV) here")
    p.add_argument(
        "--plain-fits",
        action="store_true",
        help="fit the linear probes as before issue 28: no whitening, no warm start across "
        "layers (evaluation counts before/after)",
    )
    args = p.parse_args(argv)
    if args.plain_fits:
        _plain_fits()
    # 0 means no cap.
    args.max_train_sentences = args.max_train_sentences or None
    args.max_train_words = args.max_train_words or None
    import torch

    torch.set_num_threads(args.threads)

    tmp = None
    if args.cache_dir:
        os.environ["CONTEXTLENS_CACHE_DIR"] = str(Path(args.cache_dir).resolve())
    else:
        tmp = tempfile.TemporaryDirectory(prefix="cl-bench-")
        os.environ["CONTEXTLENS_CACHE_DIR"] = tmp.name
    from probing.features import features_dir

    if features_dir().exists() and any(features_dir().iterdir()):
        print(
            f"warning: {features_dir()} is not empty; extraction may be a cache hit",
            file=sys.stderr,
        )

    load_before = os.getloadavg()
    t0 = time.perf_counter()
    from probing.models.registry import load_encoder

    encoder = load_encoder(args.model, dtype=args.dtype)
    t_load = time.perf_counter() - t0

    cpu_marks: dict[str, float] = {}
    tracer = RssTracer()

    def progress(stage: str, done: int, total: int) -> None:
        # The first "fit" call marks the end of extraction: CPU time split at that moment.
        if stage == "fit" and "fit_start" not in cpu_marks:
            cpu_marks["fit_start"] = time.process_time()
        tracer.stage = f"cold {stage} {done}/{total}"

    from probing.probes.linear import evaluation_count
    from probing.probes.run import probe_layers

    evals0 = evaluation_count()
    cpu0 = time.process_time()
    results = probe_layers(
        encoder,
        args.task,
        args.dataset,
        progress=progress,
        max_train_sentences=args.max_train_sentences,
        max_train_words=args.max_train_words,
        n_boot=args.n_boot,
    )
    cpu_end = time.process_time()
    evaluations = evaluation_count() - evals0
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    warm = None
    if args.warm:
        t_w, cpu_w = time.perf_counter(), time.process_time()

        def warm_progress(stage: str, done: int, total: int) -> None:
            tracer.stage = f"warm {stage} {done}/{total}"

        again = probe_layers(
            encoder,
            args.task,
            args.dataset,
            max_train_sentences=args.max_train_sentences,
            max_train_words=args.max_train_words,
            n_boot=args.n_boot,
            progress=warm_progress,
        )
        warm = {
            "warm_total_s": round(time.perf_counter() - t_w, 1),
            "warm_cpu_s": round(time.process_time() - cpu_w, 1),
            "warm_extract_s": again.meta.timing_s["extract"],
            "warm_fit_s": again.meta.timing_s["fit"],
            "peak_rss_mib_after_warm": round(
                resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            ),
        }
    load_after = os.getloadavg()
    meta = results.meta
    extract_s, fit_s = meta.timing_s["extract"], meta.timing_s["fit"]
    words = meta.n_words_encoded
    best = results.layer_scores().sort_values("value").iloc[-1]
    record = {
        "date": date.today().isoformat(),
        "machine": machine(),
        "model": args.model,
        "task": f"{args.task} ({args.dataset})",
        "layers": len(meta.layers),
        "train_sentences": meta.n_train_sentences,
        "fit_words": meta.n_train_words,
        "test_words": meta.n_test_words,
        "words_encoded": words,
        "model_load_s": round(t_load, 1),
        "extract_s": extract_s,
        "extract_cpu_s": round(cpu_marks.get("fit_start", cpu_end) - cpu0, 1),
        "words_per_s": round(words / extract_s) if extract_s else None,
        "fit_s": fit_s,
        "fit_cpu_s": round(cpu_end - cpu_marks.get("fit_start", cpu_end), 1),
        "total_s": round(extract_s + fit_s, 1),
        "peak_rss_mib": round(peak_mib),
        "load_avg_before": [round(x, 1) for x in load_before],
        "load_avg_after": [round(x, 1) for x in load_after],
        "best_layer": int(best["layer"]),
        "best_accuracy": round(float(best["value"]), 4),
        "torch_threads": _torch_threads(),
        "probe_evaluations": evaluations,
        "plain_fits": args.plain_fits,
        "layer_accuracy": {
            int(r["layer"]): round(float(r["value"]), 6)
            for _, r in results.layer_scores().iterrows()
            if r["probe"] == "linear"
        },
        "dtype": encoder.dtype,
        **(warm or {}),
        "peak_rss_stage": tracer.stop(),
        "note": args.note,
    }
    row = (
        f"| {record['date']} | {record['machine']} | {args.model} | {record['task']} | "
        f"{record['layers']} | {record['train_sentences']} / {record['fit_words']} | "
        f"{record['test_words']} | {extract_s:.0f} ({record['extract_cpu_s']:.0f}) | "
        f"{record['words_per_s']} | {fit_s:.0f} ({record['fit_cpu_s']:.0f}) | "
        f"{record['total_s']:.0f} | {record['peak_rss_mib']} MiB | "
        f"{load_before[0]:.1f} → {load_after[0]:.1f} | "
        f"{words} words encoded; best layer {record['best_layer']} "
        f"({record['best_accuracy']:.3f}). {args.note} |"
    )
    print(HEADER)
    print(row)
    print(json.dumps(record, indent=1))
    if warm:
        print(
            f"cold: extract {extract_s:.0f} s + fit {fit_s:.0f} s; warm: {warm['warm_total_s']} s "
            f"(fit {warm['warm_fit_s']} s); peak RSS {record['peak_rss_mib']} MiB cold, "
            f"{warm['peak_rss_mib_after_warm']} MiB after warm"
        )
    _write(args, row, record, results)
    if tmp is not None:
        tmp.cleanup()
    return 0


def _write(args: argparse.Namespace, row: str, record: dict, results: ProbeResults) -> None:
    """The markdown row, the run's table and the JSON record, where asked for."""
    if args.append:
        with open(args.append, "a", encoding="utf-8") as f:
            f.write(row + "\n")
    if args.table:
        results.table.to_csv(args.table, index=False)
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def _plain_fits() -> None:
    """Linear probes fitted as before issue 28 (the 'before' of the evaluation count)."""
    from probing.probes.linear import LinearProbe

    fit = LinearProbe._fit

    def plain(self: LinearProbe, *args: Any, **kwargs: Any) -> LinearProbe:  # Any: as _fit takes
        self.whiten, self.init = False, None
        return fit(self, *args, **kwargs)

    LinearProbe._fit = plain


def _torch_threads() -> int | None:
    try:
        import torch

        return torch.get_num_threads()
    except ImportError:  # pragma: no cover
        return None


if __name__ == "__main__":
    sys.exit(main())
