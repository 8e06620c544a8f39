"""One run of "units that matter" at one layer: rank the neurons for a word-level label
(elastic-net probe and probeless), probe the top k against random k, and mean-ablate the
top k in a masked LM against random k (:mod:`probing.interventions.neurons`).

Words: ``train_sentences`` / ``test_sentences`` spread evenly over UD-EWT (or the task's
data set) train and test; the ablation's masked-LM loss is on ``heldout_sentences`` of the
test split (:mod:`probing.interventions.masked_words`'s fixed rule for which words are
masked). ELMo gets rankings and probes; its ablation needs a masked LM and is left out.
Top k against random k is a paired comparison per test item with Holm's correction
(:mod:`probing.interventions.neurons_compare`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from probing.interventions.data import LabelledWords, labelled_sample, task_field
from probing.interventions.neurons import (
    ablation_word_scores,
    check_k,
    elastic_net_ranking,
    probeless_ranking,
    random_sets,
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
    n_random: int = 20,
    n_boot: int = 1000,
    seed: int = 0,
    say: Say | None = None,
) -> dict:
    """Rankings, top-k vs random-k probe accuracy and (masked LMs) ablation loss, each with
    the comparison engine's paired table (:mod:`probing.interventions.neurons_compare`);
    JSON-ready.

    Raises:
        RankTooLargeError: a k above the layer's dimension (before any work).
        InvalidArgumentError: fewer than 2 random draws (no spread to compare against).
        LayerOutOfRangeError, TaskLabelsMissingError: a bad layer or task.
    """
    from probing.encoders.bert import TransformersMaskedLM
    from probing.errors import InvalidArgumentError
    from probing.interventions.neurons_compare import ablation_table, probe_table
    from probing.probes.compare import Engine

    say = say or (lambda *_: None)
    dim = int(encoder.info.dim)
    ks = list(dict.fromkeys(check_k(k, dim) for k in ks))
    if n_random < 2:
        raise InvalidArgumentError(f"n_random = {n_random}: at least 2 random draws per k.")
    dataset, field = task_field(task)
    engine = Engine(n_boot=n_boot, seed=seed)
    say("encoding", 0, 3)
    X_tr, y_tr = layer_words(
        encoder, labelled_sample(dataset, "train", field, train_sentences), layer
    )
    test = labelled_sample(dataset, "test", field, test_sentences)
    X_te, y_te = layer_words(encoder, test, layer)
    test_sentence = test.flat()[1]
    say("ranking", 1, 3)
    _, pl_order = probeless_ranking(X_tr, y_tr)
    _, en_order = elastic_net_ranking(X_tr, y_tr, seed=seed)
    orders = {"probeless": pl_order, "elastic_net": en_order}
    say("probing", 2, 3)
    preds = top_vs_random(X_tr, y_tr, X_te, orders, ks, n_random, seed)
    out: dict = {
        "model": encoder.name,
        "task": task,
        "dataset": dataset,
        "layer": layer,
        "dim": dim,
        "n_train_words": len(y_tr),
        "n_test_words": len(y_te),
        "n_test_sentences": len(test.sentences),
        "rankings": {name: order[:100].tolist() for name, order in orders.items()},
        "probes": probe_table(preds, y_te, test_sentence, len(test.sentences), engine),
        "settings": {"ks": ks, "n_random": n_random, "n_boot": n_boot, "seed": seed},
    }
    if isinstance(encoder, TransformersMaskedLM):
        say("ablating", 3, 3)
        held = labelled_sample(dataset, "test", field, heldout_sentences).sentences
        means = X_tr.mean(axis=0)
        draws = random_sets(dim, ks, n_random, seed + 1)  # not the probes' draws
        scores = {}
        for k in ks:
            sets = {
                **{name: order[:k].tolist() for name, order in orders.items()},
                **{f"random {i}": s.tolist() for i, s in enumerate(draws[k])},
            }
            scores[k] = ablation_word_scores(encoder, held, layer, sets, means)
        out["ablation"] = {
            **ablation_table(scores, list(orders), n_random, len(held), engine),
            "what": "mean masked-LM loss (nats) on held-out words with the k neurons of "
            f"hidden state {layer} set to their training means (later layers recomputed)",
            "heldout_sentences": len(held),
            "n_words": int(scores[ks[0]]["none"].loss.size),
        }
    else:
        out["ablation"] = None
        out["ablation_left_out"] = "needs a masked-LM head (an ELMo's LM reads both stacks)"
    return out
