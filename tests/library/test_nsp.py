"""Next-sentence prediction from a tiny random BertForPreTraining saved with safetensors."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from probing.analyses.nsp import load_nsp_model, next_sentence_probability
from probing.errors import DemoModeError, NoNSPHeadError, UnsafeModelError
from tests.library.test_fill_mask import tiny_bert_config, tiny_tokenizer


def save_tiny_pretraining(folder: Path, cls_name: str = "BertForPreTraining", safe: bool = True):
    import transformers

    torch.manual_seed(0)
    model = getattr(transformers, cls_name)(tiny_bert_config()).eval()
    model.save_pretrained(str(folder), safe_serialization=True)
    if not safe:  # a pickle-only checkpoint, as older hub repos are
        torch.save(model.state_dict(), folder / "pytorch_model.bin")
        (folder / "model.safetensors").unlink()
    tiny_tokenizer(folder).save_pretrained(str(folder))
    return folder


@pytest.fixture(scope="module")
def tiny_nsp(tmp_path_factory):
    return save_tiny_pretraining(tmp_path_factory.mktemp("nsp") / "tiny-pretraining")


def test_probabilities_sum_to_one_and_match_the_head(tiny_nsp):
    nsp = load_nsp_model(str(tiny_nsp))
    res = next_sentence_probability(nsp, "the cat sat", "the dog ran")
    assert res.is_next + res.not_next == pytest.approx(1.0, abs=1e-6)
    assert 0 < res.is_next < 1
    assert res.pieces.count("[SEP]") == 2 and res.pieces[0] == "[CLS]"
    first_sep = res.pieces.index("[SEP]")
    assert set(res.segment_ids[: first_sep + 1]) == {0} and set(
        res.segment_ids[first_sep + 1 :]
    ) == {1}
    enc = nsp.tokenizer("the cat sat", "the dog ran", return_tensors="pt")
    with torch.inference_mode():
        logits = nsp.model(**enc).seq_relationship_logits[0]
    assert res.is_next == pytest.approx(float(torch.softmax(logits, -1)[0]), abs=1e-6)
    other = next_sentence_probability(nsp, "the dog ran", "the cat sat")
    assert other.is_next != pytest.approx(res.is_next)  # the order of the pair matters


def test_models_without_the_head_say_so(tmp_path, minilm):
    bare = save_tiny_pretraining(tmp_path / "bare", "BertModel")
    with pytest.raises(NoNSPHeadError, match="next-sentence head"):
        load_nsp_model(str(bare))
    with pytest.raises(NoNSPHeadError):
        load_nsp_model("minilm-l6")  # all-MiniLM-L6-v2 ships no NSP head
    with pytest.raises(NoNSPHeadError):
        load_nsp_model("elmo-mini")


def test_pickle_weights_and_demo_paths_are_refused(tmp_path, tiny_nsp):
    unsafe = save_tiny_pretraining(tmp_path / "unsafe", safe=False)
    with pytest.raises(UnsafeModelError):
        load_nsp_model(str(unsafe))
    with pytest.raises(DemoModeError):
        load_nsp_model(str(tiny_nsp), allow_paths=False)
