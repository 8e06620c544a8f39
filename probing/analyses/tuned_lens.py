"""Tuned lens for a masked LM (Belrose et al. 2023, "Eliciting latent predictions from
transformers with the tuned lens"; AlignmentResearch/tuned-lens).

The logit lens applies the MLM head straight to layer l's state; early layers are not in
the basis the head reads, so it reads them badly. The tuned lens first maps layer l's state
with an affine *translator* T_l(h) = W_l h + b_l into the last layer's space, then applies the
head. Translators are trained on held-out text against the model's own final prediction.

How they are trained here (where this differs from the reference):

1. Each T_l starts from the ridge least-squares fit of the final state from layer l's state
   at the same masks (closed form, seconds). The reference starts from the identity.
2. Then Adam on the reference's loss, KL(p_final ‖ p_lens), summed over layers, the head
   frozen (the reference uses SGD with Nesterov momentum and many more steps; a few minutes
   on two CPU cores is the budget here).

The last layer's translator is the identity, as in the reference (its least-squares fit is
the identity within about 1 %, a check on the procedure). They are stored as safetensors with their provenance in the
header's metadata.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from probing.analyses.params import TunedLensParams
from probing.encoders.base import Encoder, LensableMLM, MaskedLM, MaskedPieces
from probing.errors import (
    ContextLensError,
    InputTooLongError,
    InvalidArgumentError,
    NoMLMHeadError,
)

ProgressFn = Callable[[str, int, int], None]  # (stage, done, total)
FILE_NAME = "tuned_lens.safetensors"


class LensMismatchError(ContextLensError, ValueError):
    """A tuned-lens file made for another model (layers or width differ)."""


@dataclass
class TunedLens:
    """One affine translator per layer: ``weight`` (L+1, d, d), ``bias`` (L+1, d), float32.
    Layer L (the last) maps the final state to itself."""

    weight: torch.Tensor
    bias: torch.Tensor
    meta: dict = field(default_factory=dict)

    @property
    def n_contextual_layers(self) -> int:
        """The model's contextual layers (one translator more: the input layer's)."""
        return int(self.weight.shape[0]) - 1

    def translate(self, states: torch.Tensor) -> torch.Tensor:
        """(L+1, n, d) states → (L+1, n, d) translated into the last layer's space."""
        return torch.einsum("lnd,led->lne", states, self.weight) + self.bias[:, None, :]

    def save(self, path: str | Path) -> Path:
        """Write as safetensors (atomically); metadata as JSON strings in the header."""
        from safetensors.torch import save_file

        from probing.io import atomic_write

        tensors = {"weight": self.weight.contiguous(), "bias": self.bias.contiguous()}
        meta = {k: json.dumps(v) for k, v in self.meta.items()}
        return atomic_write(path, lambda tmp: save_file(tensors, str(tmp), metadata=meta))

    @classmethod
    def load(cls, path: str | Path) -> TunedLens:
        """Read a file written by :meth:`save` (safetensors only, never pickle)."""
        from safetensors import safe_open

        with safe_open(str(path), framework="pt") as f:
            meta = {k: json.loads(v) for k, v in (f.metadata() or {}).items()}
            return cls(f.get_tensor("weight").float(), f.get_tensor("bias").float(), meta)

    def check_fits(self, encoder: Encoder) -> None:
        """Raise LensMismatchError unless the lens has the encoder's layers and width."""
        want = (encoder.info.n_contextual_layers + 1, encoder.info.dim, encoder.info.dim)
        if tuple(self.weight.shape) != want:
            raise LensMismatchError(
                f"This tuned lens has translators of shape {tuple(self.weight.shape)} "
                f"(made for {self.meta.get('model', 'another model')}); {encoder.info.name} "
                f"needs {want}. Train one for it with `python -m probing train-tuned-lens`."
            )


def lensable(encoder: Encoder) -> LensableMLM:
    """The encoder as a lensable masked LM, or NoMLMHeadError saying why not."""
    if not (isinstance(encoder, MaskedLM) and isinstance(encoder, LensableMLM)):
        raise NoMLMHeadError(
            f"{encoder.info.name} has no masked-LM head whose layers can be read apart, so no "
            "logit or tuned lens (ELMo, or an encoder without its MLM head)."
        )
    return encoder  # type: ignore[return-value]


