"""An ELMo folder's language-model softmax: ``softmax.safetensors`` beside ``options.json``.

The original bilm-tf/AllenNLP files hold the encoder only. ELMo-mini ships, in addition, an
adaptive softmax over its ``vocab.txt`` (fitted on the frozen encoder by
:mod:`probing.training.elmo_softmax`), shared by both directions as in training: the forward
LM predicts word ``t+1`` from its top layer at ``t``, the backward LM word ``t-1`` from its
top layer at ``t``. A folder without the file loads as an encoder only (``softmax`` None).

Weights in safetensors (fp16 on disk, float32 in memory); the layout (cutoffs, div value,
vocabulary size) in the file's metadata. Never pickle.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor, nn

from probing.errors import ModelFormatError

SOFTMAX_FILE = "softmax.safetensors"
VOCAB_FILE = "vocab.txt"
UNK = "<UNK>"


def make_softmax(dim: int, vocab_size: int, cutoffs: list[int], div_value: float) -> nn.Module:
    """The adaptive softmax module (torch's, as ELMo-mini's training used)."""
    return nn.AdaptiveLogSoftmaxWithLoss(dim, vocab_size, cutoffs, div_value=div_value)


@dataclass
class ElmoSoftmax:
    """The softmax and its vocabulary. ``module`` maps top-layer states (N, P) to
    log-probabilities over ``vocab``; words outside it are ``<UNK>``."""

    module: nn.Module
    vocab: list[str]
    meta: dict

    def __post_init__(self) -> None:
        self.ids = {w: i for i, w in enumerate(self.vocab)}
        self.unk = self.ids.get(UNK, 2)
        self.module.eval()

    def word_id(self, word: str) -> int:
        """The vocabulary id of ``word`` (``<UNK>``'s id when it is not in the vocabulary)."""
        return self.ids.get(word, self.unk)

    def in_vocab(self, word: str) -> bool:
        return word in self.ids

    def log_prob(self, states: Tensor, chunk: int = 1024) -> Tensor:
        """(N, P) states -> (N, V) float32 log-probabilities (in chunks: V is 50k)."""
        x = states.float()
        return torch.cat([self.module.log_prob(x[i : i + chunk]) for i in range(0, len(x), chunk)])

    def target_log_prob(self, states: Tensor, targets: Tensor) -> Tensor:
        """(N,) log-probability of ``targets`` (N,) given (N, P) states."""
        if len(states) == 0:
            return states.new_zeros(0)
        return self.module(states.float(), targets.to(states.device)).output


def save_softmax(module: nn.Module, folder: str | os.PathLike[str], meta: dict) -> Path:
    """Write ``module``'s weights in fp16 to ``folder/softmax.safetensors`` (atomically);
    ``meta`` (cutoffs, div_value, vocab_size, dim, …) goes in the file's metadata."""
    from safetensors.torch import save_file

    from probing.io import atomic_write

    tensors = {k: v.detach().to(torch.float16).contiguous() for k, v in module.state_dict().items()}
    path = Path(folder) / SOFTMAX_FILE
    text = {"layout": json.dumps(meta)}
    return atomic_write(
        path, lambda tmp: save_file(tensors, str(tmp), metadata=text), suffix=".safetensors"
    )


def load_softmax(folder: str | os.PathLike[str], dim: int) -> ElmoSoftmax | None:
    """The folder's softmax, or None when it has no ``softmax.safetensors``.

    Raises:
        ModelFormatError: a softmax file without its vocabulary, with a layout that does
            not fit the encoder's top layer (``dim``) or the vocabulary, or unreadable.
    """
    from safetensors import SafetensorError, safe_open

    folder = Path(folder)
    path = folder / SOFTMAX_FILE
    if not path.is_file():
        return None
    vocab_path = folder / VOCAB_FILE
    if not vocab_path.is_file():
        raise ModelFormatError(f"{path} needs the vocabulary {vocab_path}, which is missing.")
    vocab = vocab_path.read_text(encoding="utf-8").split("\n")
    vocab = vocab[:-1] if vocab and vocab[-1] == "" else vocab
    try:
        with safe_open(str(path), framework="pt") as f:
            meta = json.loads((f.metadata() or {}).get("layout", "{}"))
            tensors = {k: f.get_tensor(k).float() for k in f.keys()}  # noqa: SIM118
        module = make_softmax(
            int(meta["dim"]),
            int(meta["vocab_size"]),
            list(meta["cutoffs"]),
            float(meta["div_value"]),
        )
        if int(meta["dim"]) != dim or int(meta["vocab_size"]) != len(vocab):
            raise ModelFormatError(
                f"{path} is a softmax over {meta['vocab_size']} words from {meta['dim']}-dim "
                f"states; the encoder's top layer has {dim} dims per direction and "
                f"{vocab_path.name} {len(vocab)} words."
            )
        module.load_state_dict(tensors)
    except (SafetensorError, OSError, KeyError, ValueError, RuntimeError, TypeError) as exc:
        if isinstance(exc, ModelFormatError):
            raise
        raise ModelFormatError(f"{path} is not a readable ELMo softmax: {exc}") from exc
    return ElmoSoftmax(module, vocab, meta)
