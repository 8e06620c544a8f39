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
intervals; the comparison engine's table (:mod:`probing.probes.compare`) holds the paired
difference per layer with its p and Holm's correction over the layers, and
:func:`flip_findings` writes the sentences from it.

Where this differs from Ravfogel et al.: they use INLP's rowspace and push with a fixed α
along each of its directions, on BERT's relative-clause agreement; here LEACE's one direction
for two classes (rank 1), the push scaled by each vector's own number component, and the
UD-EWT agreement cases of this project. Ravfogel et al.'s code (and Hao & Linzen's
causal-conjugation, which alters BERT inside a copy of ``BertEncoder.forward``) runs every
condition as a whole forward pass; so does this one, through a call-local hook.

How a run spends its time (issue 45's one layer within a minute): each UD-EWT file is
parsed once (:func:`~probing.interventions.agreement.ud_case_sets`); the passes run on
length-sorted batches (:func:`by_length`: file-order batches are about 63 % padding); the
subject's vectors of every layer asked for come from one pass over the fit cases, stopped
after the deepest of them (:func:`subject_states`); and the random directions are drawn on
file-order batches (:class:`RandomDraws`), so the sorted passes push each case along the
direction a file-order pass would.
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
from probing.interventions.agreement import (
    AgreementCase,
    MaskedCases,
    prepare,
    ud_case_sets,
)
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
from probing.probes.compare import (
    Difference,
    Engine,
    Replicates,
    SentenceCounts,
    table_dict,
    with_holm,
)

if TYPE_CHECKING:
    from probing.encoders.bert import TransformersMaskedLM

Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass(frozen=True)
class Located:
    """Prepared cases with, per batch, each case's subject piece (its first piece).

    ``rows`` holds per batch the index (into ``numbers``, the kept cases) of each of its
    rows; None: the batches hold the kept cases in order (:func:`locate`'s layout)."""

    cases: MaskedCases
    subject_pos: list[torch.Tensor]
    numbers: np.ndarray  # (n_kept,) 1 for a plural subject, 0 singular
    groups: list[str]
    rows: list[torch.Tensor] | None = None

    def batch_rows(self) -> list[torch.Tensor]:
        """Per batch, the kept-case index of each row."""
        if self.rows is not None:
            return self.rows
        out, start = [], 0
        for pos in self.cases.mask_pos:
            out.append(torch.arange(start, start + len(pos)))
            start += len(pos)
        return out


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


def by_length(encoder: TransformersMaskedLM, located: Located, batch_size: int = 64) -> Located:
    """The same cases re-batched in order of length, each batch padded to its longest row.

    :func:`locate` batches cases in file order, padded to each batch's longest sentence: on
    UD-EWT about 37 % of the positions it runs are real pieces. Every forward pass costs in
    proportion to the padded positions, so the passes here run on these batches; a row's
    result is the same (its pieces, positions and attention mask are unchanged; padding is
    masked), up to float rounding of the differently shaped matrix products. Outputs go back
    to the kept cases' order through ``rows``. A tokenizer that pads on the left is left as
    it is (its rows' positions would move)."""
    if getattr(encoder.tokenizer, "padding_side", "right") != "right" or not located.numbers.size:
        return located
    pad = int(encoder.tokenizer.pad_token_id or 0)
    # per kept case, in kept order: (its unpadded inputs, length, mask pos, ids, subject pos)
    flat: list[tuple[dict[str, torch.Tensor], int, int, torch.Tensor, int]] = []
    cases = located.cases
    for inputs, pos, ids, subj in zip(
        cases.batches, cases.mask_pos, cases.ids, located.subject_pos, strict=True
    ):
        lengths = inputs["attention_mask"].sum(1)
        for r in range(len(pos)):
            n = int(lengths[r])
            row = {k: v[r, :n] for k, v in inputs.items()}
            flat.append((row, n, int(pos[r]), ids[r], int(subj[r])))
    order = np.argsort([f[1] for f in flat], kind="stable")
    batches, mask_pos, id_pairs, subject_pos, rows = [], [], [], [], []
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size].tolist()
        width = max(flat[i][1] for i in chunk)
        inputs = {}
        for k in flat[chunk[0]][0]:
            fill = pad if k == "input_ids" else 0
            t = torch.full((len(chunk), width), fill, dtype=flat[chunk[0]][0][k].dtype)
            for j, i in enumerate(chunk):
                t[j, : flat[i][1]] = flat[i][0][k]
            inputs[k] = t
        batches.append(inputs)
        mask_pos.append(torch.tensor([flat[i][2] for i in chunk]))
        id_pairs.append(torch.stack([flat[i][3] for i in chunk]))
        subject_pos.append(torch.tensor([flat[i][4] for i in chunk]))
        rows.append(torch.tensor(chunk))
    masked = MaskedCases(batches, mask_pos, id_pairs, cases.kept)
    return Located(masked, subject_pos, located.numbers, located.groups, rows)


