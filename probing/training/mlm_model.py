"""The MLM head's model and optimiser: all-MiniLM-L6-v2 with a fresh BERT head, which
weights train, AdamW parameter groups and the lr schedule (see :mod:`probing.training.mlm_head`)."""

from __future__ import annotations

import math

import numpy as np
import torch

from probing.io import sha256_of
from probing.models.embedded import minilm_dir
from probing.models.mlm_delta import (
    BASE_FILE,
    base_state_dict,
    load_base_into,
    minilm_mlm_config,
)

# -- model --------------------------------------------------------------------------------


def build_model(unfreeze_top: int, counts: np.ndarray | None, seed: int):
    """BertForMaskedLM = pretrained minilm + fresh head; only the head and top layers train.

    The head's transform is BERT-initialised; the output bias starts at the log unigram prior
    so that step 0 already guesses frequent pieces. Returns (model, base_state, base_sha256).
    """
    from transformers import BertForMaskedLM  # deferred: transformers is slow to import

    torch.manual_seed(seed)
    config = minilm_mlm_config()
    config._attn_implementation = "sdpa"  # fastest on CPU; no attention maps needed here
    model = BertForMaskedLM(config)
    base = base_state_dict()
    load_base_into(model, base)
    if counts is not None:
        with torch.no_grad():
            prior = np.log(np.asarray(counts, dtype=np.float64) + 1.0)
            prior -= prior.mean()
            model.cls.predictions.bias.copy_(torch.from_numpy(prior).float())
    n_layers = config.num_hidden_layers
    if not 0 <= unfreeze_top <= n_layers:
        raise ValueError(f"--unfreeze-top must be in 0..{n_layers}")
    for p in model.parameters():
        p.requires_grad_(False)
    for layer in model.bert.encoder.layer[n_layers - unfreeze_top :]:
        for p in layer.parameters():
            p.requires_grad_(True)
    for name, p in model.cls.named_parameters():
        if name != "predictions.decoder.weight":  # tied to the frozen input embeddings
            p.requires_grad_(True)
    return model, base, sha256_of(minilm_dir() / BASE_FILE)


def set_train_mode(model, unfreeze_top: int) -> None:
    """Dropout only where weights train: frozen layers behave exactly as pretrained."""
    model.train()
    model.bert.embeddings.eval()
    n_layers = len(model.bert.encoder.layer)
    for layer in model.bert.encoder.layer[: n_layers - unfreeze_top]:
        layer.eval()


def trainable_state(model) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def make_optimizer(model, args) -> torch.optim.AdamW:
    """AdamW: the head (new) at ``--lr-head``, retrained layers at ``--lr``; no decay on
    biases and LayerNorm weights."""
    groups: dict[tuple[float, float], list[torch.nn.Parameter]] = {}
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        lr = args.lr_head if name.startswith("cls.") else args.lr
        wd = 0.0 if (name.endswith("bias") or "LayerNorm" in name) else args.weight_decay
        groups.setdefault((lr, wd), []).append(p)
    return torch.optim.AdamW(
        [
            {"params": ps, "lr": lr, "base_lr": lr, "weight_decay": wd}
            for (lr, wd), ps in groups.items()
        ],
        betas=(0.9, 0.98),
        eps=1e-6,
    )


def lr_factor(tokens: int, args, restart_tokens: int = 0) -> float:
    """Warmup then linear/cosine decay to 0 over ``--max-tokens``; a warm start (fresh Adam
    moments at ``restart_tokens``) gets its own warmup."""
    warm = args.warmup_tokens
    progress = min(1.0, max(0.0, (tokens - warm) / max(1, args.max_tokens - warm)))
    decay = (
        1.0 - progress if args.schedule == "linear" else 0.5 * (1 + math.cos(math.pi * progress))
    )
    ramp = min(1.0, max(tokens - restart_tokens, 0) / max(1, warm)) if warm else 1.0
    return max(decay, 0.0) * ramp
