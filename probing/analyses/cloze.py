"""Fill-mask cloze accuracy of a masked LM, layer by layer (the MLM head read at every
layer: the logit lens; the last row is the model's own prediction).

In UD-EWT sentences ``mask_rate`` of the words that the model reads as one vocabulary piece
(and that hold a letter) are masked together, seeded; each mask is scored top-1 against the
masked word at every layer, and top-5 at the last. Per-sentence counts are kept: intervals and
the paired comparisons (the last layer against each other, :func:`probing.probes.compare.compare`,
Holm over the table) come from sentence-bootstrap draws shared by every layer. The layer
report's ``cloze`` part (:mod:`probing.report.lm_parts`) runs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from probing.probes.compare import Difference, Replicates, compare, with_holm

if TYPE_CHECKING:
    from collections.abc import Callable

    from probing.encoders.base import Encoder

    Progress = Callable[[str, int, int], None]


# -- the bootstrap and the table ---------------------------------------------------------


def sentence_picks(n_sentences: int, n_boot: int, seed: int) -> np.ndarray:
    """(B, n) multinomial sentence weights, the same for every layer and lens of a part."""
    rng = np.random.default_rng([seed, n_sentences])
    return rng.multinomial(n_sentences, np.full(n_sentences, 1.0 / n_sentences), size=n_boot)


def ratio_draws(numer: np.ndarray, denom: np.ndarray, picks: np.ndarray) -> np.ndarray:
    """(B, L) draws of ``Σ numer / Σ denom`` over resampled sentences; ``numer`` (n, L),
    ``denom`` (n,)."""
    return (picks @ numer) / np.maximum(picks @ denom, 1e-12)[:, None]


def interval(draws: np.ndarray) -> tuple[list[float], list[float]]:
    lo, hi = np.quantile(draws, [0.025, 0.975], axis=0)
    return lo.round(6).tolist(), hi.round(6).tolist()


def table(diffs: list[Difference]) -> dict[str, Any]:
    return {"rows": [d.as_dict() for d in with_holm(diffs)]}


# -- cloze ---------------------------------------------------------------------------------


def one_piece_words(encoder: Encoder, words: list[str], vocab: dict[str, int]) -> dict[int, int]:
    """{word index: vocabulary id} of the words read as one non-special piece that hold a
    letter (punctuation and numbers would make the task another one)."""
    pieces, word_ids = encoder.tokenize(words)
    per_word: dict[int, list[str]] = {}
    for piece, w in zip(pieces, word_ids, strict=True):
        if w is not None:
            per_word.setdefault(w, []).append(piece)
    return {
        w: vocab[p[0]]
        for w, p in per_word.items()
        if len(p) == 1 and p[0] in vocab and any(c.isalpha() for c in words[w])
    }


def run_cloze(
    encoder: Encoder, settings: dict[str, Any], progress: Progress
) -> tuple[dict[str, Any], str]:
    """Cloze accuracy per layer (module doc): (JSON-ready result, CSV)."""
    import torch

    from probing.analyses.attention import sample_sentences
    from probing.analyses.fill_mask import masked_lm
    from probing.analyses.tuned_lens import masked_parts
    from probing.errors import InputTooLongError, InvalidArgumentError

    mlm = masked_lm(encoder)
    vocab = mlm.vocabulary()
    sentences = sample_sentences("ud-ewt", settings["split"], n=settings["n_sentences"])
    rng = np.random.default_rng(settings["seed"])
    counts, hits5, names = [], [], list(encoder.info.layer_names)
    for done, words in enumerate(sentences, start=1):
        targets = one_piece_words(encoder, list(words), vocab)
        if targets:
            k = max(1, round(settings["mask_rate"] * len(targets)))
            picks = sorted(rng.choice(sorted(targets), size=k, replace=False).tolist())
            try:
                masked = mlm.tokenize_masked(masked_parts(list(words), picks))
            except InputTooLongError:
                masked = None
            if masked is not None:
                with torch.inference_mode():
                    logits = mlm.mask_logits_by_layer(masked)  # (L+1, k, vocab)
                gold = torch.tensor([targets[i] for i in picks])
                own = logits.gather(-1, gold[None, :, None].expand(logits.shape[0], -1, 1))
                rank = (logits > own).sum(-1)  # (L+1, k): 0 = top-1
                counts.append((rank == 0).sum(-1).numpy())
                hits5.append((int((rank[-1] < 5).sum()), k))
        if done % 25 == 0 or done == len(sentences):
            progress("cloze", done, len(sentences))
    if not counts:
        raise InvalidArgumentError(
            f"no UD-EWT sentence had a word {encoder.info.name} reads as one piece to mask"
        )
    top1 = np.stack(counts).astype(float)  # (n, L+1) correct masks per sentence
    top5 = np.array([h for h, _ in hits5], dtype=float)
    n = np.array([k for _, k in hits5], dtype=float)
    picks = sentence_picks(len(n), settings["n_boot"], settings["seed"])
    draws = ratio_draws(top1, n, picks)  # (B, L+1)
    draws5 = ratio_draws(top5[:, None], n, picks)
    values = top1.sum(0) / n.sum()
    names = names if len(names) == len(values) else [f"layer {i}" for i in range(len(values))]
    last = len(values) - 1
    reps = [
        Replicates(f"layer {i}", [values[i]], draws[None, :, i], "cloze")
        for i in range(len(values))
    ]
    diffs = [compare(reps[last], reps[i], settings["seed"]) for i in range(last)]
    lo, hi = interval(draws)
    lo5, hi5 = interval(draws5)
    payload = {
        "model": encoder.info.name,
        "layer_names": names,
        "n_sentences": len(n),
        "n_masks": int(n.sum()),
        "top1": values.round(6).tolist(),
        "top1_ci": [lo, hi],
        "top5_last": round(float(top5.sum() / n.sum()), 6),
        "top5_last_ci": [lo5[0], hi5[0]],
        "per_sentence": {"masks": n.astype(int).tolist(), "top1": top1.astype(int).tolist()},
        "comparisons": table(diffs),
    }
    rows = pd.DataFrame(
        {"layer": range(len(values)), "name": names, "top1": values, "ci_low": lo, "ci_high": hi}
    )
    return payload, rows.to_csv(index=False, float_format="%.6g")