class _Stop(Exception):
    """Raised by the hook on the deepest layer wanted: the rest of the pass is not run."""


@torch.inference_mode()
def subject_states(
    encoder: TransformersMaskedLM, located: Located, layers: Sequence[int]
) -> dict[int, np.ndarray]:
    """Hidden state ``l`` at each kept case's subject piece, (n_kept, D) float32, for every
    ``l`` in ``layers``: one pass per batch, stopped after the deepest layer asked for."""
    parts = model_parts(encoder)
    layers = sorted(set(layers))
    n, dim = len(located.numbers), int(encoder.info.dim)
    out = {layer: np.zeros((n, dim), np.float32) for layer in layers}

    def stop(_m: torch.nn.Module, _a: tuple, _out: object) -> None:
        raise _Stop

    for inputs, subj, rows in zip(
        located.cases.batches, located.subject_pos, located.batch_rows(), strict=True
    ):
        # The recording hooks are attached first, so they see the deepest layer before the
        # stopping hook ends the pass.
        with (
            recorded_hidden(parts) as states,
            parts.hidden_hook(layers[-1], stop),
            contextlib.suppress(_Stop),
        ):
            encoder.model(**{k: v.to(encoder.device) for k, v in inputs.items()})
        for layer in layers:
            h = states[layer]
            out[layer][rows.numpy()] = (
                h[torch.arange(len(subj)), subj.to(h.device)].float().cpu().numpy()
            )
    return out


def subject_vectors(encoder: TransformersMaskedLM, located: Located, layer: int) -> np.ndarray:
    """Hidden state ``layer`` at each kept case's subject piece (n_kept, D), float32."""
    return subject_states(encoder, located, [layer])[layer]


def push(h: torch.Tensor, eraser: Eraser, alpha: float) -> torch.Tensor:
    """``h - (1 + α)(h - r(h))`` (module doc): α = -1 returns ``h`` itself, unchanged."""
    if alpha == -1:
        return h
    return h - (1.0 + alpha) * (h - eraser.torch_apply(h))


def random_push(h: torch.Tensor, eraser: Eraser, alpha: float, seed: int) -> torch.Tensor:
    """A push of the same length per vector as :func:`push`, along a random direction."""
    g = torch.Generator().manual_seed(seed)
    return random_push_along(h, eraser, alpha, torch.randn(h.shape, generator=g))


def random_push_along(
    h: torch.Tensor, eraser: Eraser, alpha: float, draw: torch.Tensor
) -> torch.Tensor:
    """A push of :func:`push`'s length per vector along ``draw`` (h's shape; each vector
    scaled to unit length)."""
    shift = push(h, eraser, alpha) - h
    direction = draw.to(h.device, h.dtype)
    direction = direction / direction.norm(dim=-1, keepdim=True)
    return h + direction * shift.norm(dim=-1, keepdim=True)


@dataclass(frozen=True)
class RandomDraws:
    """Each kept case's standard-normal draw for its random push: (D,) at the subject, or
    (n_pieces, D) for every piece (``where="all"``).

    Drawn per batch of :func:`locate`'s layout, as the push there would draw them (a
    generator seeded ``seed * 100_003 + b`` for batch ``b``, one draw of the pushed
    tensor's shape), so that a case's random direction does not depend on how the passes
    are batched."""

    where: str
    draws: list[torch.Tensor]

    @classmethod
    def of(cls, located: Located, seed: int, where: str, dim: int) -> RandomDraws:
        if located.rows is not None:
            raise ValueError("draws are defined on locate()'s layout, not a re-batched one")
        draws: list[torch.Tensor] = []
        for b, inputs in enumerate(located.cases.batches):
            g = torch.Generator().manual_seed(seed * 100_003 + b)
            n, width = inputs["input_ids"].shape
            if where == "all":
                batch = torch.randn((n, width, dim), generator=g)
                lengths = inputs["attention_mask"].sum(1).tolist()
                draws.extend(batch[r, : int(lengths[r])].clone() for r in range(n))
            else:
                draws.extend(torch.randn((n, dim), generator=g).unbind(0))
        return cls(where, draws)

    def at(self, rows: torch.Tensor, shape: torch.Size) -> torch.Tensor:
        """The draws of the cases ``rows`` (a batch's kept-case indices) in the pushed
        tensor's ``shape``: (B, D), or (B, T, D) with ones at padded positions (padding is
        masked; ones keep the unit scaling finite)."""
        if self.where != "all":
            return torch.stack([self.draws[i] for i in rows.tolist()])
        out = torch.ones(shape, dtype=torch.float32)
        for j, i in enumerate(rows.tolist()):
            d = self.draws[i][: shape[1]]
            out[j, : len(d)] = d
        return out


