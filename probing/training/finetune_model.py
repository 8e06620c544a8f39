"""The fine-tuned model's parts: an encoder with a linear head, its batches, its predictions.

- ``token`` level (UPOS): the head reads each word's **first word piece** of the last layer
  (the pooling the probes use, ``first``).
- ``sentence`` level (genre): the head reads the **mean of the word pieces** of the last
  layer, special tokens left out (``mean`` sentence pooling,
  :func:`probing.probes.sentence_pooling.sentence_vector`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

MAX_PIECES = 128  # pieces per sentence (longer ones are cut; a word past it has no label)


@dataclass
class Example:
    """One training sentence: its words, and a label per word (upos) or one label (genre)."""

    words: list[str]
    label: list[str] | str


class FinetuneModel(nn.Module):
    """An encoder (``transformers`` model returning ``last_hidden_state``) and a linear head.

    ``forward(input_ids, attention_mask, select)`` returns logits: (n_words, n_labels) for a
    token task, ``select`` (n_words, 2) the (sentence, piece) of each word's first piece;
    (batch, n_labels) for a sentence task, ``select`` (batch, pieces) a float mask of the
    pieces to average.
    """

    def __init__(self, encoder: nn.Module, n_labels: int, level: str, dropout: float = 0.1):
        super().__init__()
        self.encoder = encoder
        self.level = level
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(encoder.config.hidden_size, n_labels)

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, select: torch.Tensor
    ) -> torch.Tensor:
        h = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        if self.level == "token":
            x = h[select[:, 0], select[:, 1]]
        else:
            x = (h * select[..., None]).sum(1) / select.sum(1, keepdim=True).clamp(min=1.0)
        return self.head(self.dropout(x))


class Batcher:
    """Word pieces of examples as model inputs (the tokenizer's ``word_ids`` alignment)."""

    def __init__(self, tokenizer: Any, labels: Sequence[str], level: str) -> None:
        self.tokenizer = tokenizer
        self.labels = list(labels)
        self.index = {lab: i for i, lab in enumerate(self.labels)}
        self.level = level

    def __call__(self, examples: Sequence[Example]) -> dict[str, torch.Tensor]:
        enc = self.tokenizer(
            [e.words for e in examples],
            is_split_into_words=True,
            truncation=True,
            max_length=MAX_PIECES,
            padding=True,
            return_tensors="pt",
        )
        out = {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}
        if self.level == "token":
            select, y = [], []
            for b, e in enumerate(examples):
                seen = set()
                for pos, w in enumerate(enc.word_ids(b)):
                    if w is not None and w not in seen:
                        seen.add(w)
                        select.append((b, pos))
                        y.append(self.index.get(e.label[w], -100))
            out["select"] = torch.tensor(select, dtype=torch.long).reshape(-1, 2)
            out["y"] = torch.tensor(y, dtype=torch.long)
        else:
            mask = torch.zeros(enc["input_ids"].shape, dtype=torch.float32)
            for b in range(len(examples)):
                for pos, w in enumerate(enc.word_ids(b)):
                    mask[b, pos] = float(w is not None)
            out["select"] = mask
            out["y"] = torch.tensor([self.index.get(e.label, -100) for e in examples])
        return out


def load_start(model_dir: str | Path) -> tuple[nn.Module, Any]:
    """The pre-trained encoder (float32, eager attention) and its tokenizer from a folder."""
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager")
    return model.float(), AutoTokenizer.from_pretrained(str(model_dir))


def label_set(task: str, examples: Sequence[Example]) -> list[str]:
    """The sorted labels seen in training (the head's classes)."""
    if task == "upos":
        return sorted({lab for e in examples for lab in e.label if lab is not None})
    return sorted({str(e.label) for e in examples})


@torch.no_grad()
def predict(
    model: FinetuneModel, batcher: Batcher, examples: Sequence[Example], batch_size: int = 32
) -> list[np.ndarray]:
    """Predicted label ids per example: (n_words,) for a token task (-1 where a word was cut
    off), (1,) for a sentence task. Eval mode; the model's mode is restored."""
    was = model.training
    model.eval()
    out: list[np.ndarray] = []
    for start in range(0, len(examples), batch_size):
        chunk = examples[start : start + batch_size]
        b = batcher(chunk)
        pred = model(b["input_ids"], b["attention_mask"], b["select"]).argmax(-1).numpy()
        if model.level == "token":
            per = torch.bincount(b["select"][:, 0], minlength=len(chunk)).tolist()
            at = 0
            for e, n in zip(chunk, per, strict=True):
                row = np.full(len(e.words), -1, dtype=np.int64)
                row[:n] = pred[at : at + n]  # words past the piece limit stay -1
                at += n
                out.append(row)
        else:
            out.extend(pred[i : i + 1] for i in range(len(chunk)))
    model.train(was)
    return out


def accuracy(batcher: Batcher, examples: Sequence[Example], preds: Sequence[np.ndarray]) -> float:
    """Word accuracy (token task) or sentence accuracy (sentence task)."""
    right = total = 0
    for e, p in zip(examples, preds, strict=True):
        gold = e.label if isinstance(e.label, list) else [e.label]
        for g, q in zip(gold, p, strict=True):
            if g is None:
                continue
            total += 1
            right += int(batcher.index.get(g, -2) == q)
    return right / max(total, 1)


def load_finetuned(folder: str | Path) -> tuple[FinetuneModel, Batcher, dict]:
    """A model :meth:`Finetuner.export` wrote, with its batcher and ``finetune.json``."""
    from safetensors.torch import load_file

    folder = Path(folder)
    info = json.loads((folder / "finetune.json").read_text(encoding="utf-8"))
    encoder, tokenizer = load_start(folder)
    level = "token" if info["settings"]["task"] == "upos" else "sentence"
    model = FinetuneModel(encoder, len(info["labels"]), level)
    model.head.load_state_dict(load_file(str(folder / "head.safetensors")))
    model.eval()
    return model, Batcher(tokenizer, info["labels"], level), info
