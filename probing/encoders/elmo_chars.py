"""ELMo's inputs as the model reads them: character ids (AllenNLP's ELMoCharacterMapper /
bilm-tf's UnicodeCharsVocabulary) and the padded-sequence reversal of the backward LSTM.

Apart from :mod:`probing.encoders.elmo` so that the ELMo surface
(:mod:`probing.encoders.elmo_surface`) can re-run the biLM without importing the encoder
module that builds it.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

# Ids 0-255 are UTF-8 bytes; then five special "characters". Every id is shifted by +1 on
# the way into the model so that 0 can mean "no token here" (all-zero rows embed to zero).
BOS_CHAR, EOS_CHAR, BOW_CHAR, EOW_CHAR, PAD_CHAR = 256, 257, 258, 259, 260
BOS_TOKEN, EOS_TOKEN = "<S>", "</S>"


def _boundary_char_ids(char: int, max_chars: int) -> list[int]:
    ids = [PAD_CHAR] * max_chars
    ids[0], ids[1], ids[2] = BOW_CHAR, char, EOW_CHAR
    return [c + 1 for c in ids]


def char_ids(word: str, max_chars: int = 50) -> list[int]:
    """Character ids of one word, +1 offset included: [BOW, bytes…, EOW, PAD…] (max_chars).

    Words longer than ``max_chars - 2`` UTF-8 bytes are cut, as in the original. As there,
    the strings ``<S>`` and ``</S>`` get the sentence-boundary ids.
    """
    if word == BOS_TOKEN:
        return _boundary_char_ids(BOS_CHAR, max_chars)
    if word == EOS_TOKEN:
        return _boundary_char_ids(EOS_CHAR, max_chars)
    encoded = word.encode("utf-8", "ignore")[: max_chars - 2]
    ids = [PAD_CHAR] * max_chars
    ids[0] = BOW_CHAR
    ids[1 : len(encoded) + 1] = list(encoded)
    ids[len(encoded) + 1] = EOW_CHAR
    return [c + 1 for c in ids]


def batch_to_char_ids(batch: Sequence[Sequence[str]], max_chars: int = 50) -> Tensor:
    """Char ids of a batch with ``<S>``/``</S>`` added: int64 (B, max_len + 2, max_chars).

    Positions past a sentence's end are all zeros (the model masks them).
    """
    length = max(len(s) for s in batch) + 2
    out = torch.zeros(len(batch), length, max_chars, dtype=torch.long)
    for b, words in enumerate(batch):
        rows = [char_ids(w, max_chars) for w in [BOS_TOKEN, *words, EOS_TOKEN]]
        out[b, : len(rows)] = torch.tensor(rows, dtype=torch.long)
    return out


def reverse_padded(x: Tensor, lengths: Tensor) -> Tensor:
    """Reverse each row's first ``lengths[b]`` steps, leaving padding in place.

    x: (B, T, ...) -> (B, T, ...). Its own inverse (tf.reverse_sequence). This is what makes
    the backward LSTM start at each sentence's true last token, never at padding.
    """
    B, T = x.shape[:2]
    t = torch.arange(T, device=x.device).expand(B, T)
    idx = torch.where(t < lengths.unsqueeze(1), lengths.unsqueeze(1) - 1 - t, t)
    idx = idx.view(B, T, *([1] * (x.dim() - 2))).expand_as(x)
    return x.gather(1, idx)
