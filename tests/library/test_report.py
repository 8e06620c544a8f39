"""``python -m probing report`` on a tiny random BERT checkpoint (a folder written here): the
page has every planned section with a non-empty figure, a killed report resumes from its
finished parts, and bad input stops with exit code 2 before anything is written."""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path

import pytest

from probing.cli.main import main
from probing.errors import ReportBudgetError
from probing.report import plan as report_plan
from probing.report.plan import Calibration, make_plan, parse_budget
from tests.library.test_fill_mask import tiny_tokenizer

PARTS = ["pos", "deprel", "supersense", "dep-distance", "cka", "contextuality", "attention-stats"]


def save_tiny_checkpoint(folder: Path) -> Path:
    """A random 2-layer, 2-head BertModel (width 32) with a small WordPiece vocabulary,
    saved as a checkpoint folder; positions for UD-EWT's longest sentences."""
    import torch
    from transformers import BertConfig, BertModel

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
    BertModel(config, add_pooling_layer=False).save_pretrained(str(folder), safe_serialization=True)
    tokenizer.save_pretrained(str(folder))
    return folder


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    return save_tiny_checkpoint(tmp_path_factory.mktemp("tiny") / "tiny-bert")


SUBSET = {"train": 120, "dev": 80, "test": 80}  # UD-EWT sentences kept per split


@pytest.fixture(scope="module")
def small_data(data_dir, tmp_path_factory) -> Path:
    """A data folder with the first sentences of each UD-EWT split (reading the whole
    treebank costs more than a CI run may) and no SemCor."""
    folder = tmp_path_factory.mktemp("data") / "ud-english-ewt"
    folder.mkdir()
    for split, n in SUBSET.items():
        name = f"en_ewt-ud-{split}.conllu"
        blocks = (data_dir / "ud-english-ewt" / name).read_text(encoding="utf-8").split("\n\n")
        (folder / name).write_text("\n\n".join(blocks[:n]) + "\n\n", encoding="utf-8")
    return folder.parent


@contextlib.contextmanager
def reading(folder: Path):
    """Read data from ``folder`` meanwhile; the checksum manifest's UD-EWT entries are set
    aside (the files are cut short on purpose)."""
    from probing.datasets.manifest import MANIFEST

    saved_env, saved = os.environ.get("CONTEXTLENS_DATA_DIR"), MANIFEST.pop("ud-ewt", None)
    os.environ["CONTEXTLENS_DATA_DIR"] = str(folder)
    try:
        yield folder
    finally:
        if saved is not None:
            MANIFEST["ud-ewt"] = saved
        if saved_env is None:
            os.environ.pop("CONTEXTLENS_DATA_DIR", None)
        else:
            os.environ["CONTEXTLENS_DATA_DIR"] = saved_env


@pytest.fixture(scope="module")
def report(checkpoint, small_data, tmp_path_factory) -> Path:
    """The report with a budget larger than it needs (the data's splits cap its sizes)."""
    out = tmp_path_factory.mktemp("report") / "out"
    with reading(small_data):
        assert (
            main(["report", "--model", str(checkpoint), "--budget", "10m", "--out", str(out)]) == 0
        )
    return out


def figure_data(page: str, section: str) -> list[dict]:
    """The traces plotly draws in ``section`` of the page."""
    body = page.split(f"<section id='part-{section}'>", 1)[1].split("</section>", 1)[0]
    call = re.search(r'Plotly\.newPlot\(\s*"figure-[^"]+",\s*(\[.*?\])\s*,\s*\{', body, re.S)
    assert call, f"no figure in section {section}"
    return json.loads(call.group(1))


