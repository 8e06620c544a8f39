"""Benchmark: extraction of whole splits into an empty feature cache, per compute dtype.

Each dtype gets its own empty cache folder, so every split is really encoded; prints wall and
CPU seconds and words, and writes ``bench/out/extract_full_split.json``.

    OMP_WAIT_POLICY=PASSIVE python -m bench.extract_splits --model minilm-l6 --dataset ud-ewt
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out" / "extract_full_split.json"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", default="minilm-l6")
    p.add_argument("--dataset", default="ud-ewt")
    p.add_argument("--dtypes", nargs="+", default=["bfloat16", "float32"])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--label", default="upos", help="the label field the splits are read with")
    args = p.parse_args(argv)

    import torch

    from probing.features import extract_features
    from probing.models.registry import load_encoder

    torch.set_num_threads(args.threads)
    out: dict = {"model": args.model, "dataset": args.dataset, "threads": args.threads}
    for dtype in args.dtypes:
        os.environ["CONTEXTLENS_CACHE_DIR"] = tempfile.mkdtemp(prefix="contextlens-bench-")
        encoder = load_encoder(args.model, dtype=dtype)
        t, c = time.perf_counter(), time.process_time()
        words = sum(
            extract_features(encoder, args.dataset, split, label=args.label).n_words
            for split in ("train", "dev", "test")
        )
        out[dtype] = {
            "wall_s": round(time.perf_counter() - t, 1),
            "cpu_s": round(time.process_time() - c, 1),
            "words": words,
        }
        print(dtype, out[dtype], flush=True)
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
