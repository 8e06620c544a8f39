"""Interventions put hooks on a model; the shared demo serves many sessions from one model.

Two threads share one loaded model, as two sessions of the app do: one runs every analysis
that hooks in a loop (heads off, erasure, later layers recomputed, patching, value norms, clean-state
recording, head importance by gradient); the other runs fill-mask, the fill-mask lens, the
probe lens's encoding and value norms. The second thread's outputs must equal a quiet run's bit for bit.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

import numpy as np
import pytest
import torch

if TYPE_CHECKING:
    from probing.encoders.bert import TransformersMaskedLM

TEXTS = [
    f"The {w} of the old house [MASK] on the table."
    for w in ("keys", "key", "book", "books", "cat", "cats", "door", "doors", "lamp", "lamps")
]
WORDS = ["The", "keys", "to", "the", "cabinet", "are", "on", "the", "table", "."]


def _reader_outputs(encoder: TransformersMaskedLM, i: int) -> list:
    """What the light pages compute, one round (texts rotate past the pass cache)."""
    from probing.analyses.fill_mask import fill_mask, fill_mask_by_layer

    text = TEXTS[i % len(TEXTS)]
    guesses = [(c.token, c.probability) for c in fill_mask(encoder, text, top_k=5)[0].candidates]
    lens = fill_mask_by_layer(encoder, text, top_k=3)
    layers = encoder.encode([WORDS])[0].layers.copy()  # the probe lens's input
    norms = encoder.value_norms(WORDS)
    return [guesses, repr(lens), layers, norms]


def _same(a: list, b: list) -> bool:
    return all(
        np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y
        for x, y in zip(a, b, strict=True)
    )


def _hooking_loop(
    encoder: TransformersMaskedLM, stop: threading.Event, errors: list, rounds: list
) -> None:
    """Every analysis that hooks the model, again and again, until ``stop``."""
    from probing.interventions.erasure import fit_leace_blocks
    from probing.interventions.heads import importance
    from probing.interventions.masked_words import masked_batches, score_clean
    from probing.interventions.patching import make_batches, patch_all_positions, user_pair
    from probing.interventions.recompute import layers_after
    from probing.interventions.sentence import erasing, fill_mask_under, heads_off

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, encoder.info.dim)).astype(np.float32)
    eraser = fit_leace_blocks(X, rng.integers(0, 3, 400), 1)
    every_head = [(layer, h) for layer in range(1, 7) for h in range(12)]
    pair = user_pair(
        "The key to the cabinets [MASK] here.",
        "The keys to the cabinet [MASK] here.",
        ("is", "are"),
    )
    batch = make_batches(encoder, pair)[0]
    held = masked_batches(encoder, [WORDS, WORDS[:6]], every=2)
    try:
        while not stop.is_set():
            fill_mask_under(encoder, TEXTS[0], heads_off(encoder, every_head))
            fill_mask_under(encoder, TEXTS[1], erasing(encoder, 3, eraser))
            layers_after(encoder, [WORDS], 2, eraser.torch_apply)
            patch_all_positions(encoder, batch, 4)
            encoder.value_norms(WORDS[:4])
            score_clean(encoder, held)  # records every block's call
            importance(encoder, held)  # head gates with gradients
            rounds.append(1)
    except Exception as exc:  # handed to the test
        errors.append(exc)


@pytest.mark.timeout(300)
def test_a_sessions_hooks_never_reach_another_session_on_the_same_model():
    import probing

    encoder = probing.load_encoder("minilm-l6-mlm")
    torch.set_num_threads(1)
    quiet = [_reader_outputs(encoder, i) for i in range(len(TEXTS))]
    stop, errors, rounds = threading.Event(), [], []
    hooker = threading.Thread(target=_hooking_loop, args=(encoder, stop, errors, rounds))
    hooker.start()
    try:
        busy = [_reader_outputs(encoder, i) for i in range(40)]
    finally:
        stop.set()
        hooker.join()
    assert not errors, errors
    assert len(rounds) >= 3  # the hooks really ran alongside (several full rounds)
    differing = [i for i, out in enumerate(busy) if not _same(out, quiet[i % len(TEXTS)])]
    assert differing == [], f"{len(differing)} of 40 answers changed under another's hooks"


def test_the_hooks_are_real_in_their_own_thread():
    """The same interventions do change the hooking thread's own answers."""
    import probing
    from probing.analyses.fill_mask import fill_mask
    from probing.interventions.sentence import fill_mask_under, heads_off

    encoder = probing.load_encoder("minilm-l6-mlm")
    text = "The capital of France is [MASK]."
    clean = [c.probability for c in fill_mask(encoder, text, top_k=5)[0].candidates]
    every_head = [(layer, h) for layer in range(1, 7) for h in range(12)]
    hooked = [p for _, p in fill_mask_under(encoder, text, heads_off(encoder, every_head))[0]]
    unhooked = [p for _, p in fill_mask_under(encoder, text)[0]]
    assert hooked != clean
    assert unhooked == pytest.approx(clean, abs=1e-6)
