"""Fine-tune the embedded minilm-l6 end to end on a token task or a sentence task.

BERT's paradigm as the course note teaches it: every weight of the encoder is trained with
the task, through a small new head on its last layer.

- ``upos`` (UD-EWT): a linear head on each word's **first word piece** of the last layer
  (the pooling the probes use, ``first``), cross-entropy over the words.
- ``genre`` (Brown, 15 genres per document): a linear head on the **mean of the word pieces**
  of the last layer (special tokens left out, as ``mean`` sentence pooling,
  :func:`probing.probes.sentence_pooling.sentence_vector`).

The note's settings (:class:`FinetuneSettings`): AdamW with weight decay 0.01 (not on biases
and LayerNorm weights, as in BERT), linear warm-up over the first 10 % of the steps then
linear decay to 0, gradient clipping at norm 1.0, dropout 0.1 before the head, evaluation on
dev every ``eval_every`` steps and early stopping after ``patience`` evaluations without a
better dev accuracy; the best dev weights are the run's result.

The steps run through the shared :class:`~probing.training.loop.TrainingLoop` ("tokens" are
training sentences there). A run is deterministic given its seed: the batch order of epoch
``e`` is a permutation seeded by ``(seed, e)``, so step ``k``'s batch does not depend on
earlier steps, and the checkpoint holds the model, the optimiser, the schedule, the torch
RNG (dropout) and the best weights, so a run cut at any step and resumed ends with the
same weights as one that was not cut.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from probing.io import atomic_write, atomic_write_json
from probing.training.finetune_model import (  # re-exported: the run's parts
    Batcher,
    Example,
    FinetuneModel,
    accuracy,
    label_set,
    load_finetuned,
    load_start,
    predict,
)
from probing.training.loop import TrainingLoop

__all__ = [
    "Batcher",
    "Example",
    "FinetuneModel",
    "FinetuneSettings",
    "Finetuner",
    "accuracy",
    "load_finetuned",
    "load_start",
    "predict",
    "weights_sha256",
]

TASKS = ("upos", "genre")
CHECKPOINT_NAME = "checkpoint.pt"
TOKENIZER_FILES = (
    "vocab.txt",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
)


@dataclass(frozen=True)
class FinetuneSettings:
    """One fine-tuning run (the card records these).

    Attributes:
        task: ``upos`` or ``genre``.
        seed: head initialisation, batch order and dropout.
        lr: AdamW peak learning rate (the note: 2e-5 … 5e-5).
        warmup: fraction of the steps with a linear warm-up.
        weight_decay: AdamW's decoupled decay (not on biases and LayerNorm weights).
        clip: gradient-norm clipping.
        epochs: passes over the training sentences at most.
        batch_size: sentences per step.
        eval_every: steps between dev evaluations (and one at the end of every epoch).
        patience: evaluations without a better dev accuracy before stopping.
    """

    task: str = "upos"
    seed: int = 0
    lr: float = 5e-5
    warmup: float = 0.1
    weight_decay: float = 0.01
    clip: float = 1.0
    epochs: int = 3
    batch_size: int = 16
    eval_every: int = 15
    patience: int = 2

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"task {self.task!r}; one of {', '.join(TASKS)}")


def lr_factor(step: int, total: int, warmup: float) -> float:
    """Linear warm-up over ``warmup * total`` steps, then linear decay to 0 at ``total``."""
    n_warm = max(1, int(math.ceil(warmup * total)))
    if step < n_warm:
        return (step + 1) / n_warm
    return max(0.0, (total - step) / max(1, total - n_warm))


def make_optimizer(model: nn.Module, settings: FinetuneSettings) -> torch.optim.AdamW:
    """AdamW, no decay on biases and LayerNorm weights (BERT's recipe)."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim == 1 or "LayerNorm" in name else decay).append(p)
    groups = [
        {"params": decay, "weight_decay": settings.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    return torch.optim.AdamW(groups, lr=settings.lr)


def batch_order(n: int, epoch: int, seed: int) -> np.ndarray:
    """The training sentences' order in ``epoch``: a permutation seeded by (seed, epoch)."""
    return np.random.default_rng([seed, epoch]).permutation(n)


def data_sha256(train: Sequence[Example], dev: Sequence[Example]) -> str:
    """SHA-256 of the training and dev examples (a checkpoint resumes only the same data)."""
    import hashlib
    import json

    rows = [[[e.words, e.label] for e in part] for part in (train, dev)]
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode("utf-8")).hexdigest()


def _state_copy(model: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


class Finetuner:
    """One fine-tuning run: build, train (resuming a checkpoint in ``work_dir``), export.

    Args:
        settings: the run's :class:`FinetuneSettings`.
        start_dir: the pre-trained model folder (minilm-l6: ``probing.models.embedded.minilm_dir``).
        train, dev: the examples (dev picks the epoch kept and stops the run).
        work_dir: where the checkpoint lives (a run there resumes it).
        log: a line printer (None: quiet).
    """

    def __init__(
        self,
        settings: FinetuneSettings,
        start_dir: str | Path,
        train: Sequence[Example],
        dev: Sequence[Example],
        work_dir: str | Path,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.settings = settings
        self.start_dir = Path(start_dir)
        self.train, self.dev = list(train), list(dev)
        self.work_dir = Path(work_dir)
        self.log = log or (lambda line: None)
        level = "token" if settings.task == "upos" else "sentence"
        torch.manual_seed(settings.seed)  # the head's initialisation
        encoder, tokenizer = load_start(self.start_dir)
        self.labels = label_set(settings.task, self.train)
        self.model = FinetuneModel(encoder, len(self.labels), level)
        self.batcher = Batcher(tokenizer, self.labels, level)
        self.optimizer = make_optimizer(self.model, settings)
        self.data_sha256 = data_sha256(self.train, self.dev)
        self.steps_per_epoch = math.ceil(len(self.train) / settings.batch_size)
        self.total_steps = settings.epochs * self.steps_per_epoch
        self.state: dict[str, Any] = {
            "step": 0,
            "tokens_seen": 0,
            "wall_time_s": 0.0,
            "best_dev": -1.0,
            "best_step": 0,
            "evals_since_best": 0,
            "stopped_early": False,
            "history": [],
        }
        self.best: dict[str, torch.Tensor] | None = None
        self._resume()

    # -- checkpoint -------------------------------------------------------------------------

    @property
    def checkpoint_path(self) -> Path:
        return self.work_dir / CHECKPOINT_NAME

    def save_checkpoint(self) -> None:
        """Everything a resumed run needs, written atomically."""
        ckpt = {
            "settings": asdict(self.settings),
            "labels": self.labels,
            "data_sha256": self.data_sha256,
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "state": self.state,
            "rng": torch.get_rng_state(),
            "best": self.best,
        }
        self.work_dir.mkdir(parents=True, exist_ok=True)
        atomic_write(self.checkpoint_path, lambda p: torch.save(ckpt, p), suffix=".pt")

    def _resume(self) -> None:
        if not self.checkpoint_path.is_file():
            return
        ckpt = torch.load(self.checkpoint_path, map_location="cpu", weights_only=True)
        if ckpt["settings"] != asdict(self.settings) or ckpt["labels"] != self.labels:
            raise ValueError(
                f"{self.checkpoint_path} was written with other settings or labels; "
                "remove it or use another work folder"
            )
        if ckpt.get("data_sha256") != self.data_sha256:  # same settings, other sentences
            raise ValueError(
                f"{self.checkpoint_path} was written for other training or dev sentences; "
                "remove it or use another work folder"
            )
        self.model.load_state_dict(ckpt["model"])
        self.optimizer.load_state_dict(ckpt["optimizer"])
        self.state = ckpt["state"]
        self.best = ckpt["best"]
        torch.set_rng_state(ckpt["rng"])
        self.log(f"resumed at step {self.state['step']}")

    # -- training ---------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self.state["stopped_early"] or self.state["step"] >= self.total_steps

    def step(self) -> int:
        """One optimisation step on the step's batch; returns its number of sentences."""
        s, k = self.settings, self.state["step"]
        epoch, pos = divmod(k, self.steps_per_epoch)
        order = batch_order(len(self.train), epoch, s.seed)
        chunk = [self.train[i] for i in order[pos * s.batch_size : (pos + 1) * s.batch_size]]
        for group in self.optimizer.param_groups:
            group["lr"] = s.lr * lr_factor(k, self.total_steps, s.warmup)
        self.model.train()
        b = self.batcher(chunk)
        logits = self.model(b["input_ids"], b["attention_mask"], b["select"])
        loss = nn.functional.cross_entropy(logits, b["y"], ignore_index=-100)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(self.model.parameters(), s.clip)
        self.optimizer.step()
        self.state["last_loss"] = float(loss.detach())
        return len(chunk)

    def training_loss(self, examples: Sequence[Example] | None = None) -> float:
        """Mean cross-entropy on ``examples`` (default: the training set), eval mode."""
        examples = self.train if examples is None else examples
        was = self.model.training
        self.model.eval()
        total = n = 0.0
        with torch.no_grad():
            for start in range(0, len(examples), 32):
                b = self.batcher(examples[start : start + 32])
                logits = self.model(b["input_ids"], b["attention_mask"], b["select"])
                y = b["y"]
                keep = y != -100
                total += float(nn.functional.cross_entropy(logits[keep], y[keep], reduction="sum"))
                n += int(keep.sum())
        self.model.train(was)
        return total / max(n, 1.0)

    def _eval_due(self) -> bool:
        k = self.state["step"]
        return k % self.settings.eval_every == 0 or k % self.steps_per_epoch == 0

    def _evaluate(self, loop: TrainingLoop) -> None:
        dev_acc = accuracy(self.batcher, self.dev, predict(self.model, self.batcher, self.dev))
        st = self.state
        st["history"].append({"step": st["step"], "dev_accuracy": dev_acc, "loss": st["last_loss"]})
        self.log(f"step {st['step']}: loss {st['last_loss']:.4f}, dev accuracy {dev_acc:.4f}")
        if dev_acc > st["best_dev"]:
            st.update(best_dev=dev_acc, best_step=st["step"], evals_since_best=0)
            self.best = _state_copy(self.model)
        else:
            st["evals_since_best"] += 1
            if st["evals_since_best"] >= self.settings.patience:
                st["stopped_early"] = True
                loop.max_tokens = st["tokens_seen"]  # the loop ends after this step

    def fit(self, max_steps: int | None = None) -> FinetuneModel:
        """Train until done, ``max_steps`` steps in this call or a signal; checkpoints at the
        end. Returns the model with its *current* weights (:meth:`best_model` for the kept)."""
        if self.done:
            return self.model
        budget = self.settings.epochs * len(self.train)
        loop = TrainingLoop(
            self.state,
            max_tokens=budget,
            max_steps=max_steps,
            log_every=10**9,
            checkpoint_minutes=5.0,
            wall_time="steps",
        )
        loop.set_callback("eval", lambda: self._evaluate(loop))
        loop.set_callback("checkpoint", self.save_checkpoint)
        loop.run(self.step, self._eval_due)
        return self.model

    def best_model(self) -> FinetuneModel:
        """The model with the best dev weights (the start's, if no evaluation was made)."""
        if self.best is not None:
            self.model.load_state_dict(self.best)
        return self.model

    def export(self, out_dir: str | Path, extra: dict | None = None) -> Path:
        """The kept encoder as a model folder ``load_encoder`` reads (safetensors, config,
        tokenizer) with ``head.safetensors`` and ``finetune.json`` (settings, labels, the
        dev history). Returns the folder."""
        from safetensors.torch import save_file

        out = Path(out_dir)
        tmp = out.with_name(out.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        model = self.best_model()
        model.encoder.save_pretrained(tmp, safe_serialization=True)
        for name in TOKENIZER_FILES:
            if (self.start_dir / name).is_file():
                shutil.copy2(self.start_dir / name, tmp / name)
        save_file(
            {k: v.contiguous() for k, v in model.head.state_dict().items()},
            str(tmp / "head.safetensors"),
        )
        info = {
            "settings": asdict(self.settings),
            "labels": self.labels,
            "n_train": len(self.train),
            "n_dev": len(self.dev),
            "data_sha256": self.data_sha256,
            "steps_per_epoch": self.steps_per_epoch,
            "state": {k: v for k, v in self.state.items() if k != "history"},
            "history": self.state["history"],
            **(extra or {}),
        }
        atomic_write_json(tmp / "finetune.json", info)
        shutil.rmtree(out, ignore_errors=True)
        tmp.replace(out)
        return out


def weights_sha256(folder: str | Path) -> str:
    """SHA-256 of a folder's ``model.safetensors`` (the starting weights' provenance)."""
    import hashlib

    h = hashlib.sha256()
    with open(Path(folder) / "model.safetensors", "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
