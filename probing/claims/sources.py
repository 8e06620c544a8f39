"""Claims made from committed per-item data, one builder per kind of result.

Every builder states *every* comparison of its family (no selection): a probe run's best
layer against all its other layers and all its baselines, every pair of a model's tasks,
every task two models share. The engine (:mod:`probing.probes.compare`) gives the
differences from the per-sentence counts in ``results/sentence-scores/``; where a committed
file already holds the engine's differences (interventions, minimal pairs, attribution,
the cross-model depth table) they are read, not recomputed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import combinations
from pathlib import Path

from probing.claims.claim import Claim, Comparison
from probing.claims.wording import (
    BASELINE_NAMES,
    by_outcome,
    comparison,
    evidence,
    grouped,
    interval_outcome,
    listing,
)
from probing.errors import DataFormatError, InvalidArgumentError
from probing.probes.compare import Difference, Engine, compare, with_holm
from probing.probes.reapply import COUNTS_DIR
from probing.probes.statements import Cells
from probing.probes.tasks import TASKS

N_BOOT = 2000


def _task_name(task: str) -> str:
    t = TASKS.get(task)
    return t.label.split(" · ")[0] if t else task


def probe_stems(results_dir: Path) -> list[str]:
    """Runs with a results JSON and stored per-sentence counts, sorted."""
    return sorted(
        p.stem
        for p in results_dir.glob("*__*__*.json")
        if (results_dir / COUNTS_DIR / f"{p.stem}.safetensors").is_file()
    )


def _layers(cells: Cells, stem: str) -> list[int]:
    return sorted(int(c.split()[1]) for c in cells.counts(stem).cells if c.startswith("layer "))


def probe_run(cells: Cells, stem: str) -> list[Claim]:
    """The best layer (dev) against every other layer and every baseline: one family, Holm
    over all of it; two claims (peak, baselines)."""
    model, dataset, task = stem.split("__")
    best = cells.best_layer(stem)
    others = [la for la in _layers(cells, stem) if la != best]
    bases = [b for b in BASELINE_NAMES if b in cells.counts(stem).cells]
    b_rep = cells.get(f"{stem}:layer {best}")
    raw = [compare(b_rep, cells.get(f"{stem}:layer {la}"), cells.engine.seed) for la in others]
    raw += [compare(b_rep, cells.get(f"{stem}:{b}"), cells.engine.seed) for b in bases]
    diffs = with_holm(raw)
    n = len(diffs)
    comps = [
        comparison(d, f"layer {best}", f"layer {la}")
        for d, la in zip(diffs[: len(others)], others, strict=True)
    ]
    base_comps = [
        comparison(d, f"layer {best}", b) for d, b in zip(diffs[len(others) :], bases, strict=True)
    ]
    unit = "points"
    label = f"{model} · {_task_name(task)} ({dataset})"
    family = f"{stem}: best layer vs {len(others)} layers and {len(bases)} baselines"
    src = (f"results/{stem}.json", f"results/{COUNTS_DIR}/{stem}.safetensors")
    out = [
        Claim(
            f"peak:{stem}",
            "peak",
            model,
            "probing",
            grouped(
                f"{label}: layer {best} (chosen on dev)",
                comps,
                lambda b: b.split()[1],
                every="every other layer",
            )
            + " "
            + evidence(comps, lambda c: f"L{best} − L{c.b.split()[1]}", 100, unit)
            + ".",
            tuple(comps),
            family,
            f"Holm over {n}",
            source=src,
            extra={"best_layer": best, "dataset": dataset, "task": task},
        )
    ]
    if base_comps:
        out.append(
            Claim(
                f"baselines:{stem}",
                "at_baseline",
                model,
                "probing",
                grouped(
                    f"{label}: the best layer ({best})",
                    base_comps,
                    lambda b: BASELINE_NAMES[b],
                    singular="",
                    plural="",
                ).replace("  ", " ")
                + " "
                + evidence(base_comps, lambda c: f"L{best} − {c.b}", 100, unit)
                + ".",
                tuple(base_comps),
                family,
                f"Holm over {n}",
                source=src,
                extra={"best_layer": best, "dataset": dataset, "task": task},
            )
        )
    return out


VARIANTS = (("deprel", "deprel-hd"),)  # task inputs compared layer by layer within a model


def variant_pair(cells: Cells, model: str, dataset: str, a: str, b: str) -> Claim:
    """Two inputs of one task (e.g. [h; d] vs [h; d; h∘d]) at every layer, paired on the
    same test sentences; Holm over the layers."""
    sa, sb = f"{model}__{dataset}__{a}", f"{model}__{dataset}__{b}"
    layers = [la for la in _layers(cells, sa) if la in _layers(cells, sb)]
    diffs = with_holm(
        [
            compare(cells.get(f"{sa}:layer {la}"), cells.get(f"{sb}:layer {la}"), cells.engine.seed)
            for la in layers
        ]
    )
    comps = [comparison(d, f"{a} L{la}", f"{b} L{la}") for d, la in zip(diffs, layers, strict=True)]
    said = by_outcome(comps, lambda c: c.a.rsplit("L", 1)[1], "at", "layer", "layers")
    text = (
        f"{model} · {_task_name(a)}: the {a} input, against the {b} input ({_task_name(b)}), "
        f"is {said} " + evidence(comps, lambda c: f"{c.a} − {c.b}", 100, "points") + "."
    )
    return Claim(
        f"variant:{model}:{a}:{b}",
        "ordering",
        model,
        "probing",
        text,
        tuple(comps),
        f"{model}: {a} vs {b} at {len(layers)} layers",
        f"Holm over {len(layers)}",
        source=(f"results/{COUNTS_DIR}/{sa}.safetensors", f"results/{COUNTS_DIR}/{sb}.safetensors"),
    )


def task_orderings(cells: Cells, model: str, stems: list[str]) -> Claim | None:
    """Every pair of the model's Layering tasks by centre of gravity (running best), in
    layers; paired on one data set's test sentences, independent across data sets; Holm
    over the pairs."""
    layering = [t for t, task in TASKS.items() if task.layering]
    reps = {}
    for task in layering:
        stem = f"{model}__{TASKS[task].default_dataset}__{task}"
        if stem in stems:
            reps[task] = cells.get(f"{stem}:cog")
    pairs = list(combinations(reps, 2))
    if not pairs:
        return None
    diffs = with_holm([compare(reps[b], reps[a], cells.engine.seed) for a, b in pairs])
    comps = [
        comparison(d, TASKS[b].short_label, TASKS[a].short_label)
        for (a, b), d in zip(pairs, diffs, strict=True)
    ]
    sentences = []
    for c in comps:
        if c.outcome == "tie":
            sentences.append(f"{c.a} and {c.b} are not distinguishable")
        else:
            hi, lo = (c.a, c.b) if c.outcome == "above" else (c.b, c.a)
            sentences.append(f"{hi} sits above {lo}")
    text = (
        f"{model}, centres of gravity (running best) of its tasks: "
        + "; ".join(sentences)
        + " "
        + evidence(comps, lambda c: f"{c.a} − {c.b}", 1, "layers")
        + "."
    )
    return Claim(
        f"cog:{model}",
        "cog_order",
        model,
        "probing",
        text,
        tuple(comps),
        f"{model}: every pair of {len(reps)} tasks",
        f"Holm over {len(pairs)}",
        unit="layers",
        scale=1.0,
        source=tuple(
            f"results/{COUNTS_DIR}/{model}__{TASKS[t].default_dataset}__{t}.safetensors"
            for t in reps
        ),
    )


def layering_claim(
    results_dir: str | Path, model: str, n_boot: int = N_BOOT
) -> tuple[Claim | None, list[str]]:
    """The Layering page's claim for one model (the same builder and engine settings as
    ``results/claims.json``), and its Layering tasks that have a results file but no stored
    per-sentence counts (left out of the comparison)."""
    root = Path(results_dir)
    stems = probe_stems(root)
    unscored = [
        task.short_label
        for t, task in TASKS.items()
        if task.layering
        and (root / f"{model}__{task.default_dataset}__{t}.json").is_file()
        and f"{model}__{task.default_dataset}__{t}" not in stems
    ]
    cells = Cells(root, Engine(n_boot=n_boot, seed=0))
    try:
        return task_orderings(cells, model, stems), unscored
    except (DataFormatError, InvalidArgumentError, OSError, ValueError, KeyError):
        return None, unscored


def cross_model(cells: Cells, a: str, b: str, stems: list[str]) -> Claim | None:
    """Best layer (each chosen on dev) of model a against model b on every task both have,
    paired on the same test sentences; Holm over the tasks."""
    tasks = []
    for stem in stems:
        m, dataset, task = stem.split("__")
        if m == a and f"{b}__{dataset}__{task}" in stems:
            tasks.append((dataset, task))
    if not tasks:
        return None
    diffs = with_holm(
        [
            compare(
                cells.get(f"{a}__{ds}__{t}:best"),
                cells.get(f"{b}__{ds}__{t}:best"),
                cells.engine.seed,
            )
            for ds, t in tasks
        ]
    )
    comps = [comparison(d, f"{a} {t}", f"{b} {t}") for (ds, t), d in zip(tasks, diffs, strict=True)]
    said = by_outcome(comps, lambda c: _task_name(c.a.rsplit(" ", 1)[1]), "on")
    text = (
        f"{a}'s best layer (each model's chosen on dev), against {b}'s on the same test "
        f"sentences, is {said} " + evidence(comps, lambda c: f"{c.a} − {b}", 100, "points") + "."
    )
    return Claim(
        f"cross:{a}:{b}",
        "cross_model",
        f"{a} vs {b}",
        "probing",
        text,
        tuple(comps),
        f"{a} vs {b}: {len(tasks)} tasks",
        f"Holm over {len(tasks)}",
        source=tuple(f"results/{a}__{ds}__{t}.json" for ds, t in tasks),
        note="The intervals do not separate model from protocol: each model's layer is "
        "chosen on dev and each run's training size is its own (see the run's JSON).",
    )


def depth_table(path: Path) -> Claim | None:
    """mpnet-base vs minilm-l6 centres of gravity, absolute and relative (the engine's table
    in ``results/equal-size/relative_depth.json``, made by ``results/model_depths.py``)."""
    if not path.is_file():
        return None
    rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
    comps, parts = [], []
    for r in rows:
        cd = r["cog_diff"]
        ab, rel = Difference.from_dict(cd["absolute"]), Difference.from_dict(cd["relative"])
        ca = comparison(ab, f"mpnet-base {r['task']}", f"minilm-l6 {r['task']}")
        cr = comparison(
            rel, f"mpnet-base {r['task']} (relative)", f"minilm-l6 {r['task']} (relative)"
        )
        if cd["contradicted"]:
            cr = Comparison(cr.a, cr.b, cr.value, cr.ci_low, cr.ci_high, cr.p, cr.p_adj, "tie")
        comps += [ca, cr]
        word = {"above": "above", "below": "below", "tie": "not distinguishable from"}
        rel_word = (
            word[cr.outcome]
            if not cd["contradicted"]
            else ("not called (the absolute difference points the other way)")
        )
        parts.append(
            f"{_task_name(r['task'])}: in layers {word[ca.outcome]} minilm-l6's "
            f"({ca.value:+.2f} [{ca.ci_low:+.2f}, {ca.ci_high:+.2f}]); in relative depth "
            f"{rel_word} ({cr.value:+.3f} [{cr.ci_low:+.3f}, {cr.ci_high:+.3f}])"
        )
    text = (
        "mpnet-base's centre of gravity against minilm-l6's, at equal training size — "
        + "; ".join(parts)
        + "."
    )
    return Claim(
        "depth:mpnet-base:minilm-l6",
        "depth",
        "mpnet-base vs minilm-l6",
        "depth",
        text,
        tuple(comps),
        f"{len(rows)} tasks, absolute and relative separately",
        f"Holm over {len(rows)} in each",
        unit="layers / fraction of depth",
        scale=1.0,
        source=(str(path.relative_to(path.parents[2])),),
        note="The intervals do not support a relative ordering where the absolute one points "
        "the other way (dividing by 12 instead of 6 alone moves a centre); such rows are "
        "counted as not distinguishable.",
    )


def erasure_runs(folder: Path) -> Iterator[Claim]:
    """Held-out probe after erasure against the majority baseline, per layer (the judged
    protocol: a fresh probe on erased words the eraser never saw)."""
    for path in sorted(folder.glob("*__erase-*.json")):
        d = json.loads(path.read_text(encoding="utf-8"))
        rows = sorted(d.get("rows") or [], key=lambda r: r["layer"])
        if not rows or "heldout_minus_majority" not in rows[0]:
            continue
        spec = d["spec"]
        comps = tuple(
            Comparison(
                f"held-out L{r['layer']}",
                "majority",
                r["heldout_minus_majority"],
                r["heldout_minus_majority_lo"],
                r["heldout_minus_majority_hi"],
                outcome=interval_outcome(
                    r["heldout_minus_majority"],
                    r["heldout_minus_majority_lo"],
                    r["heldout_minus_majority_hi"],
                ),
            )
            for r in rows
        )
        at = [c.a.split("L")[1] for c in comps if c.outcome == "tie"]
        above = [c.a.split("L")[1] for c in comps if c.outcome == "above"]
        method = spec["method"].upper()
        said = []
        if above:
            said.append(f"above the majority baseline at {listing(above, 'layer', 'layers')}")
        if at:
            said.append(f"at the majority baseline at {listing(at, 'layer', 'layers')}")
        text = (
            f"{spec['model']} · {_task_name(spec['task'])}, after {method}: a probe trained on "
            f"erased words the eraser never saw is {'; '.join(said)} "
            + evidence(comps, lambda c: f"{c.a} − majority", 100, "points")
            + "."
        )
        yield Claim(
            f"erasure:{path.stem}",
            "at_baseline",
            spec["model"],
            "erasure",
            text,
            comps,
            f"{path.stem}: one test per layer",
            "none (per-layer 95 % intervals; a correction would widen them and so call more "
            "layers at majority, not fewer)",
            source=(f"results/interventions/{path.name}",),
            note="The eraser was fitted on "
            f"{d.get('meta', {}).get('fit_sentences', '?')} sentences; the intervals do not "
            "say what a larger fit would leave (the fit-size curve is in the run's "
            "__fitcurve.csv).",
        )


def head_ablation(folder: Path) -> Iterator[Claim]:
    """How many heads survive Holm over all heads, per measure."""
    for path in sorted(folder.glob("*__ablate-heads.json")):
        d = json.loads(path.read_text(encoding="utf-8"))
        fam = d.get("family")
        if not fam:
            continue
        from probing.interventions.head_family import family_sentence

        comps = []
        for measure, m in fam["measures"].items():
            for h in m["heads"]:
                if h["called"]:
                    comps.append(
                        comparison(Difference.from_dict(h), f"{measure} {h['a']}", "clean")
                    )
        yield Claim(
            f"heads:{path.stem}",
            "survivors",
            d["model"],
            "heads",
            f"{d['model']}, each head masked alone: {family_sentence(fam)}",
            tuple(comps),
            f"{fam['n_heads']} heads per measure",
            fam["correction"],
            source=(f"results/interventions/{path.name}",),
            extra={
                m: {"survivors": len(v["survivors"]), "n": fam["n_heads"]}
                for m, v in fam["measures"].items()
            },
        )


def engine_table(
    path: Path,
    model: str,
    topic: str,
    what: str,
    key: str | None = None,
    table: dict | None = None,
    scale: float = 100.0,
    unit: str = "points",
) -> Claim | None:
    """A committed table of engine differences (``{"rows": [Difference dicts]}``, Holm over
    its rows; ``d["comparisons"]``, its ``key`` entry, or ``table`` itself), every row
    stated."""
    if not path.is_file():
        return None
    if table is None:
        d = json.loads(path.read_text(encoding="utf-8"))
        table = d["comparisons"][key] if key else d["comparisons"]
    diffs = [Difference.from_dict(r) for r in table["rows"]]
    comps = [comparison(x) for x in diffs]
    called = [c for c in comps if c.called]
    ties = [c for c in comps if not c.called]
    digits = 1 if scale == 100.0 else 3
    parts = [
        f"{c.a} is {c.outcome} {c.b} ({c.value * scale:+.{digits}f} [{c.ci_low * scale:+.{digits}f}, "
        f"{c.ci_high * scale:+.{digits}f}] {unit}, p_Holm {c.p_adj:.2g})"
        for c in called
    ]
    text = f"{what}: " + ("; ".join(parts) if parts else "no difference is called")
    if ties:
        text += f"; {len(ties)} of {len(comps)} comparisons are not distinguishable"
    return Claim(
        f"{topic}:{path.stem}{':' + key if key else ''}",
        "ordering" if "vs" not in model else "cross_model",
        model,
        topic,
        text + ".",
        tuple(comps),
        f"{path.stem}{' ' + key if key else ''}: {len(comps)} rows",
        f"Holm over {len(comps)}",
        unit=unit,
        scale=scale,
        source=(str(path.relative_to(path.parents[2])),),
    )


def agreement_paired(path: Path) -> Claim | None:
    """elmo-mini vs minilm-l6-mlm agreement on all cases: the one comparison the run was
    made for (its subgroup rows are descriptive and are not compared)."""
    if not path.is_file():
        return None
    d = json.loads(path.read_text(encoding="utf-8"))
    r = next(r for r in d["rows"] if r["by"] == "all")
    c = Comparison(
        "elmo-mini",
        "minilm-l6-mlm",
        r["elmo_minus_minilm"],
        r["elmo_minus_minilm_lo"],
        r["elmo_minus_minilm_hi"],
        outcome=interval_outcome(
            r["elmo_minus_minilm"], r["elmo_minus_minilm_lo"], r["elmo_minus_minilm_hi"]
        ),
    )
    word = {"above": "above", "below": "below", "tie": "not distinguishable from"}[c.outcome]
    return Claim(
        "agreement:elmo-mini:minilm-l6-mlm",
        "cross_model",
        "elmo-mini vs minilm-l6-mlm",
        "agreement",
        f"Subject-verb agreement on the same {r['n']} UD-EWT cases: elmo-mini's forward LM "
        f"is {word} minilm-l6-mlm "
        + evidence((c,), lambda _: "elmo-mini − minilm-l6-mlm", 100, "points")
        + ".",
        (c,),
        "one comparison (all cases)",
        "none (one test)",
        source=(str(path.relative_to(path.parents[2])),),
        note="The intervals do not separate the encoders from the set-ups: the two models "
        "see different context (left only vs both sides of a masked verb).",
    )


def capacity_runs(folder: Path) -> Iterator[Claim]:
    """Selectivity of the linear probe against the MLP-1 probe at every layer (Hewitt &
    Liang 2019), the engine's table in ``results/capacity/`` (Holm over the layers)."""
    for path in sorted(folder.glob("*.json")):
        d = json.loads(path.read_text(encoding="utf-8"))
        comps = tuple(
            comparison(
                Difference.from_dict(r["selectivity_drop"]),
                f"linear L{r['layer']}",
                f"MLP-1 L{r['layer']}",
            )
            for r in d["layers"]
        )
        said = by_outcome(comps, lambda c: c.a.rsplit("L", 1)[1], "at", "layer", "layers")
        yield Claim(
            f"capacity:{path.stem}",
            "ordering",
            d["model"],
            "probing",
            f"{d['model']} · {_task_name(d['task'])}: the linear probe's selectivity (task − "
            f"control accuracy), against the MLP-1 probe's, is {said} "
            + evidence(comps, lambda c: f"{c.a} − {c.b}", 100, "points")
            + ".",
            comps,
            f"{path.stem}: {len(comps)} layers",
            f"Holm over {len(comps)}",
            source=(f"results/capacity/{path.name}", f"results/capacity/{path.stem}.safetensors"),
        )


