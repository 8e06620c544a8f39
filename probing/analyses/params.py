"""The settings of each registered analysis (:mod:`probing.analyses.registry`), declared once.

Each class is a frozen dataclass whose fields carry their range, choices and help
(:func:`probing.params.param`): the CLI builds its options from it, a page its widgets'
ranges, a sweep or report its recorded command line. Which models an analysis runs on is not
a setting: the CLI's ``--model`` options, the sidebar or the report's model say that.

Standard library only (the CLI reads this before any heavy import).
"""

from __future__ import annotations

from dataclasses import dataclass

from probing.params import SEED, Bound, count, param

# Mirrors probing.datasets.registry's names without importing it (a CLI's --help stays light);
# tests/unit/test_analysis_registry.py holds the two together.
CORPORA = ("ud-ewt", "semcor", "brown")
SPLITS = ("train", "dev", "test")
POOLINGS = ("first", "last", "mean")
WHERE = ("subject", "all")  # AlterRep: whose vectors are pushed


@dataclass(frozen=True)
class CkaParams:
    """Linear CKA between every pair of layers (:func:`probing.analyses.cka.run`)."""

    dataset: str = param("ud-ewt", "data set to sample sentences from", choices=CORPORA)
    split: str = param("dev", "split of the data set", choices=SPLITS)
    # A page's run: the Gram matrices are n × n per layer (2,000 words: 32 MB each).
    n_words: int = param(
        2000,
        "at least this many words (whole sentences)",
        bound=count(4, 20_000),
        page_max=3000,
        demo_max=800,
    )
    n_boot: int = param(300, "bootstrap draws (sentences)", bound=count(1, 10_000))
    seed: int = param(0, "bootstrap seed", bound=SEED)


@dataclass(frozen=True)
class ContextualityParams:
    """Ethayarajh's (2019) measures per layer over a corpus sample
    (:func:`probing.analyses.contextuality.run`)."""

    dataset: str = param("ud-ewt", "data set to sample sentences from", choices=CORPORA)
    split: str = param("train", "split of the data set", choices=SPLITS)
    n_sentences: int = param(
        500,
        "sentences sampled (seeded)",
        bound=count(2, 100_000),
        page_max="max_contextuality_sentences",
        demo_max="max_contextuality_sentences",
    )
    min_count: int = param(5, "occurrences a word type needs", bound=count(1, 100_000))
    seed: int = param(0, "sampling and baseline seed", bound=SEED)
    uncentred_mev: bool = param(
        False, "MEV of the uncentred occurrence matrix (default: centred, as the reference PCA)"
    )
    pooling: str = param("first", "a word's vector from its pieces", choices=POOLINGS)


@dataclass(frozen=True)
class AttentionStatsParams:
    """Clark et al.'s (2019) head statistics over a corpus sample
    (:func:`probing.analyses.attention.run_statistics`)."""

    dataset: str = param("ud-ewt", "data set to sample sentences from", choices=CORPORA)
    split: str = param("dev", "split of the data set", choices=SPLITS)
    n_sentences: int = param(
        200,
        "sentences, spread evenly over the split (whole documents unless --per-sentence)",
        bound=count(1, 100_000),
        page_max="max_attention_corpus_sentences",
        demo_max="max_attention_corpus_sentences",
    )
    batch_size: int = param(8, "sentences per forward pass", bound=count(1, 1024))
    per_sentence: bool = param(
        False,
        "sample single sentences and average per sentence (default: whole documents, averaged "
        "per document as Clark et al. average per example)",
    )


@dataclass(frozen=True)
class AttentionParsersParams:
    """``attention-stats``' own options: also score each head as a dependency parser (Clark et
    al. 2019, §4.2) on UD-EWT's gold trees (:mod:`probing.cli.attention_parsers`)."""

    parsers: bool = param(False, "also score each head as a dependency parser")
    parsers_sentences: int | None = param(
        None, "sentences for --parsers", bound=count(1, 100_000, all_ok=True)
    )


@dataclass(frozen=True)
class AttentionNormsParams:
    """Attention to [SEP], punctuation and [CLS] per layer, raw vs norm-weighted (Kobayashi et
    al. 2020) (:func:`probing.analyses.attention_norms.run`)."""

    dataset: str = param("ud-ewt", "data set to sample documents from", choices=CORPORA)
    split: str = param("dev", "split of the data set", choices=SPLITS)
    n_sentences: int = param(
        2000, "at least this many sentences, whole documents", bound=count(1, 100_000)
    )
    n_boot: int = param(1000, "bootstrap draws (documents)", bound=count(1, 100_000))


@dataclass(frozen=True)
class AlterRepParams:
    """Counterfactual subject-number pushes and agreement flips per layer (AlterRep;
    :func:`probing.interventions.alterrep.run`)."""

    layers: str = param("all", "comma-separated layers to push at, or 'all' (1 … L)")
    alpha: float = param(
        1.0,
        "push h - (1+α)(h - r(h)): 1 mirrors the number, 0 erases it, -1 is no push",
        bound=Bound(-1.0, 10.0, float),
    )
    where: str = param("subject", "push the subject's vector or every word's", choices=WHERE)
    # A page's run (one layer, in a worker): about a minute at the page's caps on 2 cores.
    max_fit_cases: int = param(
        4000,
        "UD-EWT train cases the eraser is fitted on (at most)",
        bound=count(10, 100_000),
        page_max=1500,
        demo_max=500,
    )
    max_eval_cases: int = param(
        2000,
        "held-out UD-EWT dev/test cases scored (at most)",
        bound=count(20, 100_000),
        page_max=1000,
        demo_max=300,
    )
    n_boot: int = param(1000, "bootstrap draws (sentences)", bound=count(1, 100_000))
    seed: int = param(0, "seed of the random directions and the bootstrap", bound=SEED)


@dataclass(frozen=True)
class TunedLensParams:
    """Tuned-lens translators for a masked LM (Belrose et al. 2023), trained on held-out text
    and scored against the logit lens (:func:`probing.analyses.tuned_lens.run`). The data
    sets are names the data registry checks when the run reads them (a lexicon is refused
    there with its reason)."""

    train_dataset: str = param("brown", "text to train the translators on")
    train_split: str = param("dev", "its split (default: dev)")
    n_sentences: int = param(900, "training sentences (evenly spread)", bound=count(1, 1_000_000))
    steps: int = param(
        150, "KL fine-tuning steps after the least-squares start", bound=count(0, 1_000_000)
    )
    eval_dataset: str = param("ud-ewt", "text to score the lenses on")
    eval_split: str = param("dev", "its split (default: dev)")
    eval_sentences: int = param(500, "scoring sentences (one mask each)", bound=count(1, 100_000))
    seed: int = param(0, "seed for the masks and the batches", bound=SEED)
