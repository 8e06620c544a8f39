"""Subject-verb agreement (Linzen et al. 2016; Goldberg 2019; Marvin & Linzen 2018).

Cases come from two sources: real UD-EWT sentences (a present-tense finite verb, VBZ or VBP,
whose subject is a 3rd-person word with a ``Number`` feature) and templated minimal pairs
generated here. The verb is masked and the model is right when its score for the correct
form beats the other form's (Goldberg's ``bert-syntax`` metric: both forms must be single
vocabulary pieces; cases where one is not are left out, not counted wrong). Attractors are
nouns of the other number between subject and verb (Linzen et al.); distance is in words.

Where this differs: Linzen et al.'s LSTM reads only the left context; a masked LM sees both
sides (as in Goldberg). The inflection pairs come from UD-EWT itself (the most frequent VBZ
and VBP form of each lemma) plus the irregular present forms of be/have/do.

An encoder whose LM is next-word LMs (``info.lm_directions``: ELMo) is scored in Linzen et
al.'s setting: the sentence up to the verb, read by the forward LM only; right when
``log P(correct form) > log P(wrong form)`` at the verb. Both forms must be in the LM
vocabulary (the word-level analogue of Goldberg's single-piece rule).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from probing.interventions.hooks import mlm_logits, require_mlm

if TYPE_CHECKING:
    import contextlib

    from probing.encoders.base import Encoder
    from probing.encoders.bert import TransformersMaskedLM

IRREGULAR = {"be": ("is", "are"), "have": ("has", "have"), "do": ("does", "do")}
_SUBJ = ("nsubj", "nsubj:pass")
_LINKED = ("cop", "aux", "aux:pass")  # the subject hangs on the head, not on the auxiliary


@dataclass(frozen=True)
class AgreementCase:
    """One case: ``words`` with the verb at ``verb``; ``subject`` index; ``number`` of the
    subject (``Sing``/``Plur``); the verb's ``correct`` and ``wrong`` form; ``attractors``;
    ``distance`` (verb - subject, words); ``source`` (``ud-ewt`` or a template name);
    ``group`` (the sentence/pair it comes from, the bootstrap unit)."""

    words: tuple[str, ...]
    verb: int
    subject: int
    number: str
    correct: str
    wrong: str
    attractors: int
    distance: int
    source: str
    group: str


# -- UD-EWT -----------------------------------------------------------------------------------


def _parse(split: str) -> list:
    import conllu

    from probing.datasets.ud import ud_file

    with open(ud_file(split), encoding="utf-8") as fh:
        return list(conllu.parse_incr(fh))


def inflection_table(splits: Sequence[str] = ("train",)) -> dict[str, tuple[str, str]]:
    """lemma -> (VBZ form, VBP form): each lemma's most frequent forms in UD-EWT, lower-cased,
    with be/have/do's irregular forms."""
    return inflection_table_of(sent for split in splits for sent in _parse(split))


def inflection_table_of(sentences: Iterable) -> dict[str, tuple[str, str]]:
    """:func:`inflection_table` of parsed CoNLL-U sentences (``conllu.TokenList``s)."""
    forms: dict[tuple[str, str], Counter] = {}
    for sent in sentences:
        for t in sent:
            if isinstance(t["id"], int) and t["xpos"] in ("VBZ", "VBP") and t["lemma"]:
                key = (t["lemma"].lower(), t["xpos"])
                forms.setdefault(key, Counter())[t["form"].lower()] += 1
    table = {
        lemma: (forms[(lemma, "VBZ")].most_common(1)[0][0], vbp.most_common(1)[0][0])
        for (lemma, tag), vbp in forms.items()
        if tag == "VBP" and (lemma, "VBZ") in forms
    }
    table.update(IRREGULAR)
    return table


def ud_cases(
    splits: Sequence[str] = ("dev", "test"), table: dict[str, tuple[str, str]] | None = None
) -> list[AgreementCase]:
    """Agreement cases from UD-EWT: present-tense VBZ/VBP verbs with a 3rd-person subject
    that has a Number feature."""
    table = table if table is not None else inflection_table()
    return [c for split in splits for c in cases_from_conllu(_parse(split), table)]


