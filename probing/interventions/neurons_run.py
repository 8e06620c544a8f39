"""One run of "units that matter" at one layer: rank the neurons for a word-level label
(elastic-net probe and probeless), probe the top k against random k, and mean-ablate the
top k in a masked LM against random k (:mod:`probing.interventions.neurons`).

Words: ``train_sentences`` / ``test_sentences`` spread evenly over UD-EWT (or the task's
data set) train and test; the ablation's masked-LM loss is on ``heldout_sentences`` of the
test split (:mod:`probing.interventions.masked_words`'s fixed rule for which words are
masked). ELMo gets rankings and probes; its ablation needs a masked LM and is left out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from probing.interventions.data import LabelledWords, labelled_sample, task_field
from probing.interventions.neurons import (
    ablation_mlm_loss,
    check_k,
    elastic_net_ranking,
    probeless_ranking,
    top_vs_random,
)

if TYPE_CHECKING:
    from probing.encoders.base import Encoder
    from probing.encoders.bert import TransformersMaskedLM

Say = Callable[[str, int, int], None]


def layer_words(encoder: Encoder, data: LabelledWords, layer: int) -> tuple[np.ndarray, np.ndarray]:
    """(X (n, D) float32 vectors of the labelled words at ``layer``, y (n,) labels)."""
    from probing.interventions.hooks import check_layer

    check_layer(layer, int(encoder.info.n_contextual_layers))
    encs = encoder.encode(data.sentences)
    y, sent, word = data.flat()
    X = np.stack(
        [np.asarray(encs[s].layers[layer][w], np.float32) for s, w in zip(sent, word, strict=True)]
    )
    return X, y


def run_units(
    encoder: TransformersMaskedLM,
    task: str = "pos",
    layer: int = 3,
    ks: Sequence[int] = (1, 5, 10, 50),
    *,
    train_sentences: int = 400,
    test_sentences: int = 200,
    heldout_sentences: int = 100,
    n_random: int = 5,
    seed: int = 0,
    say: Say | None = None,
) -> dict:
    """Rankings, top-k vs random-k probe accuracy and (masked LMs) ablation loss; JSON-ready.

    Raises:
        RankTooLargeError: a k above the layer's dimension (before any work).
        LayerOutOfRangeError, TaskLabelsMissingError: a bad layer or task.
    """
    from probing.encoders.bert import TransformersMaskedLM

    say = say or (lambda *_: None)
    dim = int(encoder.info.dim)
    ks = [check_k(k, dim) for k in ks]
    dataset, field = task_field(task)
    say("encoding", 0, 2)
    X_tr, y_tr = layer_words(
        encoder, labelled_sample(dataset, "train", field, train_sentences), layer
    )
    X_te, y_te = layer_words(
        encoder, labelled_sample(dataset, "test", field, test_sentences), layer
    )
    say("ranking", 1, 2)
    pl_scores, pl_order = probeless_ranking(X_tr, y_tr)
    en_weights, en_order = elastic_net_ranking(X_tr, y_tr, seed=seed)
    out: dict = {
        "model": encoder.name,
        "task": task,
        "dataset": dataset,
        "layer": layer,
        "dim": dim,
        "n_train_words": len(y_tr),
        "n_test_words": len(y_te),
        "rankings": {
            "probeless": pl_order[:100].tolist(),
            "elastic_net": en_order[:100].tolist(),
        },
        "probes": {
            "probeless": top_vs_random(X_tr, y_tr, X_te, y_te, pl_order, ks, n_random, seed),
            "elastic_net": top_vs_random(X_tr, y_tr, X_te, y_te, en_order, ks, n_random, seed),
        },
        "settings": {"ks": ks, "n_random": n_random, "seed": seed},
    }
    if isinstance(encoder, TransformersMaskedLM):
        say("ablating", 2, 2)
        held = labelled_sample(dataset, "test", field, heldout_sentences).sentences
        means = X_tr.mean(axis=0)
        rng = np.random.default_rng(seed)
        rows = []
        for k in ks:
            sets = {
                "probeless": pl_order[:k].tolist(),
                "elastic_net": en_order[:k].tolist(),
                **{
                    f"random {i}": rng.choice(dim, k, replace=False).tolist()
                    for i in range(n_random)
                },
            }
            loss = ablation_mlm_loss(encoder, held, layer, sets, means)
            rand = [loss[f"random {i}"] for i in range(n_random)]
            rows.append(
                {
                    "k": k,
                    "clean_loss": loss["none"],
                    "probeless_loss": loss["probeless"],
                    "elastic_net_loss": loss["elastic_net"],
                    "random_loss": float(np.mean(rand)),
                    "random_min": float(np.min(rand)),
                    "random_max": float(np.max(rand)),
                }
            )
        out["ablation"] = {
            "rows": rows,
            "what": "mean masked-LM loss (nats) on held-out words with the k neurons of "
            f"hidden state {layer} set to their training means (later layers recomputed)",
            "heldout_sentences": len(held),
        }
    else:
        out["ablation"] = None
        out["ablation_left_out"] = "needs a masked-LM head (an ELMo's LM reads both stacks)"
    return out
