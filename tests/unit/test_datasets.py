"""Data-set registry and readers, on the real data in ../shared/data (parsed once per module)."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from probing import config
from probing.datasets import (
    DATASETS,
    UPOS_TAGS,
    Sentence,
    dataset_path,
    get_dataset,
    list_datasets,
    read_brown,
    read_semcor,
    read_sentences,
    read_ud,
)
from probing.datasets.brown import brown_genres, brown_split, normalize_brown_tag
from probing.datasets.download import SOURCES
from probing.datasets.semcor import PUNCT_TAGS, semcor_documents
from probing.datasets.splits import brown_file_for_semcor, semcor_split
from probing.datasets.wordnet import (
    LEXNAMES,
    first_sense_key,
    lexnames,
    sense_gloss,
    supersense_of,
    wordnet,
    wordnet_pos,
)
from probing.errors import DatasetNotFoundError

# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def ewt(data_dir: Path) -> dict[str, list[Sentence]]:
    return {split: list(read_ud(split, data_dir)) for split in ("train", "dev", "test")}


@pytest.fixture(scope="module")
def semcor(data_dir: Path) -> list[Sentence]:
    return list(read_semcor(data_dir=data_dir))


@pytest.fixture(scope="module")
def brown(data_dir: Path) -> list[Sentence]:
    return list(read_brown(data_dir=data_dir))


def _count(sents: list[Sentence]) -> tuple[int, int]:
    return len(sents), sum(len(s) for s in sents)


# --------------------------------------------------------------------------- registry


def test_registry_lists_the_four_sets() -> None:
    assert [d.name for d in list_datasets()] == ["ud-ewt", "semcor", "brown", "wordnet"]
    for info in list_datasets():
        assert info.urls and info.licence and info.folder and info.description
        # The registry's advertised sources are the ones the downloader uses.
        assert set(info.urls) == {s.url for s in SOURCES[info.name]}
    assert get_dataset("semcor").splits == ("train", "dev", "test")
    assert "supersense" in get_dataset("semcor").label_sets
    assert set(get_dataset("ud-ewt").label_sets) >= {"upos", "xpos"}


def test_unknown_name_lists_choices() -> None:
    with pytest.raises(KeyError) as err:
        get_dataset("penn-treebank")
    msg = str(err.value)
    assert "penn-treebank" in msg and all(name in msg for name in DATASETS)


@pytest.mark.parametrize("name", ["ud-ewt", "semcor", "brown", "wordnet"])
def test_missing_data_says_how_to_get_it(tmp_path: Path, name: str) -> None:
    with pytest.raises(DatasetNotFoundError) as err:
        dataset_path(name, tmp_path)
    msg = str(err.value)
    assert str(tmp_path / get_dataset(name).folder) in msg
    assert "CONTEXTLENS_DATA_DIR" in msg and "--data-dir" in msg
    assert f"python -m probing data download {name}" in msg


def test_readers_use_the_data_dir_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTEXTLENS_DATA_DIR", str(tmp_path))
    assert config.data_dir() == tmp_path
    with pytest.raises(DatasetNotFoundError, match="en_ewt-ud-dev.conllu"):
        next(read_ud("dev"))
    with pytest.raises(DatasetNotFoundError, match="semcor"):
        next(read_semcor())
    with pytest.raises(DatasetNotFoundError, match="brown"):
        next(read_brown())
    with pytest.raises(DatasetNotFoundError, match="wordnet"):
        wordnet()


# --------------------------------------------------------------------------- UD EWT


def test_ewt_counts_match_the_release(ewt: dict[str, list[Sentence]]) -> None:
    assert _count(ewt["train"]) == (12544, 204577)
    assert _count(ewt["dev"]) == (2001, 25147)
    assert _count(ewt["test"]) == (2077, 25094)


def test_ewt_label_sets(ewt: dict[str, list[Sentence]]) -> None:
    upos = {t for s in ewt["train"] for t in s.labels["upos"]}
    assert upos == set(UPOS_TAGS) and len(upos) == 17
    xpos = {t for s in ewt["train"] for t in s.labels["xpos"]}
    assert len(xpos) == 49
    assert {"NN", "NNS", "NNP", "VBD", "VBZ", "-LRB-", "HYPH", "ADD", "NFP", "GW"} <= xpos
    assert None not in xpos


def test_ewt_first_dev_sentence(ewt: dict[str, list[Sentence]]) -> None:
    s = ewt["dev"][0]
    assert s.words == ["From", "the", "AP", "comes", "this", "story", ":"]
    assert s.labels["upos"] == ["ADP", "DET", "PROPN", "VERB", "DET", "NOUN", "PUNCT"]
    assert s.labels["xpos"] == ["IN", "DT", "NNP", "VBZ", "DT", "NN", ":"]
    assert s.split == "dev" and s.sent_id.endswith("-0001") and s.doc_id
    assert s.meta["text"] == "From the AP comes this story :"


def test_ewt_uses_syntactic_words(tmp_path: Path) -> None:
    folder = tmp_path / "ud-english-ewt"
    folder.mkdir()
    (folder / "en_ewt-ud-dev.conllu").write_text(
        "# sent_id = x-1\n# text = I don't know\n"
        "1\tI\tI\tPRON\tPRP\t_\t3\tnsubj\t_\t_\n"
        "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "2\tdo\tdo\tAUX\tVBP\t_\t4\taux\t_\t_\n"
        "3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t_\t_\n"
        "4\tknow\tknow\tVERB\tVB\t_\t0\troot\t_\t_\n"
        "4.1\tknow\tknow\tVERB\tVB\t_\t_\t_\t_\t_\n\n",
        encoding="utf-8",
    )
    (s,) = read_ud("dev", tmp_path)
    assert s.words == ["I", "do", "n't", "know"]
    assert s.labels["upos"] == ["PRON", "AUX", "PART", "VERB"]
    assert s.sent_id == "x-1"


def test_ewt_bad_split() -> None:
    with pytest.raises(ValueError, match="train, dev, test"):
        next(read_ud("validation"))


# --------------------------------------------------------------------------- SemCor


def test_semcor_counts(semcor: list[Sentence]) -> None:
    assert len(semcor) == 20138
    assert len({s.doc_id for s in semcor}) == 186
    # 359,732 word forms + 54,556 punctuation tokens before splitting multi-word forms.
    forms = sum(1 for s in semcor for m in s.labels["mwe"] if m in (None, "B"))
    assert forms == 359732 + 54556
    assert sum(len(s) for s in semcor) == 434837
    sensed = [x for s in semcor for x in s.labels["sense"] if x is not None]
    assert len(sensed) == 201048
    lemma_forms = sum(
        1
        for s in semcor
        for m, lem in zip(s.labels["mwe"], s.labels["lemma"], strict=True)
        if lem and m != "I"
    )
    assert lemma_forms == 192639  # every form with a sense annotation keeps its lemma
    supersenses = {x for s in semcor for x in s.labels["supersense"] if x}
    assert supersenses == set(LEXNAMES.values()) and len(supersenses) == 45


def test_semcor_first_sentence(semcor: list[Sentence]) -> None:
    s = semcor[0]
    assert (s.doc_id, s.sent_id, s.split) == ("br-a01", "br-a01.1", semcor_split("br-a01"))
    i = s.words.index("said")
    assert s.labels["sense"][i] == "say%2:32:00::"
    assert s.labels["supersense"][i] == "verb.communication"
    assert s.labels["pos"][i] == "VB" and s.labels["lemma"][i] == "say"
    assert s.words[0] == "The" and s.labels["sense"][0] is None and s.labels["pos"][0] == "DT"
    assert s.words[-1] == "." and s.labels["pos"][-1] == "."


def test_semcor_mwe_pieces_share_labels(semcor: list[Sentence]) -> None:
    s = semcor[0]
    assert s.words[1:5] == ["Fulton", "County", "Grand", "Jury"]
    assert s.labels["mwe"][1:5] == ["B", "I", "I", "I"]
    for key in ("pos", "sense", "supersense", "lemma"):
        assert len(set(s.labels[key][1:5])) == 1, key
    assert s.labels["sense"][1] == "group%1:03:00::"
    j = s.words.index("took")
    assert s.words[j + 1] == "place" and s.labels["mwe"][j : j + 2] == ["B", "I"]
    assert s.labels["sense"][j] == s.labels["sense"][j + 1] == "take_place%2:30:00::"
    assert "_" not in "".join(w for sent in semcor[:500] for w in sent.words)


def test_semcor_keys_exist_in_wordnet(semcor: list[Sentence], data_dir: Path) -> None:
    index = {
        line.split(" ", 1)[0]
        for line in (data_dir / "wordnet-3.0" / "index.sense").read_text().splitlines()
    }
    keys = {x for s in semcor for x in s.labels["sense"] if x}
    assert len(keys) == 31261
    assert keys <= index


def test_semcor_edge_cases(tmp_path: Path) -> None:
    tagfiles = tmp_path / "semcor-3.0" / "brown1" / "tagfiles"
    tagfiles.mkdir(parents=True)
    (tmp_path / "semcor-3.0" / "brown2" / "tagfiles").mkdir(parents=True)
    (tagfiles / "br-z01").write_text(
        "<contextfile concordance=brown>\n<context filename=br-z01 paras=yes>\n<p pnum=1>\n"
        "<s snum=7>\n"
        "<wf cmd=done pos=NN lemma=year wnsn=2;1 lexsn=1:28:02::;1:28:01::>year</wf>\n"
        "<wf cmd=done pos=JJ lemma=such wnsn=0 lexsn=5:00:01:specified:00>such</wf>\n"
        "<wf cmd=done pos=VB lemma=show wnsn=0;1 lexsn=2:39:03::;2:39:02::>shows</wf>\n"
        "<wf cmd=done pos=JJ lemma=next wnsn=1 lexsn=5:00:00:succeeding(a):00>next</wf>\n"
        "<wf cmd=done pos=MD|VB ot=notag>can</wf>\n"
        "<wf cmd=ignore pos=DT>the</wf>\n"
        "<punc>(</punc>\n<punc>;</punc>\n<punc>%</punc>\n"
        "</s>\n</p>\n</context>\n</contextfile>\n",
        encoding="utf-8",
    )
    (s,) = read_semcor(data_dir=tmp_path)
    assert s.sent_id == "br-z01.7"
    assert s.labels["sense"] == [
        "year%1:28:02::",  # several senses: the first listed
        None,  # wnsn=0: lost in the mapping to WordNet 3.0
        "show%2:39:02::",  # first listed that survived
        "next%5:00:00:succeeding:00",  # adjective marker removed
        None,
        None,
        None,
        None,
        None,
    ]
    assert s.labels["supersense"][:4] == ["noun.time", None, "verb.perception", "adj.all"]
    assert s.labels["lemma"][:2] == ["year", "such"] and s.labels["lemma"][4] is None
    assert s.labels["pos"] == ["NN", "JJ", "VB", "JJ", "MD", "DT", "-LRB-", ":", "SYM"]


def test_punct_tags_are_ptb() -> None:
    assert set(PUNCT_TAGS.values()) <= {",", ".", ":", "-LRB-", "-RRB-", "``", "''", "$"}


def test_semcor_split_is_document_level_and_deterministic(
    semcor: list[Sentence], data_dir: Path
) -> None:
    by_doc = collections.defaultdict(set)
    for s in semcor:
        by_doc[s.doc_id].add(s.split)
    assert all(len(splits) == 1 for splits in by_doc.values())
    assert all(splits == {semcor_split(d)} for d, splits in by_doc.items())
    counts = collections.Counter(next(iter(v)) for v in by_doc.values())
    assert counts == {"train": 150, "dev": 16, "test": 20}
    dev = list(read_semcor("dev", data_dir))
    assert {s.sent_id for s in dev} == {s.sent_id for s in semcor if s.split == "dev"}
    again = [d for d, _ in semcor_documents(data_dir)]
    assert again == list(dict.fromkeys(s.doc_id for s in semcor))


# --------------------------------------------------------------------------- Brown


@pytest.mark.parametrize(
    ("raw", "norm"),
    [
        ("nn", "NN"),
        ("np-tl", "NP"),
        ("nn-tl-hl", "NN"),
        ("vb-nc", "VB"),
        ("fw-nn", "NN"),
        ("fw-jj-tl", "JJ"),
        ("np$", "NP$"),
        ("pps+bez", "PPS+BEZ"),
        ("fw-in+at-tl", "IN+AT"),
        ("doz*", "DOZ*"),
        ("--", "--"),
        ("---hl", "--"),
        ("*-hl", "*"),
        ("fw-*", "*"),
    ],
)
def test_brown_tag_normalisation(raw: str, norm: str) -> None:
    assert normalize_brown_tag(raw) == norm


def test_brown_counts_and_labels(brown: list[Sentence], data_dir: Path) -> None:
    assert _count(brown) == (57340, 1161192)
    s = brown[0]
    assert s.words[:4] == ["The", "Fulton", "County", "Grand"]
    assert s.labels["pos_raw"][:3] == ["at", "np-tl", "nn-tl"]
    assert s.labels["pos"][:3] == ["AT", "NP", "NN"]
    assert s.doc_id == "ca01" and s.meta["genre"] == "news"
    tags = {t for sent in brown for t in sent.labels["pos"]}
    assert not any(t.endswith(("-TL", "-HL", "-NC")) or t.startswith("FW-") for t in tags)
    assert len(set(brown_genres(data_dir).values())) == 15


def test_brown_split_follows_semcor(brown: list[Sentence], data_dir: Path) -> None:
    for doc, _ in semcor_documents(data_dir):
        assert brown_split(brown_file_for_semcor(doc)) == semcor_split(doc)
    files = collections.defaultdict(set)
    for s in brown:
        files[s.split].add(s.doc_id)
    assert sum(len(v) for v in files.values()) == 500
    assert {len(v) for v in files.values()} == {400, 53, 47}
    assert [s.sent_id for s in read_brown("test", data_dir)][:3] == [
        s.sent_id for s in brown if s.split == "test"
    ][:3]


def test_read_sentences_dispatch(data_dir: Path) -> None:
    assert next(read_sentences("ud-ewt", "dev", data_dir)).words[0] == "From"
    assert next(read_sentences("semcor", None, data_dir)).doc_id == "br-a01"
    assert next(read_sentences("brown", "train", data_dir)).doc_id == "ca01"
    with pytest.raises(ValueError, match="lexicon"):
        read_sentences("wordnet")


# --------------------------------------------------------------------------- WordNet


def test_wordnet_helpers(data_dir: Path) -> None:
    assert lexnames(data_dir) == LEXNAMES
    assert sense_gloss("say%2:32:00::", data_dir) == "express in words"
    assert sense_gloss("bank%1:17:01::", data_dir).startswith("sloping land")
    assert supersense_of("say%2:32:00::") == "verb.communication"
    assert supersense_of("recent%5:00:00:past:00") == "adj.all"
    assert first_sense_key("bank", "NN", data_dir) == "bank%1:17:01::"
    assert first_sense_key("say", "VERB", data_dir) == "say%2:32:00::"
    assert first_sense_key("recent", "JJ", data_dir) == "recent%5:00:00:new:00"  # satellite
    assert first_sense_key("Take place", "v", data_dir) == "take_place%2:30:00::"
    assert first_sense_key("xyzzy", "n", data_dir) is None
    assert first_sense_key("the", "DT", data_dir) is None
    with pytest.raises(ValueError):
        sense_gloss("nonsense%1:00:00::", data_dir)
    with pytest.raises(ValueError):
        supersense_of("no-percent-sign")


def test_wordnet_reader_agrees_with_helpers(data_dir: Path) -> None:
    wn = wordnet(data_dir)  # NLTK's reader: a few seconds to build, cached per folder
    assert wn is wordnet(data_dir)
    assert wn.get_version() == "3.0"
    for key in ("say%2:32:00::", "bank%1:17:01::", "recent%5:00:00:new:00"):
        assert wn.lemma_from_key(key).synset().definition() == sense_gloss(key, data_dir)
    for lemma, pos in (("bank", "n"), ("run", "v"), ("recent", "a"), ("well", "r")):
        assert wn.lemmas(lemma, pos)[0].key() == first_sense_key(lemma, pos, data_dir)
    dog = wn.synset("dog.n.01")
    assert dog.lexname() == "noun.animal" and dog.examples() == ["the dog barked all night"]


def test_wordnet_pos() -> None:
    assert [wordnet_pos(p) for p in ("NNS", "VBD", "JJR", "RB", "s", "PROPN", "IN")] == [
        "n",
        "v",
        "a",
        "r",
        "a",
        "n",
        None,
    ]
