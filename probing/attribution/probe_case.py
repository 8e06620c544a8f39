"""One probe prediction to attribute: a word of a sentence, a saved linear probe at layer
``L``, and the label whose logit is explained.

The explained quantity is the probe's logit for ``label`` on the word's vector at hidden
state ``L``: ``f = ((h_L(word) − μ) / σ) · w_label + b_label``, exactly the probe's decision
function (:meth:`probing.probes.saved.SavedProbes.decision_function`), on the word vector
pooled from its pieces as the probe was trained (``first`` / ``mean`` / ``last`` piece). The
model runs only up to block ``L``: a call-local hook on hidden state ``L``
(:meth:`probing.encoders.surface.ModelParts.hidden_hook`) records it and stops the pass, so
the shared model gets no hook and the higher blocks do not run.

The probe was trained on vectors rounded to float16 (the feature cache's format); here the
vectors stay float32, because rounding has no gradient. Unlike a fill-mask case, every word
is context *and* query: the word itself is attributed too (its own embedding is most of what
a part-of-speech probe reads at layer 0, where the others contribute exactly nothing).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import torch

from probing.encoders import surface
from probing.encoders.bert import model_words
from probing.errors import (
    EmptyInputError,
    InputTooLongError,
    InvalidArgumentError,
    LayerOutOfRangeError,
    UnsupportedArchitectureError,
)

if TYPE_CHECKING:
    from probing.encoders.base import Encoder
    from probing.encoders.bert import TransformersEncoder
    from probing.probes.saved import SavedProbes

_FORWARD_KEYS = ("input_ids", "attention_mask", "token_type_ids")
TARGETS = ("predicted", "gold")


class _Stop(Exception):
    """Raised by the recording hook once hidden state L is computed: the rest is not needed."""


@dataclass(frozen=True)
class ProbeHead:
    """A saved linear probe of one layer as torch tensors: standardise, then affine.

    Attributes:
        mean, scale: (dim,) the standardiser. coef: (C, dim). intercept: (C,).
        classes: the C labels.
    """

    mean: torch.Tensor
    scale: torch.Tensor
    coef: torch.Tensor
    intercept: torch.Tensor
    classes: tuple[str, ...]

    @classmethod
    def from_saved(cls, probes: SavedProbes, layer: int) -> ProbeHead:
        """Layer ``layer``'s probe of a saved linear-probe file."""
        t = {
            k: torch.from_numpy(np.asarray(probes.tensors[f"{layer}.{k}"], np.float32))
            for k in ("mean", "scale", "coef", "intercept")
        }
        return cls(t["mean"], t["scale"], t["coef"], t["intercept"], tuple(probes.classes))

    def logits(self, h: torch.Tensor) -> torch.Tensor:
        """(B, dim) word vectors → (B, C) probe logits."""
        dev = h.device
        return ((h - self.mean.to(dev)) / self.scale.to(dev)) @ self.coef.to(dev).T + (
            self.intercept.to(dev)
        )


@dataclass(frozen=True)
class ProbeCase:
    """A word of a sentence, as the model reads it, and the probe label explained.

    Attributes:
        words: the sentence's words (n_words,). word: the probed word's index.
        task, layer: the probe's task and the hidden state it reads (0 … L).
        label: the explained label; label_index: its column in the probe.
        target: how the label was chosen (``predicted``: the probe's answer; ``gold``;
            ``given``: named by the caller).
        pieces, word_ids: the model's pieces (special tokens included) and each one's word.
        pooled: piece positions pooled into the word's vector; pooling: how.
        head: the probe. inputs: forward inputs, each (1, n).
    """

    words: list[str]
    word: int
    task: str
    layer: int
    label: str
    label_index: int
    target: str
    pieces: list[str]
    word_ids: list[int | None]
    pooled: list[int]
    pooling: str
    head: ProbeHead = field(repr=False)
    inputs: dict[str, torch.Tensor] = field(repr=False)

    def word_positions(self) -> list[int]:
        """Every word's pieces (what a baseline replaces; [CLS]/[SEP] stay)."""
        return [p for p, w in enumerate(self.word_ids) if w is not None]

    def to_words(self, piece_scores: np.ndarray) -> np.ndarray:
        """Per-word sums of (..., n) piece scores → (..., n_words); special tokens left out."""
        scores = np.asarray(piece_scores, dtype=np.float64)
        out = np.zeros((*scores.shape[:-1], len(self.words)))
        for p, w in enumerate(self.word_ids):
            if w is not None:
                out[..., w] += scores[..., p]
        return out


