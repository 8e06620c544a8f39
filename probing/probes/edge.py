"""Edge probing (Tenney et al. 2019) of dependency relations: one instance per gold arc.

For every word with a head (the root's arc has no head word and is left out), the instance
is ``[head vector; dependent vector]`` (2 × dim) — or, for the ``deprel-hd`` task, Liu et
al. 2019's ``[head; dependent; head ∘ dependent]`` (3 × dim, the elementwise product lets
a linear probe see how the two vectors interact) — and its label the UD relation with subtypes
merged (``nmod:poss`` → ``nmod``), so EWT's arcs fall into 35 of UD's 37 relations. The
instances behave like :class:`~probing.features.Features` (``layer``, ``static``,
``layers``, ``select``, ``subsample``), so the tagging sweep of :mod:`probing.probes.run`
runs on them unchanged: linear probe per layer, control task, baselines, scalar mix.

The *word* of an instance, used by the control task (Hewitt & Liang 2019) and the
word-type baseline, is the dependent's form: a control label is a function of the
dependent's word type, as a POS control label is of the word's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from probing.features import Features


def base_relation(deprel: str) -> str:
    """``nmod:poss`` → ``nmod``: the universal relation without its language subtype."""
    return deprel.split(":", 1)[0]


def arc_rows(feats: Features) -> tuple[np.ndarray, np.ndarray]:
    """Feature rows of each gold arc's dependent and head, (n_arcs,) each.

    Needs every word of each sentence in ``feats`` (in word order), with a ``head`` field.
    """
    if "head" not in feats.fields:
        raise KeyError(f"{feats.dataset} has no 'head' field: edge probes need a treebank")
    sidx = np.asarray(feats.sentence_index)
    heads = np.array([int(h) for h in feats.fields["head"]], dtype=np.int64)
    n = len(sidx)
    # Rows of a sentence are contiguous and in word order: the first row of each sentence.
    new = np.r_[True, sidx[1:] != sidx[:-1]] if n else np.zeros(0, bool)
    start = np.maximum.accumulate(np.where(new, np.arange(n), 0))
    dep = np.flatnonzero(heads > 0)
    head = start[dep] + heads[dep] - 1
    if len(head) and (head.max() >= n or np.any(sidx[head] != sidx[dep])):
        raise ValueError("an arc's head is not in its sentence's rows: features incomplete")
    return dep, head


@dataclass
class ArcFeatures:
    """Gold arcs as probe instances, a view over two row selections of one Features.

    Attributes:
        heads, deps: Features views, row i = the head / dependent word of arc i.
        labels: (n_arcs,) relation (subtypes merged). words: (n_arcs,) dependent forms.
        sentence_index, sent_ids, layer_ids, fields: as in Features (fields per arc:
            the dependent's fields plus ``head_word``).
    """

    heads: object
    deps: object
    labels: np.ndarray
    words: np.ndarray
    sentence_index: np.ndarray
    sent_ids: list[str]
    layer_ids: tuple[int, ...]
    fields: dict[str, np.ndarray]
    product: bool = False  # append head ∘ dependent (Liu et al. 2019)

    @property
    def n_words(self) -> int:
        return int(len(self.labels))

    @property
    def n_words_total(self) -> int:
        return int(self.deps.n_words_total)

    @property
    def dim(self) -> int:
        return (3 if self.product else 2) * int(self.deps.dim)

    @property
    def n_sentences(self) -> int:
        return len(np.unique(self.sentence_index))

    def layer(self, layer_id: int) -> np.ndarray:
        """float32 (n_arcs, 2·dim): [head; dependent] on one layer (3·dim with the product)."""
        return self._join(self.heads.layer(layer_id), self.deps.layer(layer_id), axis=1)

    @property
    def static(self) -> np.ndarray:
        return self._join(self.heads.static, self.deps.static, axis=1)

    @property
    def layers(self) -> np.ndarray:
        """float16 (n_layers, n_arcs, 2·dim), 3·dim with the product."""
        return self._join(self.heads.layers, self.deps.layers, axis=2)

    def _join(self, h: np.ndarray, d: np.ndarray, axis: int) -> np.ndarray:
        parts = [h, d, h * d] if self.product else [h, d]
        return np.concatenate(parts, axis=axis)

    def select(self, rows: np.ndarray) -> ArcFeatures:
        rows = np.asarray(rows)
        idx = np.flatnonzero(rows) if rows.dtype == bool else rows.astype(np.int64)
        return replace(
            self,
            heads=self.heads.select(idx),
            deps=self.deps.select(idx),
            labels=self.labels[idx],
            words=self.words[idx],
            sentence_index=self.sentence_index[idx],
            fields={k: v[idx] for k, v in self.fields.items()},
        )

    def subsample(self, max_words: int | None, seed: int = 0) -> ArcFeatures:
        """At most ``max_words`` arcs, uniformly without replacement (seeded), in order."""
        if max_words is None or self.n_words <= max_words:
            return self
        rng = np.random.default_rng(seed)
        return self.select(np.sort(rng.choice(self.n_words, size=max_words, replace=False)))


def arc_features(feats: Features, product: bool = False) -> ArcFeatures:
    """Every gold arc of ``feats`` (Features with ``head`` and ``deprel``; see the module
    doc) as an :class:`ArcFeatures`; ``product`` adds head ∘ dependent (Liu et al. 2019)."""
    if "deprel" not in feats.fields:
        raise KeyError(f"{feats.dataset} has no 'deprel' field: edge probes need a treebank")
    dep, head = arc_rows(feats)
    labels = np.array([base_relation(d) for d in feats.fields["deprel"][dep]], dtype=object)
    fields = {k: v[dep] for k, v in feats.fields.items()}
    fields["head_word"] = feats.words[head]
    return ArcFeatures(
        heads=feats.select(head),
        deps=feats.select(dep),
        labels=labels.astype(str),
        words=feats.words[dep],
        sentence_index=feats.sentence_index[dep],
        sent_ids=feats.sent_ids,
        layer_ids=tuple(feats.layer_ids),
        fields=fields,
        product=product,
    )
