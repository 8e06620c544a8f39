"""The sentence-task run (Brown genre): :func:`probing.probes.sentence.probe_sentences` with
a run's settings. Unlike the word-level runners it takes the encoder, not extracted
features: it pools each sentence per strategy itself (and caches the pooled vectors).
"""

from __future__ import annotations

from probing.encoders.base import Encoder
from probing.errors import InvalidArgumentError
from probing.probes import sentence as sentence_probe  # looked up per call
from probing.probes.linear import DEFAULT_CS
from probing.probes.results import ProbeResults
from probing.probes.runners.base import ProbeProgress
from probing.probes.sentence_pooling import STRATEGIES
from probing.probes.settings import ProbeSettings
from probing.probes.tasks import Task

SPLITS = ("train", "dev", "test")


def strategies(settings: ProbeSettings) -> list[str]:
    """The ``sentence_pooling`` strategies asked for, or every known one."""
    given = [s.strip() for s in (settings.sentence_pooling or "").split(",") if s.strip()]
    return given or list(STRATEGIES)


def per_doc_caps(text: str | None) -> dict[str, int | None] | None:
    """``"20,20,50"`` -> sentences per document for train, dev, test (``all``/0: no cap).

    Raises:
        InvalidArgumentError: not three values.
    """
    if not text:
        return None
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != len(SPLITS):
        raise InvalidArgumentError("per_doc takes three numbers: train,dev,test")
    values = [None if p.lower() in {"all", "0"} else int(p) for p in parts]
    return dict(zip(SPLITS, values, strict=True))


def run(
    task: Task,
    encoder: Encoder,
    settings: ProbeSettings,
    *,
    progress: ProbeProgress | None = None,
) -> dict[str, ProbeResults]:
    """{strategy: ProbeResults} of every layer × pooling strategy (the model's own when
    ``settings.sentence_pooling`` is unset)."""
    return sentence_probe.probe_sentences(
        encoder,
        task.name,
        settings.dataset_name,
        strategies(settings) if settings.sentence_pooling else None,
        per_doc=per_doc_caps(settings.per_doc),
        seed=settings.seed,
        Cs=settings.cs or DEFAULT_CS,
        n_boot=settings.n_boot,
        progress=progress,
    )
