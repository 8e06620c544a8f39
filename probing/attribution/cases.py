"""The fixed set of fill-mask cases the faithfulness study runs on, chosen by a rule.

UD English-EWT sentences in file order; a sentence qualifies when it has 8 to 20 words and a
word tagged NOUN that is alphabetic and that the model reads as one piece. Its first such
noun is masked. The first ``n`` qualifying sentences are the cases: nothing about the model's
predictions enters the choice, only its vocabulary.

What is explained (``target``): ``"top"`` (default), the model's own top guess at the mask —
faithfulness asks whether an explanation of *the prediction* names the words the prediction
rests on; or ``"gold"``, the masked word itself (often improbable to a small model, so its
curves are flat near 0 and say little about the methods).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import torch

from probing.attribution.case import MaskedCase, prepare_case
from probing.errors import InvalidArgumentError, MultiPieceTargetError, SpecialTokenError

if TYPE_CHECKING:
    from probing.encoders.bert import TransformersMaskedLM

MIN_WORDS, MAX_WORDS = 8, 20
TARGETS = ("top", "gold")


@torch.inference_mode()
def top_guess(encoder: TransformersMaskedLM, case: MaskedCase) -> int:
    """The vocabulary id the model ranks first at the case's mask."""
    inputs = {k: v.to(encoder.device) for k, v in case.inputs.items()}
    return int(encoder.mlm(**inputs).logits[0, case.mask_position].argmax())


def ud_cases(
    encoder: TransformersMaskedLM,
    sentences: Iterable,
    n: int = 50,
    target: str = "top",
) -> tuple[list[MaskedCase], list[str]]:
    """The first ``n`` cases by the rule above, and each one's ``sent_id``."""
    if target not in TARGETS:
        raise InvalidArgumentError(f"target must be one of {', '.join(TARGETS)}, not {target!r}")
    cases: list[MaskedCase] = []
    ids: list[str] = []
    for s in sentences:
        if len(cases) >= n:
            break
        if not MIN_WORDS <= len(s.words) <= MAX_WORDS:
            continue
        for i, (w, tag) in enumerate(zip(s.words, s.labels["upos"], strict=True)):
            if tag != "NOUN" or not w.isalpha():
                continue
            try:
                case = prepare_case(encoder, s.words, i)
            except (MultiPieceTargetError, SpecialTokenError):
                continue
            if target == "top":
                case = prepare_case(encoder, s.words, i, target_id=top_guess(encoder, case))
            cases.append(case)
            ids.append(s.sent_id)
            break
    return cases, ids
