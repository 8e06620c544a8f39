"""The report's WSD part and its masked-LM parts (cloze accuracy, tuned lens): planned only
where the model can do them (the reason said otherwise), and a report on tiny random
checkpoints with them runs end to end on a small data folder (UD-EWT, SemCor, Brown cut
short; WordNet whole)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

import pytest

from probing.cli.main import main
from probing.report.plan import Calibration, make_plan
from tests.library.test_fill_mask import tiny_tokenizer
from tests.library.test_report import SUBSET, figure_data, save_tiny_checkpoint

LM = ("cloze", "tuned-lens")
CAL = Calibration(0.01, 0.01, 1.0, 0.0)


def save_tiny_mlm(folder: Path) -> Path:
    """A random 2-layer BertForMaskedLM (width 32) with the fill-mask tests' vocabulary."""
    import torch
    from transformers import BertConfig, BertForMaskedLM

    tokenizer = tiny_tokenizer(folder)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(tokenizer.vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=48,
        max_position_embeddings=512,
    )
    BertForMaskedLM(config).save_pretrained(str(folder), safe_serialization=True)
    tokenizer.save_pretrained(str(folder))
    return folder


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny")
    return {
        "plain": save_tiny_checkpoint(root / "tiny-bert"),
        "mlm": save_tiny_mlm(root / "tiny-bert-mlm"),
    }


def test_lm_parts_are_planned_only_for_a_masked_lm_and_say_why_not(checkpoints):
    from probing.models.registry import load_encoder

    plain = make_plan(load_encoder(str(checkpoints["plain"])), 3600, calibration=CAL)
    mlm = make_plan(load_encoder(str(checkpoints["mlm"])), 3600, calibration=CAL)
    elmo = make_plan(load_encoder("elmo-mini"), 3600, calibration=CAL)
    for plan, what in ((plain, "no language-model head"), (elmo, "bidirectional next-word LM")):
        skipped = {p.name: p.skipped for p in plan.parts if p.skipped}
        for part in LM:
            assert skipped[part].startswith(f"{part} needs a masked-LM head"), skipped
            assert what in skipped[part], skipped
    # agreement needs an LM head of either kind: not the plain encoder's, but ELMo's
    skipped = {p.name: p.skipped for p in plain.parts if p.skipped}
    assert skipped["agreement"].startswith("agreement needs a language-model head")
    assert "agreement" in {p.name for p in elmo.runnable}
    runnable = {p.name: p for p in mlm.runnable}
    assert set(LM) | {"wsd", "agreement"} <= set(runnable)
    assert not any(p.skipped for p in mlm.parts if p.name in LM)
    # each sized on its ladder with an estimate from the cost model
    for part in (*LM, "wsd", "agreement"):
        p = runnable[part]
        assert p.size is not None and p.estimate_s > 0 and p.settings, part
    # WSD shares SemCor's sentences with the supersense probe: one size for the two
    assert runnable["wsd"].size == runnable["supersense"].size
    # a smaller budget shrinks the LM parts, and the plan says so
    small = make_plan(load_encoder(str(checkpoints["mlm"])), 120, calibration=CAL)
    sizes = {p.name: p for p in small.runnable}
    assert sizes["tuned-lens"].size < runnable["tuned-lens"].size
    assert sizes["tuned-lens"].shrunk and sizes["tuned-lens"].to_dict()["shrunk"]


@contextlib.contextmanager
def reading(folder: Path):
    """Read data from ``folder`` meanwhile, the checksum manifest's entries for the data sets
    cut short set aside."""
    from probing.datasets.manifest import MANIFEST

    saved_env = os.environ.get("CONTEXTLENS_DATA_DIR")
    saved = {k: MANIFEST.pop(k) for k in ("ud-ewt", "semcor", "brown") if k in MANIFEST}
    os.environ["CONTEXTLENS_DATA_DIR"] = str(folder)
    try:
        yield folder
    finally:
        MANIFEST.update(saved)
        if saved_env is None:
            os.environ.pop("CONTEXTLENS_DATA_DIR", None)
        else:
            os.environ["CONTEXTLENS_DATA_DIR"] = saved_env


