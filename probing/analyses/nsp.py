"""Next-sentence prediction (NSP) with BERT's own pre-training head.

BERT was pre-trained on two tasks: masked LM and NSP, a binary classifier on the [CLS]
state (through the pooler) that says whether sentence B followed sentence A in the corpus
(50 % of training pairs) or was drawn at random (50 %). :func:`next_sentence_probability`
gives P(IsNext) for a pair from a checkpoint that ships that head (``BertForPreTraining``:
``cls.seq_relationship``).

The caveat the course note makes: later models dropped NSP with no loss. RoBERTa (Liu et al.
2019, §4.2) found that removing it matched or slightly improved downstream results, and
ALBERT replaced it by sentence-order prediction, because random B sentences usually come
from another document, so NSP can be solved largely by topic, not coherence. A high
P(IsNext) says "same topic" at least as much as "follows".

Without such a checkpoint, :func:`load_nsp_model` also takes ``minilm-l6-nsp`` and
``minilm-l6-sop``: an NSP and an SOP head trained here on the frozen embedded minilm-l6, and
``minilm-l6-sop-top2``: an SOP head trained here together with minilm-l6's top 2 layers
(:mod:`probing.models.pair_heads`; not BERT's own heads, and their cards say how they were made).

Loading follows the rest of ContextLens: safetensors only, ``trust_remote_code`` never,
hub ids only from the local cache when offline. Checkpoints without a trained NSP head
(RoBERTa, DistilBERT, sentence-transformers models such as all-MiniLM-L6-v2) raise
:class:`~probing.errors.NoNSPHeadError`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from probing.errors import (
    DemoModeError,
    EmptyInputError,
    InputTooLongError,
    ModelUnavailableError,
    NoNSPHeadError,
    NotCachedOfflineError,
    UnknownModelError,
    UnsafeModelError,
)

NSP_CAVEAT = (
    "NSP was BERT's second pre-training task. Later models dropped it with no loss: RoBERTa "
    "trained without it and matched or beat BERT downstream, and ALBERT replaced it with "
    "sentence-order prediction, because a random 'next' sentence usually comes from another "
    "document, so the task is largely solved by topic, not by coherence."
)
# The NSP logits are cls.seq_relationship(pooler([CLS])): both must come from the checkpoint.
_NSP_WEIGHTS = ("cls.seq_relationship.", "bert.pooler.")


@dataclass
class NspModel:
    """A ``BertForPreTraining`` model with its tokenizer (eval mode, CPU unless asked);
    ``description`` says what its head is when it was trained here (empty for a checkpoint
    that kept BERT's own head); ``task`` is ``nsp`` or ``sop`` (what class 1 means)."""

    name: str
    model: Any
    tokenizer: Any
    description: str = ""
    task: str = "nsp"

    @property
    def max_pieces(self) -> int:
        return int(self.model.config.max_position_embeddings)


@dataclass(frozen=True)
class NspResult:
    """P(IsNext) and P(NotNext) for one pair (they sum to 1), and the pair's pieces."""

    is_next: float
    not_next: float
    pieces: list[str]
    segment_ids: list[int]


def _source(name_or_path: str, allow_paths: bool) -> str:
    from probing.models.registry import ENTRIES, looks_like_hub_id

    if name_or_path in ("minilm-l6", "minilm-l6-mlm"):
        from probing.models.embedded import minilm_dir

        return str(minilm_dir())
    if name_or_path in ENTRIES:
        if ENTRIES[name_or_path].info.objective == "bidirectional-lm":
            raise NoNSPHeadError(
                f"{name_or_path} is a bidirectional LM (ELMo): it has no NSP head."
            )
        return ENTRIES[name_or_path].source
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        if not allow_paths:
            raise DemoModeError("The shared demo loads registry models and hub ids only.")
        return str(path)
    if looks_like_hub_id(name_or_path):
        return _hub_source(name_or_path)
    raise UnknownModelError(
        f"Unknown model {name_or_path!r}: give a hub id (google-bert/bert-base-uncased) or a "
        "local folder with a BertForPreTraining checkpoint."
    )


def _hub_source(repo_id: str) -> str:
    """A hub id's cache folder, or the id when the hub is reachable. Decided by the same
    once-per-process reachability check as the model picker (:mod:`probing.models.hub`),
    and a failure is remembered: offline, asking again answers at once instead of waiting
    on the hub's retries (~27-50 s a render)."""
    from probing.models import hub

    hub.remembered(repo_id)
    try:
        return hub.locate(repo_id, repo_id)
    except NotCachedOfflineError as exc:
        hub.remember(repo_id, exc)
        raise


def nsp_available(repo_id: str) -> bool:
    """True when ``repo_id`` can be loaded here: cached locally, or the hub reachable."""
    from probing.models import hub

    return hub.cached_snapshot(repo_id) is not None or not hub.hub_offline()


def load_nsp_model(name_or_path: str, *, allow_paths: bool = True) -> NspModel:
    """Load a checkpoint with BERT's NSP head from a hub id, registry name or folder.

    Raises:
        NoNSPHeadError: not a BERT checkpoint, or one saved without ``cls.seq_relationship``.
        UnsafeModelError: no safetensors weights. ModelUnavailableError: not cached offline.
        DemoModeError: a local folder when ``allow_paths`` is False.
    """
    from probing.models import hub
    from probing.models.pair_heads import PAIR_HEADS

    if name_or_path in PAIR_HEADS:  # a head trained here on the frozen minilm-l6
        return load_trained_pair_head(name_or_path)
    source = _source(name_or_path, allow_paths)  # before importing transformers: fails fast
    from transformers import AutoConfig, AutoTokenizer, BertForPreTraining
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    kwargs = {
        "local_files_only": hub.hub_offline() or Path(source).is_dir(),
        "trust_remote_code": False,
    }
    try:
        config = AutoConfig.from_pretrained(source, **kwargs)
        if config.model_type != "bert":
            raise NoNSPHeadError(
                f"{name_or_path} is a {config.model_type} model: only BERT checkpoints carry "
                "the next-sentence head. " + NSP_CAVEAT
            )
        model, info = BertForPreTraining.from_pretrained(
            source, config=config, use_safetensors=True, output_loading_info=True, **kwargs
        )
        tokenizer = AutoTokenizer.from_pretrained(source, use_fast=True, **kwargs)
    except (NoNSPHeadError, DemoModeError):
        raise
    except OSError as exc:
        if "safetensors" in str(exc) or "pytorch_model.bin" in str(exc):
            raise UnsafeModelError(
                f"{source} has no model.safetensors; ContextLens loads safetensors only."
            ) from exc
        if not Path(source).is_dir():  # the hub was tried and failed: remember it (hub.py)
            from probing.models import hub

            failure = NotCachedOfflineError(
                f"{name_or_path} is not in the local Hugging Face cache, and the hub did not "
                f"answer. {hub.HOWTO}"
            )
            hub.remember(name_or_path, failure)
            raise failure from exc
        raise ModelUnavailableError(
            f"Could not load {name_or_path} here (not in the local cache, or offline): {exc}"
        ) from exc
    missing = sorted(k for k in info.get("missing_keys", ()) if k.startswith(_NSP_WEIGHTS))
    if missing:
        raise NoNSPHeadError(
            f"{name_or_path} was saved without BERT's next-sentence head ({', '.join(missing)} "
            "missing; a head would be random): it cannot score sentence pairs. Try "
            "google-bert/bert-base-uncased."
        )
    return NspModel(name=name_or_path, model=model.eval(), tokenizer=tokenizer)


def load_trained_pair_head(name: str) -> NspModel:
    """One of the heads trained here (``minilm-l6-nsp``, ``minilm-l6-sop``,
    ``minilm-l6-sop-top2``) as an :class:`NspModel` (:mod:`probing.models.pair_heads`)."""
    from probing.models.pair_heads import description, load_pair_head

    model, tokenizer, manifest = load_pair_head(name)
    task = manifest.get("task", "nsp")
    return NspModel(name, model, tokenizer, description=description(manifest), task=task)


@torch.inference_mode()
def next_sentence_probability(nsp: NspModel, sentence_a: str, sentence_b: str) -> NspResult:
    """P(B follows A) from the NSP head: softmax over its two logits (index 0 = IsNext, as
    in BERT's pre-training labels).

    Raises:
        EmptyInputError: an empty sentence. InputTooLongError: the pair is too long.
    """
    a, b = sentence_a.strip(), sentence_b.strip()
    if not a or not b:
        raise EmptyInputError("Give two non-empty sentences.")
    enc = nsp.tokenizer(a, b, return_tensors="pt", truncation=False)
    n = int(enc["input_ids"].shape[1])
    if n > nsp.max_pieces:
        raise InputTooLongError(n, nsp.max_pieces)
    out = nsp.model(
        **{k: v for k, v in enc.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
    )
    probs = torch.softmax(out.seq_relationship_logits[0].float(), dim=-1)
    return NspResult(
        is_next=float(probs[0]),
        not_next=float(probs[1]),
        pieces=nsp.tokenizer.convert_ids_to_tokens(enc["input_ids"][0].tolist()),
        segment_ids=enc["token_type_ids"][0].tolist() if "token_type_ids" in enc else [],
    )