# ----------------------------------------------------------------------------------------
# Data: states at masked words
# ----------------------------------------------------------------------------------------


def masked_parts(words: Sequence[str], picks: Sequence[int]) -> list[str]:
    """The text around masked words ``picks`` (sorted word indices): n_masks + 1 strings."""
    parts, start = [], 0
    for i in sorted(picks):
        parts.append(" ".join(words[start:i]))
        start = i + 1
    parts.append(" ".join(words[start:]))
    return parts


def collect_states(
    encoder: Encoder,
    sentences: Sequence[Sequence[str]],
    mask_rate: float = 0.15,
    seed: int = 0,
    progress: ProgressFn | None = None,
) -> torch.Tensor:
    """Hidden states of every layer at masked words: float32 (L+1, n_masks, d).

    In each sentence ``mask_rate`` of its words (at least one) are replaced by one mask
    each, chosen at random (seeded); sentences too long for the model are skipped.
    """
    mlm = lensable(encoder)
    rng = np.random.default_rng(seed)
    chunks = []
    for done, words in enumerate(sentences, start=1):
        words = list(words)
        if len(words) < 2:
            continue
        k = max(1, round(mask_rate * len(words)))
        picks = rng.choice(len(words), size=k, replace=False).tolist()
        try:
            masked = mlm.tokenize_masked(masked_parts(words, picks))
        except InputTooLongError:
            continue
        chunks.append(mlm.mask_states_by_layer(masked))
        if progress is not None and (done % 50 == 0 or done == len(sentences)):
            progress("states", done, len(sentences))
    if not chunks:
        raise InvalidArgumentError(
            "no sentence gave a masked state to train on (all empty or too long); use more "
            "sentences"
        )
    return torch.cat(chunks, dim=1)


# ----------------------------------------------------------------------------------------
# Fitting
# ----------------------------------------------------------------------------------------


def least_squares_lens(states: torch.Tensor, ridge: float = 1e-3) -> TunedLens:
    """Ridge fit of the final state from each layer's: the translators' starting point.

    ``ridge`` is relative to the mean eigenvalue of each layer's (uncentred) second moment.
    """
    n_rows, n, d = states.shape
    target = states[-1].double()  # (n, d)
    weights, biases = [], []
    for layer in range(n_rows):
        x = torch.cat([states[layer].double(), torch.ones(n, 1, dtype=torch.float64)], dim=1)
        gram = x.T @ x
        lam = ridge * float(torch.trace(gram[:d, :d])) / d
        reg = torch.eye(d + 1, dtype=torch.float64) * lam
        reg[d, d] = 0.0  # the bias is not shrunk
        beta = torch.linalg.solve(gram + reg, x.T @ target)  # (d+1, d)
        weights.append(beta[:d].T)  # T(h) = W h + b with W (d_out, d_in)
        biases.append(beta[d])
    return TunedLens(torch.stack(weights).float(), torch.stack(biases).float())


