"""The 80/10/10 corruption recipe: predictions come from the same head as fill-mask."""

from __future__ import annotations

import pytest
import torch

from probing.analyses.fill_mask import fill_mask
from probing.analyses.mlm_corruption import corrupt_and_predict, random_word_id
from probing.errors import MultiPieceTargetError, NoMLMHeadError, TargetNotFoundError

TEXT = "The doctor picked up her bag and left the room."


@pytest.fixture(scope="module")
def mlm():
    import probing

    return probing.load_encoder("minilm-l6-mlm")


def _direct_probs(encoder, text: str, word: str) -> torch.Tensor:
    """The MLM's own distribution at ``word``'s piece in ``text``, by a plain forward."""
    batch = encoder.tokenizer(text, return_tensors="pt")
    ids = batch["input_ids"][0].tolist()
    pos = ids.index(encoder.tokenizer.convert_tokens_to_ids(word))
    with torch.inference_mode():
        return torch.softmax(encoder.mlm(**batch).logits[0, pos], dim=-1)


def test_mask_mode_is_fill_mask(mlm):
    res = corrupt_and_predict(mlm, TEXT, "bag", "mask", top_k=5)
    (ref,) = fill_mask(mlm, TEXT.replace("bag", "[MASK]"), top_k=5)
    assert res.shown == "[MASK]"
    assert res.prediction.tokens == ref.tokens
    assert res.prediction.probabilities == pytest.approx(ref.probabilities, abs=1e-6)


def test_kept_target_is_the_head_at_an_unmasked_position(mlm):
    res = corrupt_and_predict(mlm, TEXT, "bag", "keep", top_k=5)
    probs = _direct_probs(mlm, TEXT, "bag")
    top_p, top_i = probs.topk(5)
    assert res.shown == "bag"
    assert res.prediction.token_ids == top_i.tolist()
    assert res.prediction.probabilities == pytest.approx(top_p.tolist(), abs=1e-5)
    masked = corrupt_and_predict(mlm, TEXT, "bag", "mask")
    # seeing the word makes it far more probable than guessing it behind [MASK]
    assert res.target_probability > masked.target_probability
    assert res.target_rank < masked.target_rank


def test_random_word_is_the_head_at_that_word(mlm):
    res = corrupt_and_predict(mlm, TEXT, "bag", "random", top_k=5, seed=3)
    again = corrupt_and_predict(mlm, TEXT, "bag", "random", top_k=5, seed=3)
    assert res.shown == again.shown and res.shown != "bag"
    assert res.shown.isalpha() and not res.shown.startswith("##")
    probs = _direct_probs(mlm, TEXT.replace("bag", res.shown), res.shown)
    assert res.prediction.probabilities == pytest.approx(probs.topk(5).values.tolist(), abs=1e-5)
    chosen = corrupt_and_predict(mlm, TEXT, "bag", "random", replacement="cat", top_k=5)
    assert chosen.shown == "cat"
    assert chosen.prediction.probabilities == pytest.approx(
        _direct_probs(mlm, TEXT.replace("bag", "cat"), "cat").topk(5).values.tolist(), abs=1e-5
    )
    assert random_word_id(mlm, 3) == random_word_id(mlm, 3)


def test_errors(mlm, minilm):
    with pytest.raises(TargetNotFoundError):
        corrupt_and_predict(mlm, TEXT, "suitcase", "keep")
    with pytest.raises(MultiPieceTargetError):
        corrupt_and_predict(mlm, "The otorhinolaryngologist left.", "otorhinolaryngologist", "keep")
    with pytest.raises(NoMLMHeadError):
        corrupt_and_predict(minilm, TEXT, "bag", "keep")
    with pytest.raises(ValueError, match="mode"):
        corrupt_and_predict(mlm, TEXT, "bag", "swap")


def test_shown_tokens_go_only_where_the_masks_are(mlm):
    from probing.analyses.fill_mask import prepare

    masked = prepare(mlm, "The doctor picked up her [MASK] and left.")
    pos = masked.mask_positions[0]
    bag = mlm.vocabulary()["bag"]
    kept = mlm.mask_logits(masked.tokenized, shown={pos: bag})
    assert torch.allclose(
        kept[0].softmax(-1),
        _direct_probs(mlm, "The doctor picked up her bag and left.", "bag"),
        atol=1e-5,
    )
    with pytest.raises(ValueError, match="not mask positions"):
        mlm.mask_logits(masked.tokenized, shown={pos - 1: bag})
    assert not set(mlm.vocabulary().values()) & set(mlm.tokenizer.all_special_ids)
