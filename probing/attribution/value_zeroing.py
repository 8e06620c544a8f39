"""Value Zeroing (Mohebbi et al. 2023, "Quantifying context mixing in transformers").

In block ``l``, token ``j``'s value vector (its row of the value projection's output, bias
included, every head) is set to zero; block ``l`` runs on the unchanged hidden states of
layer ``l − 1`` and the change of each token ``i``'s block output is the cosine distance
``d(ĥ_i^{¬j}, h_i)``. Rows are normalised to sum to 1 (``S_l[i, j]``: how much ``i``'s
output depends on ``j``'s value), and rolled out across layers without a residual term
(``R_1 = S_1``, ``R_l = S_l R_{l−1}``), as in the authors' reference code
(hmohebbi/ValueZeroing, ``scoring/value_zeroing.py``).

Where this differs from the reference: it runs the whole model with call-local hooks
(:mod:`probing.encoders.call_hooks`) instead of calling a patched block, so it works for every
family :mod:`probing.encoders.surface` knows; the n zeroings of one layer run as one batch of
n + 1 copies of the sentence (copy 0 untouched, the reference output ``h``), and the pass
stops once block ``l`` has run (later blocks are not needed).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence

import numpy as np
import torch

from probing.analyses.rollout import rollout_weights
from probing.encoders.surface import ModelParts, model_parts


class _Stop(Exception):
    """Raised by the recording hook once the block of interest has run."""


@contextlib.contextmanager
def zeroed_values(
    parts: ModelParts, block: int, rows: Sequence[int], positions: Sequence[int]
) -> Iterator[None]:
    """Within the block (this thread only): in block ``block`` (0-based), batch row
    ``rows[k]``'s value vector at position ``positions[k]`` is zero. Empty lists change
    nothing (bit for bit)."""
    r = torch.as_tensor(list(rows), dtype=torch.long)
    p = torch.as_tensor(list(positions), dtype=torch.long)

    def zero(_m: torch.nn.Module, _a: tuple, out: torch.Tensor) -> torch.Tensor | None:
        if r.numel() == 0:
            return None
        out = out.clone()
        out[r, p] = 0
        return out

    with parts.value_hook(block, zero):
        yield


def _output(out: object) -> torch.Tensor:
    return out[0] if isinstance(out, tuple) else out  # type: ignore[index]


@torch.inference_mode()
def value_zeroing(model: torch.nn.Module, inputs: Mapping[str, torch.Tensor]) -> np.ndarray:
    """Value Zeroing of every block for ONE sequence: (L, n, n) float64, ``[l, i, j]`` the
    normalised cosine distance of token ``i``'s block-``l+1`` output when ``j``'s value is
    zeroed (rows sum to 1).

    Args:
        model: the bare encoder (BertModel, DistilBertModel…).
        inputs: its forward inputs for one sequence, each (1, n), no padding.
    """
    parts = model_parts(model)
    n = int(inputs["input_ids"].shape[1])
    batch = {k: v.expand(n + 1, *v.shape[1:]) for k, v in inputs.items()}
    rows, positions = list(range(1, n + 1)), list(range(n))
    scores = np.zeros((parts.n_layers, n, n))
    for block in range(parts.n_layers):
        seen: list[torch.Tensor] = []

        def keep(_m: torch.nn.Module, _a: tuple, out: object, seen: list = seen) -> None:
            seen.append(_output(out).detach())
            raise _Stop

        with (
            zeroed_values(parts, block, rows, positions),
            parts.hidden_hook(block + 1, keep),
            contextlib.suppress(_Stop),
        ):
            model(**batch)
        out = seen[0].double()  # (n + 1, n, D): row 0 untouched, row 1 + j with j zeroed
        dist = 1.0 - torch.nn.functional.cosine_similarity(out[1:], out[:1], dim=-1)  # (j, i)
        scores[block] = dist.T.cpu().numpy()
    return normalise_rows(scores)


def normalise_rows(scores: np.ndarray) -> np.ndarray:
    """Rows divided by their sums (a row of zeros stays zero)."""
    sums = scores.sum(axis=-1, keepdims=True)
    return np.divide(scores, sums, out=np.zeros_like(scores), where=sums > 0)


def rolled_out(scores: np.ndarray) -> np.ndarray:
    """``R_1 = S_1, R_l = S_l R_{l−1}`` for (L, n, n) per-layer maps (no residual term: the
    maps already include a token's own contribution)."""
    return rollout_weights(scores[:, None], residual=False)