def test_the_page_has_every_section_with_a_drawn_figure(report):
    record = json.loads((report / "report.json").read_text())
    page = (report / "report.html").read_text()
    # CI: under a minute on the tiny checkpoint on an idle machine (a loaded one: in
    # proportion to the slowdown the plan measured)
    slowdown = max(1.0, record["plan"]["calibration"]["speed"])
    assert record["total_s_this_run"] < 60 * slowdown, record["timings"]
    from plotly.offline import get_plotlyjs

    # plotly.js embedded once, nothing fetched: the page opens offline
    assert page.count(get_plotlyjs()[:2000]) == 1 and "<script src" not in page
    ran = [p["name"] for p in record["plan"]["parts"] if not p["skipped"]]
    assert ran == [p for p in PARTS if p != "supersense"]
    # no SemCor in the data folder: listed with its reason, not run
    assert "semcor" in record["skipped"]["supersense"] and "supersense" in page
    for part in ran:
        traces = figure_data(page, part)
        assert any(any(v is not None for v in (t.get("y") or t.get("z") or [])) for t in traces), (
            part
        )
        assert (report / "parts" / f"{part}.csv").stat().st_size > 0
    # identity first, then the claims, from the engine's table
    assert page.index("Model identity") < page.index("Summary of claims") < page.index("part-pos")
    sha = record["model"]["weights_sha256"]
    assert record["model"]["architecture"] == "bert"  # the tiny checkpoint's config.model_type
    assert len(sha) == 1 and all(len(h) == 64 for h in sha.values())
    for task in ("pos", "deprel", "dep-distance"):
        (claim,) = record["claims"][task]
        assert claim.startswith("Paired comparisons:") and claim in page.replace("&#x27;", "'")
    for part, t in record["timings"].items():
        assert t["seconds"] > 0 and t["estimate_s"] > 0, part


def test_a_killed_report_resumes_from_its_finished_parts(report, checkpoint, small_data):
    done = [p for p in PARTS if p != "supersense"]
    before = {p: json.loads((report / "parts" / f"{p}.json").read_text()) for p in done}
    (report / "parts" / "cka.json").unlink()  # as if killed while CKA ran
    with reading(small_data):
        argv = ["report", "--model", str(checkpoint), "--budget", "10m", "--out", str(report)]
        assert main(argv) == 0
    after = {p: json.loads((report / "parts" / f"{p}.json").read_text()) for p in done}
    assert json.loads((report / "report.json").read_text())["plan_reused"]
    for part in done:
        same = after[part]["finished"] == before[part]["finished"] and after[part] == before[part]
        if part == "cka":
            assert after[part]["settings"] == before[part]["settings"]
            assert after[part]["result"]["cka"] == before[part]["result"]["cka"]  # seeded
        else:
            assert same, part