@pytest.fixture(scope="module")
def small_data(data_dir, tmp_path_factory) -> Path:
    """UD-EWT's first sentences per split, the two smallest SemCor documents of each split
    with the Brown files they come from (and ``ca01``, which the reader requires), and the
    whole WordNet (linked)."""
    from probing.datasets.semcor import semcor_documents
    from probing.datasets.splits import semcor_split

    root = tmp_path_factory.mktemp("data")
    ud = root / "ud-english-ewt"
    ud.mkdir()
    for split, n in SUBSET.items():
        name = f"en_ewt-ud-{split}.conllu"
        blocks = (data_dir / "ud-english-ewt" / name).read_text(encoding="utf-8").split("\n\n")
        (ud / name).write_text("\n\n".join(blocks[:n]) + "\n\n", encoding="utf-8")
    docs = sorted(
        semcor_documents(folder=data_dir / "semcor-3.0"), key=lambda d: d[1].stat().st_size
    )
    brown = root / "brown"
    brown.mkdir()
    for name in ("cats.txt", "ca01"):
        shutil.copy(data_dir / "brown" / name, brown / name)
    for part in ("brown1", "brown2"):
        (root / "semcor-3.0" / part / "tagfiles").mkdir(parents=True)
    for split in ("train", "dev", "test"):
        for doc, path in [d for d in docs if semcor_split(d[0]) == split][:2]:
            shutil.copy(path, root / "semcor-3.0" / path.parent.parent.name / "tagfiles" / doc)
            brown_id = "c" + doc.removeprefix("br-")
            shutil.copy(data_dir / "brown" / brown_id, brown / brown_id)
    (root / "wordnet-3.0").symlink_to((data_dir / "wordnet-3.0").resolve())
    return root


@pytest.mark.slow
def test_a_tiny_masked_lm_report_with_wsd_and_lm_parts_runs_end_to_end(
    checkpoints, small_data, tmp_path
):
    out = tmp_path / "report"
    argv = ["report", "--model", str(checkpoints["mlm"]), "--budget", "10m", "--out", str(out)]
    with reading(small_data):
        assert main([*argv, "--tasks", "pos,wsd,cloze,tuned-lens,agreement", "--quiet"]) == 0
    record = json.loads((out / "report.json").read_text())
    page = (out / "report.html").read_text().replace("&#x27;", "'")
    names = ["pos", "wsd", "cloze", "tuned-lens", "agreement"]
    assert [p["name"] for p in record["plan"]["parts"]] == names
    assert not record["skipped"]
    # CI: under a minute on an idle machine (a loaded one: in proportion to its slowdown)
    slowdown = max(1.0, record["plan"]["calibration"]["speed"])
    assert record["total_s_this_run"] < 60 * slowdown, record["timings"]
    for part in ("wsd", "cloze", "tuned-lens"):
        traces = figure_data(page, part)
        assert any(any(v is not None for v in (t.get("y") or [])) for t in traces), part
        assert (out / "parts" / f"{part}.csv").stat().st_size > 0
        (claim,) = record["claims"][part]
        assert claim.startswith("Paired comparisons") and claim in page, part
    wsd = json.loads((out / "parts" / "wsd.json").read_text())["result"]
    assert wsd["task"] == "wsd" and wsd["comparisons"]["rows"]
    cloze = json.loads((out / "parts" / "cloze.json").read_text())["result"]
    # per-sentence counts add up to the accuracies the figure draws
    per = cloze["per_sentence"]
    assert sum(per["masks"]) == cloze["n_masks"] > 0
    layers = len(cloze["top1"])
    for i in range(layers):
        hits = sum(row[i] for row in per["top1"])
        assert cloze["top1"][i] == pytest.approx(hits / cloze["n_masks"], abs=1e-6)
        lo, hi = cloze["top1_ci"][0][i], cloze["top1_ci"][1][i]
        assert lo <= cloze["top1"][i] + 1e-9 and cloze["top1"][i] <= hi + 1e-9
    assert len(cloze["comparisons"]["rows"]) == layers - 1  # the last layer vs each other
    lens = json.loads((out / "parts" / "tuned-lens.json").read_text())["result"]
    assert lens["kl_logit"][-1] == pytest.approx(0, abs=1e-5)  # the last layer is the model
    assert lens["kl_tuned"][-1] == pytest.approx(0, abs=1e-5)  # its translator: the identity
    assert lens["training"]["steps"] == record["plan"]["parts"][3]["settings"]["steps"]
    assert "brown" in record["data"] and "semcor" in record["data"]
    # agreement: drawn, no comparative sentence (its groups are not compared)
    agreement = json.loads((out / "parts" / "agreement.json").read_text())["result"]
    assert record["claims"]["agreement"] == [] and agreement["n_cases"] > 0
    assert any(t.get("y") for t in figure_data(page, "agreement"))
    (overall,) = [r for r in agreement["rows"] if r["by"] == "all"]
    correct = agreement["per_case"]["correct"]
    assert overall["accuracy"] == pytest.approx(sum(correct) / len(correct), abs=1e-6)
    assert overall["n"] == len(correct) == agreement["n_cases"]
