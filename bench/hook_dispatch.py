"""What the call-local hook dispatchers cost a plain forward pass (probing/encoders/call_hooks).

Every hookable module of a loaded encoder carries two permanent dispatchers, so that an
intervention's hooks belong to its call and never to the shared model. A pass with no
intervention active pays a ContextVar lookup per hooked module (and torch's slower module
call path). Measured here against the same weights with no hooks at all, alternating the
two in rounds (the plain code a user would write: ``model(**inputs)``):

    python bench/hook_dispatch.py --rounds 30

Run it alone (other jobs triple timings); one torch thread.
"""

from __future__ import annotations

import argparse
import copy
import json
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="minilm-l6-mlm")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--sentences", type=int, default=32)
    args = ap.parse_args(argv)

    import torch

    import probing
    from probing.datasets import read_sentences

    torch.set_num_threads(1)
    encoder = probing.load_encoder(args.model)
    hooked = encoder.model
    plain = copy.deepcopy(hooked)
    for m in plain.modules():
        m._forward_hooks.clear()
        m._forward_pre_hooks.clear()
    n_dispatch = sum(len(m._forward_hooks) for m in hooked.modules())
    words = [s.words for s in read_sentences("ud-ewt", "dev")][: args.sentences]
    enc = encoder.tokenizer(words, is_split_into_words=True, padding=True, return_tensors="pt")
    inputs = {k: enc[k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc}
    times: dict[str, list[float]] = {"dispatchers": [], "plain": []}
    with torch.inference_mode():
        for model in (hooked, plain):  # warm-up
            model(**inputs)
        for _ in range(args.rounds):
            for name, model in (("dispatchers", hooked), ("plain", plain)):
                t0 = time.perf_counter()
                model(**inputs)
                times[name].append(time.perf_counter() - t0)
        same = torch.equal(hooked(**inputs).last_hidden_state, plain(**inputs).last_hidden_state)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(
        json.dumps(
            {
                "model": args.model,
                "batch": list(inputs["input_ids"].shape),
                "modules_with_dispatchers": n_dispatch,
                "median_s": {k: round(v, 4) for k, v in med.items()},
                "ratio_dispatchers_to_plain": round(med["dispatchers"] / med["plain"], 3),
                "outputs_identical": same,
                "machine": platform.processor() or platform.machine(),
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
