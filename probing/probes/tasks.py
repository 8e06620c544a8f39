"""The probing tasks: one :class:`Task` entry each, carrying everything the CLI and the app
know about it (data sets and label fields, headline metric, runner, labels and colour,
baselines, whether uploads and the Probe Lens support it). Adding a task is one entry here
plus its runner (:mod:`probing.probes.runners`).

Standard library only: ``python -m probing probe --help`` reads the task names from here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field

from probing.errors import TaskLabelsMissingError, UnknownTaskError


@dataclass(frozen=True)
class Kind:
    """What every task of one kind shares.

    Attributes:
        runner: ``"module:function"`` of its runner, imported when a run starts (runners load
            scikit-learn and torch; the CLI's help must not).
        probe_name: the per-layer probe's name in figures and reports.
        baselines: the baseline rows (``probe`` column, no layer) its runs report.
        splits: the data splits a run reads (WSD needs no dev split).
        word_labels: its label belongs to one word (deprel: the dependent's relation to its
            head), so erasure can remove it from that word's vector (Elazar et al. 2021).
    """

    runner: str
    probe_name: str
    baselines: tuple[str, ...]
    splits: tuple[str, ...] = ("train", "dev", "test")
    word_labels: bool = False


_TAGGING_BASELINES = ("majority", "word_type", "static")
KINDS: dict[str, Kind] = {
    "tagging": Kind(
        "probing.probes.runners.tagging:run", "linear probe", _TAGGING_BASELINES, word_labels=True
    ),
    "edge": Kind(
        "probing.probes.runners.tagging:run", "linear probe", _TAGGING_BASELINES, word_labels=True
    ),
    "wsd": Kind(
        "probing.probes.runners.wsd:run",
        "1-NN to sense centroids",
        (
            "first_sense",
            "semcor_mfs",
            "semcor_mfs_leaky_backoff",
            "semcor_mfs_train_only",
            "static_1nn",
        ),
        splits=("train", "test"),
    ),
    "structural": Kind(
        "probing.probes.runners.structural:run", "structural probe", ("static", "right-branching")
    ),
    "sentence": Kind("probing.probes.runners.sentence:run", "linear probe", ("majority", "static")),
}


@dataclass(frozen=True)
class Task:
    """A probing task.

    Attributes:
        name: CLI/UI name.
        kind: ``tagging`` (a linear probe per layer, control task, baselines, scalar mix),
            ``edge`` (the same on [head vector; dependent vector] of each gold arc),
            ``structural`` (Hewitt & Manning's distance/depth probes),
            ``wsd`` (1-NN to sense centroids per layer, first-sense baseline) or ``sentence``
            (a linear probe per layer on pooled sentence vectors, :mod:`probing.probes.sentence`).
        fields: data set -> the label field the task reads from it.
        default_dataset: used when no data set is given.
        description: one line for pickers and reports.
        headline: the headline metric when not the kind's default.
        label: the Probing page's picker label (task · data set).
        note: what the probe predicts, in the words of its data set (the page's caption).
        short_label, colour: the task's name and line colour on the Layering page; tasks
            with a colour are drawn there, in registry order (syntax first).
        upload_field: the label field read from an uploaded CoNLL-U file (None: uploads
            cannot be probed for this task).
        lens: the Probe Lens applies this task's saved probes.
        variant: what sets the task apart within its kind (structural: ``distance`` or
            ``depth``; edge: ``product`` for Liu et al.'s [h; d; h∘d] input).
        per_expression: one instance per multi-word expression (its first word), as the
            data set labels the expression, not each of its words (SemCor's supersenses
            and senses).
    """

    name: str
    kind: str
    fields: dict[str, str]
    default_dataset: str
    description: str
    headline: str = ""
    label: str = ""
    note: str = ""
    short_label: str = ""
    colour: str = ""
    upload_field: str | None = None
    lens: bool = False
    variant: str = ""
    per_expression: bool = False

    # Derived once from the fields above (plain attributes, not properties: a run reads them
    # at every layer and table row, and reading a record should not call into this module).
    # metric: the headline score (accuracy for tagging, F1 for WSD, else ``headline``);
    # probe_name, baselines, splits: its kind's (:data:`KINDS`); uploadable: an uploaded
    # file can be probed; layering: drawn on the Layering page; erasable: its labels can be
    # erased (``python -m probing erase``): a word's own label, read as it is (a variant
    # such as deprel-hd changes the probe's input, not the labels, so erasing it is deprel's).
    metric: str = field(init=False, repr=False)
    probe_name: str = field(init=False, repr=False)
    baselines: tuple[str, ...] = field(init=False, repr=False)
    splits: tuple[str, ...] = field(init=False, repr=False)
    uploadable: bool = field(init=False, repr=False)
    layering: bool = field(init=False, repr=False)
    erasable: bool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        derived = {
            "metric": self.headline or ("f1" if self.kind == "wsd" else "accuracy"),
            "probe_name": KINDS[self.kind].probe_name,
            "baselines": KINDS[self.kind].baselines,
            "splits": KINDS[self.kind].splits,
            "uploadable": self.upload_field is not None,
            "layering": bool(self.colour),
            "erasable": KINDS[self.kind].word_labels and not self.variant,
        }
        for name, value in derived.items():
            object.__setattr__(self, name, value)  # frozen: set once, here

    def runner(self) -> Callable:
        """The function that runs this task on extracted features (imported now)."""
        module, _, function = KINDS[self.kind].runner.partition(":")
        return getattr(importlib.import_module(module), function)

    def field_for(self, dataset: str) -> str:
        """The label field read from ``dataset``.

        Raises:
            TaskLabelsMissingError (a ValueError): the data set does not carry the labels.
        """
        try:
            return self.fields[dataset]
        except KeyError:
            raise TaskLabelsMissingError(
                f"Task {self.name!r} runs on {', '.join(self.fields)}, not {dataset!r}."
            ) from None


TASKS: dict[str, Task] = {
    t.name: t
    for t in (
        Task(
            "pos",
            "tagging",
            {"ud-ewt": "upos", "brown": "pos"},
            "ud-ewt",
            "part of speech: UD universal tags (17) on UD-EWT; Brown tags on Brown",
            label="UPOS · UD-EWT",
            short_label="POS (UPOS)",
            colour="#4C78A8",
            note="The 17 universal part-of-speech tags of UD-EWT (syntax).",
            upload_field="upos",
            lens=True,
        ),
        Task(
            "xpos",
            "tagging",
            {"ud-ewt": "xpos"},
            "ud-ewt",
            "Penn Treebank tags (XPOS) on UD-EWT",
            label="XPOS (PTB tags) · UD-EWT",
            note="The Penn Treebank tags (XPOS) of UD-EWT: finer syntax (tense, number, …).",
            upload_field="xpos",
            lens=True,
        ),
        Task(
            "ptb-pos",
            "tagging",
            {"semcor": "pos", "ud-ewt": "xpos"},
            "semcor",
            "Penn Treebank tags on SemCor (coarse: SemCor writes NN/VB for most forms)",
            label="PTB POS · SemCor",
            note="Penn Treebank tags on SemCor (coarse there: SemCor writes NN/VB for most forms).",
        ),
        Task(
            "deprel",
            "edge",
            {"ud-ewt": "deprel"},
            "ud-ewt",
            "dependency relation (UD, subtypes merged) of each gold arc, from [head; dependent]",
            label="Dependency relation (edge probe) · UD-EWT",
            short_label="dependency relation",
            colour="#72B7B2",
            note="The UD relation (subtypes merged) of each gold arc, predicted from [head "
            "vector; dependent vector] (Tenney et al. 2019's edge probing).",
            upload_field="deprel",
            lens=True,
        ),
        Task(
            "deprel-hd",
            "edge",
            {"ud-ewt": "deprel"},
            "ud-ewt",
            "dependency relation from [head; dependent; head ∘ dependent] (Liu et al. 2019)",
            label="Dependency relation, [h; d; h∘d] (Liu et al.) · UD-EWT",
            note="The same relations from [head; dependent; head ∘ dependent] (Liu et al. "
            "2019): the elementwise product lets a linear probe see how the two words' "
            "vectors interact.",
            variant="product",
        ),
        Task(
            "dep-distance",
            "structural",
            {"ud-ewt": "head"},
            "ud-ewt",
            "structural distance probe (Hewitt & Manning 2019): UUAS of the tree it implies",
            "uuas",
            label="Tree distance (structural probe, UUAS) · UD-EWT",
            short_label="tree distance (UUAS)",
            colour="#54A24B",
            note="Hewitt & Manning's (2019) distance probe: a rank-128 linear map whose "
            "squared distances match tree distances; UUAS of its minimum spanning tree "
            "(punctuation left out).",
            upload_field="head",
            lens=True,
            variant="distance",
        ),
        Task(
            "dep-depth",
            "structural",
            {"ud-ewt": "head"},
            "ud-ewt",
            "structural depth probe (Hewitt & Manning 2019): root accuracy, depth Spearman",
            "root_accuracy",
            label="Tree depth (structural probe, root accuracy) · UD-EWT",
            note="Hewitt & Manning's (2019) depth probe: squared norms match tree depths; "
            "root accuracy and Spearman.",
            upload_field="head",
            lens=True,
            variant="depth",
        ),
        Task(
            "supersense",
            "tagging",
            {"semcor": "supersense"},
            "semcor",
            "WordNet supersense (lexicographer file, 45 classes) of sense-tagged words",
            label="Supersense · SemCor",
            short_label="supersense",
            colour="#F58518",
            note="The WordNet supersense (45 lexicographer files, e.g. noun.animal) of "
            "sense-tagged SemCor words: coarse semantics.",
            lens=True,
            per_expression=True,
        ),
        Task(
            "wsd",
            "wsd",
            {"semcor": "sense"},
            "semcor",
            "word sense (WordNet 3.0 sense key) by 1-NN to SemCor training sense centroids",
            label="Word sense (WSD) · SemCor",
            short_label="word sense (WSD F1)",
            colour="#E45756",
            note="The WordNet 3.0 sense of each SemCor word, by 1-nearest-neighbour to "
            "training sense centroids; scored by F1, with WordNet's first sense as the "
            "baseline (fine semantics).",
            lens=True,
            per_expression=True,
        ),
        Task(
            "genre",
            "sentence",
            {"brown": "genre"},
            "brown",
            "Brown genre (15 categories, per document) of pooled sentence vectors",
            label="Genre · Brown",
        ),
    )
}


def get_task(name: str) -> Task:
    """The registry entry of ``name``.

    Raises:
        UnknownTaskError (a ValueError): naming the choices.
    """
    try:
        return TASKS[name]
    except KeyError:
        raise UnknownTaskError(
            f"Unknown task {name!r}; choose one of: {', '.join(TASKS)}."
        ) from None


def task_names(**having: object) -> list[str]:
    """Task names in registry order whose attributes equal ``having`` (``kind="wsd"``,
    ``lens=True``, ``layering=True``, ``uploadable=True``, ``erasable=True``)."""
    return [n for n, t in TASKS.items() if all(getattr(t, k) == v for k, v in having.items())]
