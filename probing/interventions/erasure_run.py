"""Amnesic probing (Elazar et al. 2021) over layers: erase a task's labels at layer ``l`` and
ask what is left, for the probe and for the model.

Per layer, on the test split: the task probe's accuracy before and after erasure (a probe
*retrained* on erased training vectors, as Elazar et al. and Belrose et al. do), the erased
rank, the same for random subspaces of that rank (``n_random`` draws), the majority
baseline; for masked LMs the masked-LM loss and top-1 on held-out words with layer ``l``
replaced by its erased version (later layers recomputed) against the random erasures (for
an ELMo whose folder ships its softmax, the bi-LM loss/top-1: :mod:`probing.interventions.lm_effect`);
and the probe's accuracy at every later layer after erasing at ``l`` (does the property come
back?).

The probe after erasure is judged under two protocols (:mod:`probing.interventions.erasure_heldout`):
*in-sample*, retrained on erased words the eraser was fitted on (``acc_erased``: LEACE puts
it at the majority baseline by construction), and *held-out*, a fresh probe trained on erased
dev words the eraser never saw and scored on erased test words (``acc_heldout``); the random
control under both. The eraser is fitted on the whole training split (or as much of it as
``max_fit_words`` allows: ``n_fit_words``), and ``curve`` gives the held-out accuracy as the
fit set grows (``fit_curve`` sentences, every erased layer). ELMo's layers are ``[forward; backward]``: its erasers are fitted per half
(:func:`probing.interventions.erasure.block_eraser` says why), and so are its random controls. Where this differs from Elazar et al.: their LM effect is measured on unmasked input
(the word itself is visible) and reported as LM accuracy and KL; here masked words are
predicted (the masked-LM objective), loss and top-1, with paired sentence-bootstrap CIs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from probing.interventions.data import even_index, labelled_sample, task_field
from probing.interventions.erasure import (
    Eraser,
    block_eraser,
    fit_inlp,
    fit_leace_blocks,
    random_like,
)
from probing.interventions.erasure_heldout import (
    WordSet,
    check_disjoint,
    encode_words,
    fit_sizes,
)
from probing.interventions.lm_effect import MaskedLMEffect
from probing.interventions.stats import est_fields, interval
from probing.probes.metrics import SentenceBootstrap

if TYPE_CHECKING:
    from probing.encoders.base import Encoder
    from probing.probes.linear import LinearProbe

Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass(frozen=True)
class ErasureSpec:
    """One erasure sweep's settings (the CLI's arguments and the stored run's ``spec``)."""

    model: str
    task: str
    dataset: str | None = None
    layers: tuple[int, ...] | None = None  # None: every layer
    method: str = "leace"  # leace | inlp
    n_random: int = 3  # random-subspace draws (seeds 0 …)
    seeds: int = 3  # INLP fits (LEACE is deterministic: one)
    train_sentences: int = 600  # the in-sample probes' words (spread over the fit set)
    test_sentences: int = 300
    heldout_sentences: int = 300  # masked-LM effect (the task data set's test split)
    recovery: bool = True
    C: float = 0.1  # every probe here: before, after and control share one capacity
    max_train_words: int = 20_000
    n_boot: int = 1000
    # The eraser's fit set: 0 = the whole training split, capped at max_fit_words (memory).
    fit_sentences: int = 0
    max_fit_words: int = 250_000
    # The held-out probes' dev sentences (0: every dev sentence INLP's stop rule does not read).
    heldout_train_sentences: int = 0
    fit_curve: tuple[int, ...] = (400, 1600, 6400)  # smaller fit sets (sentences) for the curve


