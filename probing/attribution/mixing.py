"""Value Zeroing and ALTI for the Attention page: the same input and units as an
:class:`~probing.analyses.attention.AttentionMap`, so that the page's word/piece and
[CLS]/[SEP] controls (:func:`probing.analyses.attention.attention_view`) apply unchanged.

A returned map holds one "head" per layer (``weights`` (L, 1, n, n), rows sum to 1), like
rollout's.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from probing.analyses.attention import AttentionMap
from probing.attribution.alti import alti
from probing.attribution.value_zeroing import rolled_out, value_zeroing
from probing.errors import NoAttentionError

if TYPE_CHECKING:
    from probing.encoders.base import Encoder

MIXING_METHODS = ("value_zeroing", "alti")


def mixing_maps(
    encoder: Encoder, amap: AttentionMap, rolled: bool = False
) -> dict[str, AttentionMap]:
    """Value Zeroing and ALTI of ``amap``'s input (a piece-level single-sentence map the
    encoder made), per layer or rolled out across layers.

    Raises:
        NoAttentionError: not a BERT-family encoder, a sentence pair, or a map whose pieces
            the tokenizer does not reproduce.
    """
    from probing.encoders.bert import TransformersEncoder, model_words

    if not isinstance(encoder, TransformersEncoder):
        raise NoAttentionError(
            f"{encoder.name} has no attention blocks: Value Zeroing and ALTI decompose a "
            "transformer layer (BERT-family models only)."
        )
    if amap.level != "piece" or amap.is_pair:
        raise NoAttentionError(
            "Value Zeroing and ALTI are shown for one sentence (not a pair), from its pieces."
        )
    tok = encoder.tokenizer
    enc = tok(model_words(tok, amap.words), is_split_into_words=True, return_tensors="pt")
    if enc["input_ids"].shape[1] != amap.n_tokens:
        raise NoAttentionError("The tokenizer did not reproduce the attention map's pieces.")
    inputs = {
        k: enc[k].to(encoder.device)
        for k in ("input_ids", "attention_mask", "token_type_ids")
        if k in enc
    }
    out = {}
    for name, fn in (("value_zeroing", value_zeroing), ("alti", alti)):
        maps = fn(encoder.model, inputs)
        maps = rolled_out(maps) if rolled else maps
        w = np.ascontiguousarray(maps[:, None], dtype=np.float32)
        out[name] = replace(amap, weights=w)
    return out