def ud_case_sets(*groups: Sequence[str]) -> list[list[AgreementCase]]:
    """:func:`ud_cases` of each group of splits (e.g. ``("train",), ("dev", "test")``), with
    every file parsed once: the inflection table comes from the same parse of train that
    the train cases do (parsing is a good part of a short run), and a parse is let go once
    no later group needs it."""
    uses = Counter(["train", *(split for group in groups for split in group)])
    parsed: dict[str, list] = {}

    def sentences(split: str) -> list:
        if split not in parsed:
            parsed[split] = _parse(split)
        uses[split] -= 1
        return parsed[split] if uses[split] else parsed.pop(split)

    table = inflection_table_of(sentences("train"))
    return [
        [c for split in group for c in cases_from_conllu(sentences(split), table)]
        for group in groups
    ]


def cases_from_conllu(
    sentences: Sequence, table: dict[str, tuple[str, str]]
) -> list[AgreementCase]:
    """The agreement cases of parsed CoNLL-U sentences (``conllu.TokenList``s)."""
    cases = []
    for sent in sentences:
        toks = [t for t in sent if isinstance(t["id"], int)]
        words = tuple(t["form"] for t in toks)
        by_id = {t["id"]: t for t in toks}
        for t in toks:
            if t["xpos"] not in ("VBZ", "VBP") or (t["lemma"] or "").lower() not in table:
                continue
            feats = t["feats"] or {}
            if feats.get("Mood", "Ind") != "Ind" or feats.get("Tense") != "Pres":
                continue
            head = t["head"] if t["deprel"] in _LINKED else t["id"]
            subj = [c for c in toks if c["head"] == head and c["deprel"] in _SUBJ]
            if len(subj) != 1:
                continue
            s = subj[0]
            sf = s["feats"] or {}
            number = sf.get("Number")
            if number not in ("Sing", "Plur") or sf.get("Person", "3") != "3":
                continue
            if s["id"] > t["id"]:  # questions/inversions: the subject follows
                continue
            sg, pl = table[t["lemma"].lower()]
            correct, wrong = (sg, pl) if number == "Sing" else (pl, sg)
            if t["form"].lower() != correct:
                continue  # the sentence's form is not the table's (e.g. subjunctive)
            between = range(s["id"] + 1, t["id"])
            attractors = sum(
                1
                for i in between
                if by_id[i]["upos"] in ("NOUN", "PROPN")
                and (by_id[i]["feats"] or {}).get("Number") not in (None, number)
            )
            cases.append(
                AgreementCase(
                    words,
                    t["id"] - 1,
                    s["id"] - 1,
                    number,
                    correct,
                    wrong,
                    attractors,
                    t["id"] - s["id"],
                    "ud-ewt",
                    sent.metadata.get("sent_id", ""),
                )
            )
    return cases


# -- templated minimal pairs ------------------------------------------------------------------

NOUNS = (("author", "authors"), ("pilot", "pilots"), ("surgeon", "surgeons"),
         ("farmer", "farmers"), ("manager", "managers"), ("customer", "customers"),
         ("officer", "officers"), ("teacher", "teachers"), ("senator", "senators"),
         ("dancer", "dancers"), ("doctor", "doctors"), ("student", "students"))  # fmt: skip
VERBS = (
    ("is", "are"),
    ("has", "have"),
    ("likes", "like"),
    ("knows", "know"),
    ("writes", "write"),
    ("runs", "run"),
    ("makes", "make"),
    ("seems", "seem"),
)
OBJECTS = {
    "is": "here",
    "has": "time",
    "likes": "music",
    "knows": "it",
    "writes": "well",
    "runs": "fast",
    "makes": "sense",
    "seems": "happy",
}
PLACES = ("the house", "the car", "the school")
# (name, words with {S} subject, {A} attractor, {V} verb, {O} object): Marvin & Linzen's
# simple agreement, across a prepositional phrase and across an object relative clause.
TEMPLATES = (
    ("simple", "the {S} {V} {O}"),
    ("across PP", "the {S} near the {A} {V} {O}"),
    ("across object relative", "the {S} that the {A} like {V} {O}"),
)


