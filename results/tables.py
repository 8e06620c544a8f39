"""Markdown tables of the committed probe results (what docs/results.md shows).

PYTHONPATH=. python results/tables.py results/minilm-l6__ud-ewt__pos.json [...]
"""

from __future__ import annotations

import math
import sys

from probing.probes.results import ProbeResults


def ci(row, prefix: str = "") -> str:  # noqa: ANN001
    v, lo, hi = (
        row[prefix or "value"],
        row[f"{prefix}_ci_low" if prefix else "ci_low"],
        row[f"{prefix}_ci_high" if prefix else "ci_high"],
    )
    if v != v:
        return ""
    return f"{v:.3f} [{lo:.3f}, {hi:.3f}]" if lo == lo else f"{v:.3f}"


def tagging(r: ProbeResults) -> str:
    t = r.table
    acc = r.layer_scores("accuracy").set_index("layer")
    f1 = r.layer_scores("macro_f1").set_index("layer")
    mdl = t[(t.probe == "linear") & (t.metric == "mdl_kbits")].set_index("layer")
    comp = t[(t.probe == "linear") & (t.metric == "compression")].set_index("layer")
    names = r.meta.get("layer_names") or []
    out = [
        "| layer | accuracy [95 % CI] | sd | macro-F1 | control acc. [CI] | selectivity [CI] "
        "| MDL kbits task / control | compression task / control |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for layer, row in acc.iterrows():
        name = names[layer] if layer < len(names) else str(layer)
        m = mdl.loc[layer] if layer in mdl.index else None
        c = comp.loc[layer] if layer in comp.index else None
        out.append(
            f"| {layer} ({name}) | {ci(row)} | {row['sd']:.3f} | {f1.loc[layer, 'value']:.3f} "
            f"| {ci(row, 'control')} | {ci(row, 'selectivity')} "
            + (
                f"| {m['value']:.1f} / {m['control']:.1f} | {c['value']:.2f} / {c['control']:.2f} |"
                if m is not None
                else "| | |"
            )
        )
    out.append("")
    out.append("| reference | accuracy [95 % CI] | macro-F1 |")
    out.append("|---|---|---|")
    for probe in ("majority", "word_type", "static", "scalar_mix"):
        rows = t[(t.probe == probe) & t.layer.isna()]
        if len(rows):
            a = rows[rows.metric == "accuracy"].iloc[0]
            f = rows[rows.metric == "macro_f1"].iloc[0]
            out.append(f"| {probe} | {ci(a)} | {f['value']:.3f} |")
    out.append("")
    out.append(summary(r))
    return "\n".join(out)


def summary(r: ProbeResults) -> str:
    t = r.table
    parts = []
    best = t[t.probe == "best_layer"]
    if len(best):
        b = best.iloc[0]
        parts.append(f"best layer chosen on dev: **{int(b['layer'])}** (test {ci(b)})")
    for probe, label in (
        ("cog_running_best", "centre of gravity, running best of single layers"),
        ("cog_cumulative_mix", "centre of gravity, Tenney's cumulative mixes"),
    ):
        rows = t[t.probe == probe]
        if len(rows):
            c = rows.iloc[0]
            parts.append(f"{label}: **{c['value']:.2f}** [{c['ci_low']:.2f}, {c['ci_high']:.2f}]")
    if r.scalar_mix:
        m = r.scalar_mix
        w = " / ".join(f"{x:.2f}" for x in m["weights"])
        parts.append(
            f"scalar-mix weights {w}, γ {m['gamma']:.2f}, expected layer {m['expected_layer']:.2f}"
        )
    meta = r.meta
    if meta.get("C"):
        parts.append(
            f"C = {sorted(set(meta['C'].values()))} ({meta.get('C_selection')}"
            + ("; at the grid's edge" if meta.get("C_at_grid_edge") else "")
            + ")"
        )
    if r.task != "wsd":
        parts.append(
            f"train words per fit {meta.get('n_train_words')}, dev words "
            f"{meta.get('n_dev_words')}, test words {meta.get('n_test_words')} "
            f"({meta.get('n_test_sentences')} sentences), seeds {meta.get('seeds')}"
        )
    return "; ".join(parts) + "."


def wsd(r: ProbeResults) -> str:
    """Headline rows (non-leaky backoff: a lemma unseen in training gets its only WordNet
    sense, else no answer) with precision and recall, then the leaky side rows (WordNet's
    first sense as the backoff) and the baselines."""
    t = r.table
    metrics = ("f1", "precision", "recall", "f1_polysemous", "f1_seen", "f1_backoff")
    out = [
        "| probe | F1 [95 % CI] | precision | recall | F1 polysemous | F1 seen lemmas "
        "(1-NN) | F1 back-off items |",
        "|---|---|---|---|---|---|---|",
    ]
    layers = list(r.layer_scores("f1")["layer"])
    order = [("1nn", layer, f"1-NN layer {int(layer)}") for layer in layers]
    order += [
        ("1nn_leaky_backoff", layer, f"1-NN layer {int(layer)}, first-sense backoff (leaks)")
        for layer in layers
    ]
    order += [
        (p, None, label)
        for p, label in (
            ("first_sense", "first_sense (leaks)"),
            ("semcor_mfs", "semcor_mfs"),
            ("semcor_mfs_leaky_backoff", "semcor_mfs, first-sense backoff (leaks)"),
            ("semcor_mfs_train_only", "semcor_mfs_train_only"),
            ("static_1nn", "static_1nn"),
        )
    ]
    for probe, layer, label in order:
        rows = t[(t.probe == probe) & ((t.layer == layer) if layer is not None else t.layer.isna())]
        if not len(rows):
            continue
        rows = rows.set_index("metric")
        cells = []
        for m in metrics:
            if m not in rows.index:
                cells.append("")
            else:
                cells.append(ci(rows.loc[m]) if m == "f1" else f"{rows.loc[m]['value']:.3f}")
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out.append("")
    out.append(summary(r))
    m = r.meta
    out.append(
        f"\nTest instances {m.get('n_test_instances')} (placeholders left out: "
        f"{m.get('n_test_placeholders_left_out')}), seen-lemma rate "
        f"{m.get('test_seen_lemma_rate', math.nan):.3f}, polysemous rate "
        f"{m.get('test_polysemous_rate', math.nan):.3f}, train instances "
        f"{m.get('n_train_instances')}."
    )
    return "\n".join(out)


if __name__ == "__main__":
    for path in sys.argv[1:]:
        r = ProbeResults.from_json(path)
        print(f"\n#### {r.model} · {r.dataset} · {r.task}\n")
        print(wsd(r) if r.task == "wsd" else tagging(r))
        print(f"\n    {r.meta.get('command', '')}")
