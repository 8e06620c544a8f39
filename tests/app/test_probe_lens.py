"""Saved probes (safetensors + JSON), the probe lens and its page, on real EWT sentences."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from probing.analyses.probe_lens import apply_lens, saved_probes
from probing.probes.edge import arc_features
from probing.probes.linear import LinearProbe
from probing.probes.saved import SavedProbes, probe_dir, save_probes
from probing.probes.structural import StructuralProbe, TreeSentences, mst_edges

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "7_Probe_Lens.py")
LAYERS = (0, 3)


@pytest.fixture(scope="module")
def trained(minilm, tmp_path_factory):
    """POS, deprel and distance probes on 40 EWT dev sentences, saved like the CLI saves."""
    from probing.datasets import read_sentences
    from probing.features import features_of_sentences

    sents = list(itertools.islice(read_sentences("ud-ewt", "dev"), 40))
    feats = features_of_sentences(minilm, sents, "upos", layers=None)
    arcs = arc_features(feats)
    trees = TreeSentences.from_features(feats)
    pos, rel, dist = {}, {}, {}
    for la in LAYERS:
        pos[la] = LinearProbe(C=1.0, max_train_words=None).fit(feats.layer(la), feats.labels)
        rel[la] = LinearProbe(C=1.0, max_train_words=None).fit(arcs.layer(la), arcs.labels)
        X = trees.vectors(feats.layer(la))
        dist[la] = StructuralProbe("distance", rank=32, max_epochs=3).fit(
            X, trees.targets("distance")
        )
    root = tmp_path_factory.mktemp("results")
    for task, probes in (("pos", pos), ("deprel", rel), ("dep-distance", dist)):
        save_probes(probes, probe_dir(root) / f"minilm-l6__ud-ewt__{task}", {"task": task})
    return root, sents, feats, pos, rel, dist


def test_saved_probes_predict_like_the_fitted_ones(trained):
    root, _, feats, pos, _, dist = trained
    loaded = SavedProbes.load(probe_dir(root) / "minilm-l6__ud-ewt__pos")
    X = feats.layer(3)
    assert loaded.kind == "linear" and loaded.layers == list(LAYERS)
    assert np.array_equal(loaded.predict(3, X), pos[3].predict(X))
    assert np.allclose(loaded.predict_proba(3, X), pos[3].predict_proba(X), atol=1e-4)
    sd = SavedProbes.load(probe_dir(root) / "minilm-l6__ud-ewt__dep-distance")
    assert np.allclose(sd.predict(3, X[:9]), dist[3].predict(X[:9]), rtol=1e-4, atol=1e-3)
    # Nothing but safetensors and JSON on disk.
    assert {p.suffix for p in probe_dir(root).iterdir()} == {".json", ".safetensors"}


def test_lens_on_a_gold_sentence_equals_predict_on_the_same_vectors(trained, minilm):
    root, sents, feats, pos, rel, dist = trained
    probes = saved_probes(root, "minilm-l6")
    assert set(probes) == {"pos", "deprel", "dep-distance"}
    s = sents[1]
    enc = minilm.encode([s.words], windowed=True)[0]
    res = apply_lens(enc, probes, s.labels)
    rows = feats.sentence_index == 1  # the same sentence in the feature matrix
    for la in LAYERS:
        got = res.labels.query("task == 'pos' and layer == @la").sort_values("word_index")
        assert list(got["label"]) == list(pos[la].predict(feats.layer(la)[rows]))
        assert list(got["gold"]) == list(s.labels["upos"])
        assert (got["correct"] == (got["label"] == got["gold"])).all()
        assert res.trees["dep-distance"][la] == mst_edges(dist[la].predict(feats.layer(la)[rows]))
    # deprel: one row per gold arc and layer, probed on [head; dependent].
    arcs = arc_features(feats).select(arc_features(feats).sentence_index == 1)
    got = res.labels.query("task == 'deprel' and layer == 3").sort_values("word_index")
    assert list(got["label"]) == list(rel[3].predict(arcs.layer(3)))
    assert list(got["word"]) == list(arcs.words)
    final = res.labels.query("task == 'pos'")
    top = final[final["layer"] == 3]
    assert (top["first_layer"].isin(LAYERS)).all() and (top["final"] == top["label"]).all()


def test_page_renders_the_lens_offline(trained, monkeypatch):
    import ui.views.probe_lens as view

    monkeypatch.setattr(view, "RESULTS_DIR", trained[0])
    monkeypatch.delenv("CONTEXTLENS_DEMO", raising=False)
    at = AppTest.from_file(PAGE, default_timeout=180).run()
    assert not at.exception, at.exception
    assert not at.error
    charts = at.get("plotly_chart")
    assert len(charts) == 3  # POS grid, deprel grid, tree
    at.radio(key="lens_source").set_value("type one").run()
    assert not at.exception and not at.error
    assert len(at.get("plotly_chart")) == 2  # POS grid and tree: no deprel without gold arcs


def test_page_says_how_to_train_when_no_probes(monkeypatch, tmp_path):
    import ui.views.probe_lens as view

    monkeypatch.setattr(view, "RESULTS_DIR", tmp_path)
    at = AppTest.from_file(PAGE, default_timeout=180).run()
    assert not at.exception
    assert any("--save-probes" in i.value for i in at.info)


@pytest.fixture(scope="module")
def wsd_trained(minilm, tmp_path_factory):
    """Sense centroids from 300 SemCor training sentences at layers 0 and 3, saved with a
    byte budget that keeps only some lemmas' centroids."""
    from probing.datasets import read_sentences
    from probing.features import features_of_sentences
    from probing.probes.wsd import NearestSenseClassifier, lemma_key

    sents = list(itertools.islice(read_sentences("semcor", "train"), 300))
    feats = features_of_sentences(minilm, sents, "sense", layers=None)
    lemmas = [lemma_key(s) for s in feats.labels]
    clfs = {
        la: NearestSenseClassifier().fit(feats.layer(la), feats.labels, lemmas) for la in LAYERS
    }
    root = tmp_path_factory.mktemp("results-wsd")
    stem = probe_dir(root) / "minilm-l6__semcor__wsd"
    save_probes(clfs, stem, {"task": "wsd"}, max_wsd_bytes=60 * 2 * 384 * len(LAYERS))
    return root, feats, np.asarray(lemmas), clfs, SavedProbes.load(stem)


