"""Trained probes on disk: weights in safetensors, everything else in JSON (never pickle).

A file pair ``<stem>.safetensors`` + ``<stem>.json`` holds one run's per-layer probes of one
task (``<stem>`` as the results files: ``<model>__<dataset>__<task>``):

- linear probes (``pos``, ``xpos``, ``deprel``, ``supersense`` …): per layer the
  standardiser's mean and scale and the logistic regression's ``coef`` and ``intercept``;
  the JSON lists the classes, the C per layer and the run's settings;
- structural probes (``dep-distance``, ``dep-depth``): per layer the map ``B`` (rank × dim).

:class:`SavedProbes` loads a pair and predicts with plain numpy, exactly as the fitted
estimators do (standardise → affine → argmax / softmax; ``‖B x‖²``), so the app never needs
the estimator objects. Keys are ``"static"`` or the layer number as a string.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from probing.errors import DataFormatError

FORMAT = 1


def probe_dir(results_dir: str | Path) -> Path:
    """Where a results folder keeps its trained probes: ``<results_dir>/probes``."""
    return Path(results_dir) / "probes"


def save_probes(probes: dict, path_stem: str | Path, meta: dict) -> Path:
    """Write fitted probes (``{layer or "static": LinearProbe | StructuralProbe}``).

    Returns the JSON path. Weights are stored as float32.
    """
    from safetensors.numpy import save_file

    from probing.probes.structural import StructuralProbe

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
        else:
            info["kind"] = "linear"
            info["classes"] = [str(c) for c in probe.classes_]
            for name, value in zip(
                ("mean", "scale", "coef", "intercept"), _linear(probe), strict=True
            ):
                tensors[f"{k}.{name}"] = value
            info["layers"][k] = {"C": probe.C_}
    save_file(
        {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in tensors.items()},
        str(stem) + ".safetensors",
    )
    json_path = Path(str(stem) + ".json")
    json_path.write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    return json_path


def _linear(probe) -> tuple[np.ndarray, ...]:  # noqa: ANN001 - a fitted LinearProbe
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
        kind: ``linear``, ``structural-distance`` or ``structural-depth``.
        info: the JSON (model, task, classes, …). tensors: name -> float32 array.
    """

    kind: str
    info: dict
    tensors: dict[str, np.ndarray] = field(repr=False)

    @classmethod
    def load(cls, path_stem: str | Path) -> SavedProbes:
        """Read ``<stem>.json`` and ``<stem>.safetensors``; DataFormatError if unusable."""
        from safetensors.numpy import load_file

        stem = str(path_stem)
        try:
            info = json.loads(Path(stem + ".json").read_text(encoding="utf-8"))
            tensors = load_file(stem + ".safetensors")
        except (OSError, ValueError) as exc:
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
