"""The probing tasks: which data set and label field each one reads, and how it is scored."""

from __future__ import annotations

from dataclasses import dataclass


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
    """

    name: str
    kind: str
    fields: dict[str, str]
    default_dataset: str
    description: str
    headline: str = ""  # the headline metric when not the kind's default

    @property
    def metric(self) -> str:
        """The headline score: accuracy for tagging, F1 for WSD, else ``headline``."""
        return self.headline or ("f1" if self.kind == "wsd" else "accuracy")

    def field_for(self, dataset: str) -> str:
        try:
            return self.fields[dataset]
        except KeyError:
            raise ValueError(
                f"Task {self.name!r} runs on {', '.join(self.fields)}, not {dataset!r}."
            ) from None


TASKS: dict[str, Task] = {
    t.name: t
    for t in (
        Task("pos", "tagging", {"ud-ewt": "upos", "brown": "pos"}, "ud-ewt",
             "part of speech: UD universal tags (17) on UD-EWT; Brown tags on Brown"),
        Task("xpos", "tagging", {"ud-ewt": "xpos"}, "ud-ewt",
             "Penn Treebank tags (XPOS) on UD-EWT"),
        Task("ptb-pos", "tagging", {"semcor": "pos", "ud-ewt": "xpos"}, "semcor",
             "Penn Treebank tags on SemCor (coarse: SemCor writes NN/VB for most forms)"),
        Task("deprel", "edge", {"ud-ewt": "deprel"}, "ud-ewt",
             "dependency relation (UD, subtypes merged) of each gold arc, from [head; dependent]"),
        Task("deprel-hd", "edge", {"ud-ewt": "deprel"}, "ud-ewt",
             "dependency relation from [head; dependent; head ∘ dependent] (Liu et al. 2019)"),
        Task("dep-distance", "structural", {"ud-ewt": "head"}, "ud-ewt",
             "structural distance probe (Hewitt & Manning 2019): UUAS of the tree it implies",
             "uuas"),
        Task("dep-depth", "structural", {"ud-ewt": "head"}, "ud-ewt",
             "structural depth probe (Hewitt & Manning 2019): root accuracy, depth Spearman",
             "root_accuracy"),
        Task("supersense", "tagging", {"semcor": "supersense"}, "semcor",
             "WordNet supersense (lexicographer file, 45 classes) of sense-tagged words"),
        Task("wsd", "wsd", {"semcor": "sense"}, "semcor",
             "word sense (WordNet 3.0 sense key) by 1-NN to SemCor training sense centroids"),
        Task("genre", "sentence", {"brown": "genre"}, "brown",
             "Brown genre (15 categories, per document) of pooled sentence vectors"),
    )
}  # fmt: skip


def get_task(name: str) -> Task:
    try:
        return TASKS[name]
    except KeyError:
        raise ValueError(f"Unknown task {name!r}; choose one of: {', '.join(TASKS)}.") from None
