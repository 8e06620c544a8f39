"""Follow any token through the layers at each [MASK]: its rank and probability per layer.

"When does *paris* appear?" — :func:`probing.analyses.fill_mask.fill_mask_by_layer` follows
the model's final top-1 guess; here the user names the token. The MLM head is applied to
every layer's hidden state at the mask, exactly as there (same pass, same head, the last
row the model's own logits), so the two agree on the final guess.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from probing.analyses import fill_mask as fm
from probing.errors import EmptyInputError


@dataclass(frozen=True)
class TokenTrack:
    """One token's standing at each mask, layer by layer.

    Attributes:
        token: the vocabulary piece followed (e.g. ``paris``, ``Ġparis``).
        layer_names: (n_layers + 1) names, ``embeddings`` first.
        rank: int (n_masks, n_layers + 1); 1 = the layer's top guess.
        probability: float32 (n_masks, n_layers + 1).
    """

    token: str
    layer_names: tuple[str, ...]
    rank: np.ndarray
    probability: np.ndarray

    def first_layer_in_top(self, mask: int, k: int = 1) -> int | None:
        """The first layer from which the token stays within the top ``k`` (None if never)."""
        inside = self.rank[mask] <= k
        for layer in range(len(inside)):
            if inside[layer:].all():
                return layer
        return None


def token_piece(encoder: Any, word: str) -> tuple[str, int]:
    """The single vocabulary piece the model reads ``word`` as, and its id (see
    :func:`probing.analyses.fill_mask.single_piece`).

    Raises:
        EmptyInputError: a blank word.
        NotOneTokenError: the model splits the word into several pieces (a mask stands for one).
    """
    if not word.strip():
        raise EmptyInputError("Type a word to follow.")
    return fm.single_piece(encoder, word)


@torch.inference_mode()
def follow_token(
    encoder: Any, text: str, word: str, max_masks: int = fm.DEFAULT_MAX_MASKS
) -> TokenTrack:
    """Rank and probability of ``word`` at every mask of ``text``, per layer.

    Raises:
        as :func:`probing.analyses.fill_mask.fill_mask_by_layer` and :func:`token_piece`.
    """
    piece, token_id = token_piece(encoder, word)
    mlm = fm.masked_lm(encoder)
    masked = fm.prepare(mlm, text, max_masks)
    logits = mlm.mask_logits_by_layer(masked.tokenized).float()  # (L+1, n_masks, vocab)
    probs = torch.softmax(logits, dim=-1)
    p = probs[..., token_id]  # (L+1, n_masks)
    rank = (probs > p[..., None]).sum(-1) + 1
    n_rows = logits.shape[0]
    names = tuple(getattr(encoder.info, "layer_names", ()) or ())
    if len(names) != n_rows:
        names = ("embeddings",) + tuple(f"layer {i}" for i in range(1, n_rows))
    return TokenTrack(
        token=piece,
        layer_names=names,
        rank=rank.T.cpu().numpy().astype(np.int64),
        probability=p.T.cpu().numpy().astype(np.float32),
    )
