"""ELMo (Peters et al., 2018) in one readable file: char-CNN token encoder + 2-layer biLSTM.

Reads and writes the ORIGINAL weight format of AllenAI's bilm-tf / AllenNLP (``options.json``
+ one ``*.hdf5``), so the published models, the AllenNLP test fixture and ELMo-mini (trained
by :mod:`probing.training.elmo_lm`) all load through :func:`load_elmo`.

Pipeline for a batch of B sentences, T = longest sentence + 2 (``<S>`` and ``</S>``):

    words ──char ids──▶ (B, T, C) ──CharCNN──▶ token vectors x (B, T, P)
          ──forward LSTM stack (left to right)──▶ f1, f2 (B, T, P)
          ──backward LSTM stack (right to left)──▶ b1, b2 (B, T, P)
    layers = [[x; x], [f1; b1], [f2; b2]] (3, B, T, 2P), then <S>/</S> are dropped.

C = characters per token (50), P = projection dim (16 in the fixture, 128 for ELMo-mini,
512 for the original ELMo). The numerics follow TensorFlow's ``LSTMCell`` exactly (gate
order i, j, f, o; +1.0 forget bias added at run time; cell clip, projection, projection
clip), which is what makes the parity test against the original TF outputs pass at 1e-6.

One file on purpose, past the usual ~500 lines: like minGPT's ``model.py``, the whole
architecture, its weight format and its encoder read top to bottom in one place.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import h5py
import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from probing.encoders import batching
from probing.encoders.base import Encoder
from probing.encoders.elmo_chars import (  # the char ids belong to this format: re-exported
    BOS_TOKEN as BOS_TOKEN,
)
from probing.encoders.elmo_chars import EOS_TOKEN as EOS_TOKEN
from probing.encoders.elmo_chars import PAD_CHAR, batch_to_char_ids, reverse_padded
from probing.encoders.elmo_chars import char_ids as char_ids
from probing.encoding import Encoding, ModelInfo, Pooling
from probing.errors import ModelFormatError, ModelUnavailableError
from probing.io import atomic_write, atomic_write_json

if TYPE_CHECKING:
    from probing.encoders.elmo_surface import ElmoParts

# ----------------------------------------------------------------------------------------
# Configuration (options.json)
# ----------------------------------------------------------------------------------------


MAX_ELMO_PARAMETERS = 250_000_000  # 1 GB of float32; the original ELMo has 93.6M


@dataclass(frozen=True)
class ElmoConfig:
    """The hyper-parameters in an ELMo ``options.json``."""

    char_embed_dim: int = 16
    filters: tuple[tuple[int, int], ...] = ((1, 32), (2, 32), (3, 64), (4, 128), (5, 256))
    n_highway: int = 2
    activation: str = "relu"  # of the char convolutions; highways always use relu
    n_characters: int = 262  # 261 char ids + row 0 for padding (the +1 offset)
    max_characters_per_token: int = 50
    lstm_dim: int = 512  # LSTM cell size
    projection_dim: int = 128  # LSTM output size = token vector size
    n_layers: int = 2
    cell_clip: float | None = 3.0
    proj_clip: float | None = 3.0
    use_skip_connections: bool = True

    @property
    def n_filters(self) -> int:
        """Width of the concatenated convolution outputs (= highway width)."""
        return sum(n for _, n in self.filters)

    @property
    def output_dim(self) -> int:
        """Dimension of every output layer: [forward; backward] or [x; x]."""
        return 2 * self.projection_dim

    @classmethod
    def from_options(cls, options: dict) -> ElmoConfig:
        """Parse the dict of an AllenNLP/bilm-tf ``options.json``."""
        cnn, lstm = options["char_cnn"], options["lstm"]
        return cls(
            char_embed_dim=int(cnn["embedding"]["dim"]),
            filters=tuple((int(w), int(n)) for w, n in cnn["filters"]),
            n_highway=int(cnn.get("n_highway", 0)),
            activation=str(cnn.get("activation", "relu")),
            n_characters=int(cnn.get("n_characters", 262)),
            max_characters_per_token=int(cnn.get("max_characters_per_token", 50)),
            lstm_dim=int(lstm["dim"]),
            projection_dim=int(lstm.get("projection_dim", lstm["dim"])),
            n_layers=int(lstm.get("n_layers", 2)),
            cell_clip=None if lstm.get("cell_clip") is None else float(lstm["cell_clip"]),
            proj_clip=None if lstm.get("proj_clip") is None else float(lstm["proj_clip"]),
            use_skip_connections=bool(lstm.get("use_skip_connections", False)),
        )

    def n_parameters(self) -> int:
        """Weights the model will allocate (char CNN, highways, projection, both LSTMs)."""
        nf, proj, cell = self.n_filters, self.projection_dim, self.lstm_dim
        cnn = self.n_characters * self.char_embed_dim + sum(
            w * self.char_embed_dim * n + n for w, n in self.filters
        )
        highway = self.n_highway * 2 * (nf * nf + nf)
        lstm = 2 * self.n_layers * (4 * cell * (2 * proj) + 4 * cell + cell * proj)
        return cnn + highway + nf * proj + proj + lstm

    def validate(self) -> ElmoConfig:
        """Check every size before anything is allocated; return self.

        Raises:
            ModelFormatError: a size that is not positive, no filters, an unknown activation,
                or more than :data:`MAX_ELMO_PARAMETERS` weights in all.
        """
        sizes = {
            "char_cnn.embedding.dim": self.char_embed_dim,
            "char_cnn.n_characters": self.n_characters,
            "char_cnn.max_characters_per_token": self.max_characters_per_token,
            "lstm.dim": self.lstm_dim,
            "lstm.projection_dim": self.projection_dim,
            "lstm.n_layers": self.n_layers,
        }
        for name, value in sizes.items():
            if value < 1:
                raise ModelFormatError(f"options.json: {name} is {value}; it must be at least 1.")
        if self.n_highway < 0:
            raise ModelFormatError(f"options.json: char_cnn.n_highway is {self.n_highway}.")
        if not self.filters or any(w < 1 or n < 1 for w, n in self.filters):
            raise ModelFormatError(
                "options.json: char_cnn.filters must be a non-empty list of [width, count] "
                f"pairs of positive numbers, not {list(map(list, self.filters))}."
            )
        if self.activation not in ("relu", "tanh"):
            raise ModelFormatError(
                f"options.json: char_cnn.activation {self.activation!r} is not relu or tanh."
            )
        if self.n_characters > 262 or self.max_characters_per_token > 1000:
            raise ModelFormatError(
                "options.json: n_characters must be at most 262 and max_characters_per_token "
                f"at most 1000 (have {self.n_characters} and {self.max_characters_per_token})."
            )
        n = self.n_parameters()
        if n > MAX_ELMO_PARAMETERS:
            raise ModelFormatError(
                f"options.json asks for an ELMo with {n:,} weights ({n * 4 / 2**30:.1f} GB); "
                f"ContextLens loads at most {MAX_ELMO_PARAMETERS:,} (the original ELMo has "
                "94M). Check the file's dims."
            )
        return self

    @classmethod
    def from_json(cls, path: str | os.PathLike[str]) -> ElmoConfig:
        with open(path, encoding="utf-8") as f:
            return cls.from_options(json.load(f))

    def to_options(self) -> dict:
        """The ``options.json`` dict, in the layout AllenNLP and bilm-tf read."""
        return {
            "lstm": {
                "cell_clip": self.cell_clip,
                "use_skip_connections": self.use_skip_connections,
                "n_layers": self.n_layers,
                "proj_clip": self.proj_clip,
                "projection_dim": self.projection_dim,
                "dim": self.lstm_dim,
            },
            "char_cnn": {
                "embedding": {"dim": self.char_embed_dim},
                "filters": [list(f) for f in self.filters],
                "n_highway": self.n_highway,
                "n_characters": self.n_characters,
                "max_characters_per_token": self.max_characters_per_token,
                "activation": self.activation,
            },
        }


# ----------------------------------------------------------------------------------------
# Token encoder: char embedding -> convolutions + max-pool -> highways -> projection
# ----------------------------------------------------------------------------------------


class CharCNN(nn.Module):
    """Maps the char ids of tokens to token vectors (the ELMo "layer 0")."""

    def __init__(self, config: ElmoConfig) -> None:
        super().__init__()
        self.config = config
        # Row 0 is the padding row for the +1 offset and stays zero (not in the hdf5).
        self.char_embed = nn.Embedding(config.n_characters, config.char_embed_dim, padding_idx=0)
        self.convs = nn.ModuleList(
            nn.Conv1d(config.char_embed_dim, n, kernel_size=w) for w, n in config.filters
        )
        d = config.n_filters
        # TF highway: g = σ(x W_carry + b_carry); y = g·relu(x W_transform + b_transform) + (1-g)·x
        self.highway_transform = nn.ModuleList(nn.Linear(d, d) for _ in range(config.n_highway))
        self.highway_carry = nn.ModuleList(nn.Linear(d, d) for _ in range(config.n_highway))
        self.projection = nn.Linear(d, config.projection_dim)
        self.max_width = max(w for w, _ in config.filters)

    def forward(self, ids: Tensor) -> Tensor:
        """ids: int64 (N, C) char ids of N tokens -> float (N, projection_dim)."""
        # Cut the char axis to what can change the result: the longest token, plus enough
        # padding that every token still sees one all-padding window of every width (the
        # original always has those, and they can win the max-pool). Identical outputs,
        # ~3x less convolution work for ordinary words.
        token_len = int(((ids > 0) & (ids != PAD_CHAR + 1)).sum(-1).max()) if ids.numel() else 0
        ids = ids[:, : min(ids.shape[-1], token_len + self.max_width)]
        x = self.char_embed(ids).transpose(1, 2)  # (N, char_dim, C')
        act = torch.relu if self.config.activation == "relu" else torch.tanh
        # Max over time, then the activation (as bilm-tf; both are monotonic, so same thing).
        h = torch.cat([act(conv(x).amax(dim=-1)) for conv in self.convs], dim=-1)  # (N, F)
        for transform, carry in zip(self.highway_transform, self.highway_carry, strict=True):
            gate = torch.sigmoid(carry(h))
            h = gate * torch.relu(transform(h)) + (1.0 - gate) * h
        return self.projection(h)


# ----------------------------------------------------------------------------------------
# LSTM with cell clip, projection and projection clip (TensorFlow LSTMCell numerics)
# ----------------------------------------------------------------------------------------

LstmState = tuple[Tensor, Tensor]  # h (B, P), c (B, D)


class ProjectedLstm(nn.Module):
    """One direction of one layer. Parameters in TF layout, as stored in the hdf5.

    W: (input_dim + P, 4D) acting on [x; h_prev]; b: (4D,); W_P: (D, P). Gates i, j, f, o.
    """

    def __init__(self, input_dim: int, config: ElmoConfig) -> None:
        super().__init__()
        d, p = config.lstm_dim, config.projection_dim
        self.input_dim, self.cell_dim, self.proj_dim = input_dim, d, p
        self.cell_clip, self.proj_clip = config.cell_clip, config.proj_clip
        self.W = nn.Parameter(torch.empty(input_dim + p, 4 * d))
        self.b = nn.Parameter(torch.zeros(4 * d))
        self.W_P = nn.Parameter(torch.empty(d, p))
        nn.init.xavier_uniform_(self.W)
        nn.init.xavier_uniform_(self.W_P)

    def forward(self, x: Tensor, mask: Tensor, state: LstmState) -> tuple[Tensor, LstmState]:
        """Run over time, left to right.

        Args:
            x: (B, T, input_dim) inputs; mask: bool (B, T), each row a prefix of True.
            state: initial (h (B, P), c (B, D)).

        Returns:
            outputs (B, T, P), zero where mask is False; final state, taken at each row's
            last True step (rows are padded at the end, so padding never updates it).
        """
        h, c = state
        w_x, w_h = self.W[: self.input_dim], self.W[self.input_dim :]
        # The input half of the gates for all steps in one matmul; only h @ w_h is sequential.
        x_gates = torch.matmul(x, w_x) + self.b  # (B, T, 4D)
        outputs = []
        # unbind: one view per step; much cheaper backward than x_gates[:, t] indexing.
        for gates_x, m in zip(x_gates.unbind(1), mask.unsqueeze(-1).unbind(1), strict=True):
            i, j, f, o = (gates_x + h @ w_h).chunk(4, dim=-1)
            # TF's LSTMCell adds forget_bias=1.0 at run time; bilm-tf stored b without it.
            c_new = torch.sigmoid(f + 1.0) * c + torch.sigmoid(i) * torch.tanh(j)
            if self.cell_clip is not None:
                c_new = c_new.clamp(-self.cell_clip, self.cell_clip)
            h_new = (torch.sigmoid(o) * torch.tanh(c_new)) @ self.W_P
            if self.proj_clip is not None:
                h_new = h_new.clamp(-self.proj_clip, self.proj_clip)
            h, c = torch.where(m, h_new, h), torch.where(m, c_new, c)
            outputs.append(h_new)
        out = torch.stack(outputs, dim=1) * mask.unsqueeze(-1).to(x.dtype)
        return out, (h, c)

    def zero_state(self, batch_size: int, like: Tensor) -> LstmState:
        return (
            like.new_zeros(batch_size, self.proj_dim),
            like.new_zeros(batch_size, self.cell_dim),
        )


# ----------------------------------------------------------------------------------------
# The biLM: token encoder + forward and backward LSTM stacks
# ----------------------------------------------------------------------------------------

BiLmState = list[list[LstmState]]  # [direction 0=forward, 1=backward][layer]


@dataclass
class BiLmOutput:
    """What :class:`ElmoBiLm` returns for a batch (boundary tokens still included).

    token: (B, T, P); forward / backward: per LSTM layer, (B, T, P); mask: bool (B, T).
    """

    token: Tensor
    forward: list[Tensor]
    backward: list[Tensor]
    mask: Tensor
    state: BiLmState

    def layers(self) -> Tensor:
        """(n_layers + 1, B, T, 2P): [x; x], then [forward_l; backward_l] per layer."""
        out = [torch.cat([self.token, self.token], dim=-1)]
        out += [torch.cat(fb, dim=-1) for fb in zip(self.forward, self.backward, strict=True)]
        return torch.stack(out)


class ElmoBiLm(nn.Module):
    """Char-CNN token encoder and the two directional LSTM stacks (no softmax)."""

    def __init__(self, config: ElmoConfig, dropout: float = 0.0) -> None:
        super().__init__()
        self.config = config
        self.dropout = dropout  # on each LSTM layer's input, training only (as bilm-tf)
        self.token_encoder = CharCNN(config)
        p = config.projection_dim
        self.lstms = nn.ModuleList(
            nn.ModuleList(ProjectedLstm(p, config) for _ in range(config.n_layers))
            for _direction in range(2)
        )

    def zero_state(self, batch_size: int, like: Tensor) -> BiLmState:
        return [[lstm.zero_state(batch_size, like) for lstm in stack] for stack in self.lstms]

    def forward(self, ids: Tensor, state: BiLmState | None = None) -> BiLmOutput:
        """ids: int64 (B, T, C) from :func:`batch_to_char_ids`; state: initial LSTM states.

        Without ``state`` every sentence starts from zeros (stateless).
        """
        B, T, C = ids.shape
        mask = (ids > 0).any(dim=-1)  # (B, T) real tokens, <S> and </S> included
        lengths = mask.sum(dim=1)
        # Each distinct word of the batch goes through the (costly) char-CNN once; padding
        # positions stay zero.
        weight = self.token_encoder.projection.weight
        token = torch.zeros(B, T, self.config.projection_dim, dtype=weight.dtype, device=ids.device)
        unique, inverse = torch.unique(ids[mask], dim=0, return_inverse=True)
        token[mask] = self.token_encoder(unique)[inverse]
        if state is None:
            state = self.zero_state(B, token)

        outputs: list[list[Tensor]] = [[], []]
        new_state: BiLmState = [[], []]
        for direction, stack in enumerate(self.lstms):
            # The backward LM reads each sentence reversed, so it runs as a forward pass.
            x = token if direction == 0 else reverse_padded(token, lengths)
            for layer, lstm in enumerate(stack):
                if self.training and self.dropout > 0:
                    x = F.dropout(x, self.dropout, training=True)
                out, s = lstm(x, mask, state[direction][layer])
                if self.config.use_skip_connections and layer > 0:
                    out = out + x  # residual around every layer but the first
                new_state[direction].append(s)
                outputs[direction].append(out if direction == 0 else reverse_padded(out, lengths))
                x = out
        return BiLmOutput(token, outputs[0], outputs[1], mask, new_state)


# ----------------------------------------------------------------------------------------
# Weights in the original hdf5 format
# ----------------------------------------------------------------------------------------


def _lstm_key(direction: int, layer: int) -> str:
    return f"RNN_{direction}/RNN/MultiRNNCell/Cell{layer}/LSTMCell"


def load_hdf5(model: ElmoBiLm, path: str | os.PathLike[str]) -> None:
    """Copy weights from an original-format ELMo hdf5 into ``model`` (shapes are checked)."""
    cfg = model.config

    def put(param: Tensor, value: np.ndarray, key: str) -> None:
        if tuple(param.shape) != value.shape:
            raise ModelUnavailableError(
                f"{path}: {key} has shape {value.shape}, but options.json implies "
                f"{tuple(param.shape)}. Do the options and weights files belong together?"
            )
        param.data.copy_(torch.from_numpy(np.ascontiguousarray(value, dtype=np.float32)))

    enc = model.token_encoder
    try:
        with h5py.File(path, "r") as f:
            _check_shapes(f, model, path)  # from metadata, before any data is decompressed
            embed = np.zeros((cfg.n_characters, cfg.char_embed_dim), np.float32)
            stored = f["char_embed"][...]
            embed[1 : stored.shape[0] + 1] = stored  # row 0 = padding
            put(enc.char_embed.weight, embed, "char_embed")
            for i, conv in enumerate(enc.convs):
                # TF conv2d kernel (1, width, in, out) -> torch Conv1d (out, in, width)
                w = f[f"CNN/W_cnn_{i}"][...]
                put(conv.weight, w[0].transpose(2, 1, 0), f"CNN/W_cnn_{i}")
                put(conv.bias, f[f"CNN/b_cnn_{i}"][...], f"CNN/b_cnn_{i}")
            for k in range(cfg.n_highway):
                g = f[f"CNN_high_{k}"]
                put(enc.highway_transform[k].weight, g["W_transform"][...].T, f"CNN_high_{k}")
                put(enc.highway_transform[k].bias, g["b_transform"][...], f"CNN_high_{k}")
                put(enc.highway_carry[k].weight, g["W_carry"][...].T, f"CNN_high_{k}")
                put(enc.highway_carry[k].bias, g["b_carry"][...], f"CNN_high_{k}")
            put(enc.projection.weight, f["CNN_proj/W_proj"][...].T, "CNN_proj/W_proj")
            put(enc.projection.bias, f["CNN_proj/b_proj"][...], "CNN_proj/b_proj")
            for direction, stack in enumerate(model.lstms):
                for layer, lstm in enumerate(stack):
                    g = f[_lstm_key(direction, layer)]
                    put(lstm.W, g["W_0"][...], f"{_lstm_key(direction, layer)}/W_0")
                    put(lstm.b, g["B"][...], f"{_lstm_key(direction, layer)}/B")
                    put(lstm.W_P, g["W_P_0"][...], f"{_lstm_key(direction, layer)}/W_P_0")
    except (KeyError, OSError) as exc:
        raise ModelUnavailableError(
            f"{path} is not an ELMo weight file in the original (bilm-tf/AllenNLP) format: {exc}"
        ) from exc


def save_hdf5(model: ElmoBiLm, path: str | os.PathLike[str]) -> None:
    """Write ``model``'s weights in the original format (what :func:`load_hdf5` reads)."""
    enc = model.token_encoder

    def arr(t: Tensor) -> np.ndarray:
        return t.detach().to("cpu", torch.float32).numpy()

    with h5py.File(path, "w") as f:
        f["char_embed"] = arr(enc.char_embed.weight)[1:]
        for i, conv in enumerate(enc.convs):
            f[f"CNN/W_cnn_{i}"] = arr(conv.weight).transpose(2, 1, 0)[None]
            f[f"CNN/b_cnn_{i}"] = arr(conv.bias)
        for k in range(model.config.n_highway):
            f[f"CNN_high_{k}/W_transform"] = arr(enc.highway_transform[k].weight).T
            f[f"CNN_high_{k}/b_transform"] = arr(enc.highway_transform[k].bias)
            f[f"CNN_high_{k}/W_carry"] = arr(enc.highway_carry[k].weight).T
            f[f"CNN_high_{k}/b_carry"] = arr(enc.highway_carry[k].bias)
        f["CNN_proj/W_proj"] = arr(enc.projection.weight).T
        f["CNN_proj/b_proj"] = arr(enc.projection.bias)
        for direction, stack in enumerate(model.lstms):
            for layer, lstm in enumerate(stack):
                key = _lstm_key(direction, layer)
                f[f"{key}/W_0"] = arr(lstm.W)
                f[f"{key}/B"] = arr(lstm.b)
                f[f"{key}/W_P_0"] = arr(lstm.W_P)