def test_a_budget_too_small_names_the_smallest_that_works(
    checkpoint, tmp_path, monkeypatch, capsys
):
    # A machine 40x slower than the one the costs were measured on.
    monkeypatch.setattr(report_plan, "speed_probe", lambda: 40 * report_plan.SPEED_REFERENCE_S)
    out = tmp_path / "never"
    code = main(["report", "--model", str(checkpoint), "--budget", "30s", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "too small" in err and not out.exists()
    (smallest,) = re.findall(r"smallest budget that works is --budget (\S+)\.", err)
    assert parse_budget(smallest) > 30


def test_the_named_smallest_budget_is_enough_and_a_second_less_is_not(checkpoint):
    from probing.models.registry import load_encoder

    encoder = load_encoder(str(checkpoint))
    cal = Calibration(0.05, 0.08, 3.0, 1.0)
    with pytest.raises(ReportBudgetError) as exc:
        make_plan(encoder, 30, calibration=cal)
    (text,) = re.findall(r"--budget (\S+)\.", str(exc.value))
    smallest = parse_budget(text)
    plan = make_plan(encoder, smallest, calibration=cal)
    assert all(p.size == report_plan.LADDERS[p.name][0] for p in plan.runnable)
    assert plan.estimate_s <= smallest * report_plan.HEADROOM
    with pytest.raises(ReportBudgetError):
        make_plan(encoder, smallest - 2, calibration=cal)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--model", "no-such-model"], "Unknown model"),
        (["--model", "{tmp}"], "neither a transformers checkpoint"),
        (["--model", "minilm-l6", "--budget", "5s"], "--budget must be from 30s"),
        (["--model", "minilm-l6", "--budget", "ten"], "is not a duration"),
        (["--model", "minilm-l6", "--tasks", "pos,nope"], "unknown part nope"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, tmp_path, capsys):
    out = tmp_path / "out"
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(["report", *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and err.startswith("error:") and "\n" not in err
    assert not out.exists()


def test_an_unwritable_or_shipped_out_is_refused(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert main(["report", "--model", "minilm-l6", "--out", str(blocker / "out")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    from probing import config

    shipped = config.REPO_ROOT / "results" / "report-test-x"
    assert main(["report", "--model", "minilm-l6", "--out", str(shipped)]) == 2
    assert "--overwrite" in capsys.readouterr().err and not shipped.exists()


def test_parts_left_shrink_when_the_run_is_slower_than_its_estimates(checkpoint, small_data):
    from probing.models.registry import load_encoder
    from probing.report.run import shrink_rest

    encoder = load_encoder(str(checkpoint))
    cal = Calibration(0.05, 0.08, 1.0, 1.0)
    with reading(small_data):
        plan = make_plan(encoder, 600, ("cka", "contextuality", "attention-stats"), calibration=cal)
    rest = plan.runnable[1:]
    before = {p.name: p.size for p in rest}
    said = []
    # the first part took 4x its estimate and a third of the budget is left
    spent = {"measured": 4 * plan.runnable[0].estimate_s, "estimated": plan.runnable[0].estimate_s}
    with reading(small_data):
        assert shrink_rest(encoder, plan, rest, spent, 200, said.append)
    assert all(p.size <= before[p.name] for p in rest) and any(
        p.size < before[p.name] for p in rest
    )
    assert sum(p.estimate_s for p in rest) * 4 <= 200 and "4.0x slower" in said[0]
    # on time: nothing changes
    spent = {"measured": 1.0, "estimated": 2.0}
    assert not shrink_rest(encoder, plan, rest, spent, 200, said.append)


def test_elmo_is_planned_without_attention_and_says_why():
    from probing.analyses.registry import get
    from probing.models.registry import load_encoder

    elmo = load_encoder("elmo-mini")
    plan = make_plan(elmo, 3600, calibration=Calibration(0.01, 0.01, 1.0, 0.0))
    skipped = {p.name: p.skipped for p in plan.parts if p.skipped}
    # no attention; its LM is a bidirectional next-word LM: no masked-LM parts, but
    # agreement (its forward LM on the left context)
    assert set(skipped) == {"attention-stats", "cloze", "tuned-lens"}
    assert skipped["attention-stats"] == get("attention-stats").is_compatible(elmo.info)
    expected = (set(PARTS) | {"wsd", "agreement"}) - {"attention-stats"}
    assert {p.name for p in plan.runnable} == expected


def test_a_part_made_from_other_data_is_not_reused(checkpoint, small_data, data_dir):
    from probing.models.registry import load_encoder
    from probing.report.plan import PlannedPart, part_settings
    from probing.report.run import part_key

    encoder = load_encoder(str(checkpoint))
    part = PlannedPart("cka", 200, 2000, part_settings("cka", 200, encoder.info.name))
    model_id = {"weights_combined_sha256": "w"}
    with reading(small_data):
        small = part_key(part, model_id)
    assert small != part_key(part, model_id)  # the whole UD-EWT dev split
    assert small["settings"] == part_key(part, model_id)["settings"]


def test_the_identity_names_the_checkpoints_own_architecture():
    """The committed mpnet-base report runs on the "bert" encoder family; its identity table
    says the checkpoint is MPNet (its config's model_type), and ELMo stays "elmo"."""
    from probing import config
    from probing.report.html import identity_section

    for model, arch, family in (("mpnet-base", "mpnet", "bert"), ("elmo-mini", "elmo", "elmo")):
        record = json.loads(
            (config.REPO_ROOT / "results" / "reports" / model / "report.json").read_text()
        )
        assert record["model"]["family"] == family
        row = identity_section(record).split("name, architecture", 1)[1].split("</tr>", 1)[0]
        assert f"{arch} ({family} encoder)" in row, row
