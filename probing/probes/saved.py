"""Trained probes on disk: weights in safetensors, everything else in JSON (never pickle).

A file pair ``<stem>.safetensors`` + ``<stem>.json`` holds one run's per-layer probes of one
task (``<stem>`` as the results files: ``<model>__<dataset>__<task>``):

- linear probes (``pos``, ``xpos``, ``deprel``, ``supersense`` …): per layer the
  standardiser's mean and scale and the logistic regression's ``coef`` and ``intercept``;
  the JSON lists the classes, the C per layer and the run's settings;
- structural probes (``dep-distance``, ``dep-depth``): per layer the map ``B`` (rank × dim);
- word-sense probes (``wsd``): per layer the unit sense centroids (float16) of lemmas that
  have several training senses, chosen by training occurrences per stored sense, as many
  as ``max_wsd_bytes`` holds;
  the JSON lists every training lemma's senses, most frequent first, so that the other
  lemmas still get their most frequent training sense.

:class:`SavedProbes` loads a pair and predicts with plain numpy, exactly as the fitted
estimators do (standardise → affine → argmax / softmax; ``‖B x‖²``), so the app never needs
the estimator objects. Keys are ``"static"`` or the layer number as a string.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from probing.errors import DataFormatError
from probing.io import atomic_write, atomic_write_json

if TYPE_CHECKING:
    from probing.probes.linear import LinearProbe

FORMAT = 1


def probe_dir(results_dir: str | Path) -> Path:
    """Where a results folder keeps its trained probes: ``<results_dir>/probes``."""
    return Path(results_dir) / "probes"


DEFAULT_MAX_WSD_BYTES = 3_000_000  # sense centroids of all layers together (committed files)


def save_probes(
    probes: dict, path_stem: str | Path, meta: dict, *, max_wsd_bytes: int = DEFAULT_MAX_WSD_BYTES
) -> Path:
    """Write fitted probes (``{layer or "static": LinearProbe | StructuralProbe |
    NearestSenseClassifier}``).

    Returns the JSON path. Weights are stored as float32, sense centroids as float16.
    """
    from safetensors.numpy import save_file

    from probing.probes.structural import StructuralProbe
    from probing.probes.wsd import NearestSenseClassifier

    stem = Path(path_stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    tensors: dict[str, np.ndarray] = {}
    info: dict = {"format": FORMAT, "layers": {}, **meta}
    for key, probe in probes.items():
        k = str(key)
        if isinstance(probe, StructuralProbe):
            info["kind"] = f"structural-{probe.kind}"
            tensors[f"{k}.B"] = probe.B_
            info["layers"][k] = {"epochs": probe.epochs_}
        elif isinstance(probe, NearestSenseClassifier):
            if "kind" not in info:
                info.update(kind="wsd-centroids", **_wsd_lemmas(probes, max_wsd_bytes))
            rows = info["centroid_rows"]
            tensors[f"{k}.centroids"] = np.concatenate(
                [probe.centroids_[lemma] for lemma in rows] or [np.zeros((0, 1))]
            )
            info["layers"][k] = {}
        else:
            info["kind"] = "linear"
            info["classes"] = [str(c) for c in probe.classes_]
            for name, value in zip(
                ("mean", "scale", "coef", "intercept"), _linear(probe), strict=True
            ):
                tensors[f"{k}.{name}"] = value
            info["layers"][k] = {"C": probe.C_}
    arrays = {
        k: np.ascontiguousarray(v, dtype=np.float16 if k.endswith(".centroids") else np.float32)
        for k, v in tensors.items()
    }
    # Atomic and world-readable: the app may be reading the previous pair meanwhile.
    atomic_write(
        str(stem) + ".safetensors", lambda tmp: save_file(arrays, str(tmp)), suffix=".safetensors"
    )
    json_path = atomic_write_json(Path(str(stem) + ".json"), info, indent=1)
    return json_path


def _wsd_lemmas(probes: dict, max_bytes: int) -> dict:
    """Which lemmas keep their centroids: those with several training senses, in order of
    training occurrences per stored sense (the most occurrences answered by nearest
    centroid per byte), while every layer's float16 rows fit in ``max_bytes``; plus every
    lemma's senses."""
    probe = next(iter(probes.values()))
    dim = next(iter(probe.centroids_.values())).shape[1]
    row_bytes = 2 * dim * len(probes)
    poly = sorted(
        (k for k, s in probe.senses_.items() if len(s) > 1),
        key=lambda k: (-probe.lemma_counts_[k] / len(probe.senses_[k]), k),
    )
    rows: dict[str, int] = {}
    n = 0
    for lemma in poly:
        k = len(probe.senses_[lemma])
        if (n + k) * row_bytes > max_bytes:
            continue  # a lemma with fewer senses further down may still fit
        rows[lemma] = n
        n += k
    total = sum(probe.lemma_counts_.values())
    poly_total = sum(probe.lemma_counts_[k] for k in poly)
    kept = sum(probe.lemma_counts_[k] for k in rows)
    return {
        "senses": {k: [str(x) for x in v] for k, v in sorted(probe.senses_.items())},
        "centroid_rows": rows,
        "centroid_coverage": {
            "polysemous_lemmas": len(poly),
            "kept_lemmas": len(rows),
            "training_instances": total,
            "polysemous_instances": poly_total,
            "kept_instances": kept,
        },
    }


