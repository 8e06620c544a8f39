"""Counterfactual representations (AlterRep, Ravfogel et al. 2021) for subject-verb agreement.

At layer ``l`` the subject-number subspace is found with LEACE (Belrose et al. 2023; the
concept-erasure library) on the subject word's vectors of UD-EWT *train* agreement cases:
``r(h)`` is ``h`` with number erased, and ``h - r(h)`` is the part of ``h`` that carries it.
A counterfactual push replaces the subject's vector (or every word's) by

    h' = h - (1 + α) · (h - r(h))

α = 1 mirrors ``h`` across the eraser's boundary (the number read as the other one), α = 0
erases it, α = -1 is no push at all (``h' = h`` bit for bit). The later layers are recomputed
from ``h'`` (a call-local hook on the model surface) and the masked verb's agreement margin
``logit(correct) - logit(wrong)`` (:mod:`probing.interventions.agreement`) is read again on
held-out cases (UD-EWT dev/test). Reported per layer: how often the model's choice flips, for
the counterfactual push and for a push of the same length along a random direction (a fresh
unit direction per case, seeded), and their paired difference, with sentence-bootstrap
intervals.

Where this differs from Ravfogel et al.: they use INLP's rowspace and push with a fixed α
along each of its directions, on BERT's relative-clause agreement; here LEACE's one direction
for two classes (rank 1), the push scaled by each vector's own number component, and the
UD-EWT agreement cases of this project.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from probing.analyses.params import WHERE, AlterRepParams
from probing.errors import InvalidArgumentError
from probing.interventions.agreement import AgreementCase, MaskedCases, prepare, ud_cases
from probing.interventions.erasure import Eraser, fit_leace
from probing.interventions.hooks import (
    check_layer,
    mlm_logits,
    model_parts,
    recorded_hidden,
    replaced_hidden,
    require_mlm,
)
from probing.interventions.stats import PairedBootstrap, est_fields

if TYPE_CHECKING:
    from probing.encoders.bert import TransformersMaskedLM

Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass(frozen=True)
class Located:
    """Prepared cases with, per batch, each case's subject piece (its first piece)."""

    cases: MaskedCases
    subject_pos: list[torch.Tensor]
    numbers: np.ndarray  # (n_kept,) 1 for a plural subject, 0 singular
    groups: list[str]


def locate(
    encoder: TransformersMaskedLM, cases: Sequence[AgreementCase], batch_size: int = 64
) -> Located:
    """:func:`~probing.interventions.agreement.prepare` plus the subject's first piece."""
    prepared = prepare(encoder, cases, batch_size)
    kept = iter(prepared.kept)
    positions = []
    for pos in prepared.mask_pos:
        row = []
        for _ in range(len(pos)):
            case = cases[next(kept)]
            _, word_ids = encoder.tokenize(list(case.words))
            row.append(word_ids.index(case.subject))
        positions.append(torch.tensor(row))
    numbers = np.array([cases[i].number == "Plur" for i in prepared.kept], dtype=np.int64)
    return Located(prepared, positions, numbers, [cases[i].group for i in prepared.kept])


@torch.inference_mode()
def subject_vectors(encoder: TransformersMaskedLM, located: Located, layer: int) -> np.ndarray:
    """Hidden state ``layer`` at each kept case's subject piece (n_kept, D), float32."""
    parts = model_parts(encoder)
    out = []
    for inputs, subj in zip(located.cases.batches, located.subject_pos, strict=True):
        with recorded_hidden(parts) as states:
            encoder.model(**{k: v.to(encoder.device) for k, v in inputs.items()})
        h = states[layer]
        out.append(h[torch.arange(len(subj)), subj.to(h.device)].float().cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, encoder.info.dim), np.float32)


def push(h: torch.Tensor, eraser: Eraser, alpha: float) -> torch.Tensor:
    """``h - (1 + α)(h - r(h))`` (module doc): α = -1 returns ``h`` itself, unchanged."""
    if alpha == -1:
        return h
    return h - (1.0 + alpha) * (h - eraser.torch_apply(h))


def random_push(h: torch.Tensor, eraser: Eraser, alpha: float, seed: int) -> torch.Tensor:
    """A push of the same length per vector as :func:`push`, along a random direction."""
    shift = push(h, eraser, alpha) - h
    g = torch.Generator().manual_seed(seed)
    direction = torch.randn(h.shape, generator=g, dtype=torch.float32).to(h.device, h.dtype)
    direction = direction / direction.norm(dim=-1, keepdim=True)
    return h + direction * shift.norm(dim=-1, keepdim=True)


@torch.inference_mode()
def pushed_margins(
    encoder: TransformersMaskedLM,
    located: Located,
    layer: int,
    move: Callable[[torch.Tensor, int], torch.Tensor] | None,
    where: str = "subject",
) -> np.ndarray:
    """Agreement margins (n_kept,) with hidden state ``layer`` replaced by ``move(h, batch)``
    at the subject piece (``where="subject"``) or at every piece (``"all"``), later layers
    recomputed; ``move=None``: the clean margins."""
    parts = model_parts(encoder)
    cases = located.cases
    out = []
    for b, (inputs, pos, ids, subj) in enumerate(
        zip(cases.batches, cases.mask_pos, cases.ids, located.subject_pos, strict=True)
    ):
        rows = torch.arange(len(pos))

        def replace(
            h: torch.Tensor, b: int = b, subj: torch.Tensor = subj, rows: torch.Tensor = rows
        ) -> torch.Tensor:
            if where == "all":
                return move(h, b)
            h = h.clone()
            at = (rows.to(h.device), subj.to(h.device))
            h[at] = move(h[at], b)
            return h

        hook = (
            replaced_hidden(parts, layer, replace) if move is not None else contextlib.nullcontext()
        )
        with hook:
            logits = mlm_logits(encoder, inputs, rows, pos)
        ids = ids.to(logits.device)
        out.append((logits.gather(1, ids[:, :1]) - logits.gather(1, ids[:, 1:])).squeeze(1))
    return torch.cat(out).float().cpu().numpy() if out else np.zeros(0)


