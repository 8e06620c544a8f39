"""Amnesic probing (Elazar et al. 2021) over layers: erase a task's labels at layer ``l`` and
ask what is left, for the probe and for the model.

Per layer, on the test split: the task probe's accuracy before and after erasure (a probe
*retrained* on erased training vectors, as Elazar et al. and Belrose et al. do), the erased
rank, the same for random subspaces of that rank (``n_random`` draws), the majority
baseline; for masked LMs the masked-LM loss and top-1 on held-out words with layer ``l``
replaced by its erased version (later layers recomputed) against the random erasures (for
an ELMo whose folder ships its softmax, the bi-LM loss/top-1: :mod:`probing.interventions.bilm`);
and the probe's accuracy at every later layer after erasing at ``l`` (does the property come
back?). ELMo's layers are ``[forward; backward]``: its erasers are fitted per half
(:func:`probing.interventions.erasure.block_eraser` says why), and so are its random controls. Where this differs from Elazar et al.: their LM effect is measured on unmasked input
(the word itself is visible) and reported as LM accuracy and KL; here masked words are
predicted (the masked-LM objective), loss and top-1, with paired sentence-bootstrap CIs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from probing.interventions.data import labelled_sample, task_field
from probing.interventions.erasure import (
    Eraser,
    block_eraser,
    fit_inlp,
    fit_leace_blocks,
    random_like,
)
from probing.interventions.lm_effect import MaskedLMEffect
from probing.interventions.stats import est_fields, interval
from probing.probes.metrics import SentenceBootstrap

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
    train_sentences: int = 600
    test_sentences: int = 300
    heldout_sentences: int = 300  # masked-LM effect (the task data set's test split)
    recovery: bool = True
    C: float = 0.1  # every probe here: before, after and control share one capacity
    max_train_words: int = 20_000
    n_boot: int = 1000


@dataclass
class ErasureResult:
    spec: ErasureSpec
    rows: list[dict] = field(default_factory=list)  # one per erased layer
    recovery: list[dict] = field(default_factory=list)  # (erased at, probed at)
    meta: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "spec": asdict(self.spec),
            "rows": self.rows,
            "recovery": self.recovery,
            "meta": self.meta,
        }


def _stack(per_sentence: list[np.ndarray], sent: np.ndarray, word: np.ndarray, layer: int):  # noqa: ANN202
    return np.stack([per_sentence[s][layer, w] for s, w in zip(sent, word, strict=True)])


def _probe(C: float, max_train_words: int, seed: int = 0):  # noqa: ANN202
    from probing.probes.linear import LinearProbe

    return LinearProbe(C=C, max_train_words=max_train_words, random_state=seed, device="cpu")


def run_erasure(
    encoder,  # noqa: ANN001 - any Encoder; the LM effect only for masked LMs
    spec: ErasureSpec,
    progress: Progress | None = None,
) -> ErasureResult:
    """The sweep of the module doc for ``spec`` (its ``model`` is ``encoder``'s name).

    Raises:
        TaskLabelsMissingError, LayerOutOfRangeError, InvalidArgumentError.
    """
    from probing.encoders.bert import TransformersMaskedLM
    from probing.errors import InvalidArgumentError
    from probing.interventions.hooks import check_layer
    from probing.interventions.recompute import layers_after

    if spec.method not in ("leace", "inlp"):
        raise InvalidArgumentError(f"Unknown erasure method {spec.method!r}: leace or inlp.")
    n_layers = int(encoder.info.n_contextual_layers)
    layers = list(range(n_layers + 1)) if spec.layers is None else list(spec.layers)
    for layer in layers:
        check_layer(layer, n_layers)
    dataset, label_field = task_field(spec.task, spec.dataset)
    say = progress or (lambda *_: None)
    train = labelled_sample(dataset, "train", label_field, spec.train_sentences)
    test = labelled_sample(dataset, "test", label_field, spec.test_sentences)
    dev = labelled_sample(dataset, "dev", label_field, max(spec.test_sentences // 2, 50))
    y_tr, s_tr, w_tr = train.flat()
    y_te, s_te, w_te = test.flat()
    y_dv, s_dv, w_dv = dev.flat()

    def identity(h):  # noqa: ANN001, ANN202
        return h

    say("encoding", 0, 3)
    clean_tr = layers_after(encoder, train.sentences, 0, identity)
    clean_te = layers_after(encoder, test.sentences, 0, identity)
    clean_dv = layers_after(encoder, dev.sentences, 0, identity) if spec.method == "inlp" else None
    say("encoding", 3, 3)
    boot = SentenceBootstrap(s_te, n_boot=spec.n_boot, seed=0)
    values, counts = np.unique(y_tr, return_counts=True)
    majority_label = values[np.argmax(counts)]
    maj_pt, maj_draws = boot.draws(y_te, np.full(len(y_te), majority_label))
    mlm = isinstance(encoder, TransformersMaskedLM)
    bilm = getattr(encoder, "softmax", None) is not None
    n_blocks = 2 if encoder.info.family == "elmo" else 1  # [forward; backward] halves
    lm = _lm_effect(encoder, dataset, spec, mlm, bilm)

    result = ErasureResult(spec)
    before: dict[int, tuple[float, np.ndarray]] = {}
    all_layers = range(n_layers + 1)
    for i, layer in enumerate(all_layers):
        say("probing clean layers", i, n_layers + 1)
        X = _stack(clean_tr, s_tr, w_tr, layer)
        probe = _probe(spec.C, spec.max_train_words).fit(X, y_tr)
        before[layer] = boot.draws(y_te, probe.predict(_stack(clean_te, s_te, w_te, layer)))

    for i, layer in enumerate(layers):
        say(f"erasing at layer {layer}", i, len(layers))
        X = _stack(clean_tr, s_tr, w_tr, layer)
        Xt = _stack(clean_te, s_te, w_te, layer)
        erasers: list[Eraser] = []
        if spec.method == "leace":
            erasers.append(fit_leace_blocks(X, y_tr, n_blocks))
        else:
            Xd = _stack(clean_dv, s_dv, w_dv, layer)
            width = X.shape[1] // n_blocks
            for seed in range(spec.seeds):
                keep = np.random.default_rng(seed).random(len(y_tr)) < 0.9
                halves = [slice(i * width, (i + 1) * width) for i in range(n_blocks)]
                fits = [
                    fit_inlp(X[keep][:, h], y_tr[keep], Xd[:, h], y_dv, seed=seed)[0]
                    for h in halves
                ]
                erasers.append(fits[0] if n_blocks == 1 else block_eraser(fits))
        after = [
            boot.draws(y_te, _probe(spec.C, spec.max_train_words).fit(e(X), y_tr).predict(e(Xt)))
            for e in erasers
        ]
        rank = int(round(np.mean([e.rank for e in erasers])))
        # The control has the rank of the first eraser (per half for ELMo, as it was fitted).
        randoms = [random_like(erasers[0], seed) for seed in range(spec.n_random)]
        rand = [
            boot.draws(y_te, _probe(spec.C, spec.max_train_words).fit(r(X), y_tr).predict(r(Xt)))
            for r in randoms
        ]
        b_pt, b_draws = before[layer]
        a_pt, a_draws = np.mean([a[0] for a in after]), np.mean([a[1] for a in after], axis=0)
        r_pt, r_draws = np.mean([r[0] for r in rand]), np.mean([r[1] for r in rand], axis=0)
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
        }
        if lm is not None:
            row.update(lm.effect(layer, erasers, randoms))
        result.rows.append(row)
        if spec.recovery and layer < n_layers:
            eraser = erasers[0]
            up_tr = layers_after(encoder, train.sentences, layer, eraser.torch_apply)
            up_te = layers_after(encoder, test.sentences, layer, eraser.torch_apply)
            for later in range(layer + 1, n_layers + 1):
                probe = _probe(spec.C, spec.max_train_words).fit(
                    _stack(up_tr, s_tr, w_tr, later), y_tr
                )
                pt, draws = boot.draws(y_te, probe.predict(_stack(up_te, s_te, w_te, later)))
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
    result.meta = {
        "model": encoder.name,
        "dataset": dataset,
        "label_field": label_field,
        "n_layers": n_layers,
        "dim": int(clean_tr[0].shape[-1]),
        "n_classes": int(len(values)),
        "train_sentences": len(train.sentences),
        "test_sentences": len(test.sentences),
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


def _lm_effect(encoder, dataset: str, spec: ErasureSpec, mlm: bool, bilm: bool):  # noqa: ANN001, ANN202
    """The LM-effect scorer the encoder's head allows (None: no head)."""
    if mlm:
        return MaskedLMEffect(encoder, dataset, spec)
    if bilm:
        from probing.interventions.bilm import BiLMEffect

        return BiLMEffect(encoder, dataset, spec)
    return None