def test_saved_sense_centroids_predict_like_the_fitted_classifier(wsd_trained):
    _, feats, lemmas, clfs, saved = wsd_trained
    rows, cov = saved.info["centroid_rows"], saved.info["centroid_coverage"]
    assert saved.kind == "wsd-centroids" and 0 < cov["kept_lemmas"] < cov["polysemous_lemmas"]
    assert sum(len(saved.info["senses"][k]) for k in rows) <= 60  # the byte budget held
    X = feats.layer(3)
    senses, source, cos = saved.predict_senses(3, X, list(lemmas))
    fitted = clfs[3].predict(X, lemmas)
    kept = np.isin(lemmas, list(rows))
    assert kept.sum() > 50 and (source[kept] == "nn").all()
    assert np.mean(senses[kept] == fitted[kept]) >= 0.99  # float16 centroids: ties may flip
    assert np.isfinite(cos[kept]).all() and np.isnan(cos[~kept]).all()
    # Lemmas without kept centroids: their most frequent training sense, or the only one.
    for i in np.flatnonzero(~kept)[:200]:
        train_senses = feats.labels[lemmas == lemmas[i]]
        values, counts = np.unique(train_senses, return_counts=True)
        assert senses[i] in values[counts == counts.max()]
        assert source[i] == ("only" if len(values) == 1 else "mfs")
    assert saved.predict_senses(3, X[:1], ["notaword%n"])[1][0] == "unseen"


def test_lens_labels_content_words_with_senses_and_glosses(wsd_trained, trained, minilm):
    from probing.analyses.probe_lens import sense_label

    root, *_, saved = wsd_trained
    _, sents, *_ = trained
    s = next(x for x in sents if {"NOUN", "VERB"} <= set(x.labels["upos"]))
    enc = minilm.encode([s.words], windowed=True)[0]
    res = apply_lens(enc, {"wsd": saved}, s.labels)
    wsd = res.labels.query("task == 'wsd'")
    content = {i for i, u in enumerate(s.labels["upos"]) if u in {"NOUN", "VERB", "ADJ", "ADV"}}
    assert set(wsd["word_index"]) == content
    assert set(wsd["layer"]) == set(LAYERS)
    # The lens's answer is the saved probe's on the same (float16-rounded) vectors.
    layers = np.asarray(enc.layers, dtype=np.float16).astype(np.float32)
    top = wsd[wsd["layer"] == 3].sort_values("word_index")
    expect = saved.predict_senses(3, layers[3][top["word_index"].to_numpy()], list(top["lemma"]))
    seen = expect[1] != "unseen"
    assert (top["sense_key"].to_numpy()[seen] == expect[0][seen]).all()
    answered = top[top["sense_key"] != ""]
    assert len(answered) and (answered["gloss"].str.len() > 0).all()
    pairs = zip(answered["label"], answered["sense_key"], strict=True)
    assert all(lab == sense_label(k) for lab, k in pairs)
    assert sense_label("bank%1:14:00::").startswith("bank.n.")


# -- tasks label only what they define ------------------------------------------------------

SHIPPED = Path(__file__).resolve().parents[2] / "results"
FUNCTION_UPOS = {"DET", "ADP", "PRON", "AUX", "CCONJ", "SCONJ", "PART", "PUNCT", "SYM", "NUM"}


