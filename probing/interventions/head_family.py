"""Head ablation as one family of tests: per-sentence sums, Holm over the heads, the count.

A head ablation (:mod:`probing.interventions.heads`) makes one comparison per head: the
masked-LM loss (or agreement accuracy) with that head masked against the clean model, on
the same items. Read one at a time, 72 per-head 95 % intervals clear 0 about 4 times by
chance; the finding is how many heads survive a family-wise correction. :class:`HeadSums`
keeps what the paired bootstrap needs — per held-out sentence (agreement: per sentence
group) the item count and, per condition, the sum of the per-item values — so the test can
be re-made from the committed file without the model. :func:`head_family` runs the
comparison engine (:mod:`probing.probes.compare`: paired sentence bootstrap, the
normal-approximation p where the bootstrap's tail is too thin, Holm over the model's
L × H heads, separately per measure) and :func:`family_sentence` writes the finding from it.

Rows of every (1 + L·H, G) array: row 0 the clean model, row ``1 + l·H + h`` the model with
head ``h`` of layer ``l`` (both 0-based) masked alone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from probing.errors import DataFormatError
from probing.probes.compare import Replicates, compare, with_holm

# measure -> (sums field, count field, the direction a head's masking counts as "hurts")
MEASURES = {
    "lm_loss_increase": ("lm_loss", "lm_words", +1),
    "lm_top1_change": ("lm_correct", "lm_words", -1),
    "agreement_change": ("agree_right", "agree_cases", -1),
}
CORRECTION = "Holm over the heads, separately per measure"


@dataclass
class HeadSums:
    """Per-sentence sums of one head ablation (module doc for the row layout).

    Attributes:
        n_layers, n_heads: the model's L and H.
        lm_words: (G,) masked held-out words per sentence.
        lm_loss: (1 + L·H, G) masked-LM loss sums (nats).
        lm_correct: (1 + L·H, G) top-1 hits.
        agree_cases: (A,) agreement cases per sentence group.
        agree_right: (1 + L·H, A) cases with logit(correct) > logit(wrong).
    """

    n_layers: int
    n_heads: int
    lm_words: np.ndarray
    lm_loss: np.ndarray
    lm_correct: np.ndarray
    agree_cases: np.ndarray
    agree_right: np.ndarray

    @classmethod
    def from_items(
        cls,
        n_layers: int,
        n_heads: int,
        sentence: np.ndarray,
        loss: list[np.ndarray],
        correct: list[np.ndarray],
        groups: list[str],
        agree: list[np.ndarray],
    ) -> HeadSums:
        """Sum per-item values (one (n,) array per condition, clean first) by sentence."""
        _, s = np.unique(np.asarray(sentence), return_inverse=True)
        _, g = np.unique(np.asarray(groups), return_inverse=True)
        s, g = s.reshape(-1), g.reshape(-1)
        by = lambda idx, v: np.bincount(idx, weights=np.asarray(v, float), minlength=idx.max() + 1)  # noqa: E731
        return cls(
            n_layers,
            n_heads,
            np.bincount(s).astype(float),
            np.stack([by(s, v) for v in loss]),
            np.stack([by(s, v) for v in correct]),
            np.bincount(g).astype(float),
            np.stack([by(g, v) for v in agree]),
        )

    def save(self, path: str | Path) -> Path:
        """Write as safetensors (float64 arrays; L and H in the metadata)."""
        from safetensors.numpy import save_file

        from probing.io import atomic_write

        tensors = {
            k: np.ascontiguousarray(getattr(self, k), dtype=np.float64)
            for k in ("lm_words", "lm_loss", "lm_correct", "agree_cases", "agree_right")
        }
        meta = {
            "n_layers": self.n_layers,
            "n_heads": self.n_heads,
            "rows": __doc__.split("\n\n")[-1].strip(),
        }
        path = Path(path)
        atomic_write(
            path,
            lambda tmp: save_file(tensors, str(tmp), metadata={"info": json.dumps(meta)}),
            suffix=".safetensors",
        )
        return path

    @classmethod
    def load(cls, path: str | Path) -> HeadSums:
        """Read what :meth:`save` wrote; DataFormatError if unusable."""
        from safetensors import safe_open

        try:
            with safe_open(str(path), "numpy") as f:
                meta = json.loads(f.metadata()["info"])
                arrays = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118
            return cls(int(meta["n_layers"]), int(meta["n_heads"]), **arrays)
        except (OSError, KeyError, ValueError, TypeError) as exc:
            raise DataFormatError(f"Cannot read the head-ablation sums {path}: {exc}") from exc


def _picks(n_groups: int, n_boot: int, seed: int) -> np.ndarray:
    """(B, G) sentence picks, those of :class:`probing.probes.metrics.SentenceBootstrap`
    (so the family's intervals are the per-head intervals of the run's table)."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_groups, np.full(n_groups, 1.0 / n_groups), size=n_boot).astype(float)


