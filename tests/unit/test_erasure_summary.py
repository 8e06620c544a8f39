"""The erasure sentences' one judgement: "at the majority baseline" only where the held-out
probe's paired interval against majority reaches 0; elsewhere what remains, with its
interval. Rows are made up around that rule (the real runs are in tests/library)."""

from __future__ import annotations

from probing.interventions.erasure_summary import (
    at_majority,
    has_heldout,
    protocol_table,
    summary_sentences,
)


def _row(layer: int, lo: float, hi: float) -> dict:
    point = (lo + hi) / 2
    row = {"layer": layer, "rank": 16, "n_train_words": 6449, "n_test_words": 2353}
    for key, value in {
        "majority": 0.158,
        "acc_before": 0.9,
        "acc_erased": 0.158,
        "erased_minus_majority": 0.0,
        "acc_random": 0.9,
        "random_minus_before": 0.001,
        "acc_before_heldout": 0.91,
        "acc_heldout": 0.158 + point,
        "acc_random_heldout": 0.91,
        "random_heldout_minus_before_heldout": -0.002,
    }.items():
        row.update({key: value, f"{key}_lo": value - 0.01, f"{key}_hi": value + 0.01})
    row.update(
        heldout_minus_majority=point,
        heldout_minus_majority_lo=lo,
        heldout_minus_majority_hi=hi,
        n_fit_words=197_641,
        n_heldout_train_words=23_000,
    )
    return row


def _result(rows: list[dict], curve: list[dict] | None = None) -> dict:
    return {"spec": {"method": "leace"}, "rows": rows, "curve": curve or [], "meta": {}}


def test_at_majority_only_where_the_interval_reaches_zero():
    rows = [_row(0, -0.004, 0.006), _row(1, 0.21, 0.25), _row(2, -0.03, -0.01), _row(3, 0.0, 0.02)]
    assert [at_majority(r) for r in rows] == ["at", "above", "below", "at"]
    held = summary_sentences(_result(rows))[1]
    assert "at the majority baseline at layers 0, 3" in held
    assert "above it at layer 1: layer 1 +0.230 (+0.210 to +0.250)" in held
    assert "below it at layer 2" in held
    assert "197,641 training words" in held and "23,000 erased dev words" in held


def test_no_layer_at_majority_says_none_is():
    text = summary_sentences(_result([_row(0, 0.1, 0.2), _row(1, 0.05, 0.07)]))[1]
    assert "at the majority baseline" not in text and "above it at layers 0, 1" in text


def test_a_run_without_the_held_out_protocol_is_called_in_sample_only():
    old = _row(0, 0.1, 0.2)
    for key in [k for k in old if "heldout" in k or k == "n_fit_words"]:
        del old[key]
    result = _result([old])
    assert not has_heldout(result)
    text = " ".join(summary_sentences(result))
    assert "in-sample protocol only" in text and "Held-out" not in text
    assert "held-out" not in protocol_table(result)


def test_curve_sentence_lists_each_layer_by_fit_size():
    curve = [
        {"layer": 3, "n_fit_sentences": n, "n_fit_words": w, "heldout_minus_majority": d}
        for n, w, d in ((400, 6449, 0.4), (12450, 197641, 0.1))
    ]
    text = summary_sentences(_result([_row(3, 0.08, 0.12)], curve))[-1]
    assert "400 sentences (6,449 words), 12,450 sentences (197,641 words)" in text
    assert "layer 3: +0.400 → +0.100" in text