def _probe_claims(root: Path, n_boot: int) -> list[Claim]:
    """Probe runs, input variants, task orderings, models against each other, capacity."""
    cells = Cells(root, Engine(n_boot=n_boot, seed=0))
    stems = probe_stems(root)
    out: list[Claim] = []
    for stem in stems:
        try:
            out += probe_run(cells, stem)
        except (DataFormatError, InvalidArgumentError) as exc:
            raise DataFormatError(f"{stem}: {exc}") from exc
    models = sorted({s.split("__")[0] for s in stems})
    for model in models:
        for a, b in VARIANTS:
            ds = TASKS[a].default_dataset
            if f"{model}__{ds}__{a}" in stems and f"{model}__{ds}__{b}" in stems:
                out.append(variant_pair(cells, model, ds, a, b))
    out += [c for m in models if (c := task_orderings(cells, m, stems))]
    pairs = (("minilm-l6", "elmo-mini"), ("mpnet-base", "elmo-mini"))
    out += [c for a, b in pairs if (c := cross_model(cells, a, b, stems))]
    return out + list(capacity_runs(root / "capacity"))


def _table_claims(root: Path) -> list[Claim]:
    """Claims read from committed engine tables: minimal pairs and attribution."""
    out = []
    for path in sorted((root / "minimal-pairs").glob("comparison__*.json")):
        d = json.loads(path.read_text(encoding="utf-8"))
        a, b = d["a"], d["b"]
        what = f"Minimal pairs, {a['model']} ({a['scorer']}) against {b['model']} ({b['scorer']})"
        # one section per pair of models, whichever side the table puts first
        model = (
            a["model"]
            if a["model"] == b["model"]
            else " vs ".join(sorted((a["model"], b["model"])))
        )
        out.append(engine_table(path, model, "minimal pairs", what))
    for path in sorted((root / "alterrep").glob("*__alterrep.json")):
        d = json.loads(path.read_text(encoding="utf-8"))
        if "comparisons" in d:
            what = (
                f"AlterRep, {d['spec']['model']}: the flip rate of a counterfactual push of the "
                "subject's number against a random push of the same length, per layer"
            )
            out.append(engine_table(path, d["spec"]["model"], "alterrep", what))
    for path in sorted((root / "neurons").glob("*__neurons-*.json")):
        d = json.loads(path.read_text(encoding="utf-8"))
        where = f"{d['model']} layer {d['layer']}, {_task_name(d['task'])}"
        for key, what, scale, unit in (
            (
                "probes",
                f"Neurons, {where}: probe accuracy on the top k units against k random units",
                100.0,
                "points",
            ),
            (
                "ablation",
                f"Neurons, {where}: masked-LM loss with the top k units ablated against k random units",
                1.0,
                "nats",
            ),
        ):
            if "comparisons" in d.get(key, {}):
                out.append(
                    engine_table(
                        path, d["model"], "neurons", what, key, d[key]["comparisons"], scale, unit
                    )
                )
    out += list(course_objective_tables(root))
    fa = root / "attribution" / "faithfulness.json"
    if fa.is_file():
        d = json.loads(fa.read_text(encoding="utf-8"))
        for key in sorted(d["comparisons"]):
            what = f"Attribution faithfulness ({key.replace('_', ' ')}, {d['n_cases']} cases)"
            out.append(engine_table(fa, d["model"], "attribution", what, key))
    return [c for c in out if c]