@dataclass
class ErasureResult:
    spec: ErasureSpec
    rows: list[dict] = field(default_factory=list)  # one per erased layer
    recovery: list[dict] = field(default_factory=list)  # (erased at, probed at)
    meta: dict = field(default_factory=dict)
    curve: list[dict] = field(default_factory=list)  # (layer, fit-set size): held-out accuracy
    # Sentence ids of each sample (fit, train, heldout_train, test, inlp_stop): not stored
    # (the fit set is the whole split), kept for checks of disjointness.
    sets: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "spec": asdict(self.spec),
            "rows": self.rows,
            "recovery": self.recovery,
            "curve": self.curve,
            "meta": self.meta,
        }


def _probe(C: float, max_train_words: int, seed: int = 0) -> LinearProbe:
    from probing.probes.linear import LinearProbe

    return LinearProbe(C=C, max_train_words=max_train_words, random_state=seed, device="cpu")


def run_erasure(
    encoder: Encoder,  # the LM effect only for masked LMs
    spec: ErasureSpec,
    progress: Progress | None = None,
) -> ErasureResult:
    """The sweep of the module doc for ``spec`` (its ``model`` is ``encoder``'s name).

    Raises:
        TaskLabelsMissingError, LayerOutOfRangeError, InvalidArgumentError.
    """
    from probing.errors import InvalidArgumentError
    from probing.interventions.hooks import check_layer

    if spec.method not in ("leace", "inlp"):
        raise InvalidArgumentError(f"Unknown erasure method {spec.method!r}: leace or inlp.")
    n_layers = int(encoder.info.n_contextual_layers)
    layers = list(range(n_layers + 1)) if spec.layers is None else list(spec.layers)
    for layer in layers:
        check_layer(layer, n_layers)
    dataset, label_field = task_field(spec.task, spec.dataset)
    say = progress or (lambda *_: None)
    sets = word_sets(dataset, label_field, spec)
    fit, held, test, stop = sets["fit"], sets["heldout_train"], sets["test"], sets["inlp_stop"]
    say("encoding", 0, 4)
    fit = encode_words(encoder, fit, progress=lambda d, t: say("encoding fit words", d, t))
    train = fit.subset(sets["train_index"])  # the in-sample probes' words: a part of ``fit``
    test = encode_words(encoder, test)
    held = encode_words(encoder, held)
    stop = encode_words(encoder, stop) if spec.method == "inlp" else stop
    say("encoding", 4, 4)
    y_tr, y_te, y_ho = train.y, test.y, held.y
    boot = SentenceBootstrap(test.sent, n_boot=spec.n_boot, seed=0)
    values, counts = np.unique(y_tr, return_counts=True)
    majority_label = values[np.argmax(counts)]
    maj_pt, maj_draws = boot.draws(y_te, np.full(len(y_te), majority_label))
    mlm = encoder.info.lm_kind == "masked"
    bilm = encoder.info.lm_kind == "bidirectional-lm"
    n_blocks = encoder.info.direction_blocks  # ELMo: [forward; backward] halves
    lm = _lm_effect(encoder, dataset, spec, mlm, bilm)

    def scored(tr: np.ndarray, y: np.ndarray, te: np.ndarray) -> tuple[float, np.ndarray]:
        return boot.draws(y_te, _probe(spec.C, spec.max_train_words).fit(tr, y).predict(te))

    result = ErasureResult(spec)
    before: dict[int, tuple[float, np.ndarray]] = {}
    all_layers = range(n_layers + 1)
    for i, layer in enumerate(all_layers):
        say("probing clean layers", i, n_layers + 1)
        before[layer] = scored(train.X[layer], y_tr, test.X[layer])
    # The curve's sizes include the in-sample eraser's (the training sentences: the same
    # eraser judged both ways).
    sizes = fit_sizes((*spec.fit_curve, len(train.data.sentences)), len(fit.data.sentences))

    for i, layer in enumerate(layers):
        say(f"erasing at layer {layer}", i, len(layers))
        X, Xt, Xh = train.X[layer], test.X[layer], held.X[layer]
        # The run's eraser, fitted on the whole fit set (the LM effect, recovery, held-out).
        erasers = _fit_erasers(spec, fit.X[layer], fit.y, stop, layer, n_blocks)
        # (a) in-sample, as Elazar et al.: an eraser fitted on the probe's own training words
        # (``train``, a part of the fit set) and the probe retrained on them, erased.
        own = (
            erasers
            if len(train) == len(fit)
            else _fit_erasers(spec, X, y_tr, stop, layer, n_blocks)
        )
        after = [scored(e(X), y_tr, e(Xt)) for e in own]
        rand = [scored(r(X), y_tr, r(Xt)) for r in _randoms(own[0], spec.n_random)]
        # (b) held-out: the run's eraser; a fresh probe on erased dev words it never saw.
        after_ho = [scored(e(Xh), y_ho, e(Xt)) for e in erasers]
        rank = int(round(np.mean([e.rank for e in erasers])))
        # The control has the rank of the first eraser (per half for ELMo, as it was fitted).
        randoms = _randoms(erasers[0], spec.n_random)
        rand_ho = [scored(r(Xh), y_ho, r(Xt)) for r in randoms]
        bh_pt, bh_draws = scored(Xh, y_ho, Xt)
        b_pt, b_draws = before[layer]
        a_pt, a_draws = _mean(after)
        h_pt, h_draws = _mean(after_ho)
        r_pt, r_draws = _mean(rand)
        rh_pt, rh_draws = _mean(rand_ho)
        n = len(y_te)
        row = {
            "layer": layer,
            "rank": rank,
            "ranks": [e.rank for e in erasers],
            "rank_blocks": list(erasers[0].blocks),  # ELMo: forward, backward half
            **est_fields("majority", interval(maj_pt, maj_draws, n)),
            **est_fields("acc_before", interval(b_pt, b_draws, n)),
            **est_fields("acc_erased", interval(a_pt, a_draws, n)),
            **est_fields("acc_random", interval(r_pt, r_draws, n)),
            "acc_random_draws": [r[0] for r in rand],
            **est_fields("erased_minus_majority", interval(a_pt - maj_pt, a_draws - maj_draws, n)),
            **est_fields("random_minus_before", interval(r_pt - b_pt, r_draws - b_draws, n)),
            "n_test_words": n,
            "n_train_words": int(len(y_tr)),
            # The held-out protocol and the eraser's fit set (issue 40).
            **est_fields("acc_before_heldout", interval(bh_pt, bh_draws, n)),
            **est_fields("acc_heldout", interval(h_pt, h_draws, n)),
            **est_fields("acc_random_heldout", interval(rh_pt, rh_draws, n)),
            "acc_random_heldout_draws": [r[0] for r in rand_ho],
            **est_fields("heldout_minus_majority", interval(h_pt - maj_pt, h_draws - maj_draws, n)),
            **est_fields(
                "random_heldout_minus_before_heldout",
                interval(rh_pt - bh_pt, rh_draws - bh_draws, n),
            ),
            "rank_insample": int(round(np.mean([e.rank for e in own]))),
            "n_fit_words": len(fit),
            "n_fit_sentences": len(fit.data.sentences),
            "n_heldout_train_words": int(len(y_ho)),
        }
        row["heldout_at_majority"] = bool(row["heldout_minus_majority_lo"] <= 0.0)
        if lm is not None:
            row.update(lm.effect(layer, erasers, randoms))
        result.rows.append(row)
        points = _curve(
            spec,
            fit,
            stop,
            layer,
            n_blocks,
            sizes,
            (erasers[0], after_ho[0]),
            lambda e: scored(e(Xh), y_ho, e(Xt)),  # noqa: B023 - called in this iteration
        )
        for point, pt, draws in points:
            point.update(est_fields("acc_heldout", interval(pt, draws, n)))
            point.update(
                est_fields("heldout_minus_majority", interval(pt - maj_pt, draws - maj_draws, n))
            )
            result.curve.append(point)
        if spec.recovery and layer < n_layers:
            eraser = erasers[0]
            up_tr = encode_words(encoder, train, layer=layer, fn=eraser.torch_apply).X
            up_te = encode_words(encoder, test, layer=layer, fn=eraser.torch_apply).X
            for later in range(layer + 1, n_layers + 1):
                pt, draws = scored(up_tr[later], y_tr, up_te[later])
                c_pt, c_draws = before[later]
                result.recovery.append(
                    {
                        "erased_layer": layer,
                        "probed_layer": later,
                        **est_fields("acc_clean", interval(c_pt, c_draws, n)),
                        **est_fields("acc_after", interval(pt, draws, n)),
                        **est_fields("after_minus_clean", interval(pt - c_pt, draws - c_draws, n)),
                        **est_fields(
                            "after_minus_majority", interval(pt - maj_pt, draws - maj_draws, n)
                        ),
                    }
                )
    result.sets = {k: list(sets[k].ids) for k in ("fit", "heldout_train", "test", "inlp_stop")}
    result.sets["train"] = list(train.ids)
    result.meta = {
        "model": encoder.name,
        "dataset": dataset,
        "label_field": label_field,
        "n_layers": n_layers,
        "dim": int(test.X.shape[-1]),
        "n_classes": int(len(values)),
        "train_sentences": len(train.data.sentences),
        "test_sentences": len(test.data.sentences),
        "fit_sentences": len(fit.data.sentences),
        "n_fit_words": len(fit),
        "fit_split_sentences": sets["n_split_sentences"],
        "heldout_train_sentences": len(held.data.sentences),
        "n_heldout_train_words": len(held),
        "inlp_stop_sentences": len(stop.data.sentences),
        "protocols": PROTOCOLS,
        "fit_curve_sizes": sizes,
        "lm_effect": (
            "masked-LM loss/top-1 on held-out words"
            if mlm
            else "bi-LM loss/top-1 on held-out words (mean of the forward and backward LMs)"
            if bilm
            else f"none: {encoder.name} has no language-model head here"
        ),
        "eraser_blocks": n_blocks,
        "n_heldout_words": lm.n_words if lm is not None else 0,
    }
    say("done", 1, 1)
    return result


