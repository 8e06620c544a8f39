"""Attention rollout and attention flow (Abnar & Zuidema 2020, "Quantifying attention flow").

Raw attention in layer l says how layer l's positions mix layer l − 1's, not which *input*
tokens they draw on. Both methods follow the mixing down to the input, as the reference code
(samiraabnar/attention_flow) does: heads are averaged, the residual connection is mixed in as
the identity (Â_l = normalise_rows(mean_h A_l + I)), then

- rollout multiplies: R_1 = Â_1, R_l = Â_l · R_{l−1} (rows still sum to 1);
- flow treats the layers as a graph whose edge (l, i) → (l − 1, j) has capacity Â_l[i, j]
  and takes the maximum flow from (l, i) to each input node (0, j), each row then
  normalised to sum to 1. Max-flow costs n² flow problems per layer, so it is offered for
  short inputs only (:data:`FLOW_MAX_TOKENS`).

Both take an :class:`~probing.analyses.attention.AttentionMap` at any level (word-level maps
are pooled before mixing, which is what the page shows) and return maps with one "head".
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import maximum_flow

from probing.analyses.attention import AttentionMap
from probing.errors import InputTooLongError

# Longest input (tokens of the map given) for which attention flow is computed: at 24 tokens
# one layer's map is 576 max-flow problems (scipy's Dinic; measured in tests/library/test_rollout.py).
FLOW_MAX_TOKENS = 24
_SCALE = 1_000_000


def residual_mixed(weights: np.ndarray) -> np.ndarray:
    """(layers, heads, n, n) → (layers, n, n): head mean plus identity, rows renormalised."""
    a = weights.astype(np.float64).mean(axis=1) + np.eye(weights.shape[-1])
    return a / a.sum(axis=-1, keepdims=True)


def rollout_weights(weights: np.ndarray, residual: bool = True) -> np.ndarray:
    """Rollout of every layer: (layers, heads, n, n) → (layers, n, n), rows sum to 1.

    ``residual=False`` multiplies the head-mean maps alone (the paper's ablation).
    """
    a = residual_mixed(weights) if residual else weights.astype(np.float64).mean(axis=1)
    out = np.empty_like(a)
    out[0] = a[0]
    for layer in range(1, a.shape[0]):
        out[layer] = a[layer] @ out[layer - 1]
    return out


def rollout(amap: AttentionMap, residual: bool = True) -> AttentionMap:
    """The rollout map: ``weights[l, 0, i, j]`` = how much input token j feeds token i at
    layer l + 1 (one head)."""
    w = rollout_weights(amap.weights, residual)[:, None].astype(np.float32)
    return replace(amap, weights=np.ascontiguousarray(w))


def flow_weights(
    weights: np.ndarray, layer: int, max_tokens: int = FLOW_MAX_TOKENS, query: int | None = None
) -> np.ndarray:
    """Attention flow from every token at ``layer`` (1-based) to the input tokens: (n, n);
    with ``query``, only that token's row (n,) (n max-flow problems instead of n²).

    Raises:
        InputTooLongError: more than ``max_tokens`` tokens.
        ValueError: a layer out of range.
    """
    n_layers, _, n, _ = weights.shape
    if n > max_tokens:
        raise InputTooLongError(n, max_tokens, unit="tokens for attention flow (max-flow)")
    if not 1 <= layer <= n_layers:
        raise ValueError(f"layer must be 1..{n_layers}, not {layer}")
    a = residual_mixed(weights[:layer])
    # Node lyr·n + i is token i at layer lyr (0 = input). scipy's max-flow takes integer
    # capacities: weights scaled by 1e6, so flows are exact to 1e-6 of a row's mass.
    size = (layer + 1) * n
    cap = np.zeros((size, size), np.int64)
    for lyr in range(layer):
        cap[(lyr + 1) * n : (lyr + 2) * n, lyr * n : (lyr + 1) * n] = np.round(a[lyr] * _SCALE)
    graph = sparse.csr_array(cap.astype(np.int32))
    sources = range(n) if query is None else [query]
    out = np.zeros((len(sources), n))
    for r, i in enumerate(sources):
        for j in range(n):
            out[r, j] = maximum_flow(graph, layer * n + i, j, method="dinic").flow_value
    out /= out.sum(axis=-1, keepdims=True)
    return out if query is None else out[0]


def flow(amap: AttentionMap, layer: int, max_tokens: int = FLOW_MAX_TOKENS) -> AttentionMap:
    """Attention flow at ``layer`` as a one-layer, one-head map (see :func:`flow_weights`)."""
    w = flow_weights(amap.weights, layer, max_tokens)[None, None].astype(np.float32)
    return replace(amap, weights=np.ascontiguousarray(w))


def feeders(
    weights: np.ndarray, tokens: list[str], query: int, top: int = 10
) -> list[tuple[int, str, float]]:
    """The input tokens that feed ``query`` most in one (n, n) map: (index, token, share),
    largest first, at most ``top``."""
    row = np.asarray(weights[query], dtype=np.float64)
    order = np.argsort(-row, kind="stable")[:top]
    return [(int(j), tokens[j], float(row[j])) for j in order]