def course_objective_tables(root: Path) -> Iterator[Claim | None]:
    """Issue 43's engine tables: the NSP/SOP heads on three test sets (every pair of heads
    and each head against chance, one Holm family) and fine-tuning minilm-l6 (three
    families: fine-tuned vs frozen scalar mixes, and each task's probe per layer after
    tuning on the other)."""
    nsp = root / "nsp-sop" / "summary.json"
    if nsp.is_file():
        d = json.loads(nsp.read_text(encoding="utf-8"))
        what = (
            "NSP and SOP heads on minilm-l6, accuracy on pairs from another document, from the "
            "same document and swapped"
        )
        yield engine_table(
            nsp, "minilm-l6", "pre-training objectives", what, table={"rows": d["differences"]}
        )
    ft = root / "finetune" / "comparisons.json"
    if ft.is_file():
        d = json.loads(ft.read_text(encoding="utf-8"))
        for key in sorted(d):
            what = f"Fine-tuning minilm-l6, {key.replace('_', ' ')} ({d[key]['metric']})"
            yield engine_table(ft, "minilm-l6", "fine-tuning", what, key, d[key])


def collect(results_dir: str | Path, n_boot: int = N_BOOT) -> list[Claim]:
    """Every claim the committed results support, in a fixed order."""
    root = Path(results_dir)
    out = _probe_claims(root, n_boot)
    if claim := depth_table(root / "equal-size" / "relative_depth.json"):
        out.append(claim)
    iv = root / "interventions"
    out += list(erasure_runs(iv))
    out += list(head_ablation(iv))
    if claim := agreement_paired(iv / "elmo-mini_vs_minilm-l6-mlm__agreement-paired.json"):
        out.append(claim)
    return out + _table_claims(root)
