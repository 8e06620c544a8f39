"""Benchmark: feature extraction against plain Hugging Face loops and the matmul ceiling.

In one process, interleaved round by round (so a busy machine slows every method alike and
the *ratios* stay meaningful), on the same sentences (a seeded sample of UD EWT train):

- ``encode``: the project's public ``Encoder.encode()`` (piece-sorted, token budget);
- ``features``: the feature path (``features_of_sentences``: encode + pooling + float16);
- ``encode_bf16`` / ``features_bf16``: the same with ``dtype="bfloat16"`` autocast;
- ``old_encode`` / ``old_features``: the batching before issue 13 (input order, 16 per
  batch; sorted by *word* count, 32 per batch) run through today's per-batch code;
- ``before_encode`` / ``before_features`` (with ``--before REV``): the code of commit REV
  itself, exported with ``git archive`` and run in a worker process that stays loaded
  (``bench/before_worker.py``), interleaved like the rest; with REV = the commit before
  issue 13's changes (b55f790) this is the "x less CPU than today" ratio the issue means;
- ``hf_naive``: one sentence per forward pass (tokenizer + model, hidden states);
- ``hf_batched``: a well-batched HF loop (piece-sorted, same token budget, padded).

Each method's CPU time (``process_time``: all threads) and wall time, median over rounds;
words/s; CPU time relative to ``hf_batched``; padded positions per real piece; achieved
GFLOP/s per busy core against the measured fp32 and bf16 matmul ceilings (``torch.mm``,
2048², one thread). Prints a compact table and writes ``--json``.

    OMP_WAIT_POLICY=PASSIVE python -m bench.extract --sentences 300 --rounds 3 --threads 2 \
        --before b55f790
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from probing.datasets import Sentence
    from probing.encoders.base import Encoder
    from probing.encoders.bert import TransformersEncoder

DEFAULT_JSON = "bench/out/extract.json"  # git-ignored


def matmul_ceiling(dtype_name: str, n: int = 2048, seconds: float = 1.5) -> float:
    """GFLOP/s of ``torch.mm`` on n x n matrices with the current thread setting."""
    import torch

    dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype_name]
    a = torch.randn(n, n).to(dtype)
    b = torch.randn(n, n).to(dtype)
    torch.mm(a, b)  # warm-up (oneDNN/AMX kernels are set up on first use)
    reps, cpu0 = 0, time.process_time()
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        torch.mm(a, b)
        reps += 1
    cpu = time.process_time() - cpu0
    return 2 * n**3 * reps / cpu / 1e9  # per busy core-second


def forward_flops(
    encoder: TransformersEncoder, counts: Sequence[int], plan: Sequence[np.ndarray]
) -> float:
    """Forward FLOPs of a BERT-style encoder over a batch plan, padding included: per
    position and layer the dense products (4 d² attention projections + 2 d·ff feed-forward)
    and the attention scores and mixing (2 T d each, T = the batch's padded length)."""
    cfg = encoder.model.config
    d, ff, n_layers = cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers
    total = 0.0
    for idx in plan:
        t = max(counts[i] for i in idx)
        total += len(idx) * t * n_layers * 2 * (4 * d * d + 2 * d * ff + 2 * t * d)
    return total


def sample_indices(n: int, seed: int = 0) -> list[int]:
    """Sorted indices of a seeded sample of ``n`` UD EWT training sentences."""
    from probing.features import read_sentences

    total = len(read_sentences("ud-ewt", "train"))
    idx = np.random.default_rng(seed).choice(total, size=min(n, total), replace=False)
    return [int(i) for i in np.sort(idx)]


def sample_sentences(n: int, seed: int = 0) -> list:
    from probing.features import read_sentences

    sents = read_sentences("ud-ewt", "train")
    return [sents[i] for i in sample_indices(n, seed)]


class BeforeWorker:
    """An older commit's code in its own process (``bench/before_worker.py``), asked to run
    its ``encode`` or feature path on the same sentences; answers (cpu s, wall s)."""

    def __init__(self, rev: str, model: str, threads: int, indices: list[int]) -> None:
        root = Path(__file__).resolve().parent.parent
        self._tmp = tempfile.TemporaryDirectory(prefix="cl-before-")
        archive = subprocess.run(
            ["git", "-C", str(root), "archive", rev], check=True, capture_output=True
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(self._tmp.name, filter="data")
        env = {**os.environ, "PYTHONPATH": self._tmp.name}
        spec = json.dumps({"model": model, "threads": threads, "indices": indices})
        self._proc = subprocess.Popen(
            [sys.executable, str(root / "bench" / "before_worker.py"), spec],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=self._tmp.name,
            env=env,
        )
        ready = json.loads(self._proc.stdout.readline() or "{}")
        if not ready.get("ready"):
            raise RuntimeError(f"the worker for {rev} did not start")
        self.words = int(ready["words"])

    def run(self, name: str) -> tuple[float, float]:
        self._proc.stdin.write(name + "\n")
        self._proc.stdin.flush()
        out = json.loads(self._proc.stdout.readline())
        return out["cpu_s"], out["wall_s"]

    def close(self) -> None:
        self._proc.stdin.close()
        self._proc.wait(timeout=60)
        self._tmp.cleanup()


def methods(encoder: Encoder, sentences: Sequence[Sentence]) -> dict:  # one closure per method
    """name -> (callable, padded positions it computes or None)."""
    from probing.encoders import batching
    from probing.features import features_of_sentences

    words = [list(s.words) for s in sentences]
    bf16 = encoder.with_dtype("bfloat16")
    counts = encoder.piece_counts(words)
    out = {
        "encode": (lambda: encoder.encode(words), batching.plan_batches(counts)),
        "features": (
            lambda: features_of_sentences(encoder, sentences, "upos"),
            batching.plan_batches(counts),
        ),
        "encode_bf16": (lambda: bf16.encode(words), batching.plan_batches(counts)),
        "features_bf16": (
            lambda: features_of_sentences(bf16, sentences, "upos"),
            batching.plan_batches(counts),
        ),
    }
    in_order = [np.arange(s, min(s + 16, len(words))) for s in range(0, len(words), 16)]
    by_words = batching.plan_batches([len(w) for w in words], batch_size=32, max_tokens=None)

    def old(plan: Sequence[np.ndarray]) -> Callable[[], None]:
        def run() -> None:
            for idx in plan:
                encoder._encode_batch([words[i] for i in idx], "first", False, True)

        return run

    out["old_encode"] = (old(in_order), in_order)
    out["old_features"] = (old(by_words), by_words)
    if getattr(encoder.info, "family", "") != "bert":
        return out

    import torch

    tok, model = encoder.tokenizer, encoder.model

    @torch.inference_mode()
    def hf(plan: Sequence[np.ndarray]) -> None:
        for idx in plan:
            enc = tok(
                [words[i] for i in idx],
                is_split_into_words=True,
                padding=True,
                truncation=True,
                return_tensors="pt",
            )
            model(**enc, output_hidden_states=True)

    single = [np.array([i]) for i in range(len(words))]
    out["hf_naive"] = (lambda: hf(single), single)
    sorted_plan = batching.plan_batches(counts)
    out["hf_batched"] = (lambda: hf(sorted_plan), sorted_plan)
    return out


def time_methods(table: dict, rounds: int) -> dict[str, list[tuple[float, float]]]:
    """(cpu s, wall s) of every method in every round, rounds interleaved."""
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in table}
    for _ in range(rounds):
        for name, (fn, _) in table.items():
            c0, t0 = time.process_time(), time.perf_counter()
            timed = fn()  # a worker's method answers with its own process's times
            mine = (time.process_time() - c0, time.perf_counter() - t0)
            times[name].append(timed if isinstance(timed, tuple) else mine)
    return times


def add_less_than_today(rows: dict[str, dict]) -> None:
    """``cpu_less_than_<old>`` on each new method: the old method's CPU over the new one's."""
    for today in ("old", "before"):
        for kind in ("encode", "features"):
            for new in (kind, f"{kind}_bf16"):
                if f"{today}_{kind}" in rows and new in rows:
                    ratio = rows[f"{today}_{kind}"]["cpu_s"] / rows[new]["cpu_s"]
                    rows[new][f"cpu_less_than_{today}_{kind}"] = round(ratio, 2)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--model", default="minilm-l6")
    p.add_argument("--sentences", type=int, default=300, help="UD EWT train sentences")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (median kept)")
    p.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    p.add_argument("--only", nargs="*", help="methods to run (default: all)")
    p.add_argument(
        "--before",
        metavar="REV",
        help="also time commit REV's own encode() and feature path (b55f790: before issue 13)",
    )
    p.add_argument("--json", default=DEFAULT_JSON, help="where to write the record")
    p.add_argument("--note", default="")
    args = p.parse_args(argv)

    import torch

    from probing.encoders import batching
    from probing.models.registry import load_encoder

    torch.set_num_threads(args.threads)
    load_before = os.getloadavg()
    torch.set_num_threads(1)
    ceilings = {d: round(matmul_ceiling(d), 1) for d in ("float32", "bfloat16")}
    torch.set_num_threads(args.threads)
    encoder = load_encoder(args.model)
    sentences = sample_sentences(args.sentences)
    n_words = sum(len(s.words) for s in sentences)
    table = methods(encoder, sentences)
    worker = None
    if args.before:
        worker = BeforeWorker(args.before, args.model, args.threads, sample_indices(args.sentences))
        if worker.words != sum(len(s.words) for s in sentences):
            raise SystemExit(f"{args.before} reads different sentences; ratios would mislead")
        table["before_encode"] = (lambda: worker.run("encode"), table["old_encode"][1])
        table["before_features"] = (lambda: worker.run("features"), table["old_features"][1])
    if args.only:
        table = {k: v for k, v in table.items() if k in args.only}
    counts = encoder.piece_counts([list(s.words) for s in sentences])
    real = sum(counts)

    # Warm-up: first calls allocate and pick kernels.
    encoder.encode([list(s.words) for s in sentences[:8]])
    encoder.with_dtype("bfloat16").encode([list(s.words) for s in sentences[:8]])

    times = time_methods(table, args.rounds)
    if worker is not None:
        worker.close()

    ref = "hf_batched" if "hf_batched" in times else "features"
    ref_cpu = statistics.median(c for c, _ in times[ref])
    family = getattr(encoder.info, "family", "")
    rows = {}
    for name, (_, plan) in table.items():
        cpu = statistics.median(c for c, _ in times[name])
        wall = statistics.median(w for _, w in times[name])
        padded = batching.padded_positions(counts, plan)
        row = {
            "cpu_s": round(cpu, 3),
            "wall_s": round(wall, 3),
            "words_per_s": round(n_words / wall),
            "words_per_cpu_s": round(n_words / cpu),
            f"cpu_vs_{ref}": round(cpu / ref_cpu, 2),
            "padded_per_piece": round(padded / real, 3),
        }
        if family == "bert":
            gflops = forward_flops(encoder, counts, plan) / 1e9
            ceiling = ceilings["bfloat16" if "bf16" in name else "float32"]
            row["gflop_per_cpu_s"] = round(gflops / cpu, 1)
            row["fraction_of_ceiling"] = round(gflops / cpu / ceiling, 3)
        rows[name] = row
    add_less_than_today(rows)

    record = {
        "when": datetime.now(UTC).isoformat(timespec="minutes"),
        "cpu": _cpu_name(),
        "fast_bf16": batching.cpu_has_fast_bf16(),
        "model": args.model,
        "sentences": len(sentences),
        "words": n_words,
        "pieces": real,
        "threads": args.threads,
        "rounds": args.rounds,
        "matmul_ceiling_gflops_per_core": ceilings,
        "load_avg_before": [round(x, 1) for x in load_before],
        "load_avg_after": [round(x, 1) for x in os.getloadavg()],
        "methods": rows,
        "before": args.before,
        "note": args.note,
    }
    print(
        f"{args.model}: {len(sentences)} sentences, {n_words} words, {real} pieces; "
        f"{args.threads} threads; load {load_before[0]:.1f} -> {os.getloadavg()[0]:.1f}; "
        f"matmul ceiling per core: fp32 {ceilings['float32']} GFLOP/s, bf16 {ceilings['bfloat16']}"
    )
    print(
        f"{'method':15} {'cpu s':>8} {'wall s':>8} {'words/s':>8} {'cpu/' + ref:>16} "
        f"{'pad':>6} {'GFLOP/cpu-s':>11} {'of ceiling':>10}"
    )
    for name, r in rows.items():
        print(
            f"{name:15} {r['cpu_s']:8.2f} {r['wall_s']:8.2f} {r['words_per_s']:8d} "
            f"{r[f'cpu_vs_{ref}']:16.2f} {r['padded_per_piece']:6.2f} "
            f"{r.get('gflop_per_cpu_s', float('nan')):11.1f} "
            f"{r.get('fraction_of_ceiling', float('nan')):10.1%}"
        )
    for name, r in rows.items():
        for k, v in r.items():
            if k.startswith("cpu_less_than_"):
                print(f"{name}: {v:.2f}x less CPU than {k.removeprefix('cpu_less_than_')}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.json}")
    return 0


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


if __name__ == "__main__":
    sys.exit(main())
