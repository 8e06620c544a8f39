"""BERT-family encoders (BERT, RoBERTa, DistilBERT, ELECTRA, ALBERT, …) over `transformers`.

Pieces come from the model's own fast tokenizer with ``is_split_into_words=True``, so the
word alignment is the tokenizer's, not a reconstruction. Hidden states are taken with
``output_hidden_states=True``: ``layers[0]`` is the embedding layer output (word piece +
position + segment embeddings, layer-normed) and is therefore NOT context-free; ``static`` is
the raw input word-piece embedding, pooled the same way as the layers.

Every BERT-family encoder is a :class:`~probing.encoders.base.PairEncoder`; one built from a
``…ForMaskedLM`` model is a :class:`TransformersMaskedLM`, a
:class:`~probing.encoders.base.MaskedLM` too.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from probing.encoders import batching, bert_mlm, call_hooks, surface
from probing.encoders.base import Encoder, MaskedPieces, PairEncoding
from probing.encoders.capabilities import declared
from probing.encoders.value_norms import transformed_value_norms
from probing.encoding import (
    Encoding,
    ModelInfo,
    Pooling,
    pool_pieces,
    tensor_to_float16,
    to_float16,
)
from probing.errors import InputTooLongError, NoAttentionError

if TYPE_CHECKING:
    from transformers import BatchEncoding
    from transformers.utils import ModelOutput

# Tokenizers that need a prefix space to take pre-split words (byte-level BPE).
_PREFIX_SPACE_TYPES = {
    "roberta",
    "longformer",
    "bart",
    "deberta",
    "gpt2",
    "camembert",
    "xlm-roberta",
}


def needs_prefix_space(model_type: str) -> bool:
    """True for byte-level BPE tokenizers that must be told words start with a space."""
    return model_type in _PREFIX_SPACE_TYPES


def pick_device(device: str | None = None) -> torch.device:
    """CUDA when available, CPU otherwise (``None`` or ``"auto"``), or what was asked for."""
    return batching.resolve_device(device)


class TransformersEncoder(Encoder):
    """Any `transformers` encoder; optionally with its masked-LM head for fill-mask.

    Args:
        model: the bare encoder (``BertModel``…) or a ``…ForMaskedLM`` model (its base
            encoder is used for hidden states, its head for fill-mask). Given a
            ``…ForMaskedLM`` model, the constructor returns a :class:`TransformersMaskedLM`.
        tokenizer: the model's fast tokenizer.
        info: name and provenance; shape fields are filled from the model config.
        device: where to run (``"auto"``/None: CUDA when present).
        dtype: ``float32``, ``bfloat16`` (autocast) or ``auto`` (bf16 where it is fast).
    """

    def __new__(cls, model: PreTrainedModel, *args: object, **kwargs: object):
        # The capability follows the weights: a model with an MLM head makes a MaskedLM.
        if cls is TransformersEncoder and _has_mlm_head(model) and _base_of(model) is not None:
            cls = TransformersMaskedLM
        return super().__new__(cls)

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        info: ModelInfo,
        device: str | torch.device | None = None,
        dtype: str = "float32",
    ) -> None:
        self.device = pick_device(str(device) if device is not None else None)
        self.dtype = batching.resolve_dtype(dtype, self.device.type)
        self.mlm: PreTrainedModel | None = None
        base = _base_of(model)
        if base is not None:
            if _has_mlm_head(model):
                self.mlm = model.to(self.device).eval()
            model = base
        self.model = model.to(self.device).eval()
        # Hooks belong to the call (call_hooks): the dispatchers go on now (in
        # surface.refusal below), before threads share the model, so that no hook dict
        # changes while another thread runs it.
        self.tokenizer = tokenizer
        cfg = self.model.config
        n_layers = int(getattr(cfg, "num_hidden_layers", getattr(cfg, "n_layers", 0)))
        self.max_pieces = _max_pieces(cfg, tokenizer)
        hooks_refused = surface.refusal(self.model)  # "" when the surface knows it
        self.info = replace(
            declared(replace(info, family="bert")),
            architecture=str(getattr(cfg, "model_type", "") or "bert"),
            n_contextual_layers=n_layers,
            dim=int(getattr(cfg, "hidden_size", getattr(cfg, "dim", 0))),
            n_heads=int(getattr(cfg, "num_attention_heads", 0) or getattr(cfg, "n_heads", 0)),
            has_mlm_head=self.mlm is not None,
            lm_kind="masked" if self.mlm is not None else "",
            has_layer_hooks=not hooks_refused,
            has_head_hooks=not hooks_refused,
            has_value_norms=not hooks_refused,
            no_hooks_reason=hooks_refused,
            piece_convention=bert_mlm.piece_convention(tokenizer),
            max_pieces=self.max_pieces,
            layer_names=("embeddings",) + tuple(f"layer {i}" for i in range(1, n_layers + 1)),
        )

    def layer_parts(self) -> surface.ModelParts:
        """The base model's hook points (:func:`probing.encoders.surface.model_parts`)."""
        return surface.model_parts(self.model)

    # -- tokenisation ---------------------------------------------------------------------

    def _model_words(self, words: list[str]) -> list[str]:
        return model_words(self.tokenizer, words)

    def tokenize(self, words: list[str]) -> tuple[list[str], list[int | None]]:
        """Pieces (special tokens included) and each piece's word index."""
        enc = self.tokenizer(self._model_words(words), is_split_into_words=True)
        return self.tokenizer.convert_ids_to_tokens(enc["input_ids"]), enc.word_ids()

    # -- sentence pairs (PairEncoder) ----------------------------------------------------

    @torch.inference_mode()
    def encode_pair(self, words_a: list[str], words_b: list[str]) -> PairEncoding:
        """Attention over ``[CLS] A [SEP] B [SEP]`` (or the model's own pair form).

        The same way as :meth:`encode`: pre-split words, ``is_split_into_words=True``, eager
        attention. B's word ids are offset by ``len(words_a)`` so that they index ``words``.

        Raises:
            InputTooLongError: the pair is longer than the model takes.
            NoAttentionError: the model returned no attention weights.
        """
        tok = self.tokenizer
        enc = tok(
            self._model_words(words_a),
            self._model_words(words_b),
            is_split_into_words=True,
            return_tensors="pt",
        )
        n = int(enc["input_ids"].shape[1])
        if n > self.max_pieces:
            raise InputTooLongError(n, self.max_pieces)
        inputs = {k: enc[k].to(self.device) for k in _FORWARD_KEYS if k in enc}
        out = self.model(**inputs, output_attentions=True)
        if not out.attentions:
            raise NoAttentionError(f"{self.name} returned no attention weights.")
        weights = torch.stack(out.attentions, dim=1)[0].float().cpu().numpy()  # (L, H, n, n)
        sequence_ids = enc.sequence_ids(0)
        return PairEncoding(
            pieces=tok.convert_ids_to_tokens(enc["input_ids"][0].tolist()),
            word_ids=[
                None if w is None else (w if s == 0 else w + len(words_a))
                for w, s in zip(enc.word_ids(0), sequence_ids, strict=True)
            ],
            words=list(words_a) + list(words_b),
            segments=list(sequence_ids),
            token_type_ids=enc["token_type_ids"][0].tolist() if "token_type_ids" in enc else None,
            attentions=np.ascontiguousarray(weights, dtype=np.float32),
        )

    def value_norms(self, words_a: list[str], words_b: list[str] | None = None) -> np.ndarray:
        """‖f_h(x_j)‖ per layer, head and piece, float32 (layers, heads, n_pieces); see
        :mod:`probing.encoders.value_norms`. Pieces as :meth:`encode` / :meth:`encode_pair`.

        Raises:
            InputTooLongError: the input is longer than the model takes.
            NoAttentionError: an architecture whose value projections are not known.
        """
        args = [self._model_words(words_a)]
        if words_b is not None:
            args.append(self._model_words(words_b))
        enc = self.tokenizer(*args, is_split_into_words=True, return_tensors="pt")
        n = int(enc["input_ids"].shape[1])
        if n > self.max_pieces:
            raise InputTooLongError(n, self.max_pieces)
        inputs = {k: enc[k].to(self.device) for k in _FORWARD_KEYS if k in enc}
        cfg = self.model.config
        heads = int(getattr(cfg, "num_attention_heads", 0) or cfg.n_heads)
        return transformed_value_norms(self.model, inputs, heads)

    # -- encoding -------------------------------------------------------------------------

    def piece_counts(self, batch: list[list[str]]) -> list[int]:
        """Pieces per sentence, special tokens included (one tokenizer call)."""
        return self._words_and_counts(batch)[1]

    def _words_and_counts(self, batch: list[list[str]]) -> tuple[list[list[str]], list[int]]:
        """Model words (see :func:`model_words`) and piece counts, one tokenizer call."""
        specials = self.tokenizer.num_special_tokens_to_add(pair=False)
        enc = self.tokenizer(batch, is_split_into_words=True, add_special_tokens=False)
        unk = self.tokenizer.unk_token or self.tokenizer.pad_token
        words_out, counts = [], []
        for b, words in enumerate(batch):
            ids = enc.word_ids(b)
            covered = {w for w in ids if w is not None}
            if len(covered) == len(words):
                words_out.append(list(words))
            else:  # a word without pieces becomes the unknown token: one piece
                words_out.append([w if i in covered else unk for i, w in enumerate(words)])
            counts.append(len(ids) + len(words) - len(covered) + specials)
        return words_out, counts

    def _encode_batch(
        self, batch: list[list[str]], pooling: Pooling, attentions: bool, windowed: bool
    ) -> list[Encoding]:
        # Common case, one tokenizer call: every word has a piece and every sentence fits.
        enc = self.tokenizer(batch, is_split_into_words=True, padding=True, return_tensors="pt")
        if enc["input_ids"].shape[1] <= self.max_pieces and all(
            len({w for w in enc.word_ids(b) if w is not None}) == len(words)
            for b, words in enumerate(batch)
        ):
            return self._forward(batch, batch, pooling, attentions, enc=enc)
        model_words, lengths = self._words_and_counts(batch)
        too_long = [i for i, n in enumerate(lengths) if n > self.max_pieces]
        if too_long and not windowed:
            raise InputTooLongError(max(lengths[i] for i in too_long), self.max_pieces)
        results: list[Encoding | None] = [None] * len(batch)
        short = [i for i in range(len(batch)) if i not in too_long]
        if short:
            encs = self._forward(
                [batch[i] for i in short], [model_words[i] for i in short], pooling, attentions
            )
            for i, e in zip(short, encs, strict=True):
                results[i] = e
        for i in too_long:
            results[i] = self._encode_windowed(batch[i], model_words[i], pooling)
        return [r for r in results if r is not None]

    def word_vectors(
        self, batch: list[list[str]], pooling: Pooling
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per sentence, the layers' word vectors (n_layers + 1, n_words, dim) and the static
        ones (n_words, dim) as float16 clipped to its range (what the feature cache stores):
        :meth:`encode`'s values without its Encodings.

        The feature path's call: the pieces are pooled for the whole batch by one gather and
        converted to float16 in torch, where encode() copies and pools sentence by sentence
        and keeps every piece's vectors. Mean pooling, over-long sentences and words without
        pieces go through encode() (same values either way).
        """
        enc = self.tokenizer(batch, is_split_into_words=True, padding=True, return_tensors="pt")
        n_pos = int(enc["input_ids"].shape[1])
        word_ids = [enc.word_ids(b) for b in range(len(batch))]
        piece = _word_pieces(word_ids, [len(w) for w in batch], pooling, n_pos)
        if piece is None or n_pos > self.max_pieces:
            return [
                (to_float16(e.layers), to_float16(e.static))
                for e in self._encode_batch(batch, pooling, False, True)
            ]
        inputs = {k: v.to(self.device) for k, v in enc.items() if k in _FORWARD_KEYS}
        index = torch.from_numpy(piece).to(self.device)
        with torch.inference_mode():
            out = self._run(inputs, output_hidden_states=True)
            # Gathered before stacking: only the words' pieces are copied, (L+1, words, D).
            layers = torch.stack(
                [h.flatten(0, 1).index_select(0, index) for h in out.hidden_states]
            )
            static = self.model.get_input_embeddings()(inputs["input_ids"].flatten()[index])
            layers, static = tensor_to_float16(layers), tensor_to_float16(static)
        ends = np.cumsum([len(w) for w in batch])
        return [
            (layers[:, end - len(w) : end], static[end - len(w) : end])
            for w, end in zip(batch, ends, strict=True)
        ]

    def _run(self, inputs: Mapping[str, torch.Tensor], **options: bool) -> ModelOutput:
        """The base model's forward pass in this encoder's dtype."""
        model = self.model
        if self.dtype == "bfloat16":
            model = self._bf16_twin()
        with self._autocast():
            return model(**inputs, **options)

    def _bf16_twin(self) -> PreTrainedModel:
        """The model with its linear layers' weights stored in bf16, made once.

        Autocast rounds every fp32 weight to bf16 on every forward pass; rounding them once
        gives the same products for about a fifth less CPU (300 UD-EWT sentences: 0.74-0.81
        vs 0.95-1.08 CPU-s). Everything else (embeddings, layer norms) is shared with the
        fp32 model, not copied.
        """
        twin = self.__dict__.get("_twin")
        if twin is not None and twin[0] is self.model:
            return twin[1]
        linear = {
            id(p)
            for m in self.model.modules()
            if isinstance(m, torch.nn.Linear)
            for p in m.parameters()
        }
        shared = {id(p): p for p in self.model.parameters() if id(p) not in linear}
        model = copy.deepcopy(self.model, memo=shared)
        for m in model.modules():
            if isinstance(m, torch.nn.Linear):
                for name, p in list(m.named_parameters(recurse=False)):
                    setattr(m, name, torch.nn.Parameter(p.detach().to(torch.bfloat16), False))
        self.__dict__["_twin"] = (self.model, model)
        return model

    @torch.inference_mode()
    def _forward(
        self,
        batch: list[list[str]],
        model_words: list[list[str]],
        pooling: Pooling,
        attentions: bool,
        enc: BatchEncoding | None = None,  # the padded tokenization of model_words, if made
    ) -> list[Encoding]:
        """One padded forward pass over sentences that fit the model."""
        if enc is None:
            enc = self.tokenizer(
                model_words, is_split_into_words=True, padding=True, return_tensors="pt"
            )
        inputs = {k: v.to(self.device) for k, v in enc.items() if k in _FORWARD_KEYS}
        out = self._run(inputs, output_hidden_states=True, output_attentions=attentions)
        hidden = torch.stack(out.hidden_states, dim=1).float().cpu().numpy()  # (B, L+1, T, D)
        static = self.model.get_input_embeddings()(inputs["input_ids"]).float().cpu().numpy()
        att = (
            torch.stack(out.attentions, dim=1).float().cpu().numpy()  # (B, L, H, T, T)
            if attentions and out.attentions is not None
            else None
        )
        mask = enc["attention_mask"].numpy().astype(bool)
        results = []
        for b, words in enumerate(batch):
            n = int(mask[b].sum())
            # Padding side may be left (some tokenizers): take the real positions.
            pos = np.flatnonzero(mask[b])
            ids = enc.word_ids(b)
            word_ids = [ids[p] for p in pos]
            pieces = self.tokenizer.convert_ids_to_tokens(enc["input_ids"][b][pos].tolist())
            piece_layers = hidden[b][:, pos]  # one copy, pooled from and kept
            layers = pool_pieces(piece_layers, word_ids, len(words), pooling)
            results.append(
                Encoding(
                    words=list(words),
                    pieces=pieces,
                    word_ids=word_ids,
                    layers=np.ascontiguousarray(layers, dtype=np.float32),
                    static=np.ascontiguousarray(
                        pool_pieces(static[b][pos], word_ids, len(words), pooling), np.float32
                    ),
                    model=self.info,
                    pooling=pooling,
                    attentions=(
                        np.ascontiguousarray(att[b][:, :, pos][:, :, :, pos], np.float32)
                        if att is not None
                        else None
                    ),
                    extras={"n_pieces": n},
                    piece_layers=np.ascontiguousarray(piece_layers, np.float32),
                )
            )
        return results

    def _encode_windowed(
        self, words: list[str], model_words: list[str], pooling: Pooling
    ) -> Encoding:
        """Encode an over-long sentence in overlapping windows; every word gets a vector.

        Windows hold at most ``max_pieces - specials`` pieces and advance by half a window;
        each word takes its vectors from the window in which it sits farthest from an edge,
        so every word sees at least a quarter window of context on both sides when it can.
        """
        counts = [
            len(self.tokenizer(w, add_special_tokens=False)["input_ids"]) for w in model_words
        ]
        budget = self.max_pieces - self.tokenizer.num_special_tokens_to_add(pair=False)
        if max(counts) > budget:
            raise InputTooLongError(max(counts), budget, unit="pieces in a single word")
        windows = _word_windows(counts, budget)
        encs = []
        for start, end in windows:
            encs.extend(self._forward([words[start:end]], [model_words[start:end]], pooling, False))
        n_words = len(words)
        layers = np.empty((encs[0].layers.shape[0], n_words, encs[0].layers.shape[2]), np.float32)
        static = np.empty((n_words, encs[0].static.shape[1]), np.float32)
        for i in range(n_words):
            best, best_margin = 0, -1
            for w, (start, end) in enumerate(windows):
                if start <= i < end:
                    margin = min(i - start, end - 1 - i)
                    if margin > best_margin:
                        best, best_margin = w, margin
            start = windows[best][0]
            layers[:, i] = encs[best].layers[:, i - start]
            static[i] = encs[best].static[i - start]
        pieces, word_ids = self.tokenize(words)
        return Encoding(
            words=list(words),
            pieces=pieces,
            word_ids=word_ids,
            layers=layers,
            static=static,
            model=self.info,
            pooling=pooling,
            attentions=None,
            extras={"windows": windows},
        )


_FORWARD_KEYS = ("input_ids", "attention_mask", "token_type_ids")


def _word_pieces(
    word_ids: list[list[int | None]], n_words: list[int], pooling: Pooling, n_pos: int
) -> np.ndarray | None:
    """Flat (batch x positions) index of each word's first or last piece, sentences in
    order; None for mean pooling or when a word has no piece."""
    if pooling not in ("first", "last"):
        return None
    out = []
    for b, (ids, n) in enumerate(zip(word_ids, n_words, strict=True)):
        at: dict[int, int] = {}
        for p, w in enumerate(ids):
            if w is not None and (pooling == "last" or w not in at):
                at[w] = b * n_pos + p
        if len(at) != n:
            return None
        out.extend(at[w] for w in range(n))
    return np.asarray(out, dtype=np.int64)


_PASS_LOCK = threading.Lock()


def _has_hooks(model: torch.nn.Module) -> bool:
    """An intervention is active in this thread, or a hook of the caller's own is on the
    model (the call-local dispatchers alone change nothing)."""
    return call_hooks.active() > 0 or call_hooks.has_foreign_hooks(model)


class TransformersMaskedLM(TransformersEncoder):
    """A BERT-family encoder with its masked-LM head: a :class:`MaskedLM` for fill-mask.

    Hidden states come from the base encoder as for any :class:`TransformersEncoder`; the
    ``…ForMaskedLM`` model (``mlm``) gives the logits.
    """

    mlm: PreTrainedModel

    def tokenize_masked(self, parts: Sequence[str]) -> MaskedPieces:
        """See :func:`probing.encoders.bert_mlm.tokenize_masked`."""
        return bert_mlm.tokenize_masked(self.tokenizer, parts, self.max_pieces, self.name)

    # The Fill Mask page asks for the same text's logits, per-layer logits and per-layer
    # states (three views of one pass): one forward pass serves them all.
    _PASS_CACHE_SIZE = 8

    @torch.inference_mode()
    def _mask_pass(self, masked: MaskedPieces) -> tuple[torch.Tensor, torch.Tensor]:
        """One forward pass with every hidden state: (hidden states at the masks in the
        model's dtype (L+1, n_masks, dim); the model's own logits there, float32
        (n_masks, vocab)).

        Kept for the last few inputs, unless a hook is on the model (an intervention is
        running: its outputs are not the model's)."""
        ids = masked.inputs["input_ids"]
        key = (tuple(ids[0].tolist()), tuple(masked.mask_positions))
        hooked = _has_hooks(self.mlm)
        cache = self.__dict__.setdefault("_mask_passes", {})
        if not hooked and (hit := cache.get(key)) is not None:
            return hit[0].clone(), hit[1].clone()  # callers may change what they get
        out = self.mlm(**self._inputs(masked), output_hidden_states=True)
        pos = masked.mask_positions
        hidden = torch.stack([h[0, pos] for h in out.hidden_states])
        logits = out.logits[0, pos].float()
        if not hooked:
            with _PASS_LOCK:  # sessions share the model
                while len(cache) >= self._PASS_CACHE_SIZE:
                    cache.pop(next(iter(cache)))
                cache[key] = (hidden.clone(), logits.clone())
        return hidden, logits

    @torch.inference_mode()
    def mask_logits(
        self, masked: MaskedPieces, shown: Mapping[int, int] | None = None
    ) -> torch.Tensor:
        """The model's logits at the masks, float32 (n_masks, vocab); ``shown`` puts other
        ids at some mask positions (see :class:`~probing.encoders.base.MaskedLM`)."""
        if not shown:
            return self._mask_pass(masked)[1]
        bad = sorted(set(shown) - set(masked.mask_positions))
        if bad:
            raise ValueError(f"positions {bad} are not mask positions")
        inputs = self._inputs(masked)
        ids = inputs["input_ids"].clone()
        for pos, token_id in shown.items():
            ids[0, pos] = int(token_id)
        inputs["input_ids"] = ids
        logits = self.mlm(**inputs).logits[0]  # (n_pieces, vocab)
        return logits[masked.mask_positions].float()

    @torch.inference_mode()
    def mask_logits_by_layer(self, masked: MaskedPieces) -> torch.Tensor:
        """The MLM head at every layer, float32 (n_layers + 1, n_masks, vocab); see
        :func:`probing.encoders.bert_mlm.logits_by_layer`."""
        hidden, final = self._mask_pass(masked)
        return bert_mlm.logits_by_layer(self.mlm, hidden, final)

    @torch.inference_mode()
    def mask_states_by_layer(self, masked: MaskedPieces) -> torch.Tensor:
        """Every layer's hidden state at the masks, float32 (n_layers + 1, n_masks, dim)."""
        return self._mask_pass(masked)[0].float()

    def head_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """The MLM head alone on (..., dim) states; see :func:`bert_mlm.mlm_head_logits`.

        Differentiable with respect to ``hidden`` only: the head's own weights are left out
        of the graph (a lens is trained against a frozen head).
        """
        params = [p for p in self.mlm.parameters() if p.requires_grad]
        for p in params:
            p.requires_grad_(False)
        try:
            return bert_mlm.mlm_head_logits(self.mlm, hidden)
        finally:
            for p in params:
                p.requires_grad_(True)

    def token_labels(self, ids: Sequence[int]) -> list[str]:
        """See :func:`probing.encoders.bert_mlm.token_labels`."""
        return bert_mlm.token_labels(self.tokenizer, ids)

    def vocabulary(self) -> dict[str, int]:
        """Every piece but the special tokens, with its id."""
        special = set(self.tokenizer.all_special_ids)
        return {p: i for p, i in self.tokenizer.get_vocab().items() if i not in special}

    def _inputs(self, masked: MaskedPieces) -> dict[str, torch.Tensor]:
        return {k: v.to(self.device) for k, v in masked.inputs.items()}


def model_words(tokenizer: PreTrainedTokenizerBase, words: list[str]) -> list[str]:
    """Words as fed to the tokenizer: a word with no pieces (e.g. a zero-width space)
    becomes the unknown token, so that every word keeps a vector.

    One tokenizer call for the whole word list; the word alignment tells which words got
    no piece (only those, rare, are replaced).
    """
    ids = tokenizer(words, is_split_into_words=True, add_special_tokens=False).word_ids()
    covered = {w for w in ids if w is not None}
    if len(covered) == len(words):
        return list(words)
    unk = tokenizer.unk_token or tokenizer.pad_token
    return [w if i in covered else unk for i, w in enumerate(words)]


def _has_mlm_head(model: PreTrainedModel) -> bool:
    return type(model).__name__.endswith("ForMaskedLM")


def _base_of(model: PreTrainedModel) -> PreTrainedModel | None:
    """The base encoder inside a model with a head, or None for a bare encoder."""
    prefix = getattr(model, "base_model_prefix", None)
    return getattr(model, prefix, None) if prefix else None


def _max_pieces(cfg, tokenizer: PreTrainedTokenizerBase) -> int:
    """Longest input the model takes, special tokens included."""
    limits = []
    tml = getattr(tokenizer, "model_max_length", None)
    if isinstance(tml, int) and 0 < tml < 1_000_000:
        limits.append(tml)
    mpe = getattr(cfg, "max_position_embeddings", None)
    if isinstance(mpe, int) and mpe > 0:
        # RoBERTa-style models offset positions by padding_idx + 1.
        offset = (
            (cfg.pad_token_id + 1) if getattr(cfg, "model_type", "") in _PREFIX_SPACE_TYPES else 0
        )
        limits.append(mpe - offset if offset and mpe - offset > 0 else mpe)
    return min(limits) if limits else 512


def _word_windows(counts: list[int], budget: int) -> list[tuple[int, int]]:
    """Overlapping [start, end) word windows whose piece counts fit ``budget``.

    Each window is filled greedily; the next one starts at the first word past the middle
    of the previous one (by pieces), so consecutive windows overlap by about half.
    """
    windows: list[tuple[int, int]] = []
    start, n = 0, len(counts)
    while True:
        end, used = start, 0
        while end < n and used + counts[end] <= budget:
            used += counts[end]
            end += 1
        windows.append((start, end))
        if end >= n:
            return windows
        half, acc, nxt = used // 2, 0, start
        while nxt < end and acc + counts[nxt] <= half:
            acc += counts[nxt]
            nxt += 1
        start = max(nxt, start + 1)