def require_surface(encoder: Encoder) -> TransformersEncoder:
    """``encoder`` when it is a `transformers` encoder whose layers the surface knows.

    Raises:
        UnsupportedArchitectureError: ELMo (its input is characters through a char-CNN, not
            an embedding matrix that IG's word-embedding path and the [MASK]/[PAD] baselines
            are defined on; and its layers are not surface hook points), or an architecture
            without a surface adapter.
    """
    info = encoder.info
    if info.objective != "masked":  # ELMo: a char-CNN input, no piece embeddings
        raise UnsupportedArchitectureError(
            f"Attribution of a probe's prediction runs on BERT-family encoders; {info.name} "
            "is an ELMo, whose input is characters through a char-CNN: there is no word-piece "
            "embedding to integrate from a [MASK]/[PAD] baseline, and its layers are not hook "
            "points of the model surface. Pick a BERT-family model."
        )
    if not info.has_layer_hooks:
        raise UnsupportedArchitectureError(info.no_hooks_reason)
    return encoder  # type: ignore[return-value]


def probe_layer_head(probes: SavedProbes, layer: int, dim: int) -> ProbeHead:
    """Layer ``layer``'s probe as a :class:`ProbeHead`, checked against the model's width.

    Raises:
        InvalidArgumentError: not a linear probe on one word's vector (structural, word-sense
            and edge probes such as ``deprel`` on [head; dependent] have other inputs).
        LayerOutOfRangeError: no probe saved for that layer.
    """
    if probes.kind != "linear":
        raise InvalidArgumentError(
            f"The {probes.task} probe is a {probes.kind} probe: attribution explains a linear "
            "probe's label on one word (pos, xpos, supersense …)."
        )
    if int(layer) not in probes.layers:
        raise LayerOutOfRangeError(
            f"No {probes.task} probe is saved for layer {layer}: saved layers are "
            f"{', '.join(map(str, probes.layers))}."
        )
    head = ProbeHead.from_saved(probes, int(layer))
    if head.coef.shape[1] != dim:
        raise InvalidArgumentError(
            f"The {probes.task} probe reads {head.coef.shape[1]}-dimensional inputs, not one "
            f"word's {dim}-dimensional vector (an edge probe): it cannot be attributed per word."
        )
    return head


