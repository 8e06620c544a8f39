"""Times an older commit's ``encode()`` and feature path for ``bench/extract.py --before``.

Runs with an exported copy of that commit first on ``PYTHONPATH`` (so it may use only
APIs the old code has: ``load_encoder``, ``read_sentences``, ``Encoder.encode``,
``features_of_sentences``). The parent passes the model, thread count and sentence indices
as one JSON argument, then sends one method name per stdin line; each answer is one JSON
line with that run's CPU time (this process's threads) and wall time. The model stays
loaded between requests, so every timed run is warm, as the parent's own methods are.
"""

from __future__ import annotations

import json
import sys
import time


def main() -> int:
    spec = json.loads(sys.argv[1])
    import torch

    torch.set_num_threads(int(spec["threads"]))
    from probing.features import features_of_sentences, read_sentences
    from probing.models.registry import load_encoder

    encoder = load_encoder(spec["model"])
    everything = read_sentences("ud-ewt", "train")
    sentences = [everything[i] for i in spec["indices"]]
    words = [list(s.words) for s in sentences]
    runs = {
        "encode": lambda: encoder.encode(words),
        "features": lambda: features_of_sentences(encoder, sentences, "upos"),
    }
    encoder.encode(words[:8])  # the parent's warm-up
    print(json.dumps({"ready": True, "words": sum(len(w) for w in words)}), flush=True)
    for line in sys.stdin:
        name = line.strip()
        c0, t0 = time.process_time(), time.perf_counter()
        runs[name]()
        out = {"cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - t0}
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