def templated_cases(every: int = 1) -> list[AgreementCase]:
    """Marvin & Linzen-style cases, both numbers of every subject, attractor of the other
    number where the template has one: every (subject, attractor, verb) combination, or every
    ``every``-th of them (a fixed stride, no draw)."""
    cases = []
    for name, template in TEMPLATES:
        combos = [
            (n, a, v)
            for n in range(len(NOUNS))
            for a in range(len(NOUNS))
            for v in range(len(VERBS))
            if n != a
        ]
        for k in range(0, len(combos), every):
            n, a, v = combos[k]
            for number, idx in (("Sing", 0), ("Plur", 1)):
                subj = NOUNS[n][idx]
                attr = NOUNS[a][1 - idx]  # the other number: an attractor
                sg, pl = VERBS[v]
                text = template.format(S=subj, A=attr, V="{V}", O=OBJECTS[sg])
                if name == "across object relative" and idx == 1:
                    text = text.replace(" like ", " likes ")  # the relative's own verb agrees
                words = text.split()
                verb = words.index("{V}")
                correct, wrong = (sg, pl) if number == "Sing" else (pl, sg)
                words[verb] = correct
                cases.append(
                    AgreementCase(
                        tuple(words),
                        verb,
                        1,
                        number,
                        correct,
                        wrong,
                        int("{A}" in template),
                        verb - 1,
                        name,
                        f"{name}:{k}",
                    )
                )
    return cases


# -- scoring ----------------------------------------------------------------------------------


def single_piece_id(encoder: TransformersMaskedLM, word: str) -> int | None:
    """The vocabulary id of ``word`` as one sentence-internal piece, or None if it is not one."""
    pieces, word_ids = encoder.tokenize(["a", word])
    own = [p for p, w in zip(pieces, word_ids, strict=True) if w == 1]
    if len(own) != 1:
        return None
    return int(encoder.tokenizer.convert_tokens_to_ids(own[0]))


@dataclass(frozen=True)
class MaskedCases:
    """Cases the model can score: ``inputs`` per batch, the mask position per case, the
    (correct, wrong) ids; ``kept`` indexes the cases given."""

    batches: list[dict[str, torch.Tensor]]
    mask_pos: list[torch.Tensor]
    ids: list[torch.Tensor]  # (B, 2): correct, wrong
    kept: list[int]


@dataclass(frozen=True)
class LeftContextCases:
    """Cases a forward (next-word) LM can score: per batch the char ids of the words before
    the verb (B, T, C) and where the verb goes (B,: position ``len(context) + 1``), the
    (correct, wrong) vocabulary ids; ``kept`` indexes the cases given."""

    batches: list[torch.Tensor]
    mask_pos: list[torch.Tensor]
    ids: list[torch.Tensor]  # (B, 2): correct, wrong
    kept: list[int]


def prepare(
    encoder: Encoder, cases: Sequence[AgreementCase], batch_size: int = 64
) -> MaskedCases | LeftContextCases:
    """Tokenise each case with its verb masked; cases whose verb word or forms are not single
    pieces are left out (Goldberg's rule), as are sentences over 128 pieces. An encoder with
    next-word LMs: :func:`prepare_left_context` (its own batch size)."""
    if encoder.info.lm_directions:
        return prepare_left_context(encoder, cases)
    require_mlm(encoder, "Agreement")
    tok = encoder.tokenizer
    ids_cache: dict[str, int | None] = {}

    def piece(w: str) -> int | None:
        if w not in ids_cache:
            ids_cache[w] = single_piece_id(encoder, w)
        return ids_cache[w]

    usable = []
    for i, c in enumerate(cases):
        a, b = piece(c.correct), piece(c.wrong)
        if a is not None and b is not None and a != b:
            usable.append((i, a, b))
    batches, mask_pos, id_pairs, kept = [], [], [], []
    for start in range(0, len(usable), batch_size):
        chunk = usable[start : start + batch_size]
        words = [list(cases[i].words) for i, _, _ in chunk]
        enc = tok(words, is_split_into_words=True, padding=True, return_tensors="pt")
        rows, pos, pairs = [], [], []
        for b, (i, a, w) in enumerate(chunk):
            wids = enc.word_ids(b)
            at = [p for p, x in enumerate(wids) if x == cases[i].verb]
            if len(at) != 1 or len(wids) > 128:
                continue
            rows.append(b)
            pos.append(at[0])
            pairs.append((a, w))
            kept.append(i)
        if not rows:
            continue
        inputs = {
            k: enc[k][rows] for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc
        }
        inputs["input_ids"] = inputs["input_ids"].clone()
        p = torch.tensor(pos)
        inputs["input_ids"][torch.arange(len(rows)), p] = tok.mask_token_id
        batches.append(inputs)
        mask_pos.append(p)
        id_pairs.append(torch.tensor(pairs))
    return MaskedCases(batches, mask_pos, id_pairs, kept)


