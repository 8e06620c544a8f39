"""Word vectors of every layer after replacing layer ``l`` (later layers recomputed), through
the encoder's layer surface: a forward hook on a BERT-family layer, or ELMo's hidden-state
hook, whose two LSTM stacks re-run from the replaced layer (each direction reads its own
half of ``[forward_l; backward_l]``: :mod:`probing.encoders.elmo_surface`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

from probing.encoders.elmo_surface import word_mask
from probing.interventions.hooks import check_layer, model_parts, recorded_hidden, replaced_hidden

if TYPE_CHECKING:
    from probing.encoders.bert import TransformersMaskedLM
    from probing.encoders.elmo import ElmoEncoder

VectorFn = Callable[[torch.Tensor], torch.Tensor]  # (..., dim) -> (..., dim)


@torch.inference_mode()
def layers_after(
    encoder: TransformersMaskedLM | ElmoEncoder,
    sentences: Sequence[Sequence[str]],
    layer: int,
    fn: VectorFn,
    batch_size: int = 32,
) -> list[np.ndarray]:
    """Per sentence float32 (n_layers + 1, n_words, dim): first-piece word vectors with
    ``fn`` applied to every word piece of layer ``layer`` (layers below are unchanged)."""
    check_layer(layer, int(encoder.info.n_contextual_layers))
    out: list[np.ndarray] = []
    for start in range(0, len(sentences), batch_size):
        chunk = [list(s) for s in sentences[start : start + batch_size]]
        if encoder.info.objective == "bidirectional-lm":  # ELMo: its LSTM layers re-run
            out.extend(_elmo_layers(encoder, chunk, layer, fn))
        else:
            out.extend(_bert_layers(encoder, chunk, layer, fn))
    return out


def _bert_layers(
    encoder: TransformersMaskedLM, chunk: list[list[str]], layer: int, fn: VectorFn
) -> list[np.ndarray]:
    parts = model_parts(encoder)
    tok = encoder.tokenizer
    enc = tok(chunk, is_split_into_words=True, padding=True, return_tensors="pt")
    word_pos = torch.tensor(
        [[w is not None for w in enc.word_ids(b)] for b in range(len(chunk))]
    ).to(encoder.device)

    def replace(h: torch.Tensor) -> torch.Tensor:
        return torch.where(word_pos[..., None], fn(h), h)

    inputs = {
        k: enc[k].to(encoder.device)
        for k in ("input_ids", "attention_mask", "token_type_ids")
        if k in enc
    }
    # Hooks run in the order they were registered: the replacing one first, so that the
    # recording hook of the same module sees the replaced state.
    with replaced_hidden(parts, layer, replace), recorded_hidden(parts) as store:
        encoder.model(**inputs)
    hidden = torch.stack(store).float().cpu().numpy()  # (L+1, B, T, D)
    result = []
    for b, words in enumerate(chunk):
        first: dict[int, int] = {}
        for p, w in enumerate(enc.word_ids(b)):
            if w is not None and w not in first:
                first[w] = p
        idx = [first[w] for w in range(len(words))]
        result.append(np.ascontiguousarray(hidden[:, b, idx]))
    return result


def _elmo_layers(
    encoder: ElmoEncoder, chunk: list[list[str]], layer: int, fn: VectorFn
) -> list[np.ndarray]:
    parts = encoder.layer_parts()
    ids = parts.char_ids(chunk)
    words = word_mask(chunk, ids.shape[1], ids.device)[..., None]

    def replace(h: torch.Tensor) -> torch.Tensor:
        return torch.where(words, fn(h), h)

    with replaced_hidden(parts, layer, replace), recorded_hidden(parts) as store:
        parts.run(ids)
    stacked = torch.stack(store).float().cpu().numpy()  # (L+1, B, T, 2P)
    return [np.ascontiguousarray(stacked[:, b, 1 : len(s) + 1]) for b, s in enumerate(chunk)]