@torch.inference_mode()
def pushed_margins(
    encoder: TransformersMaskedLM,
    located: Located,
    layer: int,
    move: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None,
    where: str = "subject",
) -> np.ndarray:
    """Agreement margins (n_kept,) in kept-case order with hidden state ``layer`` replaced by
    ``move(h, rows)`` at the subject piece (``where="subject"``: h (B, D)) or at every piece
    (``"all"``: h (B, T, D)), later layers recomputed; ``rows`` are the batch's kept-case
    indices; ``move=None``: the clean margins."""
    parts = model_parts(encoder)
    cases = located.cases
    out = np.zeros(len(located.numbers), np.float32)
    for inputs, pos, ids, subj, kept_rows in zip(
        cases.batches,
        cases.mask_pos,
        cases.ids,
        located.subject_pos,
        located.batch_rows(),
        strict=True,
    ):
        rows = torch.arange(len(pos))

        def replace(
            h: torch.Tensor,
            kept_rows: torch.Tensor = kept_rows,
            subj: torch.Tensor = subj,
            rows: torch.Tensor = rows,
        ) -> torch.Tensor:
            if where == "all":
                return move(h, kept_rows)
            h = h.clone()
            at = (rows.to(h.device), subj.to(h.device))
            h[at] = move(h[at], kept_rows)
            return h

        hook = (
            replaced_hidden(parts, layer, replace) if move is not None else contextlib.nullcontext()
        )
        with hook:
            logits = mlm_logits(encoder, inputs, rows, pos)
        ids = ids.to(logits.device)
        margin = (logits.gather(1, ids[:, :1]) - logits.gather(1, ids[:, 1:])).squeeze(1)
        out[kept_rows.numpy()] = margin.float().cpu().numpy()
    return out


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
    fit, held = ud_case_sets((spec.fit_split,), spec.eval_splits)
    fit, held = _even(fit, spec.max_fit_cases), _even(held, spec.max_eval_cases)
    fit_located, eval_in_order = locate(encoder, fit), locate(encoder, held)
    if len(set(fit_located.numbers.tolist())) < 2 or len(eval_in_order.numbers) < 20:
        raise InvalidArgumentError(
            f"AlterRep needs singular and plural subjects to fit on and 20 held-out cases; "
            f"{encoder.info.name} can score {len(fit_located.numbers)} and "
            f"{len(eval_in_order.numbers)} (single-piece verb forms only)."
        )
    # The random directions are drawn on locate()'s layout; the passes run length-sorted.
    draws = RandomDraws.of(eval_in_order, spec.seed, spec.where, int(encoder.info.dim))
    eval_located = by_length(encoder, eval_in_order)
    # The subject's vectors of every layer asked for, from one (stopped) pass over the fit cases.
    fit_states = subject_states(encoder, by_length(encoder, fit_located), layers)
    clean = pushed_margins(encoder, eval_located, 0, None)
    boot = PairedBootstrap(eval_located.groups, n_boot=spec.n_boot, seed=spec.seed)
    engine = Engine(n_boot=spec.n_boot, seed=spec.seed)
    _, sentence = np.unique(np.asarray(eval_located.groups), return_inverse=True)
    diffs = []
    rows = []
    for i, layer in enumerate(layers):
        report("layers", i, len(layers))
        eraser = fit_leace(fit_states[layer], fit_located.numbers)
        cf = pushed_margins(
            encoder, eval_located, layer, lambda h, r, e=eraser: push(h, e, spec.alpha), spec.where
        )
        rnd = pushed_margins(
            encoder,
            eval_located,
            layer,
            lambda h, r, e=eraser: random_push_along(h, e, spec.alpha, draws.at(r, h.shape)),
            spec.where,
        )
        flip_cf = (np.sign(cf) != np.sign(clean)).astype(float)
        flip_rnd = (np.sign(rnd) != np.sign(clean)).astype(float)
        diffs.append(
            engine.compare(
                _flip_replicates(engine, f"counterfactual L{layer}", flip_cf, sentence),
                _flip_replicates(engine, f"random L{layer}", flip_rnd, sentence),
            )
        )
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
    table = table_dict(
        with_holm(diffs),
        "share of held-out cases whose agreement choice flips",
        "counterfactual push − random push of the same length, per layer (paired over the "
        "same cases); Holm over the layers",
    )
    return {"spec": asdict(spec), "rows": rows, "comparisons": table}


