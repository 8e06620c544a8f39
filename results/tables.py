"""Markdown tables of the committed probe results (what docs/results.md shows).

PYTHONPATH=. python results/tables.py results/minilm-l6__ud-ewt__pos.json [...]
"""

from __future__ import annotations

import math
import sys
from typing import TYPE_CHECKING

from probing.probes.results import ProbeResults

if TYPE_CHECKING:
    import pandas as pd


def ci(row: pd.Series, prefix: str = "") -> str:
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


def structural(r: ProbeResults) -> str:
    """Structural probes (Hewitt & Manning): per layer the headline metric (UUAS or root
    accuracy) with its interval and seed sd, Spearman, the dev score; then the baselines."""
    t = r.table
    metric = "uuas" if r.task == "dep-distance" else "root_accuracy"
    label = "UUAS" if metric == "uuas" else "root accuracy"
    names = r.meta.get("layer_names") or []
    dev = r.meta.get("dev_scores") or {}
    seeds = r.meta.get("seeds") or [0]
    out = [
        f"| layer | test {label} [95 % CI] | sd across {len(seeds)} seeds | test Spearman, "
        f"lengths 5–50 [95 % CI] | dev {label} (seed mean) |",
        "|---|---|---|---|---|",
    ]
    probe = t[t.probe == "structural"]
    for layer in sorted(probe.layer.dropna().unique()):
        rows = probe[probe.layer == layer].set_index("metric")
        name = names[int(layer)] if int(layer) < len(names) else str(int(layer))
        d = dev.get(str(int(layer)), {}).get(metric, math.nan)
        out.append(
            f"| {int(layer)} ({name}) | {ci(rows.loc[metric])} | {rows.loc[metric]['sd']:.3f} "
            f"| {ci(rows.loc['spearman'])} | {d:.3f} |"
        )
    for base in ("static", "right-branching"):
        rows = t[t.probe == base].set_index("metric")
        if len(rows):
            out.append(f"| {base} | {ci(rows.loc[metric])} | | {ci(rows.loc['spearman'])} | |")
    lo, hi = r.meta.get("centre_of_gravity_ci") or (math.nan, math.nan)
    best, split = r.best_layer_choice()  # the rule the Probing page and statements use
    runs = list((r.meta.get("epochs") or {}).values()) or [math.nan]
    epochs = f"{min(runs)}–{max(runs)}"
    out.append("")
    out.append(
        f"best layer chosen on {split} (seed mean): **{best}**; centre of gravity (running best) "
        f"**{r.centre_of_gravity:.2f}** [{lo:.2f}, {hi:.2f}]; rank {r.meta.get('rank')}, "
        f"{epochs} epochs (first seed); train sentences {r.meta.get('n_train_sentences')} "
        f"({r.meta.get('n_train_words')} words), test sentences "
        f"{r.meta.get('n_test_sentences')}, seeds {seeds}."
    )
    return "\n".join(out)


def capacity(data: dict) -> str:
    """results/capacity/ tables: per layer and probe family task and control accuracy and
    selectivity, and the drop in selectivity from linear to MLP (Holm over the layers)."""

    def pts(d: dict) -> str:
        return f"{d['diff'] * 100:+.2f} [{d['ci_low'] * 100:+.2f}, {d['ci_high'] * 100:+.2f}]"

    out = [
        "| layer | linear: task / control | linear selectivity [CI] | MLP-1: task / control "
        "| MLP-1 selectivity [CI] | drop, linear − MLP, points [CI] | p_Holm |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in data["layers"]:
        lin, mlp, drop = r["linear"], r["mlp"], r["selectivity_drop"]
        out.append(
            f"| {r['layer']} | {lin['accuracy']:.3f} / {lin['control']:.3f} "
            f"| {lin['selectivity']['diff']:.3f} [{lin['selectivity']['ci_low']:.3f}, "
            f"{lin['selectivity']['ci_high']:.3f}] | {mlp['accuracy']:.3f} / "
            f"{mlp['control']:.3f} | {mlp['selectivity']['diff']:.3f} "
            f"[{mlp['selectivity']['ci_low']:.3f}, {mlp['selectivity']['ci_high']:.3f}] "
            f"| {pts(drop)} | {drop['p_holm']:.3f}{' (called)' if drop['called'] else ''} |"
        )
    return "\n".join(out)


if __name__ == "__main__":
    for path in sys.argv[1:]:
        if "/capacity/" in path:
            import json
            from pathlib import Path

            data = json.loads(Path(path).read_text(encoding="utf-8"))
            print(f"\n#### {data['model']} · {data['dataset']} · {data['task']} (capacity)\n")
            print(capacity(data))
            print(f"\n    {data['command']}")
            continue
        r = ProbeResults.from_json(path)
        print(f"\n#### {r.model} · {r.dataset} · {r.task}\n")
        if r.task == "wsd":
            print(wsd(r))
        elif r.task in ("dep-distance", "dep-depth"):
            print(structural(r))
        else:
            print(tagging(r))
        print(f"\n    {r.meta.get('command', '')}")
