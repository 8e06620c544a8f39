"""Findings as data (issue 40): every comparative sentence of the findings docs and the
pages is a claim the comparison engine made, and a sentence no claim made is caught."""

from __future__ import annotations

import glob
import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

from probing.claims.claim import KINDS, Claim, Comparison
from probing.claims.render import BEGIN, END, load
from probing.claims.sources import probe_run, task_orderings
from probing.claims.unbacked import find_unbacked, python_strings, scan, scan_python
from probing.probes.compare import SentenceCounts
from probing.probes.reapply import StoredCounts, save_counts
from probing.probes.statements import Cells

REPO = Path(__file__).resolve().parents[2]
CLAIMS = REPO / "results" / "claims.json"
FINDINGS_DOCS = [
    REPO / "docs" / name
    for name in (
        "results.md",
        "methods.md",
        "attribution.md",
        "units-that-matter.md",
        "course_objectives.md",
        "mpnet_base_mlm.md",
    )
    if (REPO / "docs" / name).is_file()
]
PAGES = sorted(
    glob.glob(str(REPO / "ui" / "views" / "*.py")) + glob.glob(str(REPO / "pages" / "*.py"))
) + [str(REPO / "app.py")]
REVIEWED = Path(__file__).with_name("reviewed_page_sentences.txt")


def _writer():
    spec = importlib.util.spec_from_file_location(
        "write_results", REPO / "results" / "write_results.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_results_is_written_from_the_committed_claims() -> None:
    text = (REPO / "docs" / "results.md").read_text(encoding="utf-8")
    assert _writer().document(load(CLAIMS)) == text
    # every claim is on the page, inside a claims block
    inside = "".join(part.split(END)[0] for part in text.split(BEGIN)[1:])
    for claim in load(CLAIMS):
        assert claim.text in inside, claim.id


def test_findings_docs_compare_only_inside_claims_blocks() -> None:
    assert len(FINDINGS_DOCS) >= 3
    found = scan(FINDINGS_DOCS)
    assert not found, "\n".join(f"{u.path}:{u.line} {u.word!r}: {u.sentence}" for u in found)


@pytest.mark.parametrize(
    "planted",
    [
        "Layer 3 is higher than layer 5 on UPOS.",
        "On minilm-l6 supersense peaks at layer 3.",
        "After LEACE the probe falls to majority.",
        "mpnet-base beats minilm-l6 on WSD.",
        "The two layers are not distinguishable.",
    ],
)
def test_a_planted_unbacked_sentence_is_caught(planted: str) -> None:
    for doc in FINDINGS_DOCS[:2]:
        text = doc.read_text(encoding="utf-8")
        cut = text.index("\n\n", len(text) // 2)  # in the prose between blocks
        hits = find_unbacked(text[:cut] + "\n\n" + planted + "\n" + text[cut:], doc.name)
        assert [h.sentence for h in hits] == [planted]
    # the same sentence inside a generated block is the generator's, not the prose's
    assert not find_unbacked(f"{BEGIN}\n- {planted}\n{END}\n")
    assert not find_unbacked(f"<!-- generated:x:begin -->\n{planted}\n<!-- generated:x:end -->")


def test_page_strings_compare_only_by_claims() -> None:
    """Every page or view string with a comparative word is method or layout wording,
    reviewed and listed; a new one (a finding typed into a page) fails here."""
    reviewed = {
        line
        for line in REVIEWED.read_text(encoding="utf-8").splitlines()
        if not line.startswith("#")
    }
    new = [
        f"{Path(u.path).relative_to(REPO)} | {u.sentence}"
        for u in scan_python(PAGES)
        if f"{Path(u.path).relative_to(REPO)} | {u.sentence}" not in reviewed
    ]
    assert not new, "\n".join(new)
    planted = 'st.markdown(f"Layer {best} peaks above every other layer")\n'
    assert [t for _, t in python_strings(planted) if find_unbacked(t)]


def test_committed_claims_say_what_their_numbers_say() -> None:
    claims = load(CLAIMS)
    assert {c.kind for c in claims} >= {
        "peak",
        "cog_order",
        "depth",
        "at_baseline",
        "cross_model",
        "survivors",
        "ordering",
    }
    for c in claims:
        assert c.kind in KINDS and c.comparisons and c.family and c.correction
        for x in c.comparisons:
            if x.outcome == "above":
                assert x.ci_low > 0, (c.id, x)
            elif x.outcome == "below":
                assert x.ci_high < 0, (c.id, x)
            if x.called and c.correction.startswith("Holm"):
                assert x.p_adj < 0.05, (c.id, x)
        assert Claim.from_record(c.to_record()) == c


def _toy(
    tmp_path: Path, layers: dict[int, np.ndarray], best: int, stem: str = "toy__ud-ewt__pos"
) -> Cells:
    n = next(iter(layers.values())).shape[-1]
    sentence = np.arange(n) // 10
    cells = {
        f"layer {la}": SentenceCounts.from_predictions(
            "accuracy", np.ones(n, dtype=int), [ok.astype(int)], sentence, n // 10, (0,)
        )
        for la, ok in layers.items()
    }
    save_counts(
        StoredCounts("ud-ewt:test", n // 10, cells),
        tmp_path / "sentence-scores" / f"{stem}.safetensors",
        "test",
    )
    (tmp_path / f"{stem}.json").write_text(json.dumps({"meta": {"best_layer": {"layer": best}}}))
    return Cells(tmp_path)


def test_the_peak_rule_states_every_layer_as_the_engine_calls_it(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    n = 4000
    base = rng.random(n) < 0.6
    gain = base | (rng.random(n) < 0.3)  # clearly better
    same = base.copy()
    same[rng.choice(np.flatnonzero(base), 3, replace=False)] = False  # 3 lost, 3 gained:
    same[rng.choice(np.flatnonzero(~base), 3, replace=False)] = True  # indistinguishable
    cells = _toy(tmp_path, {0: base, 1: gain, 2: same}, best=1)
    peak = probe_run(cells, "toy__ud-ewt__pos")[0]
    assert peak.kind == "peak"
    assert "layer 1 (chosen on dev) is above every other layer" in peak.text
    assert [c.outcome for c in peak.comparisons] == ["above", "above"]
    # with the best layer set on the tied one, layer 1 is stated below and layer 0 tied
    cells = _toy(tmp_path, {0: base, 1: gain, 2: same}, best=2)
    peak = probe_run(cells, "toy__ud-ewt__pos")[0]
    assert "not distinguishable from layer 0; below layer 1" in peak.text
    assert peak.correction == "Holm over 2"


def test_task_orderings_state_ties_as_well_as_calls() -> None:
    """The Layering claim lists every pair of tasks, not only the called ones (issue 40:
    a selective summary left out orderings that contradict the slogan)."""
    cells = Cells(REPO / "results")
    stems = [p.stem for p in (REPO / "results").glob("minilm-l6__*__*.json")]
    claim = task_orderings(cells, "minilm-l6", stems)
    k = len({c.a for c in claim.comparisons} | {c.b for c in claim.comparisons})
    assert len(claim.comparisons) == k * (k - 1) // 2
    assert claim.n_called and claim.n_tied
    assert claim.text.count("not distinguishable") == claim.n_tied


def test_comparison_outcomes_are_checked() -> None:
    with pytest.raises(Exception, match="outcome"):
        Comparison("a", "b", 1.0, 0.5, 1.5, outcome="higher")
    assert not Comparison("a", "b", 0.1, -0.1, 0.3).called
    assert math.isnan(Comparison("a", "b", 0.1, -0.1, 0.3).p)
