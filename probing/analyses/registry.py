"""The analysis registry: one entry per analysis, read by the CLI, the pages, sweeps and reports.

An :class:`Analysis` names its settings class (:mod:`probing.analyses.params`: fields with
ranges and help), the capabilities it needs of a model (:class:`~probing.encoding.ModelInfo`
fields, set by the encoders), and its run function, ``run(encoders, params, progress) ->
result``, by dotted path so that reading the registry imports nothing heavy. Adding an
analysis is its own module (the run function, its settings class) and one entry in
:data:`ANALYSES`: the command line (:mod:`probing.cli.registered`) builds its command from the
entry (the model options, the settings' options with their ranges, ``--out``), and writes its
result with the entry's ``writer`` or, without one, as JSON.

    from probing.analyses.registry import get
    cka = get("cka")
    result = cka.run([encoder], cka.params(n_words=500))
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from probing import params as param_tools
from probing.analyses.params import (
    AlterRepParams,
    AttentionNormsParams,
    AttentionParsersParams,
    AttentionStatsParams,
    CkaParams,
    ContextualityParams,
    TunedLensParams,
)
from probing.errors import InvalidArgumentError

if TYPE_CHECKING:
    from probing.encoders.base import Encoder
    from probing.encoding import ModelInfo

Progress = Callable[[str, int, int], None]  # (stage, done, total)

# What a capability field means, for the message when a model lacks it.
CAPABILITIES = {
    "has_attention": "attention heads",
    "has_head_hooks": "per-head hook points",
    "has_value_norms": "value vectors for norm-weighted attention",
    "has_layer_hooks": "layers that can be replaced mid-pass",
    "lm_kind": "a language-model head",
}


@dataclass(frozen=True)
class ModelOption:
    """A command-line option naming the model(s) an analysis runs on.

    Attributes:
        name: the option's field (``model_b`` → ``--model-b``).
        default: the model when the option is not given; None: no model from this option.
        help: the option's help.
        repeat: may be given more than once, one model each (the default when never given).
    """

    name: str
    default: str | None = "minilm-l6"
    help: str = "registry name, hub id or folder"
    repeat: bool = False


MODEL = (ModelOption("model"),)  # one --model, minilm-l6 by default


@dataclass(frozen=True)
class Analysis:
    """One analysis.

    Attributes:
        name: its CLI command and its key in pages, sweeps and reports.
        summary: one line (the CLI's help).
        params: its settings class.
        runner: ``"module:function"``; the function takes ``(encoders, params, progress)``.
        n_models: how many encoders it takes (lo, hi).
        needs: :class:`ModelInfo` fields that must be true of every model it runs on.
        models: the command's model options.
        writer: the module that writes the command's files (``files(job)``, ``write(job,
            result)``; :mod:`probing.cli.registered`), by dotted path; None: one JSON file.
        extras: a settings class of the writer's own options (not the analysis's), or None.
        out_default: the command's output folder when ``--out`` is not given; None: required.
    """

    name: str
    summary: str
    params: type
    runner: str
    n_models: tuple[int, int] = (1, 1)
    needs: tuple[str, ...] = ()
    models: tuple[ModelOption, ...] = MODEL
    writer: str | None = None
    extras: type | None = None
    out_default: str | None = None

    def is_compatible(self, info: ModelInfo) -> str | None:
        """None if the analysis can run on the model ``info`` describes, else why not."""
        for need in self.needs:
            if not getattr(info, need):
                reason = info.no_hooks_reason if need.startswith("has_head") else ""
                return reason or (
                    f"{self.name} needs {CAPABILITIES.get(need, need)}; "
                    f"{info.name} ({info.family}) has none."
                )
        return None

    def run(
        self,
        encoders: Sequence[Encoder],
        params: Any | None = None,
        progress: Progress | None = None,
    ) -> Any:
        """Check the settings and the models, then run.

        Raises:
            InvalidArgumentError: settings out of range, the wrong number of models, or a
                model that lacks what the analysis needs (the reason named).
        """
        params = self.params() if params is None else params
        if not isinstance(params, self.params):
            raise InvalidArgumentError(
                f"{self.name} takes {self.params.__name__}, not {type(params).__name__}."
            )
        param_tools.check(params)
        lo, hi = self.n_models
        if not lo <= len(encoders) <= hi:
            count = str(lo) if lo == hi else f"{lo} to {hi}"
            raise InvalidArgumentError(f"{self.name} takes {count} models, not {len(encoders)}.")
        for encoder in encoders:
            reason = self.is_compatible(encoder.info)
            if reason:
                raise InvalidArgumentError(reason)
        module, _, function = self.runner.partition(":")
        run = getattr(importlib.import_module(module), function)
        return run(list(encoders), params, progress or (lambda stage, done, total: None))


ANALYSES: dict[str, Analysis] = {
    a.name: a
    for a in (
        Analysis(
            "cka",
            "linear CKA between every pair of layers of two models (or one) with intervals",
            CkaParams,
            "probing.analyses.cka:run",
            n_models=(1, 2),
            models=(
                ModelOption("model_a"),
                ModelOption("model_b", None, "second model (default: model A itself)"),
            ),
            writer="probing.cli.cka",
        ),
        Analysis(
            "contextuality",
            "Ethayarajh (2019) self-similarity, intra-sentence similarity and MEV per layer",
            ContextualityParams,
            "probing.analyses.contextuality:run",
            n_models=(1, 8),
            models=(
                ModelOption(
                    "model",
                    help="model name or folder (repeat to compare; default minilm-l6)",
                    repeat=True,
                ),
            ),
            writer="probing.cli.contextuality",
            out_default="contextuality",
        ),
        Analysis(
            "attention-stats",
            "attention head statistics (Clark et al. 2019) over a corpus sample",
            AttentionStatsParams,
            "probing.analyses.attention:run_statistics",
            needs=("has_attention",),
            models=(ModelOption("model", help="registry name, hub id or folder (BERT family)"),),
            writer="probing.cli.attention",
            extras=AttentionParsersParams,
        ),
        Analysis(
            "attention-norms",
            "attention to [SEP]/punctuation/[CLS] per layer, raw vs norm-weighted",
            AttentionNormsParams,
            "probing.analyses.attention_norms:run",
            needs=("has_value_norms",),
            writer="probing.cli.attention_norms",
        ),
        Analysis(
            "alterrep",
            "counterfactual subject-number pushes and agreement flips per layer (AlterRep)",
            AlterRepParams,
            "probing.interventions.alterrep:run",
            needs=("has_layer_hooks",),
            models=(ModelOption("model", "minilm-l6-mlm", "a masked LM: name, folder or hub id"),),
            writer="probing.cli.alterrep",
        ),
        Analysis(
            "train-tuned-lens",
            "tuned-lens translators for a masked LM (Belrose et al. 2023), scored vs the logit lens",
            TunedLensParams,
            "probing.analyses.tuned_lens:run",
            models=(
                ModelOption(
                    "model", "minilm-l6-mlm", "a masked LM: registry name, hub id or folder"
                ),
            ),
            writer="probing.cli.tuned_lens",
        ),
    )
}


def get(name: str) -> Analysis:
    """The registered analysis ``name``.

    Raises:
        InvalidArgumentError: naming the registered ones.
    """
    try:
        return ANALYSES[name]
    except KeyError:
        raise InvalidArgumentError(
            f"No analysis {name!r}; registered: {', '.join(ANALYSES)}."
        ) from None