def test_sense_tasks_give_no_label_to_words_they_do_not_label(minilm):
    """The shipped supersense and WSD probes on the issue's sentence: "The" and "to" used to
    get verb.stative; now only content words with WordNet senses are asked about, every
    other word is masked with its reason."""
    probes = saved_probes(SHIPPED, "minilm-l6")
    assert {"pos", "supersense", "wsd"} <= set(probes)
    enc = minilm.encode("The chef who ran to the store was out of food.")[0]
    lens = apply_lens(enc, probes)
    words = lens.words
    pos = lens.labels[(lens.labels["task"] == "pos")]
    upos = dict(zip(pos["word_index"], pos["final"], strict=False))
    for task in ("supersense", "wsd"):
        rows = lens.labels[lens.labels["task"] == task]
        labelled = set(rows["word_index"])
        masked = lens.masked[task]
        assert labelled and masked and not labelled & set(masked)
        assert labelled | set(masked) == set(range(len(words)))
        for i in (0, words.index("to"), words.index("."), words.index("who")):
            assert i not in labelled and i in masked, (task, words[i])
        assert {"chef", "store", "food"} <= {words[i] for i in labelled}
        assert all(upos[i] not in FUNCTION_UPOS for i in labelled)
        assert all(upos[i] in FUNCTION_UPOS or "WordNet" in masked[i] for i in masked)
    assert "only nouns, verbs, adjectives and adverbs" in lens.masked["supersense"][0]


def test_gold_pos_decides_the_content_words_and_the_grid_greys_the_rest(minilm):
    from probing.analyses.probe_lens import sense_words
    from probing.datasets import read_sentences
    from probing.figures.probe_lens import label_grid

    sent = next(
        s
        for s in read_sentences("ud-ewt", "test")
        if 8 <= len(s.words) <= 20 and sum(u in {"NOUN", "VERB"} for u in s.labels["upos"]) >= 4
    )
    gold = sent.labels
    targets, masked = sense_words(sent.words, [], gold, "wsd")
    content = {i for i, u in enumerate(gold["upos"]) if u in {"NOUN", "VERB", "ADJ", "ADV"}}
    assert targets and {i for i, _ in targets} <= content
    assert all(
        i in masked for i, u in enumerate(gold["upos"]) if u not in {"NOUN", "VERB", "ADJ", "ADV"}
    )
    # Without gold UPOS and without a UPOS probe no word can be told apart: none labelled.
    none, all_masked = sense_words(sent.words, [], None, "supersense")
    assert none == [] and set(all_masked) == set(range(len(sent.words)))
    probes = saved_probes(SHIPPED, "minilm-l6")
    lens = apply_lens(minilm.encode([sent.words])[0], {"wsd": probes["wsd"]}, gold)
    rows = lens.labels[lens.labels["task"] == "wsd"]
    fig = label_grid(rows, lens.words, masked=lens.masked["wsd"])
    grey = fig.data[1]
    assert len(fig.data) == 2 and len(grey.x) == len(
        set(rows["word_index"]) | set(lens.masked["wsd"])
    )
    hovers = {h for row in grey.customdata for h in row}
    assert any(h.startswith("no label: ") for h in hovers)


def _texts(at: AppTest) -> list[str]:
    """Every message, caption and markdown the page drew."""
    kinds = ("markdown", "caption", "info", "warning", "error", "subheader")
    return [el.value for kind in kinds for el in getattr(at, kind)]


def test_typed_sentence_says_why_there_is_no_dependency_section_and_no_gold_legend():
    """The shipped probes on a typed sentence: the dependency-relation section is not just
    dropped (a note says the edge probe needs the gold tree), the tree's legend does not
    speak of a gold tree there is not, and no raw "No saved probe for xpos" line."""
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.session_state["models"] = ["minilm-l6"]
    at.run()
    at.radio(key="lens_source").set_value("type one").run()
    assert not at.exception, at.exception
    assert not at.error
    said = _texts(at)
    assert not any("No saved probe for" in t for t in said), said
    assert any(h.value.startswith("dependency relation") for h in at.subheader)
    why = [i.value for i in at.info if "typed sentence has no gold tree" in i.value]
    assert len(why) == 1 and "edge probe" in why[0], said
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    notes = [[a.get("text", "") for a in c["layout"].get("annotations", [])] for c in charts]
    trees = [c for c, n in zip(charts, notes, strict=True) if any("predicted" in t for t in n)]
    assert len(trees) == 1
    legend = " ".join(a.get("text", "") for a in trees[0]["layout"]["annotations"])
    assert "gold" not in legend.replace("no gold tree", ""), legend
    # The probes it has are named once, with what is missing and how to add it.
    listed = [t for t in said if "xpos" in t.lower() or "XPOS" in t]
    assert len(listed) == 1 and "--task xpos" in listed[0], listed
