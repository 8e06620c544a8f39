"""Attention maps, piece → word aggregation, pairs and head statistics on the embedded MiniLM.

Expected values are computed here with explicit loops over the raw attention, independent of
the vectorised library code.
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pytest

from probing.analyses.attention import (
    AttentionMap,
    NoAttentionError,
    attention_frame,
    attention_from_encoding,
    attention_view,
    corpus_statistics,
    document_statistics,
    encode_attention,
    encode_pair_attention,
    head_statistics,
    hide_special,
    is_punctuation,
    iter_encodings,
    sample_documents,
    sample_sentences,
    supports_pairs,
    token_kinds,
    word_attention,
)
from probing.errors import InputTooLongError

# "ContextLens" and "unbelievably" split into several pieces in MiniLM's uncased vocabulary.
SENTENCE = "ContextLens shows unbelievably rich attention, doesn't it?"


@pytest.fixture(scope="module")
def encoding(minilm):
    (enc,) = minilm.encode(SENTENCE, attentions=True)
    return enc


@pytest.fixture(scope="module")
def pieces(encoding) -> AttentionMap:
    return attention_from_encoding(encoding)


def test_test_sentence_has_multi_piece_words(encoding):
    assert any(len(encoding.pieces_of(i)) > 1 for i in range(len(encoding.words)))


def test_piece_level_is_a_passthrough_of_the_raw_attentions(encoding, pieces):
    view = attention_view(pieces, "piece", show_special=True)
    assert view.tokens == encoding.pieces
    assert view.word_ids == encoding.word_ids
    assert view.weights is encoding.attentions  # not even a copy
    assert view.weights.shape == (6, 12, len(encoding.pieces), len(encoding.pieces))


def test_word_level_rows_sum_to_one_and_keep_special_tokens(encoding, pieces):
    words = attention_view(pieces, "word", show_special=True)
    assert words.tokens == ["[CLS]", *encoding.words, "[SEP]"]
    assert words.word_ids == [None, *range(len(encoding.words)), None]
    np.testing.assert_allclose(words.weights.sum(axis=-1), 1.0, atol=1e-5)


def test_word_level_is_sum_over_attended_pieces_mean_over_attending_pieces(encoding, pieces):
    words = word_attention(pieces)
    att = encoding.attentions
    # Units in order: [CLS], the words, [SEP]; their piece indices.
    units = (
        [[0]]
        + [encoding.pieces_of(i) for i in range(len(encoding.words))]
        + [[len(encoding.pieces) - 1]]
    )
    for layer in (0, 3, 5):
        for head in (0, 7):
            for a, from_pieces in enumerate(units):
                for b, to_pieces in enumerate(units):
                    total = 0.0
                    for p in from_pieces:
                        row = 0.0
                        for q in to_pieces:
                            row += float(att[layer, head, p, q])
                        total += row
                    expected = total / len(from_pieces)
                    assert words.weights[layer, head, a, b] == pytest.approx(expected, abs=1e-5)


def test_hiding_special_tokens_renormalises_rows(encoding, pieces):
    hidden = hide_special(pieces)
    assert "[CLS]" not in hidden.tokens and "[SEP]" not in hidden.tokens
    np.testing.assert_allclose(hidden.weights.sum(axis=-1), 1.0, atol=1e-5)
    att = encoding.attentions
    keep = [i for i, w in enumerate(encoding.word_ids) if w is not None]
    layer, head = 2, 4
    for a, p in enumerate(keep):
        mass = sum(float(att[layer, head, p, q]) for q in keep)
        for b, q in enumerate(keep):
            assert hidden.weights[layer, head, a, b] == pytest.approx(
                att[layer, head, p, q] / mass, abs=1e-5
            )
    # Word level without specials: word rows renormalised, also summing to 1.
    words = attention_view(pieces, "word", show_special=False)
    assert words.tokens == encoding.words
    np.testing.assert_allclose(words.weights.sum(axis=-1), 1.0, atol=1e-5)


def test_head_statistics_match_a_hand_computation(minilm):  # noqa: C901 - the hand computation
    (enc,) = minilm.encode("The dog barked, loudly.", attentions=True)
    stats = head_statistics([enc])
    att = enc.attentions
    n_layers, n_heads, n, _ = att.shape
    assert enc.pieces[0] == "[CLS]" and enc.pieces[-1] == "[SEP]"
    punct = [w is not None and enc.words[w] in {",", "."} for w in enc.word_ids]
    assert sum(punct) == 2
    for layer in range(n_layers):
        for head in range(n_heads):
            entropy = cls = sep = pun = prev = nxt = own = 0.0
            for i in range(n):
                for j in range(n):
                    p = float(att[layer, head, i, j])
                    if p > 0:
                        entropy -= p * math.log(p)
                    if j == 0:
                        cls += p
                    if j == n - 1:
                        sep += p
                    if punct[j]:
                        pun += p
                    if j == i - 1:
                        prev += p
                    if j == i + 1:
                        nxt += p
                    if j == i:
                        own += p
            expected = {
                "entropy": entropy,
                "cls": cls,
                "sep": sep,
                "punct": pun,
                "prev": prev,
                "next": nxt,
                "self": own,
            }
            for name, value in expected.items():
                assert stats[name][layer, head] == pytest.approx(value / n, abs=1e-5), name
    assert stats.n_sentences == 1 and stats.n_queries == n
    frame = stats.to_frame()
    assert len(frame) == n_layers * n_heads
    assert list(frame.columns[:2]) == ["layer", "head"] and frame["layer"].min() == 1


def test_head_statistics_average_per_input_or_pool_and_report_progress(minilm):
    encs = minilm.encode(
        ["A short one.", "This second sentence is a good deal longer than the first."],
        attentions=True,
    )
    calls = []
    streamed = head_statistics((e for e in encs), progress=lambda d, t: calls.append(d))
    assert calls == [1, 2]
    n = [len(e.pieces) for e in encs]
    one, two = head_statistics([encs[0]]), head_statistics([encs[1]])
    pooled = head_statistics(encs, pool_queries=True)
    for name in streamed.values:
        # Clark et al.'s code: each example's mean over its queries, then the mean of those.
        np.testing.assert_allclose(streamed[name], (one[name] + two[name]) / 2, atol=1e-9)
        weighted = (one[name] * n[0] + two[name] * n[1]) / sum(n)
        np.testing.assert_allclose(pooled[name], weighted, atol=1e-9)
    assert streamed.n_queries == sum(n) and streamed.averaging == "input"


def test_punctuation_is_clarks_period_and_comma_only(minilm):
    (enc,) = minilm.encode("Stop! Really? Yes, now -- go.", attentions=True)
    kinds = token_kinds(attention_from_encoding(enc))
    marked = [p for p, k in zip(enc.pieces, kinds["punct"], strict=True) if k]
    assert marked == [",", "."]


def test_document_statistics_average_documents_equally(minilm):
    sentences, docs = sample_documents("ud-ewt", "dev", 12)
    assert len(sentences) >= 12 and len(set(docs)) >= 2
    stats = document_statistics(minilm, sentences, docs, batch_size=4)
    by_doc = {}
    for words, doc in zip(sentences, docs, strict=True):
        by_doc.setdefault(doc, []).append(words)
    expected = [
        head_statistics(minilm.encode(s, attentions=True), pool_queries=True)
        for s in by_doc.values()
    ]
    for name in stats.values:
        mean = np.mean([e[name] for e in expected], axis=0)
        np.testing.assert_allclose(stats[name], mean, atol=1e-5)
    assert stats.n_documents == len(by_doc) and stats.averaging == "document"
    assert stats.n_sentences == len(sentences)
    for name in stats.values:  # documents resampled: the interval brackets the mean
        low, high = stats.ci[name]
        assert np.all(low <= stats[name] + 1e-9) and np.all(stats[name] <= high + 1e-9)


def test_pair_encoding_puts_sep_between_segments(minilm):
    pair = encode_pair_attention(minilm, "The bank was closed.", "It reopened today.")
    assert supports_pairs(minilm)
    tokens = pair.tokens
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
    first_sep = tokens.index("[SEP]")
    assert tokens[1:first_sep] == ["the", "bank", "was", "closed", "."]
    assert tokens[first_sep + 1 : -1] == ["it", "reopened", "today", "."]
    assert pair.token_type_ids == [0] * (first_sep + 1) + [1] * (len(tokens) - first_sep - 1)
    assert pair.segments == [None] + [0] * 5 + [None] + [1] * 4 + [None]
    assert pair.words == ["The", "bank", "was", "closed", ".", "It", "reopened", "today", "."]
    assert pair.word_ids == [None, 0, 1, 2, 3, 4, None, 5, 6, 7, 8, None]
    assert pair.is_pair
    assert pair.weights.shape == (6, 12, len(tokens), len(tokens))
    np.testing.assert_allclose(pair.weights.sum(axis=-1), 1.0, atol=1e-5)
    # Word level keeps both [SEP]s as their own units and the segments of the words.
    words = attention_view(pair, "word")
    assert words.tokens == [
        "[CLS]",
        "The",
        "bank",
        "was",
        "closed",
        ".",
        "[SEP]",
        "It",
        "reopened",
        "today",
        ".",
        "[SEP]",
    ]
    assert words.token_type_ids == pair.token_type_ids  # one piece per word here
    # The same call through the page's entry point.
    assert encode_attention(minilm, "The bank was closed.", "It reopened today.").tokens == tokens


def test_pair_attention_differs_from_segment_a_alone(minilm):
    """Segment B is really seen: A's rows change when B is added."""
    alone = encode_attention(minilm, "The bank was closed.")
    pair = encode_attention(minilm, "The bank was closed.", "It reopened today.")
    a_alone = alone.weights[:, :, 1:6, 1:6]
    a_pair = pair.weights[:, :, 1:6, 1:6]
    assert not np.allclose(a_alone, a_pair, atol=1e-3)