PROTOCOLS = {
    "in-sample": "an eraser fitted on the probe's own training words (train_sentences; "
    "rank_insample) and the probe retrained on them, erased (acc_erased; acc_random: random "
    "subspaces of that rank), as Elazar et al. 2021",
    "held-out": "the run's eraser, fitted on the fit set (n_fit_words; rank), and a fresh "
    "probe trained on erased dev words it never saw, scored on erased test words "
    "(acc_heldout; acc_random_heldout: random subspaces of that rank; acc_before_heldout: "
    "the same dev words clean)",
}


def word_sets(dataset: str, label_field: str, spec: ErasureSpec) -> dict:
    """The run's samples: ``fit`` (the eraser's training words: the training split, or
    ``spec.fit_sentences`` of it, at most ``spec.max_fit_words`` words), ``train_index``
    (the in-sample probes' sentences, ``spec.train_sentences`` spread over ``fit``),
    ``test``, ``inlp_stop`` (dev sentences INLP's stopping rule reads) and ``heldout_train``
    (the other dev sentences: the held-out probes' words), each a :class:`WordSet` (not yet
    encoded). Raises InvalidArgumentError when a held-out set shares a sentence with ``fit``.
    """
    everything = 10**9
    split = labelled_sample(dataset, "train", label_field, everything)
    fit_data = split.evenly(spec.fit_sentences or everything)
    n_words = len(fit_data.flat()[0])
    if n_words > spec.max_fit_words:  # memory: fewer sentences, still spread evenly
        keep = int(len(fit_data.sentences) * spec.max_fit_words / n_words)
        fit_data = fit_data.evenly(keep)
    fit = WordSet.of(fit_data)
    train_index = even_index(len(fit_data.sentences), spec.train_sentences)
    test = WordSet.of(labelled_sample(dataset, "test", label_field, spec.test_sentences))
    dev = labelled_sample(dataset, "dev", label_field, everything)
    stop = dev.evenly(max(spec.test_sentences // 2, 50))
    held = dev.without(stop).evenly(spec.heldout_train_sentences or everything)
    check_disjoint(fit.ids, held.ids, "held-out probe words")
    check_disjoint(fit.ids, test.ids, "test words")
    check_disjoint(held.ids, test.ids + stop.ids, "held-out probe words vs test/INLP stop")
    return {
        "fit": fit,
        "train_index": train_index,
        "test": test,
        "inlp_stop": WordSet.of(stop),
        "heldout_train": WordSet.of(held),
        "n_split_sentences": len(split.sentences),
    }


def _randoms(eraser: Eraser, n: int) -> list[Eraser]:
    return [random_like(eraser, seed) for seed in range(n)]


def _mean(scores: list[tuple[float, np.ndarray]]) -> tuple[float, np.ndarray]:
    return float(np.mean([s[0] for s in scores])), np.mean([s[1] for s in scores], axis=0)


def _fit_erasers(
    spec: ErasureSpec,
    X: np.ndarray,
    y: np.ndarray,
    stop: WordSet,
    layer: int,
    n_blocks: int,
    seeds: int | None = None,
) -> list[Eraser]:
    """LEACE (one), or INLP with ``seeds`` fits on 90 % of the words (stopping on ``stop``)."""
    if spec.method == "leace":
        return [fit_leace_blocks(X, y, n_blocks)]
    Xd = stop.X[layer]
    width = X.shape[1] // n_blocks
    halves = [slice(i * width, (i + 1) * width) for i in range(n_blocks)]
    erasers: list[Eraser] = []
    for seed in range(spec.seeds if seeds is None else seeds):
        keep = np.random.default_rng(seed).random(len(y)) < 0.9
        fits = [fit_inlp(X[keep][:, h], y[keep], Xd[:, h], stop.y, seed=seed)[0] for h in halves]
        erasers.append(fits[0] if n_blocks == 1 else block_eraser(fits))
    return erasers


def _curve(
    spec: ErasureSpec,
    fit: WordSet,
    stop: WordSet,
    layer: int,
    n_blocks: int,
    sizes: list[int],
    main: tuple[Eraser, tuple[float, np.ndarray]],
    heldout: Callable[[Eraser], tuple[float, np.ndarray]],
) -> list[tuple[dict, float, np.ndarray]]:
    """The held-out probe's accuracy as the eraser's fit set grows: ``sizes`` sentences
    spread over ``fit``, the last ``fit`` itself (``main``: the run's eraser and its held-out
    score); INLP: seed 0. Rows without intervals, with each point's (value, draws)."""
    out = []
    n_fit = len(fit.data.sentences)
    for size in sizes:
        if size == n_fit:
            eraser, (pt, draws), n_words = main[0], main[1], len(fit)
        else:
            part = fit.rows_of(even_index(n_fit, size))
            Xf, yf = fit.X[layer][part], fit.y[part]
            eraser = _fit_erasers(spec, Xf, yf, stop, layer, n_blocks, seeds=1)[0]
            pt, draws = heldout(eraser)
            n_words = len(part)
        row = {
            "layer": layer,
            "n_fit_sentences": int(size),
            "n_fit_words": int(n_words),
            "rank": int(eraser.rank),
        }
        out.append((row, pt, draws))
    return out


def _lm_effect(
    encoder: Encoder, dataset: str, spec: ErasureSpec, mlm: bool, bilm: bool
) -> MaskedLMEffect | None:
    """The LM-effect scorer the encoder's head allows (None: no head)."""
    if mlm or bilm:  # masked LM, or next-word LMs (the scorer reads info.lm_directions)
        return MaskedLMEffect(encoder, dataset, spec)
    return None
