"""Sentences and a table from an erasure run's numbers (its JSON): the in-sample and the
held-out protocol side by side (:mod:`probing.interventions.erasure_heldout`).

The only judgement made here is the at-baseline one of issue 40: the held-out probe is
"at the majority baseline" at a layer only where the paired 95 % sentence-bootstrap interval
of (held-out accuracy − majority) reaches 0; elsewhere the sentence gives what remains above
it, with its interval. Intervals are per layer (not corrected across layers; a correction
would widen them and so call more layers "at majority", not fewer). Pages, the CLI and
the erasure claims of ``docs/results.md`` (:mod:`probing.claims.sources`) are made from
the same rows; none is written by hand.
"""

from __future__ import annotations

from collections.abc import Sequence


def has_heldout(result: dict) -> bool:
    """Whether the run measured the held-out protocol (runs before issue 40 did not)."""
    rows = result.get("rows") or []
    return bool(rows) and "acc_heldout" in rows[0]


def _ci(row: dict, key: str, digits: int = 3) -> str:
    return (
        f"{row[key]:+.{digits}f} ({row[key + '_lo']:+.{digits}f} to {row[key + '_hi']:+.{digits}f})"
    )


def _layers(rows: Sequence[dict]) -> str:
    ls = [int(r["layer"]) for r in rows]
    return ("layer " if len(ls) == 1 else "layers ") + ", ".join(map(str, ls))


def at_majority(row: dict) -> str:
    """``at``, ``above`` or ``below``: where the held-out probe's paired interval against the
    majority baseline lies (``at``: it reaches 0)."""
    lo, hi = row["heldout_minus_majority_lo"], row["heldout_minus_majority_hi"]
    return "above" if lo > 0 else "below" if hi < 0 else "at"


def summary_sentences(result: dict) -> list[str]:
    """The run's findings under both protocols, made from its rows."""
    rows = sorted(result.get("rows") or [], key=lambda r: r["layer"])
    if not rows:
        return []
    method = result["spec"]["method"].upper()
    out = [_in_sample(rows, method)]
    if not has_heldout(result):
        out.append(
            "This file has the in-sample protocol only (made before the held-out one): the "
            "probe was retrained on the words the eraser was fitted on."
        )
        return out
    out.append(_held_out(rows, method))
    out.append(_random(rows))
    curve = _curve(result)
    if curve:
        out.append(curve)
    if "lm_loss_erased_minus_random" in rows[0]:
        out.append(_lm(rows, method, result.get("meta", {}).get("lm_effect", "")))
    return out


def _lm(rows: Sequence[dict], method: str, what: str) -> str:
    name = "bi-LM" if "bi-LM" in what else "masked-LM"

    def span(key: str, digits: int) -> str:
        pts = [r[key] for r in rows]
        lo = min(r[key + "_lo"] for r in rows)
        hi = max(r[key + "_hi"] for r in rows)
        return (
            f"{min(pts):+.{digits}f} to {max(pts):+.{digits}f} (intervals within "
            f"{lo:+.{digits}f} to {hi:+.{digits}f})"
        )

    def sign(key: str) -> str:
        pos = [r for r in rows if r[key + "_lo"] > 0]
        neg = [r for r in rows if r[key + "_hi"] < 0]
        zero = [r for r in rows if r[key + "_lo"] <= 0 <= r[key + "_hi"]]
        parts = [f"above 0 at {_layers(pos)}" if pos else ""]
        parts += [f"below 0 at {_layers(neg)}" if neg else ""]
        parts += [f"including 0 at {_layers(zero)}" if zero else ""]
        return ", ".join(p for p in parts if p)

    return (
        f"{name} effect of the run's eraser ({method} − random subspace of the same rank, "
        f"paired, {rows[0].get('n_heldout_words', 0):,} held-out words): loss "
        f"{span('lm_loss_erased_minus_random', 3)} nats, intervals {sign('lm_loss_erased_minus_random')}; "
        f"top-1 {span('lm_top1_erased_minus_random', 3)}, intervals "
        f"{sign('lm_top1_erased_minus_random')}."
    )


