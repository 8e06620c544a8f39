"""Tuned lens (Belrose et al. 2023) for a masked LM: the fit on hand-made affine data, the
last layer's lens is the identity, the shipped translators, typed errors, the page."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

import probing
from probing.analyses.fill_mask import prepare
from probing.analyses.tuned_lens import (
    LensMismatchError,
    TunedLens,
    collect_states,
    find_lens,
    least_squares_lens,
    lensable,
    masked_parts,
    read_masks,
)
from probing.errors import NoMLMHeadError

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "2_Fill_Mask.py")
TEXT = "The capital of France is [MASK] and it is very [MASK]."


@pytest.fixture(scope="module")
def mlm():
    return probing.load_encoder("minilm-l6-mlm")


@pytest.fixture(scope="module")
def states(mlm, data_dir):
    from probing.analyses.attention import sample_sentences

    return collect_states(mlm, sample_sentences("brown", "dev", n=40))


def test_masked_parts_by_hand():
    assert masked_parts(["a", "b", "c", "d"], [2, 0]) == ["", "b", "d"]


def test_least_squares_recovers_an_affine_map():
    rng = np.random.default_rng(0)
    final = torch.tensor(rng.normal(size=(500, 6)), dtype=torch.float32)
    a = torch.tensor(rng.normal(size=(6, 6)), dtype=torch.float32)
    b = torch.tensor(rng.normal(size=6), dtype=torch.float32)
    early = torch.linalg.solve(a, (final - b).T).T  # final = a · early + b
    lens = least_squares_lens(torch.stack([early, final]), ridge=1e-9)
    torch.testing.assert_close(lens.weight[0], a, atol=1e-3, rtol=1e-3)
    torch.testing.assert_close(lens.bias[0], b, atol=1e-3, rtol=1e-3)
    torch.testing.assert_close(lens.weight[1], torch.eye(6), atol=1e-4, rtol=0)


def test_the_last_layer_lens_is_the_identity_on_real_states(states):
    assert states.shape[0] == 7 and states.shape[2] == 384
    lens = least_squares_lens(states)
    moved = lens.translate(states)[-1]
    err = (moved - states[-1]).norm(dim=-1) / states[-1].norm(dim=-1)
    assert float(err.max()) < 0.02
    # … and earlier layers are not (the fit does something)
    assert float(((lens.weight[0] - torch.eye(384)).abs()).max()) > 0.1


def test_identity_lens_reads_like_the_logit_lens(mlm):
    eye = torch.eye(384).expand(7, 384, 384).clone()
    lens = TunedLens(eye, torch.zeros(7, 384))
    r = read_masks(mlm, prepare(mlm, TEXT).tokenized, lens)
    np.testing.assert_array_equal(r.tuned_rank, r.logit_rank)
    assert (r.logit_rank[-1] == 1).all()
    np.testing.assert_allclose(r.logit_kl[-1], 0.0, atol=1e-5)
    assert (r.logit_kl[0] > 0.5).all()  # the embedding layer is far from the answer


def test_save_load_and_a_lens_for_another_model(mlm, tmp_path):

    lens = TunedLens(torch.randn(7, 384, 384), torch.randn(7, 384), {"model": "minilm-l6-mlm"})
    back = TunedLens.load(lens.save(tmp_path / "t.safetensors"))
    torch.testing.assert_close(back.weight, lens.weight)
    assert back.meta == {"model": "minilm-l6-mlm"}
    small = TunedLens(torch.randn(3, 32, 32), torch.randn(3, 32), {"model": "tiny"})
    with pytest.raises(LensMismatchError, match="train-tuned-lens"):
        small.check_fits(mlm)


def test_models_without_a_lensable_head_get_a_typed_error(capsys):
    from probing.cli.main import main

    with pytest.raises(NoMLMHeadError, match="no logit or tuned lens"):
        lensable(probing.load_encoder("elmo-mini"))
    assert main(["train-tuned-lens", "--model", "elmo-mini", "--out", "/tmp/unused-lens"]) == 2
    assert "tuned lens" in capsys.readouterr().err


def test_the_cli_never_replaces_the_shipped_translators_by_accident(capsys):
    from probing.cli.main import main
    from probing.models.embedded import MINILM_MLM_DELTA

    before = (MINILM_MLM_DELTA / "tuned_lens.safetensors").stat().st_mtime_ns
    assert main(["train-tuned-lens", "--out", str(MINILM_MLM_DELTA)]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert (MINILM_MLM_DELTA / "tuned_lens.safetensors").stat().st_mtime_ns == before


def test_shipped_lens_beats_nothing_at_the_last_layer_and_helps_early(mlm):
    lens = find_lens(mlm)
    assert lens is not None, "models/minilm-l6-mlm/tuned_lens.safetensors is missing"
    torch.testing.assert_close(lens.weight[-1], torch.eye(384))
    r = read_masks(mlm, prepare(mlm, TEXT).tokenized, lens)
    np.testing.assert_allclose(r.tuned_kl[-1], 0.0, atol=1e-5)
    assert lens.meta["model"] == "minilm-l6-mlm" and lens.meta["steps"] > 0


def test_fill_mask_page_shows_both_lenses(monkeypatch):
    monkeypatch.delenv("CONTEXTLENS_DEMO", raising=False)
    at = AppTest.from_file(PAGE, default_timeout=180).run()
    assert not at.exception, at.exception
    keys = [c.proto.id for c in at.get("plotly_chart")]
    assert len(at.get("plotly_chart")) >= 3
    assert any("Logit lens vs tuned lens" in m.value for m in at.markdown), keys
