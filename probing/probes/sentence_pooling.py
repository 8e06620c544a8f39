"""One vector per sentence, per layer: [CLS], mean, attention-weighted or max pooling.

Four ways to turn a sentence's token states into one vector (the course note's three, and max):

- ``cls``: the state of the first piece, BERT's ``[CLS]`` (RoBERTa's ``<s>``). Pre-trained
  BERT trains it only through next-sentence prediction; sentence-transformers models such as
  all-MiniLM-L6-v2 were fine-tuned on *mean* pooling, so their [CLS] was never the target.
- ``mean``: the average over the sentence's word pieces, **special tokens excluded** (note:
  sentence-transformers' own mean pooling averages every attended position, [CLS] and [SEP]
  included; with a handful of specials among tens of pieces the two differ little).
- ``attention``: a weighted average of the word pieces, the weights being the attention that
  the first piece ([CLS]) pays to each of them in that layer, averaged over heads and
  renormalised over the non-special pieces (so they sum to 1). Layer ℓ ≥ 1 uses the attention
  computed inside layer ℓ; layer 0 (the embeddings) uses layer 1's. No parameters are
  trained: it asks "what does the model's own summary position look at?".
- ``max``: the element-wise maximum over word pieces (the usual choice for ELMo besides the
  mean, e.g. in InferSent-style encoders).

ELMo has no [CLS] and no attention: it offers ``mean`` and ``max`` over its words (its
pieces are its words; there are no special tokens to drop, the <S>/</S> boundary states are
already removed by the encoder). Asking it for ``cls`` or ``attention`` raises
:class:`~probing.errors.PoolingUnavailableError` saying so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from probing.encoding import Encoding, ModelInfo
from probing.errors import PoolingUnavailableError

if TYPE_CHECKING:
    from probing.encoders.base import Encoder

STRATEGIES: tuple[str, ...] = ("cls", "mean", "attention", "max")
ELMO_NO_CLS = (
    "ELMo has no [CLS] token (and no attention): its sentence vectors are the mean or the max "
    "of its word vectors."
)


def strategies_for(info: ModelInfo) -> tuple[str, ...]:
    """The strategies a model supports: ``cls`` needs a sentence token, ``attention`` its
    attention weights (the BERT family has both; ELMo neither: ``mean, max``)."""
    return tuple(
        s
        for s in STRATEGIES
        if (s != "cls" or info.has_cls_token) and (s != "attention" or info.has_attention)
    )


def missing_for_pooling(info: ModelInfo) -> str:
    """What ``info``'s model lacks for the strategies it does not offer ("" when none)."""
    lacks = [
        what
        for what, has in (("[CLS] token", info.has_cls_token), ("attention", info.has_attention))
        if not has
    ]
    return f"{info.name} has no {' and no '.join(lacks)}" if lacks else ""


def _check(enc: Encoding, strategy: str) -> None:
    if strategy not in STRATEGIES:
        raise PoolingUnavailableError(
            f"Unknown sentence pooling {strategy!r}; choose one of {', '.join(STRATEGIES)}."
        )
    if strategy not in strategies_for(enc.model):
        raise PoolingUnavailableError(
            f"{missing_for_pooling(enc.model)}: it offers "
            f"{', '.join(strategies_for(enc.model))} pooling of its word vectors."
        )


def _piece_states(enc: Encoding, strategy: str) -> tuple[np.ndarray, np.ndarray]:
    """(layers, n_pieces, dim) states and a bool (n_pieces,) mask of the real word pieces."""
    if enc.piece_layers is not None:
        mask = np.array([w is not None for w in enc.word_ids], dtype=bool)
        return enc.piece_layers, mask
    if strategy in ("mean", "max"):
        # Word-level states (ELMo; BERT over windowed long inputs): every row is a word.
        # (cls and attention never get here without piece states: _check refuses them for
        # models without a [CLS] token or attention.)
        return enc.layers, np.ones(enc.layers.shape[1], dtype=bool)
    raise PoolingUnavailableError(
        f"{strategy!r} pooling needs the piece-level states of {enc.model.name}, which this "
        "encoding does not hold (an over-long input encoded in windows)."
    )