@dataclass(frozen=True)
class AlterRepSpec:
    """One run's settings (recorded with its results)."""

    model: str
    layers: tuple[int, ...]
    alpha: float = 1.0
    where: str = "subject"
    fit_split: str = "train"
    eval_splits: tuple[str, ...] = ("dev", "test")
    max_fit_cases: int = 4000
    max_eval_cases: int = 2000
    n_boot: int = 1000
    seed: int = 0


def run_alterrep(
    encoder: TransformersMaskedLM, spec: AlterRepSpec, progress: Progress | None = None
) -> dict:
    """Per layer: the eraser fitted on ``fit_split`` cases' subjects, the flip rates of the
    counterfactual and the random push on the held-out cases, and their paired difference.

    Raises:
        NoMLMHeadError (via require_mlm): the model has no masked-LM head;
        InvalidArgumentError: ``where`` or a layer out of range, or too few cases.
    """
    require_mlm(encoder, "AlterRep")
    if spec.where not in WHERE:
        raise InvalidArgumentError(f"where must be one of {', '.join(WHERE)}, not {spec.where!r}.")
    n_layers = int(encoder.info.n_contextual_layers)
    layers = [check_layer(layer, n_layers) for layer in spec.layers]
    report = progress or (lambda stage, done, total: None)
    fit = _even(ud_cases((spec.fit_split,)), spec.max_fit_cases)
    held = _even(ud_cases(spec.eval_splits), spec.max_eval_cases)
    fit_located, eval_located = locate(encoder, fit), locate(encoder, held)
    if len(set(fit_located.numbers.tolist())) < 2 or len(eval_located.numbers) < 20:
        raise InvalidArgumentError(
            f"AlterRep needs singular and plural subjects to fit on and 20 held-out cases; "
            f"{encoder.info.name} can score {len(fit_located.numbers)} and "
            f"{len(eval_located.numbers)} (single-piece verb forms only)."
        )
    clean = pushed_margins(encoder, eval_located, 0, None)
    boot = PairedBootstrap(eval_located.groups, n_boot=spec.n_boot, seed=spec.seed)
    rows = []
    for i, layer in enumerate(layers):
        report("layers", i, len(layers))
        eraser = fit_leace(subject_vectors(encoder, fit_located, layer), fit_located.numbers)
        cf = pushed_margins(
            encoder, eval_located, layer, lambda h, b, e=eraser: push(h, e, spec.alpha), spec.where
        )
        rnd = pushed_margins(
            encoder,
            eval_located,
            layer,
            lambda h, b, e=eraser: random_push(h, e, spec.alpha, spec.seed * 100_003 + b),
            spec.where,
        )
        flip_cf = (np.sign(cf) != np.sign(clean)).astype(float)
        flip_rnd = (np.sign(rnd) != np.sign(clean)).astype(float)
        rows.append(
            {
                "layer": layer,
                "rank": eraser.rank,
                **est_fields("accuracy_clean", boot.mean((clean > 0).astype(float))),
                **est_fields("accuracy_counterfactual", boot.mean((cf > 0).astype(float))),
                **est_fields("flip_counterfactual", boot.mean(flip_cf)),
                **est_fields("flip_random", boot.mean(flip_rnd)),
                **est_fields("flip_counterfactual_minus_random", boot.diff(flip_cf, flip_rnd)),
                "n_eval_cases": len(clean),
                "n_fit_cases": len(fit_located.numbers),
            }
        )
    report("layers", len(layers), len(layers))
    return {"spec": asdict(spec), "rows": rows}


def _even(cases: list[AgreementCase], k: int) -> list[AgreementCase]:
    """At most ``k`` cases spread evenly over the list (its documents in file order)."""
    if len(cases) <= k:
        return cases
    idx = np.linspace(0, len(cases) - 1, k).round().astype(int)
    return [cases[i] for i in sorted(set(idx.tolist()))]


def run(encoders: Sequence, params: AlterRepParams, progress: Progress) -> dict:
    """The registry's ``alterrep``: :func:`run_alterrep` with the settings class's values
    (``layers``: "all" is 1 … L)."""
    encoder = encoders[0]
    n_layers = int(encoder.info.n_contextual_layers)
    text = params.layers.strip().lower()
    try:
        layers = (
            tuple(range(1, n_layers + 1))
            if text == "all"
            else tuple(int(x) for x in text.split(",") if x.strip())
        )
    except ValueError:
        raise InvalidArgumentError(
            f"--layers must be comma-separated whole numbers or 'all', not {params.layers!r}."
        ) from None
    if not layers:
        raise InvalidArgumentError("--layers names no layer.")
    spec = AlterRepSpec(
        encoder.info.name,
        layers,
        params.alpha,
        params.where,
        max_fit_cases=params.max_fit_cases,
        max_eval_cases=params.max_eval_cases,
        n_boot=params.n_boot,
        seed=params.seed,
    )
    return run_alterrep(encoder, spec, progress)
