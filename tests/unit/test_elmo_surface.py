"""ELMo's model surface (probing.encoders.elmo_surface) on the embedded elmo-mini: the re-run
equals the biLM itself, a layer's hook replaces what the layers above read, the two
directions stay apart (the forward LM never reads the right context), and its softmax
read as next-word LMs agrees with the biLM's own outputs."""

from __future__ import annotations

import pytest
import torch

from probing.encoders.elmo_surface import ElmoParts
from probing.errors import UnsupportedArchitectureError
from probing.interventions.hooks import recorded_hidden, replaced_hidden

SENTENCES = [
    ["The", "dog", "barked", "at", "the", "postman", "."],
    ["Prices", "rose", "sharply"],
]


@pytest.fixture(scope="module")
def elmo():
    from probing.models.registry import load_encoder

    return load_encoder("elmo-mini")


@pytest.fixture(scope="module")
def parts(elmo) -> ElmoParts:
    return elmo.layer_parts()


def test_the_surface_is_declared_in_the_info_and_handed_out_once(elmo, parts):
    info = elmo.info
    assert info.has_layer_hooks and info.lm_directions == ("forward", "backward")
    assert elmo.layer_parts() is parts
    assert parts.n_layers == info.n_contextual_layers == 2 and parts.n_heads == 0
    assert 2 * parts.dim == info.dim
    with pytest.raises(UnsupportedArchitectureError, match="LSTM.*no attention heads"):
        parts.head_input_pre_hook(0, lambda *_: None)


@torch.inference_mode()
def test_the_rerun_equals_the_bilm_bit_for_bit_and_hooks_see_each_layer(elmo, parts):
    ids = parts.char_ids(SENTENCES)
    want = elmo.model(ids).layers()  # (L+1, B, T, 2P)
    states, mask = parts.run(ids)
    got = torch.stack([torch.cat(fb, dim=-1) for fb in states])
    assert torch.equal(got, want) and mask.sum().item() == sum(len(s) + 2 for s in SENTENCES)
    with recorded_hidden(parts) as seen:
        parts.run(ids)
    assert torch.equal(torch.stack(seen), want)
    with recorded_hidden(parts) as forward:
        parts.run(ids, forward_only=True)
    P = parts.dim
    assert torch.equal(torch.stack(forward), want[..., :P])  # the forward half only
    for layer in range(parts.n_layers + 1):  # a no-op replacement changes nothing
        with replaced_hidden(parts, layer, lambda h: h.clone()), recorded_hidden(parts) as same:
            parts.run(ids)
        assert torch.equal(torch.stack(same), want), layer


@torch.inference_mode()
def test_the_directions_stay_apart_and_the_forward_lm_reads_left_context_only(elmo, parts):
    ids = parts.char_ids(SENTENCES)
    clean, _ = parts.run(ids)
    P = parts.dim
    for layer in range(parts.n_layers):
        # Zero the backward half of layer ``layer``: the forward stack above is untouched,
        # the backward stack above changes (and the other way round).
        for half, kept, changed in ((slice(P, None), 0, 1), (slice(None, P), 1, 0)):

            def zero(h: torch.Tensor, half: slice = half) -> torch.Tensor:
                h = h.clone()
                h[..., half] = 0
                return h

            with replaced_hidden(parts, layer, zero):
                out, _ = parts.run(ids)
            for above in range(layer + 1, parts.n_layers + 1):
                assert torch.equal(out[above][kept], clean[above][kept]), (layer, half)
                assert not torch.allclose(out[above][changed], clean[above][changed])
    # Another continuation after word 2: the forward states up to it are the same.
    other = parts.char_ids([[*SENTENCES[0][:3], "loudly", "every", "night", "!"]])
    alt, _ = parts.run(other, forward_only=True)
    for layer in range(parts.n_layers + 1):
        torch.testing.assert_close(alt[layer][0][0, :4], clean[layer][0][0, :4], rtol=0, atol=0)
        assert alt[layer][1] is None


@torch.inference_mode()
def test_the_next_word_lms_are_the_softmax_on_the_shifted_top_layer(elmo, parts):
    ids = parts.char_ids(SENTENCES[:1])
    out = elmo.model(ids)
    states, _ = parts.run(ids)
    sm = parts.lm()
    n = len(SENTENCES[0])
    rows, cols = torch.zeros(n, dtype=torch.long), torch.arange(1, n + 1)
    targets = torch.tensor([sm.word_id(w) for w in SENTENCES[0]])
    fwd = parts.next_word_log_probs(states, rows, cols, "forward")
    bwd = parts.next_word_log_probs(states, rows, cols, "backward")
    want_f = sm.target_log_prob(out.forward[-1][0, :n], targets)  # word i from position i
    want_b = sm.target_log_prob(out.backward[-1][0, 2 : n + 2], targets)  # from i + 2
    torch.testing.assert_close(fwd.gather(1, targets[:, None]).squeeze(1), want_f)
    torch.testing.assert_close(bwd.gather(1, targets[:, None]).squeeze(1), want_b)
    forward_only, _ = parts.run(ids, forward_only=True)
    with pytest.raises(ValueError, match="backward"):
        parts.next_word_log_probs(forward_only, rows, cols, "backward")
