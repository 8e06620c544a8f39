"""Paradigms of minimal pairs: Marvin & Linzen-style templates and rule-built UD-EWT pairs.

Each UD-EWT pair is a real sentence (good) with one word changed (bad), from the **dev and
test** splits only: both embedded models were trained on UD-EWT train, so its sentences
would be scored on text the model has seen. A sentence may give several pairs; its
``sent_id`` is their bootstrap group. Rules (one changed word each; its capitalisation kept):

- ``ud: subject-verb, no attractor`` / ``ud: subject-verb, attractor``: the agreement cases
  of :func:`probing.interventions.agreement.ud_cases` (present-tense verb, 3rd-person
  subject with a Number feature) with the verb swapped for its other-number form; split by
  whether a noun of the other number stands between subject and verb (Linzen et al. 2016).
- ``ud: determiner-noun number``: a ``det`` this/that/these/those whose head noun has the
  same Number, swapped this↔these, that↔those ("these book").
- ``ud: reflexive number``: himself/herself/itself ↔ themselves as an object/oblique whose
  clause subject is 3rd person with the reflexive's number (a relative pronoun subject:
  the noun its clause modifies). UD-EWT dev/test hold only a few such reflexives (the
  paradigm is warned as small); the templated reflexive paradigm has 96 pairs.
- ``ud: past vs participle``: an irregular simple past with no auxiliary replaced by its
  past participle ("she went" → "she gone"); ``ud: participle vs past``: an irregular
  participle after perfect *have* replaced by its simple past ("has gone" → "has went").
  The treebank cannot give *goed* (no such form occurs); the past/participle contrast is
  BLiMP's irregular-forms phenomenon built from forms the treebank licenses: a lemma is
  irregular when its most frequent VBD and VBN forms in UD-EWT (all splits; only forms, no
  sentences) differ, each seen at least twice.

Templates: the agreement templates the project already has
(:func:`probing.interventions.agreement.templated_cases`, every ``every``-th item) as pairs,
and Marvin & Linzen's simple reflexive ("the senator hurt himself / themselves").
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from probing.errors import InvalidArgumentError
from probing.minimal_pairs.pairs import MinimalPair

if TYPE_CHECKING:
    from conllu import Token, TokenList

SPLITS = ("dev", "test")
MAX_WORDS = 30  # longer UD sentences are left out: PLL costs one row per piece
DET_SWAP = {"this": "these", "these": "this", "that": "those", "those": "that"}
DET_NUMBER = {"this": "Sing", "that": "Sing", "these": "Plur", "those": "Plur"}
REFLEXIVES = {"himself": "Sing", "herself": "Sing", "itself": "Sing", "themselves": "Plur"}
REFL_SWAP = {"himself": "themselves", "herself": "themselves", "itself": "themselves"}
REFL_VERBS = ("hurt", "blamed", "praised", "embarrassed")


def _case_like(new: str, old: str) -> str:
    """``new`` with ``old``'s capitalisation (first letter / all caps)."""
    if old.isupper() and len(old) > 1:
        return new.upper()
    return new[:1].upper() + new[1:] if old[:1].isupper() else new


def _swap(words: Sequence[str], at: int, new: str) -> tuple[str, ...]:
    out = list(words)
    out[at] = _case_like(new, words[at])
    return tuple(out)


# -- templates --------------------------------------------------------------------------------


def template_agreement(every: int = 6) -> list[MinimalPair]:
    """The project's Marvin & Linzen agreement templates as pairs (good: the correct verb)."""
    from probing.interventions.agreement import templated_cases

    return [
        MinimalPair(
            c.words, _swap(c.words, c.verb, c.wrong), f"template: {c.source}", c.group,
            "subject-verb agreement",
        )
        for c in templated_cases(every=every)
    ]  # fmt: skip


