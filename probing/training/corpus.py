"""The offline language-model training text, and the held-out text to measure it on.

What goes in (``training_sentences``), in this fixed order:

1. **Brown corpus**, words only (tags dropped), file by file (``ca01``..``cr09``), *without*
   the files whose split is ``dev`` or ``test`` (``probing.datasets.brown.brown_split``).
   A Brown file's split is the split of the SemCor document made from it under the fixed
   SemCor rule (``probing.datasets.splits``), so this leaves out the Brown file of every
   SemCor dev/test document (brown1 + brown2) -- and, by the same rule, the dev/test files
   of the Brown POS task that are not in SemCor.
2. **UD English EWT train** sentences (syntactic words).
3. **WordNet 3.0 glosses**: every synset's definition and each usage example, one sentence
   each, tokenised with ``probing.encoders.base.split_words``, in ``data.noun``,
   ``data.verb``, ``data.adj``, ``data.adv`` file order.

What is held out, and why: the SemCor and Brown dev/test documents and the EWT dev and test
files are what probes are tuned and scored on. A language model that had read those
sentences could have memorised them, and probe scores on them would then overstate what it
learnt about language in general. EWT **dev** is returned by ``heldout_sentences`` for
measuring LM perplexity; EWT **test** is never touched here. WordNet glosses are in because
they are a lexicon's text, not probing data (probes label corpus sentences, never glosses);
they give the LM the definitional language that sense probes rely on.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from probing.datasets.brown import brown_words
from probing.datasets.ud import read_ud
from probing.datasets.wordnet import wordnet_glosses
from probing.encoders.base import split_words

TRAIN_SOURCES = ("brown", "ud-ewt-train", "wordnet-glosses")


def _brown(data_dir: Path | None) -> Iterator[list[str]]:
    return brown_words(split="train", data_dir=data_dir)


def _ewt_train(data_dir: Path | None) -> Iterator[list[str]]:
    for sent in read_ud("train", data_dir):
        yield sent.words


def _glosses(data_dir: Path | None) -> Iterator[list[str]]:
    for _synset, _kind, text in wordnet_glosses(data_dir):
        words = split_words(text)
        if words:
            yield words


_READERS = {"brown": _brown, "ud-ewt-train": _ewt_train, "wordnet-glosses": _glosses}


def training_sentences(data_dir: Path | None = None) -> Iterator[list[str]]:
    """All LM training sentences as word lists, in a fixed order (see module docstring)."""
    for source in TRAIN_SOURCES:
        yield from _READERS[source](data_dir)


def heldout_sentences(data_dir: Path | None = None) -> Iterator[list[str]]:
    """UD-EWT dev sentences (syntactic words), for held-out LM evaluation."""
    for sent in read_ud("dev", data_dir):
        yield sent.words


def corpus_stats(data_dir: Path | None = None) -> dict[str, dict[str, int]]:
    """Sentences and tokens per source, plus ``total`` and ``heldout`` (EWT dev)."""
    stats: dict[str, dict[str, int]] = {}
    for source in TRAIN_SOURCES:
        n = tokens = 0
        for words in _READERS[source](data_dir):
            n += 1
            tokens += len(words)
        stats[source] = {"sentences": n, "tokens": tokens}
    stats["total"] = {
        key: sum(stats[s][key] for s in TRAIN_SOURCES) for key in ("sentences", "tokens")
    }
    held = [len(w) for w in heldout_sentences(data_dir)]
    stats["heldout"] = {"sentences": len(held), "tokens": sum(held)}
    return stats