def prepare_probe_case(
    encoder: Encoder,
    words: Sequence[str],
    word: int,
    probes: SavedProbes,
    layer: int,
    *,
    label: str | None = None,
    target: str = "predicted",
) -> ProbeCase:
    """The case for word ``word`` of ``words`` and the ``layer`` probe of ``probes``.

    The explained label is ``label`` when given (``target`` then says where it came from:
    ``gold`` or ``given``), else the probe's own prediction on the word (``predicted``).

    Raises:
        UnsupportedArchitectureError: see :func:`require_surface`.
        EmptyInputError, InvalidArgumentError: no words, a bad word index, an unknown label,
            a probe that does not read one word's vector.
        LayerOutOfRangeError: no probe for ``layer``. InputTooLongError: too many pieces.
    """
    enc_ = require_surface(encoder)
    words = [str(w) for w in words]
    if not words:
        raise EmptyInputError("No words to attribute.")
    if not 0 <= int(word) < len(words):
        raise InvalidArgumentError(
            f"Word {word} is not in the sentence: it has words 0 to {len(words) - 1}."
        )
    head = probe_layer_head(probes, layer, int(enc_.info.dim))
    tok = enc_.tokenizer
    enc = tok(model_words(tok, words), is_split_into_words=True, return_tensors="pt")
    n = int(enc["input_ids"].shape[1])
    if n > enc_.max_pieces:
        raise InputTooLongError(n, enc_.max_pieces)
    word_ids = list(enc.word_ids(0))
    own = [p for p, w in enumerate(word_ids) if w == int(word)]
    if not own:  # e.g. a word the tokenizer drops entirely
        raise InvalidArgumentError(f"{words[int(word)]!r} has no pieces for {enc_.info.name}.")
    pooling = str(probes.info.get("pooling", "first"))
    pooled = {"first": own[:1], "last": own[-1:]}.get(pooling, own)
    draft = ProbeCase(
        words=words,
        word=int(word),
        task=probes.task,
        layer=int(layer),
        label="",
        label_index=-1,
        target="predicted",
        pieces=tok.convert_ids_to_tokens(enc["input_ids"][0].tolist()),
        word_ids=word_ids,
        pooled=pooled,
        pooling=pooling,
        head=head,
        inputs={k: enc[k] for k in _FORWARD_KEYS if k in enc},
    )
    if label is None:
        with torch.no_grad():
            emb = enc_.model.get_input_embeddings()(draft.inputs["input_ids"].to(enc_.device))
            index = int(probe_logits(enc_, draft, emb)[0].argmax())
        chosen = "predicted"
    else:
        if str(label) not in head.classes:
            raise InvalidArgumentError(
                f"{label!r} is not a label of the {probes.task} probe: it knows "
                f"{', '.join(head.classes)}."
            )
        index = head.classes.index(str(label))
        chosen = target if target in TARGETS and target != "predicted" else "given"
    return _with_label(draft, index, chosen)


def _with_label(case: ProbeCase, index: int, target: str) -> ProbeCase:
    return replace(case, label=case.head.classes[index], label_index=index, target=target)


def layer_state(
    encoder: TransformersEncoder, case: ProbeCase, embeddings: torch.Tensor
) -> torch.Tensor:
    """Hidden state ``case.layer`` (B, n, dim) for a batch of word-embedding inputs
    (B, n, dim); position and segment embeddings are added by the model as usual. The pass
    stops once that state exists."""
    b = embeddings.shape[0]
    extra = {
        k: v.to(encoder.device).expand(b, -1) for k, v in case.inputs.items() if k != "input_ids"
    }
    parts = surface.model_parts(encoder.model)
    kept: list[torch.Tensor] = []

    def record(_m: torch.nn.Module, _a: tuple, out: object) -> None:
        kept.append(out[0] if isinstance(out, tuple) else out)
        raise _Stop

    # _Stop is raised by ``record``: the blocks above layer L need not run.
    with parts.hidden_hook(case.layer, record), contextlib.suppress(_Stop):
        encoder.model(inputs_embeds=embeddings, **extra)
    return kept[0]


def probe_logits(
    encoder: TransformersEncoder, case: ProbeCase, embeddings: torch.Tensor
) -> torch.Tensor:
    """(B, C) the probe's logits on the word's pooled vector at hidden state ``case.layer``."""
    h = layer_state(encoder, case, embeddings)[:, case.pooled].mean(1)
    return case.head.logits(h.float())


def label_logit(
    encoder: TransformersEncoder, case: ProbeCase, embeddings: torch.Tensor
) -> torch.Tensor:
    """``f``: (B,) the probe's logit for ``case.label``."""
    return probe_logits(encoder, case, embeddings)[:, case.label_index]


@torch.inference_mode()
def label_probabilities(
    encoder: TransformersEncoder, case: ProbeCase, input_ids: torch.Tensor
) -> np.ndarray:
    """The probe's softmax probability of ``case.label`` for a batch of (B, n) id rows of the
    case's length (words replaced by the mask token, for deletion curves) → (B,) float64."""
    emb = encoder.model.get_input_embeddings()(input_ids.to(encoder.device))
    p = torch.softmax(probe_logits(encoder, case, emb).double(), dim=-1)
    return p[:, case.label_index].cpu().numpy()