def kl_to_final(final_logits: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
    """KL(p_final ‖ p) in nats for (..., vocab) logits, per row."""
    log_p = torch.log_softmax(final_logits.float(), dim=-1)
    log_q = torch.log_softmax(logits.float(), dim=-1)
    return (log_p.exp() * (log_p - log_q)).sum(-1)


def fine_tune(
    encoder: Encoder,
    lens: TunedLens,
    states: torch.Tensor,
    steps: int = 150,
    batch_size: int = 64,
    lr: float = 1e-4,
    seed: int = 0,
    progress: ProgressFn | None = None,
) -> list[float]:
    """Adam on the summed KL(p_final ‖ p_lens) over layers 0..L−1, in place; the last
    layer's translator is kept (its least-squares fit). Returns the loss per step."""
    mlm = lensable(encoder)
    weight = lens.weight[:-1].clone().requires_grad_(True)
    bias = lens.bias[:-1].clone().requires_grad_(True)
    opt = torch.optim.Adam([weight, bias], lr=lr)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        final_all = mlm.head_logits(states[-1])  # (n, vocab), the targets
    losses = []
    for step in range(steps):
        idx = torch.randint(0, states.shape[1], (batch_size,), generator=gen)
        h = states[:-1, idx]  # (L, B, d)
        translated = torch.einsum("lnd,led->lne", h, weight) + bias[:, None, :]
        loss = kl_to_final(final_all[idx][None], mlm.head_logits(translated)).mean(-1).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        if progress is not None:
            progress("fine-tune", step + 1, steps)
    with torch.no_grad():
        lens.weight[:-1] = weight.detach()
        lens.bias[:-1] = bias.detach()
    return losses


def train_tuned_lens(
    encoder: Encoder,
    sentences: Sequence[Sequence[str]],
    steps: int = 150,
    seed: int = 0,
    source: str = "",
    progress: ProgressFn | None = None,
) -> TunedLens:
    """Translators for every layer of ``encoder``, from masked words of ``sentences``."""
    start = time.perf_counter()
    states = collect_states(encoder, sentences, seed=seed, progress=progress)
    lens = least_squares_lens(states)
    # The last layer's lens is the identity by definition (the reference has no translator
    # there); its least-squares fit is the identity within ~1 % (tests/app/test_tuned_lens.py).
    lens.weight[-1] = torch.eye(states.shape[-1])
    lens.bias[-1] = 0.0
    losses = fine_tune(encoder, lens, states, steps=steps, seed=seed, progress=progress)
    lens.meta = {
        "model": encoder.info.name,
        "n_layers": encoder.info.n_contextual_layers,
        "dim": encoder.info.dim,
        "trained_on": source,
        "n_sentences": len(sentences),
        "n_masked_states": int(states.shape[1]),
        "init": "ridge least squares to the final state (ridge 1e-3 of the mean eigenvalue)",
        "objective": "KL(p_final || p_lens) summed over layers, Adam lr 1e-4, batch 64",
        "steps": steps,
        "first_loss": losses[0] if losses else None,
        "last_loss": float(np.mean(losses[-10:])) if losses else None,
        "seconds": round(time.perf_counter() - start, 1),
        "seed": seed,
    }
    return lens


# ----------------------------------------------------------------------------------------
# Reading a sentence through both lenses
# ----------------------------------------------------------------------------------------


@dataclass
class LensReadout:
    """Per layer (rows, 0 = embeddings) and mask (columns): the rank of the model's final
    top-1 token and KL(p_final ‖ p_layer) in nats, under the logit and the tuned lens."""

    layer_names: list[str]
    final_tokens: list[str]
    logit_rank: np.ndarray  # (L+1, n_masks) int
    tuned_rank: np.ndarray
    logit_kl: np.ndarray  # (L+1, n_masks) float
    tuned_kl: np.ndarray


def _ranks_and_kl(logits: torch.Tensor, final: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    top = final.argmax(-1)  # (n,)
    p_top = logits.gather(-1, top[None, :, None].expand(logits.shape[0], -1, 1))
    rank = (logits > p_top).sum(-1) + 1
    return rank.numpy(), kl_to_final(final[None], logits).numpy()


@torch.inference_mode()
def read_masks(encoder: Encoder, masked: MaskedPieces, lens: TunedLens) -> LensReadout:
    """Both lenses at the masks of ``masked`` (a MaskedPieces from ``tokenize_masked``)."""
    mlm = lensable(encoder)
    lens.check_fits(encoder)
    states = mlm.mask_states_by_layer(masked)  # (L+1, n, d)
    logit = mlm.head_logits(states).float()
    tuned = mlm.head_logits(lens.translate(states)).float()
    final = logit[-1]
    lr, lk = _ranks_and_kl(logit, final)
    tr, tk = _ranks_and_kl(tuned, final)
    names = list(encoder.info.layer_names) or [f"layer {i}" for i in range(states.shape[0])]
    return LensReadout(
        layer_names=names,
        final_tokens=mlm.token_labels(final.argmax(-1).tolist()),
        logit_rank=lr,
        tuned_rank=tr,
        logit_kl=lk,
        tuned_kl=tk,
    )


def evaluate_lens(
    encoder: Encoder,
    lens: TunedLens,
    sentences: Sequence[Sequence[str]],
    n_boot: int = 1000,
    seed: int = 0,
) -> dict:
    """Mean KL to the final distribution and share of masks whose final answer is top-1,
    per layer, logit vs tuned lens, over one masked word per sentence (seeded), with 95 %
    sentence-bootstrap intervals (paired: the same sentences for both lenses)."""
    mlm = lensable(encoder)
    rng = np.random.default_rng(seed)
    rows = []
    for words in sentences:
        words = list(words)
        if len(words) < 2:
            continue
        try:
            masked = mlm.tokenize_masked(masked_parts(words, [int(rng.integers(len(words)))]))
        except InputTooLongError:
            continue
        r = read_masks(encoder, masked, lens)
        rows.append((r.logit_kl[:, 0], r.tuned_kl[:, 0], r.logit_rank[:, 0], r.tuned_rank[:, 0]))
    lk, tk, lr, tr = (np.stack(x) for x in zip(*rows, strict=True))  # (n, L+1) each
    picks = np.random.default_rng(seed + 1).integers(0, len(rows), (n_boot, len(rows)))

    def summary(values: np.ndarray) -> dict:
        draws = values[picks].mean(1)
        lo, hi = np.quantile(draws, [0.025, 0.975], axis=0)
        return {"mean": values.mean(0).tolist(), "ci_low": lo.tolist(), "ci_high": hi.tolist()}

    return {
        "n_masks": len(rows),
        "kl_logit": summary(lk),
        "kl_tuned": summary(tk),
        "kl_tuned_minus_logit": summary(tk - lk),
        "top1_logit": summary((lr == 1).astype(float)),
        "top1_tuned": summary((tr == 1).astype(float)),
    }


def lens_paths(model: str) -> list[Path]:
    """Where a model's translators are looked for, in order: shipped beside an embedded
    model, then the cache folder that ``train-tuned-lens --out`` suggests."""
    from probing import config
    from probing.models.embedded import MINILM_MLM_DELTA

    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in model)
    paths = [Path(MINILM_MLM_DELTA) / FILE_NAME] if model == "minilm-l6-mlm" else []
    return [*paths, config.cache_dir() / "tuned-lens" / safe / FILE_NAME]


def find_lens(encoder: Encoder) -> TunedLens | None:
    """The model's trained translators, or None when there are none.

    Raises:
        LensMismatchError: a file that was made for another model.
    """
    for path in lens_paths(encoder.info.name):
        if path.is_file():
            lens = TunedLens.load(path)
            lens.check_fits(encoder)
            return lens
    return None


@dataclass
class LensRun:
    """What ``train-tuned-lens`` made: the translators and their scores (:func:`evaluate_lens`'s
    report, with the model, its layers, the scoring text and the training provenance)."""

    lens: TunedLens
    report: dict


def run(encoders: Sequence[Encoder], params: TunedLensParams, progress: ProgressFn) -> LensRun:
    """The registry's ``train-tuned-lens``: translators for ``encoders[0]`` trained on
    ``params.train_dataset``, scored on ``params.eval_dataset`` against the logit lens.

    Raises:
        NoMLMHeadError: the model has no head to read a lens through (before any data).
        ValueError: an unknown data set, or a lexicon where sentences are needed.
    """
    from probing.analyses.attention import sample_sentences

    encoder = encoders[0]
    lensable(encoder)  # a typed error before any data is read
    p = params
    train = sample_sentences(p.train_dataset, p.train_split, n=p.n_sentences)
    evaluation = sample_sentences(p.eval_dataset, p.eval_split, n=p.eval_sentences)
    source = f"{p.train_dataset} {p.train_split}, {len(train)} sentences"
    lens = train_tuned_lens(encoder, train, p.steps, p.seed, source, progress)
    report = evaluate_lens(encoder, lens, evaluation, seed=p.seed)
    report.update(
        {
            "model": encoder.info.name,
            "layers": list(encoder.info.layer_names),
            "evaluated_on": f"{p.eval_dataset} {p.eval_split}, one masked word per sentence",
            "training": lens.meta,
        }
    )
    return LensRun(lens, report)