def test_too_long_inputs_raise_input_too_long(minilm):
    long_text = " ".join(["word"] * 600)
    with pytest.raises(InputTooLongError):
        encode_attention(minilm, long_text)
    with pytest.raises(InputTooLongError):
        encode_attention(minilm, "Short.", long_text)


def test_an_encoding_without_attention_is_a_clear_error(minilm):
    (enc,) = minilm.encode("No attentions asked for.")
    with pytest.raises(NoAttentionError, match="no attention"):
        attention_from_encoding(enc)


def load_elmo_fixture(data_dir):
    """AllenNLP's tiny ELMo fixture (its folder holds several .hdf5 files: name the weights)."""
    from probing.encoders.elmo import load_elmo

    folder = data_dir / "allennlp-elmo-fixture"
    return load_elmo((folder / "options.json", folder / "lm_weights.hdf5"), name="elmo-fixture")


def test_elmo_has_no_attention(data_dir):
    elmo = load_elmo_fixture(data_dir)
    assert not elmo.info.has_attention and not supports_pairs(elmo)
    with pytest.raises(NoAttentionError):
        encode_attention(elmo, "There is no attention in an LSTM.")
    with pytest.raises(NoAttentionError):
        list(iter_encodings(elmo, [["No", "attention", "."]]))


