"""An SOP head trained with minilm-l6's top layers (the real embedded encoder): it separates a
handful of in-order and swapped pairs, only the tuned layers and the head change, the export
loads back into the hash-checked encoder with the same answers, and a killed run resumes to
the same weights."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest
import torch

from probing.errors import ModelUnavailableError
from probing.models.pair_heads import (
    MANIFEST_FILE,
    base_pretraining_model,
    load_pair_head,
    save_pair_head,
)
from probing.training.pair_heads_tuned import (
    cached_predictions,
    predict,
    train_tuned,
    weights_digest,
)
from probing.training.sentence_pairs import anchor_pairs, sample_anchors
from tests.library.test_pair_heads import DOCS


def _args(**kw) -> argparse.Namespace:
    d = dict(seed=0, tune_top_layers=2, layer_lr=1e-4, lr=1e-3, weight_decay=0.0, batch_size=6,
             epochs=2, max_steps=None, log_every=10**6, eval_every=10**6,
             checkpoint_minutes=60.0, fresh=True)  # fmt: skip
    return argparse.Namespace(**{**d, **kw})


def _sop_pairs():
    anchors = sample_anchors(DOCS, None, seed=0)
    return [p for a in anchors for p in anchor_pairs(a, DOCS, 0, ("next", "swapped"))]


def test_tuning_the_top_layers_separates_a_handful_of_pairs(tmp_path):
    pairs = _sop_pairs()
    assert len(pairs) == 18 and {p.label for p in pairs} == {0, 1}
    y = np.array([p.label for p in pairs])
    model, tokenizer = base_pretraining_model()
    base = {k: v.clone() for k, v in base_pretraining_model()[0].state_dict().items()}
    state = train_tuned(model, tokenizer, "sop", pairs, pairs, _args(batch_size=18, epochs=40),
                        tmp_path)  # fmt: skip
    probs = predict(model, tokenizer, pairs)
    assert (probs.argmax(-1) == y).all(), state["history"]
    # only layers 4 and 5 and the head were trained; the frozen rest is the checkpoint
    tuned = set(state["tuned"])
    assert any(k.startswith("bert.encoder.layer.5.") for k in tuned)
    assert not any(k.startswith(("bert.encoder.layer.3.", "bert.embeddings.")) for k in tuned)
    for k, v in model.state_dict().items():
        if k.startswith("bert.") and k not in tuned:  # cls.predictions: untrained, unused
            assert torch.equal(v, base[k]), k
    assert not torch.equal(
        model.state_dict()["bert.encoder.layer.5.output.dense.weight"],
        base["bert.encoder.layer.5.output.dense.weight"],
    )
    # the export holds only the tuned tensors and loads back with the same answers
    sd = model.state_dict()
    folder = tmp_path / "minilm-l6-sop-top2"
    manifest = {"task": "sop", "tuned_layers": [4, 5], "training": {}}
    save_pair_head({n: sd[n] for n in state["tuned"]}, folder, manifest)
    model2, tok2, saved = load_pair_head(folder)
    assert saved["tuned_layers"] == [4, 5] and sorted(saved["parameters"]) == sorted(tuned)
    np.testing.assert_allclose(predict(model2, tok2, pairs), probs, atol=1e-6)
    # results/nsp_sop.py finds the trainer's scores under the loaded weights' digest
    assert weights_digest(model2, state["tuned"]) == weights_digest(model, state["tuned"])
    first = cached_predictions(model, tokenizer, state["tuned"], pairs, tmp_path)
    assert len(list((tmp_path / "predictions").iterdir())) == 1
    again = cached_predictions(model2, tok2, state["tuned"], pairs, tmp_path)
    np.testing.assert_array_equal(first, again)
    # a manifest that does not list the tuned layers refuses the file that holds them
    m = json.loads((folder / MANIFEST_FILE).read_text())
    del m["tuned_layers"]
    (folder / MANIFEST_FILE).write_text(json.dumps(m))
    with pytest.raises(ModelUnavailableError, match="does not list"):
        load_pair_head(folder)


def test_a_killed_run_resumes_to_the_same_weights(tmp_path):
    pairs = _sop_pairs()
    whole, tok = base_pretraining_model()
    s_whole = train_tuned(whole, tok, "sop", pairs, pairs[:6], _args(eval_every=3), tmp_path / "a")
    part, _ = base_pretraining_model()
    s_part = train_tuned(part, tok, "sop", pairs, pairs[:6], _args(eval_every=3, max_steps=4),
                         tmp_path / "b")  # fmt: skip
    assert s_part["step"] == 4
    resumed, _ = base_pretraining_model()
    s_res = train_tuned(
        resumed, tok, "sop", pairs, pairs[:6], _args(eval_every=3, fresh=False),
        tmp_path / "b",
    )  # fmt: skip
    assert s_res["step"] == s_whole["step"] == 6
    assert s_res["history"] == s_whole["history"]
    for n in s_whole["tuned"]:
        torch.testing.assert_close(resumed.state_dict()[n], whole.state_dict()[n], rtol=0, atol=0)