def _linear(probe: LinearProbe) -> tuple[np.ndarray, ...]:  # fitted (or the older sklearn one)
    """(mean, scale, coef, intercept) of the torch probe, or of the older scikit-learn one."""
    if getattr(probe, "mean_", None) is not None:
        to_np = lambda t: np.asarray(t.detach().cpu().numpy() if hasattr(t, "detach") else t)  # noqa: E731
        return to_np(probe.mean_), to_np(probe.scale_), to_np(probe.coef_), to_np(probe.intercept_)
    m = probe.model_
    return probe.scaler_.mean_, probe.scaler_.scale_, m.coef_, m.intercept_


@dataclass
class SavedProbes:
    """One task's per-layer probes, loaded from a safetensors + JSON pair.

    Attributes:
        kind: ``linear``, ``structural-distance``, ``structural-depth`` or ``wsd-centroids``.
        info: the JSON (model, task, classes, …). tensors: name -> float32 array.
    """

    kind: str
    info: dict
    tensors: dict[str, np.ndarray] = field(repr=False)

    @classmethod
    def load(cls, path_stem: str | Path) -> SavedProbes:
        """Read ``<stem>.json`` and ``<stem>.safetensors``; DataFormatError if unusable."""
        from safetensors import SafetensorError
        from safetensors.numpy import load_file

        stem = str(path_stem)
        try:
            info = json.loads(Path(stem + ".json").read_text(encoding="utf-8"))
            tensors = load_file(stem + ".safetensors")
        except (OSError, ValueError, SafetensorError) as exc:  # e.g. a truncated file
            raise DataFormatError(f"Cannot read the saved probes {stem}: {exc}") from exc
        if info.get("format") != FORMAT or "kind" not in info:
            raise DataFormatError(f"{stem}.json is not a saved-probes file of format {FORMAT}")
        return cls(info["kind"], info, tensors)

    @property
    def task(self) -> str:
        return str(self.info.get("task", ""))

    @property
    def layers(self) -> list[int]:
        """The encoder layers with a probe, ascending (the static probe left out)."""
        return sorted(int(k) for k in self.info["layers"] if k != "static")

    @property
    def classes(self) -> np.ndarray:
        return np.asarray(self.info.get("classes", []), dtype=str)

    def _t(self, layer: int | str, name: str) -> np.ndarray:
        return self.tensors[f"{layer}.{name}"]

    def decision_function(self, layer: int | str, X: np.ndarray) -> np.ndarray:
        """(n, n_classes) scores of a linear probe for (n, dim) vectors."""
        Xs = (np.asarray(X, np.float32) - self._t(layer, "mean")) / self._t(layer, "scale")
        return Xs @ self._t(layer, "coef").T + self._t(layer, "intercept")

    def predict_proba(self, layer: int | str, X: np.ndarray) -> np.ndarray:
        """(n, n_classes) softmax probabilities (multinomial logistic regression)."""
        z = self.decision_function(layer, X).astype(np.float64)
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        return p / p.sum(axis=1, keepdims=True)

    def predict_senses(
        self, layer: int | str, X: np.ndarray, lemmas: list[str]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A word-sense probe's (senses, sources, cosines) for (n, dim) vectors of words with
        lemma keys ``lemmas`` (``bank%n``). Source: ``nn`` (nearest centroid; cosine given),
        ``only`` (one training sense), ``mfs`` (centroids not kept: most frequent training
        sense), ``unseen`` (lemma not in training: sense ""). Cosine is NaN unless ``nn``.
        """
        senses = self.info.get("senses", {})
        rows = self.info.get("centroid_rows", {})
        C = self._t(layer, "centroids").astype(np.float32)
        X = np.asarray(X, np.float32)
        X = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
        out, src = np.full(len(lemmas), "", dtype=object), np.full(len(lemmas), "unseen", object)
        cos = np.full(len(lemmas), np.nan)
        for i, lemma in enumerate(lemmas):
            cands = senses.get(lemma)
            if not cands:
                continue
            if lemma in rows:
                sims = C[rows[lemma] : rows[lemma] + len(cands)] @ X[i]
                best = int(np.argmax(sims))
                out[i], src[i], cos[i] = cands[best], "nn", float(sims[best])
            else:
                out[i], src[i] = cands[0], "only" if len(cands) == 1 else "mfs"
        return out.astype(str), src.astype(str), cos

    def predict(self, layer: int | str, X: np.ndarray) -> np.ndarray:
        """Labels (n,) for a linear probe; distances (n, n) or depths (n,) for a structural."""
        if self.kind == "linear":
            return self.classes[np.argmax(self.decision_function(layer, X), axis=1)]
        z = np.asarray(X, np.float32) @ self._t(layer, "B").T
        z = z.astype(np.float64)
        sq = (z * z).sum(1)
        if self.kind == "structural-depth":
            return sq
        return np.maximum(sq[:, None] + sq[None, :] - 2 * z @ z.T, 0.0)