def test_punctuation_test():
    assert is_punctuation(".") and is_punctuation("--") and is_punctuation("...")
    assert not is_punctuation("'s") and not is_punctuation("$") and not is_punctuation("")


def test_attention_frame_is_long_format(pieces):
    frame = attention_frame(pieces, layers=[2], heads=[3, 4])
    n = pieces.n_tokens
    assert len(frame) == 2 * n * n
    row = frame[(frame["head"] == 4) & (frame["from_index"] == 1) & (frame["to_index"] == 2)].iloc[
        0
    ]
    assert row["weight"] == pytest.approx(float(pieces.weights[1, 4, 1, 2]))
    assert row["from_token"] == pieces.tokens[1] and row["layer"] == 2


def test_corpus_statistics_over_ud_ewt_dev(minilm, data_dir):
    sentences = sample_sentences("ud-ewt", "dev", n=12, data_dir=data_dir)
    assert len(sentences) == 12 and all(isinstance(w, str) for s in sentences for w in s)
    assert sample_sentences("ud-ewt", "dev", n=12, data_dir=data_dir) == sentences  # deterministic
    calls = []
    stats = corpus_statistics(
        minilm, sentences, batch_size=5, progress=lambda d, t: calls.append((d, t))
    )
    assert calls == [(5, 12), (10, 12), (12, 12)]
    assert stats.n_sentences == 12 and stats.skipped == 0
    assert stats.shape == (6, 12)
    shares = sum(stats[k] for k in ("cls", "sep"))
    assert np.all((shares >= 0) & (shares <= 1 + 1e-6))
    assert np.all(stats["entropy"] > 0)


