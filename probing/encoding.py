"""The one data structure every encoder returns: per-layer word vectors for one sentence."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, get_args

import numpy as np

if TYPE_CHECKING:  # torch is not imported here
    import torch

# How a word's subword pieces become its vector: its first piece, their mean, or the last.
Pooling = Literal["first", "mean", "last"]
POOLINGS: tuple[Pooling, ...] = get_args(Pooling)

# The layer number that names a model's static (context-free) vectors wherever an API or a
# table takes a layer: left of the input layer 0 on every axis. Never a Python index.
STATIC = -1


@dataclass(frozen=True)
class ModelInfo:
    """What a model is and where it came from, shown to users as its provenance card."""

    name: str
    family: str  # "bert" (any transformers encoder) or "elmo"
    # Contextual layers (transformer blocks, LSTM layers), the input layer not counted: an
    # Encoding's ``layers`` holds n_contextual_layers + 1 arrays, numbered 0..n_contextual_layers.
    n_contextual_layers: int
    dim: int
    provenance: str  # one or two sentences: what it is, what it was trained on
    # The checkpoint's own architecture, set by its encoder: the transformers config's
    # model_type ("bert", "mpnet", "roberta"…) or "elmo"; "" for a model not loaded yet.
    architecture: str = ""
    source: str = ""  # hub id, URL or folder the weights came from
    how_to_get_real: str = ""  # for embedded stand-ins: how to load the real thing
    has_attention: bool = False
    has_mlm_head: bool = False
    # Why a head the config names is not served (its weights are not in the checkpoint).
    no_mlm_head_reason: str = ""
    max_pieces: int | None = None  # longest input in pieces, incl. special tokens; None = no limit
    layer_names: tuple[str, ...] = ()
    # Capabilities: set only by the encoder that made this info (probing/encoders/), read by
    # analyses and pages instead of asking the model's family, class or attributes.
    # What the architecture is pretrained as: "masked" (BERT family) or "bidirectional-lm"
    # (ELMo: a forward and a backward next-word LM).
    objective: str = ""
    # The LM output layer this model has loaded: "masked" (an MLM head: fill-mask),
    # "bidirectional-lm" (ELMo's forward/backward softmax), "" (none: an encoder only).
    lm_kind: str = ""
    # The next-word LMs that LM is read as, each from its own side's context: ("forward",
    # "backward") for ELMo's softmax (left context, right context); () for a masked LM or none.
    lm_directions: tuple[str, ...] = ()
    has_cls_token: bool = False  # a sentence-level first token ([CLS], <s>)
    # Hidden states can be replaced mid-pass with the later layers recomputed (erasure,
    # patching by layer): BERT-family via hooks, ELMo by re-running its LSTM layers.
    has_layer_hooks: bool = False
    n_heads: int = 0  # attention heads per layer (0: no attention)
    has_head_hooks: bool = False  # per-head outputs can be replaced (per-head patching, ablation)
    has_value_norms: bool = False  # ‖f_h(x_j)‖ for norm-weighted attention (Kobayashi et al.)
    # Why has_head_hooks / has_value_norms are False: names the architecture and what it lacks.
    no_hooks_reason: str = ""
    # How the tokenizer marks words in its pieces (fill-mask labels keep it): "wordpiece"
    # ("##ing" continues a word), "bpe" ("Ġcat" starts one), "sentencepiece" ("▁cat" starts
    # one), "" (words, or an unknown scheme: pieces shown as they are).
    piece_convention: str = ""
    # Each layer vector is this many direction blocks side by side: 2 for ELMo
    # ([forward; backward]), 1 otherwise.
    direction_blocks: int = 1


@dataclass
class Encoding:
    """One sentence through one encoder.

    Attributes:
        words: the sentence's words (n_words).
        pieces: the model's input units, special tokens included (n_pieces).
        word_ids: for each piece, the index of its word, or None for special tokens.
        layers: float32 (n_layer_arrays, n_words, dim); layer 0 is the model's input layer.
        static: float32 (n_words, dim), each word's context-free vector.
        attentions: float32 (layers, heads, n_pieces, n_pieces) or None.
        model: the encoder's ModelInfo.
        pooling: how pieces were pooled into words.
        piece_layers: float32 (n_layer_arrays, n_pieces, dim), the unpooled states of every
            piece, special tokens included (BERT family, unwindowed inputs), or None. Sentence
            pooling reads [CLS] and the special-token mask from here.
    """

    words: list[str]
    pieces: list[str]
    word_ids: list[int | None]
    layers: np.ndarray
    static: np.ndarray
    model: ModelInfo
    pooling: str = "first"
    attentions: np.ndarray | None = None
    extras: dict = field(default_factory=dict)
    piece_layers: np.ndarray | None = None

    @property
    def n_layer_arrays(self) -> int:
        """Number of arrays in ``layers``: the input layer plus every contextual layer
        (``model.n_contextual_layers + 1``)."""
        return int(self.layers.shape[0])

    def pieces_of(self, word_index: int) -> list[int]:
        """Indices of the pieces that make up word ``word_index``."""
        return [i for i, w in enumerate(self.word_ids) if w == word_index]


def pool_pieces(
    piece_vectors: np.ndarray, word_ids: Sequence[int | None], n_words: int, pooling: str
) -> np.ndarray:
    """Pool piece vectors into word vectors.

    Args:
        piece_vectors: (..., n_pieces, dim) array.
        word_ids: word index per piece (None for special tokens, which are dropped).
        n_words: number of words.
        pooling: "first", "mean" or "last" piece of each word.

    Returns:
        (..., n_words, dim) array of the same dtype.
    """
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {POOLINGS}, not {pooling!r}")
    groups: list[list[int]] = [[] for _ in range(n_words)]
    for piece, word in enumerate(word_ids):
        if word is not None:
            groups[word].append(piece)
    missing = [i for i, g in enumerate(groups) if not g]
    if missing:
        raise ValueError(f"words {missing} have no pieces; cannot pool")
    if pooling == "first":
        return piece_vectors[..., [g[0] for g in groups], :]
    if pooling == "last":
        return piece_vectors[..., [g[-1] for g in groups], :]
    out = np.empty(
        piece_vectors.shape[:-2] + (n_words, piece_vectors.shape[-1]), piece_vectors.dtype
    )
    for i, g in enumerate(groups):
        out[..., i, :] = piece_vectors[..., g, :].mean(axis=-2)
    return out


_FLOAT16_MAX = float(np.finfo(np.float16).max)


def to_float16(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``x`` as float16 (into ``out`` when given, else a new array), clipped to float16's
    range rather than overflowing to inf: how the feature cache stores vectors (a few BERT
    dimensions are large, none near 65504)."""
    if out is None:
        out = np.empty(x.shape, np.float16)
    return np.clip(x, -_FLOAT16_MAX, _FLOAT16_MAX, out=out, casting="same_kind")


def tensor_to_float16(t: torch.Tensor) -> np.ndarray:
    """:func:`to_float16` of a torch tensor, computed in torch: the same values (clip in
    float32, then round to nearest even), but vectorised and threaded where numpy's mixed-type
    clip cost about 5 % of the feature path's CPU time."""
    return t.float().clamp(-_FLOAT16_MAX, _FLOAT16_MAX).half().cpu().numpy()
