"""Uploaded treebanks probe XPOS, DEPREL and the structural probes, not only UPOS."""

from __future__ import annotations

import pytest

from probing.datasets.ud import ud_file
from probing.datasets.upload import read_conllu_upload
from probing.errors import DataFormatError
from probing.probes.upload import probe_upload


def _first_sentences(n: int) -> bytes:
    """The first ``n`` sentences of EWT dev, as the bytes a user would upload."""
    text = ud_file("dev").read_text(encoding="utf-8")
    return ("\n\n".join(text.split("\n\n")[:n]) + "\n\n").encode()


@pytest.fixture(scope="module")
def upload():
    return read_conllu_upload(_first_sentences(60), 10**7, name="ewt60.conllu")


def test_upload_reads_heads_and_relations(upload):
    s = upload[0]
    assert s.labels["head"] == ["3", "3", "4", "0", "6", "4", "4"]
    assert s.labels["deprel"][3] == "root"


@pytest.mark.parametrize(
    ("task", "metrics"),
    [("deprel", {"accuracy", "macro_f1"}), ("dep-distance", {"uuas", "spearman"})],
)
def test_upload_probes_syntax_tasks(minilm, upload, task, metrics):
    res = probe_upload(minilm, upload, layers=[0, 3], n_boot=50, task=task, name="ewt60.conllu")
    assert res.task == task and res.dataset == "upload:ewt60.conllu"
    assert metrics <= set(res.table["metric"])  # plus the centres of gravity
    scores = res.layer_scores()
    assert list(scores["layer"]) == [0, 3]
    assert scores["value"].between(0, 1).all()
    if task == "dep-distance":
        assert {"right-branching", "static"} <= set(res.baselines()["probe"])
    else:
        assert scores["control"].notna().all()


def test_structural_task_on_an_upload_without_heads_names_the_column(minilm):
    lines = []
    for line in _first_sentences(6).decode().split("\n"):
        cols = line.split("\t")
        if len(cols) == 10 and not line.startswith("#"):
            cols[6] = "_"
        lines.append("\t".join(cols))
    sents = read_conllu_upload("\n".join(lines).encode(), 10**7)
    with pytest.raises(DataFormatError, match="HEAD"):
        probe_upload(minilm, sents, layers=[0], task="dep-depth")