def head_family(sums: HeadSums, n_boot: int = 1000, seed: int = 0) -> dict:
    """Per measure, every head's ``masked − clean`` with its interval, p and Holm-adjusted
    p over the L·H heads, and the heads that survive (called, in the direction that means
    the head is needed). JSON-ready."""
    out = {"correction": CORRECTION, "n_heads": sums.n_layers * sums.n_heads, "measures": {}}
    for measure, (field, count, hurts) in MEASURES.items():
        values, n = getattr(sums, field), getattr(sums, count)
        picks = _picks(len(n), n_boot, seed)
        with np.errstate(invalid="ignore", divide="ignore"):
            draws = (values @ picks.T) / (picks @ n)  # (1 + L·H, B)
        points = values.sum(axis=1) / n.sum()
        unit = f"head ablation {measure}"
        clean = Replicates("clean", points[:1], draws[:1], unit)
        diffs = with_holm(
            [
                compare(
                    Replicates(
                        _name(i, sums.n_heads), points[1 + i : 2 + i], draws[1 + i : 2 + i], unit
                    ),
                    clean,
                    seed,
                )
                for i in range(sums.n_layers * sums.n_heads)
            ]
        )
        heads = [
            {"layer": 1 + i // sums.n_heads, "head": i % sums.n_heads, **d.as_dict()}
            for i, d in enumerate(diffs)
        ]
        survive = [h for h in heads if h["called"] and np.sign(h["diff"]) == hurts]
        other = [h for h in heads if h["called"] and np.sign(h["diff"]) == -hurts]
        out["measures"][measure] = {
            "heads": heads,
            "survivors": [[h["layer"], h["head"]] for h in _by_size(survive)],
            "called_other_way": [[h["layer"], h["head"]] for h in _by_size(other)],
            "uncorrected_ci_clear": sum(1 for h in heads if h["ci_low"] > 0 or h["ci_high"] < 0),
        }
    return out


def family_columns(family: dict) -> list[dict]:
    """Per head (in the run's row order), ``<measure>_p``, ``_p_holm`` and ``_called``."""
    measures = family["measures"]
    n = family["n_heads"]
    return [
        {
            f"{m}{suffix}": measures[m]["heads"][i][key]
            for m in MEASURES
            for suffix, key in (("_p", "p"), ("_p_holm", "p_holm"), ("_called", "called"))
        }
        for i in range(n)
    ]


def family_sentence(family: dict) -> str:
    """The finding, written from the corrected table: how many heads survive per measure."""
    n = family["n_heads"]
    parts = []
    for measure, what in (
        ("lm_loss_increase", "raise the masked-LM loss"),
        ("agreement_change", "lower agreement accuracy"),
        ("lm_top1_change", "lower masked-word top-1"),
    ):
        m = family["measures"][measure]
        by = {(h["layer"], h["head"]): h for h in m["heads"]}
        named = "; ".join(
            f"layer {la} head {hd} {by[la, hd]['diff']:+.3f} "
            f"[{by[la, hd]['ci_low']:+.3f}, {by[la, hd]['ci_high']:+.3f}], "
            f"p_Holm {by[la, hd]['p_holm']:.2g}"
            for la, hd in m["survivors"]
        )
        k = len(m["survivors"])
        text = f"{k} of {n} heads {what} when masked alone" + (f" ({named})" if named else "")
        if m["called_other_way"]:
            text += f"; {len(m['called_other_way'])} called the other way"
        text += f" ({m['uncorrected_ci_clear']} per-head intervals clear 0 uncorrected)"
        parts.append(text)
    return f"{CORRECTION} ({n} tests each): " + "; ".join(parts) + "."


def _name(i: int, n_heads: int) -> str:
    return f"layer {1 + i // n_heads} head {i % n_heads}"


def _by_size(heads: list[dict]) -> list[dict]:
    return sorted(heads, key=lambda h: -abs(h["diff"]))
