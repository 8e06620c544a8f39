"""Word vectors of every layer after replacing layer ``l`` (later layers recomputed), for the
BERT family (a forward hook) and ELMo (its two LSTM stacks re-run from the replaced layer).

ELMo's layer ``l`` is ``[forward_l; backward_l]``: the replaced vector's halves go on into
their own direction's next LSTM layer (layer 0, ``[x; x]``, gives each direction its half),
with the residual connection as in :class:`probing.encoders.elmo.ElmoBiLm`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

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


LayerHook = Callable[[int, torch.Tensor, "torch.Tensor | None"], tuple]
"""(layer, forward (B, T, P), backward (B, T, P) or None) -> the (forward, backward) that
the later layers read; both in sentence order, ``<S>``/``</S>`` included."""


def elmo_states(
    encoder: ElmoEncoder,
    ids: torch.Tensor,
    hook: LayerHook | None = None,
    forward_only: bool = False,
) -> tuple[list[tuple[torch.Tensor, torch.Tensor | None]], torch.Tensor]:
    """ELMo's (forward, backward) states at every layer for char ids (B, T, C) from
    :func:`probing.encoders.elmo.batch_to_char_ids`, as :class:`ElmoBiLm` computes them, with
    ``hook`` free to replace each layer's states before the next layer reads them (layer 0:
    the token vectors, which both directions read). ``forward_only`` skips the backward
    stack (the forward LM needs none of it; its entries are None). Returns the per-layer
    states after the hook and the (B, T) token mask."""
    from probing.encoders.elmo import reverse_padded

    model = encoder.model
    cfg = model.config
    B, T, _ = ids.shape
    mask = (ids > 0).any(dim=-1)
    lengths = mask.sum(dim=1)
    token = torch.zeros(B, T, cfg.projection_dim, device=ids.device)
    unique, inverse = torch.unique(ids[mask], dim=0, return_inverse=True)
    token[mask] = model.token_encoder(unique)[inverse].float()
    state = model.zero_state(B, token)
    f, b = token, (None if forward_only else token)
    if hook is not None:
        f, b = hook(0, f, b)
    states = [(f, b)]
    x = [f, None if b is None else reverse_padded(b, lengths)]  # the backward LM reads reversed
    for li in range(cfg.n_layers):
        outs = []
        for direction in range(1 if forward_only else 2):
            out, _ = model.lstms[direction][li](x[direction], mask, state[direction][li])
            if cfg.use_skip_connections and li > 0:
                out = out + x[direction]
            outs.append(out)
        f = outs[0]
        b = None if forward_only else reverse_padded(outs[1], lengths)
        if hook is not None:
            f, b = hook(li + 1, f, b)
        states.append((f, b))
        x = [f, None if b is None else reverse_padded(b, lengths)]
    return states, mask


def word_mask(chunk: Sequence[Sequence[str]], T: int, device: torch.device) -> torch.Tensor:
    """(B, T) True at the words of each sentence (not ``<S>``, ``</S>`` or padding)."""
    words = torch.zeros(len(chunk), T, dtype=torch.bool, device=device)
    for b, s in enumerate(chunk):
        words[b, 1 : len(s) + 1] = True
    return words


def replacing(layer: int, fn: VectorFn, where: torch.Tensor) -> LayerHook:
    """A hook that applies ``fn`` to layer ``layer``'s ``[forward; backward]`` vectors at
    ``where`` (B, T) and hands each direction its half (layer 0, ``[x; x]``: each direction
    reads its own half of the replaced vector)."""

    def hook(at: int, f: torch.Tensor, b: torch.Tensor | None) -> tuple:
        if at != layer:
            return f, b
        P = f.shape[-1]
        both = torch.cat([f, f if b is None else b], dim=-1)
        both = torch.where(where[..., None], fn(both), both)
        return both[..., :P], (None if b is None else both[..., P:])

    return hook


def _elmo_layers(
    encoder: ElmoEncoder, chunk: list[list[str]], layer: int, fn: VectorFn
) -> list[np.ndarray]:
    from probing.encoders.elmo import batch_to_char_ids

    cfg = encoder.model.config
    ids = batch_to_char_ids(chunk, cfg.max_characters_per_token).to(encoder.device)
    words = word_mask(chunk, ids.shape[1], ids.device)
    states, _ = elmo_states(encoder, ids, replacing(layer, fn, words))
    stacked = torch.stack([torch.cat([f, b], dim=-1) for f, b in states]).float().cpu().numpy()
    return [np.ascontiguousarray(stacked[:, b, 1 : len(s) + 1]) for b, s in enumerate(chunk)]