def test_corpus_statistics_skip_sentences_too_long(minilm):
    sentences = [["Fine", "."], ["word"] * 600, ["Also", "fine", "."]]
    skipped: list[int] = []
    encs = list(iter_encodings(minilm, sentences, batch_size=3, skipped=skipped))
    assert skipped == [1] and len(encs) == 2


def test_unknown_dataset_is_a_value_error():
    with pytest.raises(ValueError, match="Unknown data set"):
        sample_sentences("no-such-corpus", "dev", 5)


def test_figures_build_and_cap_lines(pieces):
    from probing.figures.attention import (
        attention_heatmap_figure,
        head_view_figure,
        model_view_figure,
        statistics_figure,
    )

    view = attention_view(pieces, "word")
    fig = head_view_figure(view, layer=1, heads=list(range(12)), max_lines=50, min_weight=0.0)
    drawn = sum(
        sum(1 for y in t.y if y is not None and not (isinstance(y, float) and math.isnan(y))) // 2
        for t in fig.data
        if t.mode == "lines" and t.hoverinfo == "skip"
    )
    assert drawn == 50
    focused = head_view_figure(view, layer=1, heads=[0], focus=2, min_weight=0.0)
    assert "row of" in focused.layout.title.text
    grid = model_view_figure(view, selected=(2, 3))
    n = view.n_tokens
    assert grid.data[0].z.shape[0] > 6 * n and grid.data[0].z.shape[1] > 12 * n
    assert attention_heatmap_figure(view, 1, 0).data[0].z.shape == (n, n)
    assert len(statistics_figure(head_statistics([pieces])).data) == 7


def test_cli_writes_csv_html_and_json(tmp_path, data_dir):
    from probing.cli import attention as cli_attention

    parser = argparse.ArgumentParser()
    cli_attention.add_arguments(parser)
    args = parser.parse_args(
        [
            "--model",
            "minilm-l6",
            "--dataset",
            "ud-ewt",
            "--n-sentences",
            "6",
            "--out",
            str(tmp_path),
            "--quiet",
        ]
    )
    assert cli_attention.run(args) == 0
    csv = (tmp_path / "head_statistics.csv").read_text().splitlines()
    assert csv[0].startswith("layer,head,entropy,cls,sep,punct,prev,next,self,entropy_ci_low,")
    assert len(csv) == 1 + 6 * 12
    html = (tmp_path / "head_statistics.html").read_text()
    # plotly.js embedded (no <script src=…cdn…>), so the file opens offline.
    assert len(html) > 1_000_000 and "<script src=" not in html
    meta = json.loads((tmp_path / "head_statistics.json").read_text())
    assert meta["n_sentences"] >= 6 and meta["model"] == "minilm-l6"
    assert meta["averaging"] == "document" and meta["n_documents"] >= 1


def test_figure_export(pieces):
    from probing.figures.attention import model_view_figure
    from probing.figures.export import figure_bytes, image_export_available

    fig = model_view_figure(attention_view(pieces, "word"))
    html = figure_bytes(fig, "html")
    assert b"<html" in html[:300].lower() and len(html) > 1_000_000  # plotly.js inline
    with pytest.raises(ValueError):
        figure_bytes(fig, "gif")
    # .ci/run installs Debian's chromium, which kaleido drives for PNG/SVG.
    assert image_export_available()
    assert figure_bytes(fig, "png").startswith(b"\x89PNG")
