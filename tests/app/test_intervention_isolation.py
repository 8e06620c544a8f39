"""Interventions put hooks on a model; the shared demo serves many sessions from one model."""

from __future__ import annotations


def test_interventions_hook_a_private_copy_not_the_model_other_sessions_read():
    """A hook from one session's intervention must not reach another session's fill-mask
    running at the same moment on the shared model (head toggles held on while it runs)."""
    from probing.analyses.fill_mask import fill_mask
    from probing.interventions.sentence import heads_off
    from ui import common

    name, text = "minilm-l6-mlm", "The capital of France is [MASK]."
    shared = common.load_model(name)
    clean = [c.probability for c in fill_mask(shared, text, top_k=5)[0].candidates]
    every_head = [(layer, h) for layer in range(1, 7) for h in range(12)]
    with common.intervention_encoder(name) as private:
        assert private is not shared
        with heads_off(private, every_head)(None):
            during = [c.probability for c in fill_mask(shared, text, top_k=5)[0].candidates]
            hooked = [c.probability for c in fill_mask(private, text, top_k=5)[0].candidates]
    assert during == clean  # the shared model is untouched
    assert hooked != clean  # the hook is real: with every head off the guesses change