def _in_sample(rows: Sequence[dict], method: str) -> str:
    lo = min(r["erased_minus_majority"] for r in rows)
    hi = max(r["erased_minus_majority"] for r in rows)
    span = f"{lo:+.3f}" if abs(hi - lo) < 5e-4 else f"{lo:+.3f} to {hi:+.3f}"
    return (
        f"In-sample (a {method} eraser fitted on the probe's own {rows[0]['n_train_words']:,} "
        f"training words, the probe retrained on them erased): accuracy − majority is {span} "
        f"at {_layers(rows)}."
    )


def _held_out(rows: Sequence[dict], method: str) -> str:
    at = [r for r in rows if at_majority(r) == "at"]
    above = [r for r in rows if at_majority(r) == "above"]
    below = [r for r in rows if at_majority(r) == "below"]
    head = (
        f"Held-out (the {method} eraser fitted on {rows[0]['n_fit_words']:,} training words; a "
        f"fresh probe trained on {rows[0]['n_heldout_train_words']:,} erased dev words it "
        f"never saw, scored on {rows[0]['n_test_words']:,} erased test words; accuracy − "
        "majority, paired 95 % sentence-bootstrap interval per layer, not corrected across "
        "layers): "
    )
    parts = []
    if at:
        parts.append(f"at the majority baseline at {_layers(at)} (the interval reaches 0)")
    if above:
        each = "; ".join(f"layer {r['layer']} {_ci(r, 'heldout_minus_majority')}" for r in above)
        parts.append(f"above it at {_layers(above)}: {each}")
    if below:
        each = "; ".join(f"layer {r['layer']} {_ci(r, 'heldout_minus_majority')}" for r in below)
        parts.append(f"below it at {_layers(below)}: {each}")
    return head + "; ".join(parts) + "."


def _random(rows: Sequence[dict]) -> str:
    def span(key: str) -> str:
        lo = min(r[key + "_lo"] for r in rows)
        hi = max(r[key + "_hi"] for r in rows)
        pts = [r[key] for r in rows]
        return f"{min(pts):+.3f} to {max(pts):+.3f} (intervals within {lo:+.3f} to {hi:+.3f})"

    return (
        "Random subspaces of the same rank, accuracy − the clean probe trained on the same "
        f"words: in-sample {span('random_minus_before')}; held-out "
        f"{span('random_heldout_minus_before_heldout')}."
    )


def _curve(result: dict) -> str:
    curve = result.get("curve") or []
    sizes = sorted({c["n_fit_sentences"] for c in curve})
    if len(sizes) < 2:
        return ""
    words = {c["n_fit_sentences"]: c["n_fit_words"] for c in curve}
    by_layer: dict[int, dict[int, dict]] = {}
    for c in curve:
        by_layer.setdefault(int(c["layer"]), {})[c["n_fit_sentences"]] = c
    steps = "; ".join(
        f"layer {layer}: "
        + " → ".join(f"{pts[s]['heldout_minus_majority']:+.3f}" for s in sizes if s in pts)
        for layer, pts in sorted(by_layer.items())
    )
    grid = ", ".join(f"{s:,} sentences ({words[s]:,} words)" for s in sizes)
    return f"Held-out accuracy − majority as the eraser's fit set grows ({grid}): {steps}."


def protocol_table(result: dict) -> str:
    """A plain-text table, one line per layer: both protocols and the random control."""
    rows = sorted(result.get("rows") or [], key=lambda r: r["layer"])
    held = has_heldout(result)
    head = "layer  rank  majority  before   in-sample  random"
    if held:
        head += "   | before(dev)  held-out                  random(dev)  held-out − majority"
    lines = [head]
    for r in rows:
        line = (
            f"{r['layer']:>5}  {r['rank']:>4}  {r['majority']:.3f}     {r['acc_before']:.3f}"
            f"    {r['acc_erased']:.3f}      {r['acc_random']:.3f}"
        )
        if held:
            line += (
                f"   | {r['acc_before_heldout']:.3f}        {r['acc_heldout']:.3f} "
                f"({r['acc_heldout_lo']:.3f}–{r['acc_heldout_hi']:.3f})  "
                f"{r['acc_random_heldout']:.3f}        {_ci(r, 'heldout_minus_majority')}"
            )
        lines.append(line)
    return "\n".join(lines)