def template_reflexive() -> list[MinimalPair]:
    """Marvin & Linzen's simple reflexive: "the {noun} {verb} himself/themselves"."""
    from probing.interventions.agreement import NOUNS

    pairs = []
    for k, (sg, pl) in enumerate(NOUNS):
        for verb in REFL_VERBS:
            for noun, good, bad in ((sg, "himself", "themselves"), (pl, "themselves", "himself")):
                pairs.append(
                    MinimalPair(
                        ("the", noun, verb, good),
                        ("the", noun, verb, bad),
                        "template: reflexive",
                        f"reflexive:{k}:{verb}",
                        "anaphor agreement",
                    )
                )
    return pairs


# -- UD-EWT rules -----------------------------------------------------------------------------


@functools.lru_cache(maxsize=3)
def _parse(split: str) -> list:
    from probing.interventions.agreement import _parse as parse

    return parse(split)


def _tokens(sent: TokenList) -> list[Token]:
    return [t for t in sent if isinstance(t["id"], int)]


def _feats(t: Token) -> dict:
    return t["feats"] or {}


def ud_agreement(splits: Sequence[str] = SPLITS) -> list[MinimalPair]:
    """Subject-verb pairs from UD-EWT (see the module doc)."""
    from probing.interventions.agreement import ud_cases

    return [
        MinimalPair(
            c.words,
            _swap(c.words, c.verb, c.wrong),
            "ud: subject-verb, attractor" if c.attractors else "ud: subject-verb, no attractor",
            c.group,
            "subject-verb agreement",
        )
        for c in ud_cases(splits)
    ]


def determiner_pairs(sentences: Iterable) -> list[MinimalPair]:
    """this/that/these/those ↔ the other number, where the head noun agrees."""
    pairs = []
    for sent in sentences:
        toks = _tokens(sent)
        words = tuple(t["form"] for t in toks)
        by_id = {t["id"]: t for t in toks}
        for i, t in enumerate(toks):
            form = t["form"].lower()
            head = by_id.get(t["head"])
            if form not in DET_SWAP or t["deprel"] != "det" or head is None:
                continue
            if head["upos"] != "NOUN" or _feats(head).get("Number") != DET_NUMBER[form]:
                continue
            pairs.append(
                MinimalPair(
                    words, _swap(words, i, DET_SWAP[form]), "ud: determiner-noun number",
                    sent.metadata.get("sent_id", ""), "determiner-noun agreement",
                )
            )  # fmt: skip
    return pairs


def reflexive_pairs(sentences: Iterable) -> list[MinimalPair]:
    """himself/herself/itself ↔ themselves where the clause subject has the same number."""
    pairs = []
    for sent in sentences:
        toks = _tokens(sent)
        words = tuple(t["form"] for t in toks)
        by_id = {t["id"]: t for t in toks}
        for i, t in enumerate(toks):
            form = t["form"].lower()
            if form not in REFLEXIVES or t["deprel"].split(":")[0] not in ("obj", "iobj", "obl"):
                continue
            subj = [c for c in toks if c["head"] == t["head"] and c["deprel"] == "nsubj"]
            if len(subj) != 1:
                continue
            sf = _feats(subj[0])
            if sf.get("PronType") == "Rel" and t["head"] in by_id:  # "… that hurt themselves"
                noun = by_id.get(by_id[t["head"]]["head"])  # what the relative clause modifies
                sf = _feats(noun) if noun is not None else {}
            if sf.get("Number") != REFLEXIVES[form] or sf.get("Person", "3") != "3":
                continue
            other = REFL_SWAP.get(form, "himself")
            pairs.append(
                MinimalPair(
                    words, _swap(words, i, other), "ud: reflexive number",
                    sent.metadata.get("sent_id", ""), "anaphor agreement",
                )
            )  # fmt: skip
    return pairs