def save_elmo(model: ElmoBiLm, folder: str | os.PathLike[str]) -> Path:
    """Write ``options.json`` + ``weights.hdf5`` into ``folder`` (each replaced atomically)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    # Weights first: a complete options.json marks a complete folder.
    atomic_write(folder / "weights.hdf5", lambda tmp: save_hdf5(model, tmp))
    atomic_write_json(folder / "options.json", model.config.to_options())
    return folder


def _find_files(folder_or_files: str | os.PathLike[str] | tuple) -> tuple[Path, Path]:
    """(options.json, weights.hdf5) from a folder or an explicit pair of paths."""
    if isinstance(folder_or_files, tuple | list):
        options, weights = (Path(p) for p in folder_or_files)
    else:
        folder = Path(folder_or_files).expanduser()
        if not folder.is_dir():
            raise ModelUnavailableError(f"ELMo folder {folder} does not exist.")
        options = folder / "options.json"
        if not options.is_file():  # AllenNLP's downloads are named *_options.json
            found = sorted(folder.glob("*options*.json"))
            if len(found) != 1:
                raise ModelUnavailableError(
                    f"{folder} has no options.json: an ELMo folder needs options.json and "
                    "exactly one *.hdf5 weight file."
                )
            options = found[0]
        found = sorted(folder.glob("*.hdf5"))
        if len(found) > 1:  # other hdf5 files beside the weights (cached outputs, embeddings)
            found = [p for p in found if "weights" in p.name] or found
        if len(found) != 1:
            what = (
                "no *.hdf5 file"
                if not found
                else f"{len(found)} *.hdf5 files ({', '.join(p.name for p in found)})"
            )
            raise ModelUnavailableError(
                f"{folder} has {what}: an ELMo folder needs options.json and exactly one "
                "*.hdf5 weight file (or one whose name contains 'weights')."
            )
        weights = found[0]
    for p in (options, weights):
        if not p.is_file():
            raise ModelUnavailableError(f"ELMo file {p} does not exist.")
    return options, weights


def _expected_shapes(model: ElmoBiLm) -> dict[str, tuple[int, ...]]:
    """hdf5 dataset -> the shape it must have for ``model`` (its options)."""
    cfg, enc = model.config, model.token_encoder
    out: dict[str, tuple[int, ...]] = {"char_embed": (cfg.n_characters - 1, cfg.char_embed_dim)}
    for i, conv in enumerate(enc.convs):
        o, c, w = conv.weight.shape
        out[f"CNN/W_cnn_{i}"], out[f"CNN/b_cnn_{i}"] = (1, w, c, o), (o,)
    for k in range(cfg.n_highway):
        for part, layer in (
            ("transform", enc.highway_transform[k]),
            ("carry", enc.highway_carry[k]),
        ):
            out[f"CNN_high_{k}/W_{part}"] = tuple(layer.weight.shape[::-1])
            out[f"CNN_high_{k}/b_{part}"] = tuple(layer.bias.shape)
    out["CNN_proj/W_proj"] = tuple(enc.projection.weight.shape[::-1])
    out["CNN_proj/b_proj"] = tuple(enc.projection.bias.shape)
    for direction, stack in enumerate(model.lstms):
        for layer, lstm in enumerate(stack):
            key = _lstm_key(direction, layer)
            out[f"{key}/W_0"], out[f"{key}/B"] = tuple(lstm.W.shape), tuple(lstm.b.shape)
            out[f"{key}/W_P_0"] = tuple(lstm.W_P.shape)
    return out


def _check_shapes(f: h5py.File, model: ElmoBiLm, path: str | os.PathLike[str]) -> None:
    """Every dataset's shape and element size from the file's metadata: a file whose data
    would decompress to more than the model holds is refused before reading any of it."""
    name = Path(path).name
    for key, want in _expected_shapes(model).items():
        if key not in f:
            raise ModelFormatError(f"{name}: no {key}; is it an ELMo weight file?")
        ds = f[key]
        if not isinstance(ds, h5py.Dataset) or ds.dtype.kind != "f" or ds.dtype.itemsize > 8:
            raise ModelFormatError(f"{name}: {key} is not an array of floats.")
        have = tuple(ds.shape)
        ok = (
            have == want
            if key != "char_embed"
            else (len(have) == 2 and have[0] <= want[0] and have[1] == want[1])
        )
        if not ok:
            raise ModelFormatError(
                f"{name}: {key} has shape {have}, but options.json implies {want}. Do the "
                "options and weights files belong together?"
            )


def load_bilm(
    folder_or_files: str | os.PathLike[str] | tuple, device: str | torch.device | None = None
) -> ElmoBiLm:
    """The bare :class:`ElmoBiLm` (eval mode) from a folder or (options, weights) pair."""
    options, weights = _find_files(folder_or_files)
    try:
        config = ElmoConfig.from_json(options)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise ModelFormatError(
            f"{Path(options).name} is not an ELMo options file ({type(exc).__name__}: {exc})."
        ) from exc
    config.validate()  # before ElmoBiLm allocates anything
    model = ElmoBiLm(config)
    load_hdf5(model, weights)
    return model.to("cpu" if device is None else batching.resolve_device(device)).eval()


# ----------------------------------------------------------------------------------------
# The Encoder: sentences in, Encoding (3 layers of word vectors) out
# ----------------------------------------------------------------------------------------


class ElmoEncoder(Encoder):
    """ELMo as a ContextLens encoder. Pieces are words; there are no special tokens.

    Stateless by default: each call starts from zero LSTM state, so a sentence's vectors do
    not depend on what was encoded before or on what else is in the batch. With
    ``stateful=True`` the final (h, c) of batch row b is the initial state of row b in the
    next call, as in the original bilm-tf (and AllenNLP's ``Elmo``).
    """

    def __init__(
        self,
        model: ElmoBiLm,
        info: ModelInfo,
        *,
        stateful: bool = False,
        dtype: str = "float32",
    ) -> None:
        self.model = model.eval()
        self.dtype = batching.resolve_dtype(dtype, self.device.type)
        self.info = info
        self.stateful = stateful
        self._state: BiLmState | None = None  # rows kept across calls when stateful
        self._lock = threading.Lock()  # stateful calls must not interleave
        # The folder's LM softmax (probing.encoders.elmo_softmax), None for an encoder only.
        self.softmax = None

    @property
    def device(self) -> torch.device:
        return self.model.token_encoder.projection.weight.device

    def layer_parts(self) -> ElmoParts:
        """The biLM's surface (:mod:`probing.encoders.elmo_surface`): its layers, hooks that
        replace one layer with the LSTM layers above re-run, and its softmax as the LM."""
        from probing.encoders.elmo_surface import elmo_parts

        parts = self.__dict__.get("_parts")
        if parts is None or parts.softmax is not self.softmax:
            parts = self.__dict__["_parts"] = elmo_parts(self.model, self.softmax)
        return parts

    def reset_state(self) -> None:
        """Forget the carried LSTM state (stateful mode)."""
        with self._lock:
            self._state = None

    def tokenize(self, words: list[str]) -> tuple[list[str], list[int | None]]:
        return list(words), list(range(len(words)))

    @torch.inference_mode()
    def layers(self, batch: list[list[str]]) -> list[np.ndarray]:
        """Per sentence float32 (n_layers + 1, n_words, 2P), boundary tokens removed."""
        ids = batch_to_char_ids(batch, self.model.config.max_characters_per_token)
        ids = ids.to(self.device)
        if not self.stateful:
            with self._autocast():
                out = self.model(ids)
        else:
            with self._lock, self._autocast():
                out = self.model(ids, self._take_state(len(batch), ids))
                self._keep_state(out.state)
        stacked = out.layers().float().cpu().numpy()  # (L+1, B, T, 2P)
        return [stacked[:, b, 1 : len(words) + 1] for b, words in enumerate(batch)]

    def _take_state(self, rows: int, like: Tensor) -> BiLmState:
        proto = self.model.zero_state(rows, like.new_zeros((), dtype=torch.float32))
        if self._state is None:
            return proto
        # Rows beyond what was kept start from zero, like bilm-tf's max_batch_size buffer.
        return [
            [
                tuple(
                    torch.cat([kept[:rows], zero[kept.shape[0] :]])
                    for kept, zero in zip(ks, zs, strict=True)
                )
                for ks, zs in zip(kd, zd, strict=True)
            ]
            for kd, zd in zip(self._state, proto, strict=True)
        ]

    def _keep_state(self, new: BiLmState) -> None:
        if self._state is None:
            self._state = new
            return
        # Rows not in this batch keep their old state.
        self._state = [
            [
                tuple(torch.cat([n, old[n.shape[0] :]]) for n, old in zip(ns, olds, strict=True))
                for ns, olds in zip(nd, od, strict=True)
            ]
            for nd, od in zip(new, self._state, strict=True)
        ]

    def _encode_batch(
        self, batch: list[list[str]], pooling: Pooling, attentions: bool, windowed: bool
    ) -> list[Encoding]:
        # Words are the model's tokens, so pooling and windowing change nothing; ELMo has
        # no attention, so ``attentions`` is always None.
        out = []
        for words, layers in zip(batch, self.layers(batch), strict=True):
            layers = np.ascontiguousarray(layers, dtype=np.float32)
            out.append(
                Encoding(
                    words=list(words),
                    pieces=list(words),
                    word_ids=list(range(len(words))),
                    layers=layers,
                    static=layers[0].copy(),
                    model=self.info,
                    pooling=pooling,
                    attentions=None,
                )
            )
        return out


def layer_names(n_layers: int) -> tuple[str, ...]:
    """("token", "lstm1", …, "lstm<n_layers>")."""
    return ("token",) + tuple(f"lstm{i}" for i in range(1, n_layers + 1))


def load_elmo(
    folder_or_files: str | os.PathLike[str] | tuple,
    name: str | None = None,
    provenance: str = "",
    device: str | torch.device | None = None,
    stateful: bool = False,
    how_to_get_real: str = "",
) -> ElmoEncoder:
    """Load an ELMo encoder from original-format files.

    Args:
        folder_or_files: a folder holding ``options.json`` and exactly one ``*.hdf5``, or an
            ``(options_path, weights_path)`` pair.
        name: the model's display name (default: the folder's name).
        provenance: one or two sentences for the provenance card.
        device: torch device (default CPU).
        stateful: carry LSTM state across calls, per batch row, like the original.
        how_to_get_real: for stand-ins such as ELMo-mini, how to load the real models.

    Raises:
        ModelUnavailableError: missing/ambiguous files, or weights that don't match options.
    """
    options, weights = _find_files(folder_or_files)
    model = load_bilm((options, weights), device=device)
    cfg = model.config
    info = ModelInfo(
        name=name or options.parent.name,
        family="elmo",
        architecture="elmo",
        n_contextual_layers=cfg.n_layers,
        dim=cfg.output_dim,
        provenance=provenance or f"ELMo weights from {options.parent}.",
        source=str(options.parent),
        how_to_get_real=how_to_get_real,
        has_mlm_head=False,
        max_pieces=None,
        layer_names=layer_names(cfg.n_layers),
    )
    from probing.encoders.capabilities import declared
    from probing.encoders.elmo_softmax import load_softmax

    # The original files hold no softmax; ELMo-mini's folder adds softmax.safetensors.
    softmax = load_softmax(options.parent, cfg.projection_dim)
    info = replace(
        declared(info),
        lm_kind="bidirectional-lm" if softmax is not None else "",
        # its softmax read as two next-word LMs (probing.encoders.elmo_surface)
        lm_directions=("forward", "backward") if softmax is not None else (),
    )
    encoder = ElmoEncoder(model, info, stateful=stateful)
    encoder.softmax = softmax
    encoder.layer_parts()  # the hook sites' dispatchers go on now, before threads share it
    return encoder