def prepare_left_context(
    encoder: Encoder, cases: Sequence[AgreementCase], batch_size: int = 128
) -> LeftContextCases:
    """The cases whose two verb forms are distinct LM-vocabulary words, as left contexts in
    batches (in case order).

    Raises:
        NoLMHeadError: no next-word LM.
    """
    from probing.interventions.hooks import next_word_parts

    parts = next_word_parts(encoder, "Agreement with the forward LM")
    lm = parts.lm()
    kept = [
        i
        for i, c in enumerate(cases)
        if lm.in_vocab(c.correct) and lm.in_vocab(c.wrong) and c.correct != c.wrong
    ]
    batches, pos, ids = [], [], []
    for start in range(0, len(kept), batch_size):
        chunk = [cases[i] for i in kept[start : start + batch_size]]
        batches.append(parts.char_ids([list(c.words[: c.verb]) for c in chunk]))
        pos.append(torch.tensor([c.verb + 1 for c in chunk]))
        ids.append(torch.tensor([[lm.word_id(c.correct), lm.word_id(c.wrong)] for c in chunk]))
    return LeftContextCases(batches, pos, ids, kept)


def forward_lm_log_probs(encoder: Encoder, ids: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """(B, V) the forward LM's log-probabilities of the token at ``pos`` (B,) given the
    tokens before it, for char ids (B, T, C): the backward stack is not run."""
    parts = encoder.layer_parts()
    states, _ = parts.run(ids, forward_only=True)
    return parts.next_word_log_probs(states, torch.arange(len(pos)), pos, "forward")


@torch.inference_mode()
def margins(
    encoder: Encoder,
    prepared: MaskedCases | LeftContextCases,
    intervention: Callable[[], contextlib.AbstractContextManager] | None = None,
) -> np.ndarray:
    """logit(correct) - logit(wrong) at the mask for every kept case (n_kept,) (next-word
    LMs: the forward LM's log P(correct) − log P(wrong) at the verb, left context only), with
    ``intervention()`` (a context manager) active during the forward passes."""
    import contextlib

    left = isinstance(prepared, LeftContextCases)
    out = []
    for inputs, pos, ids in zip(prepared.batches, prepared.mask_pos, prepared.ids, strict=True):
        with intervention() if intervention is not None else contextlib.nullcontext():
            if left:
                at = forward_lm_log_probs(encoder, inputs, pos)  # (B, V)
            else:
                at = mlm_logits(encoder, inputs, torch.arange(len(pos)), pos)  # (B, V)
        ids = ids.to(at.device)
        out.append((at.gather(1, ids[:, :1]) - at.gather(1, ids[:, 1:])).squeeze(1).cpu().numpy())
    return np.concatenate(out) if out else np.zeros(0)


def summary(
    cases: Sequence[AgreementCase], kept: Sequence[int], correct: np.ndarray, n_boot: int = 1000
) -> list[dict]:
    """Accuracy with sentence-bootstrap CIs per source, overall and by attractors/distance."""
    from probing.interventions.stats import PairedBootstrap

    kept_cases = [cases[i] for i in kept]
    rows = []
    for source in dict.fromkeys(c.source for c in kept_cases):
        idx = np.array([j for j, c in enumerate(kept_cases) if c.source == source])
        groups = [kept_cases[j].group for j in idx]
        boot = PairedBootstrap(groups, n_boot=n_boot, seed=0)
        sub = correct[idx].astype(float)
        attractors = np.array([min(kept_cases[j].attractors, 2) for j in idx])
        distance = np.array([_distance_bin(kept_cases[j].distance) for j in idx])
        for by, values in (
            ("all", np.zeros(len(idx), int)),
            ("attractors", attractors),
            ("distance", distance),
        ):
            for value in sorted(set(values.tolist())):
                m = (values == value).astype(float)
                est = boot.ratio(sub * m, m)
                label = {2: "2+"}.get(value, value) if by == "attractors" else value
                rows.append(
                    {
                        "source": source,
                        "by": by,
                        "value": "all" if by == "all" else label,
                        "accuracy": est.value,
                        "accuracy_lo": est.ci_low,
                        "accuracy_hi": est.ci_high,
                        "n": int(m.sum()),
                    }
                )
    return rows


_DIST_BINS = ((1, "1"), (3, "2-3"), (6, "4-6"), (10**9, "7+"))


def _distance_bin(d: int) -> str:
    return next(label for limit, label in _DIST_BINS if d <= limit)