def irregular_table(splits: Sequence[str] = ("train", "dev", "test")) -> dict[str, tuple[str, str]]:
    """lemma -> (simple past, past participle) where UD-EWT's most frequent VBD and VBN
    forms differ (each seen twice or more): the irregular verbs the treebank licenses."""
    forms: dict[tuple[str, str], Counter] = {}
    for split in splits:
        for sent in _parse(split):
            for t in _tokens(sent):
                if t["xpos"] in ("VBD", "VBN") and t["lemma"]:
                    key = (t["lemma"].lower(), t["xpos"])
                    forms.setdefault(key, Counter())[t["form"].lower()] += 1
    table = {}
    for (lemma, tag), vbd in forms.items():
        vbn = forms.get((lemma, "VBN"))
        if tag != "VBD" or vbn is None:
            continue
        (past, n_past), (part, n_part) = vbd.most_common(1)[0], vbn.most_common(1)[0]
        if (
            lemma != "be"
            and past != part
            and n_past >= 2
            and n_part >= 2
            and past.isalpha()
            and part.isalpha()
        ):
            table[lemma] = (past, part)
    return table


def past_form_pairs(sentences: Iterable, table: dict[str, tuple[str, str]]) -> list[MinimalPair]:
    """Simple past → participle (no auxiliary) and participle → simple past (after perfect
    *have*), for the irregular lemmas of ``table``."""
    pairs = []
    for sent in sentences:
        toks = _tokens(sent)
        words = tuple(t["form"] for t in toks)
        group = sent.metadata.get("sent_id", "")
        for i, t in enumerate(toks):
            lemma = (t["lemma"] or "").lower()
            if lemma not in table:
                continue
            past, part = table[lemma]
            auxes = [c for c in toks if c["head"] == t["id"] and c["deprel"].startswith("aux")]
            form = t["form"].lower()
            # "she come" could be a present tense (come, run): not a past/participle contrast.
            if t["xpos"] == "VBD" and form == past and not auxes and part != lemma:
                name, bad = "ud: past vs participle", part
            elif (
                t["xpos"] == "VBN"
                and form == part
                and any((a["lemma"] or "").lower() == "have" for a in auxes)
            ):
                name, bad = "ud: participle vs past", past
            else:
                continue
            pairs.append(
                MinimalPair(words, _swap(words, i, bad), name, group, "irregular verb forms")
            )
    return pairs


def _spread(pairs: list[MinimalPair], max_pairs: int | None) -> list[MinimalPair]:
    """At most ``max_pairs`` of each paradigm, spread evenly (data-set order, no draw)."""
    if max_pairs is None:
        return pairs
    out = []
    from probing.minimal_pairs.pairs import by_paradigm

    for items in by_paradigm(pairs).values():
        if len(items) > max_pairs:
            idx = np.unique(np.linspace(0, len(items) - 1, max_pairs).round().astype(int))
            items = [items[i] for i in idx]
        out.extend(items)
    return out


def ud_pairs(splits: Sequence[str] = SPLITS) -> list[MinimalPair]:
    """Every rule's UD-EWT pairs (sentences up to :data:`MAX_WORDS` words)."""
    sents = [s for split in splits for s in _parse(split) if len(_tokens(s)) <= MAX_WORDS]
    pairs = ud_agreement(splits)
    pairs = [p for p in pairs if len(p.good) <= MAX_WORDS]
    pairs += determiner_pairs(sents) + reflexive_pairs(sents)
    pairs += past_form_pairs(sents, irregular_table())
    return pairs


BUILDERS: dict[str, Callable[[], list[MinimalPair]]] = {
    "templates": lambda: template_agreement() + template_reflexive(),
    "ud-ewt": ud_pairs,
}


def build(
    sources: Sequence[str] = ("templates", "ud-ewt"), max_pairs: int | None = 200
) -> list[MinimalPair]:
    """The pairs of ``sources`` (``templates``, ``ud-ewt``), at most ``max_pairs`` per
    paradigm (spread evenly).

    Raises:
        InvalidArgumentError: an unknown source.
    """
    bad = [s for s in sources if s not in BUILDERS]
    if bad:
        raise InvalidArgumentError(
            f"Unknown paradigm source {', '.join(bad)}; one of {', '.join(BUILDERS)}."
        )
    return _spread([p for s in sources for p in BUILDERS[s]()], max_pairs)