def markdown_block(result: dict) -> str:
    """The run as ``docs/results.md`` shows it: one table row per layer (both protocols, the
    random control and the LM effect), the fit-set curve, then :func:`summary_sentences`."""
    rows = sorted(result.get("rows") or [], key=lambda r: r["layer"])
    meta, method = result.get("meta", {}), result["spec"]["method"].upper()

    def ci(r: dict, key: str) -> str:
        return f"{r[key]:.3f} ({r[key + '_lo']:.3f}–{r[key + '_hi']:.3f})"

    head = [
        "layer",
        "rank in-sample / run",
        "majority",
        "probe before",
        f"in-sample after {method}",
        "in-sample random",
        "before (dev-trained)",
        f"held-out after {method}",
        "held-out random",
        "held-out − majority",
    ]
    lm = "lm_loss_erased_minus_random" in rows[0]
    head += ["LM loss: eraser − random", "top-1: eraser − random"] if lm else []
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [
            str(r["layer"]),
            f"{r['rank_insample']} / {r['rank']}",
            f"{r['majority']:.3f}",
            ci(r, "acc_before"),
            ci(r, "acc_erased"),
            ci(r, "acc_random"),
            ci(r, "acc_before_heldout"),
            ci(r, "acc_heldout"),
            ci(r, "acc_random_heldout"),
            ci(r, "heldout_minus_majority"),
        ]
        if lm:
            cells += [ci(r, "lm_loss_erased_minus_random"), ci(r, "lm_top1_erased_minus_random")]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        f"In-sample: {meta.get('train_sentences')} training sentences "
        f"({rows[0]['n_train_words']:,} words) for the eraser and the probe; the run's "
        f"eraser: {meta.get('fit_sentences'):,} of the split's "
        f"{meta.get('fit_split_sentences'):,} training sentences ({meta.get('n_fit_words'):,} "
        f"words); held-out probes: {meta.get('heldout_train_sentences'):,} dev sentences "
        f"({meta.get('n_heldout_train_words'):,} words); {meta.get('test_sentences')} test "
        f"sentences ({rows[0]['n_test_words']:,} words)."
    )
    curve = result.get("curve") or []
    if curve:
        sizes = sorted({c["n_fit_sentences"] for c in curve})
        words = {c["n_fit_sentences"]: c["n_fit_words"] for c in curve}
        lines += [
            "",
            "| held-out − majority, eraser fitted on | "
            + " | ".join(f"{s:,} sentences ({words[s]:,} words)" for s in sizes)
            + " |",
            "|---|" + "---|" * len(sizes),
        ]
        for layer in sorted({c["layer"] for c in curve}):
            pts = {c["n_fit_sentences"]: c for c in curve if c["layer"] == layer}
            lines.append(
                f"| layer {layer} | "
                + " | ".join(
                    f"{pts[s]['heldout_minus_majority']:+.3f} "
                    f"({pts[s]['heldout_minus_majority_lo']:+.3f} to "
                    f"{pts[s]['heldout_minus_majority_hi']:+.3f})"
                    if s in pts
                    else ""
                    for s in sizes
                )
                + " |"
            )
    lines.append("")
    lines += [f"- {s}" for s in summary_sentences(result)]
    rec = result.get("recovery") or []
    if rec:
        lines.append(f"- {recovery_sentence(rec)}")
    return "\n".join(lines)


def recovery_sentence(rec: Sequence[dict]) -> str:
    """Probes retrained at later layers after erasing at one: the range of their accuracy
    against majority and against the clean probe, with the intervals' bounds."""

    def span(key: str) -> str:
        pts = [r[key] for r in rec]
        lo, hi = min(r[key + "_lo"] for r in rec), max(r[key + "_hi"] for r in rec)
        return f"{min(pts):+.3f} to {max(pts):+.3f} (intervals within {lo:+.3f} to {hi:+.3f})"

    above = sum(r["after_minus_majority_lo"] > 0 for r in rec)
    below = sum(r["after_minus_clean_hi"] < 0 for r in rec)
    return (
        f"Recovery (the run's eraser at one layer, a probe retrained at each later layer; "
        f"{len(rec)} pairs): accuracy − majority {span('after_minus_majority')}, interval above "
        f"0 in {above} of {len(rec)}; accuracy − the clean probe {span('after_minus_clean')}, "
        f"interval below 0 in {below} of {len(rec)}."
    )