def attention_weights(enc: Encoding) -> np.ndarray:
    """[CLS]'s attention to each piece, per hidden-state layer.

    Returns:
        float64 (n_layers + 1, n_pieces): row ℓ are the weights used to pool layer ℓ
        (layer ℓ's attention, layer 1's for ℓ = 0), head-averaged, zero at special tokens,
        each row summing to 1.

    Raises:
        PoolingUnavailableError: no attentions in the encoding (ELMo, or encoded without
            ``attentions=True``).
    """
    if enc.attentions is None:
        raise PoolingUnavailableError(
            f"{enc.model.name}: attention pooling needs attention weights; "
            + (ELMO_NO_CLS if not enc.model.has_attention else "encode with attentions=True.")
        )
    mask = np.array([w is not None for w in enc.word_ids], dtype=bool)
    from_cls = enc.attentions[:, :, 0, :].astype(np.float64).mean(axis=1)  # (L, n_pieces)
    from_cls = np.concatenate([from_cls[:1], from_cls], axis=0)  # layer 0 borrows layer 1's
    from_cls[:, ~mask] = 0.0
    total = from_cls.sum(axis=1, keepdims=True)
    # A row with no mass on words (all on [CLS]/[SEP]) would divide by ~0: fall back to uniform.
    uniform = np.where(mask, 1.0 / max(int(mask.sum()), 1), 0.0)
    return np.where(total > 1e-12, from_cls / np.maximum(total, 1e-12), uniform)


def sentence_vector(enc: Encoding, strategy: str) -> np.ndarray:
    """One vector per layer for the sentence in ``enc``.

    Args:
        enc: one sentence's Encoding (for ``attention``: encoded with ``attentions=True``).
        strategy: ``cls``, ``mean``, ``attention`` or ``max`` (see the module doc).

    Returns:
        float32 (n_layers + 1, dim).
    """
    _check(enc, strategy)
    states, words = _piece_states(enc, strategy)
    if strategy == "cls":
        return np.asarray(states[:, 0], dtype=np.float32)
    if strategy == "mean":
        return states[:, words].mean(axis=1, dtype=np.float64).astype(np.float32)
    if strategy == "max":
        return states[:, words].max(axis=1).astype(np.float32)
    weights = attention_weights(enc)  # (L+1, n_pieces)
    return np.einsum("lp,lpd->ld", weights, states.astype(np.float64)).astype(np.float32)


def sentence_vectors(encodings: Sequence[Encoding], strategy: str) -> np.ndarray:
    """float32 (n_layers + 1, n_sentences, dim): :func:`sentence_vector` of each encoding."""
    return np.stack([sentence_vector(e, strategy) for e in encodings], axis=1)


def similarity_matrices(vectors: np.ndarray) -> np.ndarray:
    """Cosine similarity between sentences at every layer.

    Args:
        vectors: (n_layers + 1, n_sentences, dim) from :func:`sentence_vectors`.

    Returns:
        float64 (n_layers + 1, n_sentences, n_sentences).
    """
    v = vectors.astype(np.float64)
    v = v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)
    return np.einsum("lid,ljd->lij", v, v)


def pooled_similarities(
    encoder: Encoder,
    sentences: Sequence[str] | Sequence[Sequence[str]],
    strategies: Sequence[str] | None = None,
) -> dict[str, np.ndarray]:
    """Sentence-similarity matrices per strategy and layer for the user's sentences.

    Returns:
        {strategy: float64 (n_layers + 1, n, n)}, for the strategies the model supports
        (default: all of them).
    """
    chosen = list(strategies or strategies_for(encoder.info))
    encs = encoder.encode(sentences, pooling="first", attentions="attention" in chosen)
    return {s: similarity_matrices(sentence_vectors(encs, s)) for s in chosen}