def _flip_replicates(
    engine: Engine, name: str, flipped: np.ndarray, sentence: np.ndarray
) -> Replicates:
    """The flip rate as an engine score: per sentence (not flipped, flipped) counts."""
    counts = SentenceCounts.from_predictions(
        "accuracy", np.ones(len(flipped), bool), [flipped > 0], sentence, int(sentence.max()) + 1
    )
    return engine.replicates(name, counts, "alterrep: held-out cases")


def flip_findings(result: dict) -> list[str]:
    """Per layer, a sentence written from the run's stored comparison table (the engine's
    call: Holm over the layers); empty for a run stored without one."""
    table = result.get("comparisons")
    if not table:
        return []
    lines = []
    for r in table["rows"]:
        d = Difference.from_dict(r)
        layer = d.a.rsplit("L", 1)[-1]
        verdict = (
            ("the counterfactual push flips more choices than the random one")
            if d.called and d.value > 0
            else ("the random push flips more choices" if d.called else "not distinguishable")
        )
        p = (
            "n/a"
            if not np.isfinite(d.p_holm)
            else (f"{d.p_holm:.3f}" if d.p_holm >= 0.001 else f"{d.p_holm:.0e}")
        )
        lines.append(
            f"Layer {layer}: {verdict} (difference {d.value * 100:+.1f} points "
            f"[{d.ci_low * 100:+.1f}, {d.ci_high * 100:+.1f}], p_Holm {p})."
        )
    return lines


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


def sentence_case(text: str, subject: str, forms: tuple[str, str]) -> AgreementCase:
    """A typed sentence with ``[MASK]`` at the verb as a case: ``subject`` is the last
    occurrence of that word before the mask; ``forms`` = (singular, plural), the margin
    read as logit(singular) − logit(plural).

    Raises:
        InvalidArgumentError: no single ``[MASK]``, the subject not before it, or empty or
            equal forms.
    """
    from probing.encoders.base import split_words

    slot = "MASKTOKEN"  # one word for the tokeniser-free split (patching.MASK_WORD)
    words = split_words(text.replace("[MASK]", f" {slot} ").replace("[mask]", f" {slot} "))
    if words.count(slot) != 1:
        raise InvalidArgumentError("Put one [MASK] where the verb goes.")
    verb = words.index(slot)
    sg, pl = (f.strip() for f in forms)
    if not sg or not pl or sg == pl or len(sg.split()) > 1 or len(pl.split()) > 1:
        raise InvalidArgumentError("Give two different one-word verb forms (e.g. is / are).")
    before = [i for i, w in enumerate(words[:verb]) if w.lower() == subject.strip().lower()]
    if not before:
        raise InvalidArgumentError(
            f"The subject {subject.strip()!r} is not a word before [MASK]; words there: "
            f"{', '.join(words[:verb]) or 'none'}."
        )
    words[verb] = sg  # masked by prepare(); it must be one piece, as the forms
    s = before[-1]
    return AgreementCase(tuple(words), verb, s, "Sing", sg, pl, 0, verb - s, "typed", "typed")


def sentence_before_after(
    encoder: TransformersMaskedLM,
    case: AgreementCase,
    layer: int,
    eraser: Eraser,
    alpha: float = 1.0,
    where: str = "subject",
    seed: int = 0,
) -> dict[str, float]:
    """The typed case's margin logit(singular) − logit(plural) with no push, the
    counterfactual push and the random push of the same length at ``layer``.

    Raises:
        InvalidArgumentError: a verb form or the masked word that is not one piece.
    """
    located = locate(encoder, [case])
    if not located.numbers.size:
        raise InvalidArgumentError(
            f"{encoder.info.name} cannot score this sentence: both verb forms must be single "
            "vocabulary pieces and the sentence at most 128 pieces."
        )
    clean = pushed_margins(encoder, located, 0, None)
    cf = pushed_margins(encoder, located, layer, lambda h, b: push(h, eraser, alpha), where)
    rnd = pushed_margins(
        encoder, located, layer, lambda h, b: random_push(h, eraser, alpha, seed), where
    )
    return {"clean": float(clean[0]), "counterfactual": float(cf[0]), "random": float(rnd[0])}


def fit_number_eraser(
    encoder: TransformersMaskedLM, layer: int, max_fit_cases: int = 1500
) -> Eraser:
    """LEACE on subject number at ``layer`` from up to ``max_fit_cases`` UD-EWT train cases
    (what :func:`run_alterrep` fits per layer)."""
    require_mlm(encoder, "AlterRep")
    check_layer(layer, int(encoder.info.n_contextual_layers))
    fit = locate(encoder, _even(ud_case_sets(("train",))[0], max_fit_cases))
    return fit_leace(subject_vectors(encoder, by_length(encoder, fit), layer), fit.numbers)
