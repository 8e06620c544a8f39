"""The fixed, documented document-level split of SemCor, shared by probing and LM training.

Rule: a SemCor document ``br-XNN`` goes to ``test`` when the first byte of
SHA-1(doc id) modulo 10 is 0, to ``dev`` when it is 1, and to ``train`` otherwise. The rule
depends only on the document's name, so it is stable across machines and versions, splits
whole documents (no sentence of a test document is ever seen in training), and is the same
for every model. Language models trained by this project (``train-elmo``, ``train-mlm-head``)
read the Brown corpus without the Brown files of SemCor's dev and test documents, so probing
results on those splits are never measured on text the embedded models were trained on.
"""

from __future__ import annotations

import hashlib
from typing import Literal

Split = Literal["train", "dev", "test"]


def semcor_split(doc_id: str) -> Split:
    """Split of a SemCor document, e.g. ``semcor_split("br-a01")``."""
    bucket = hashlib.sha1(doc_id.encode("ascii")).digest()[0] % 10
    if bucket == 0:
        return "test"
    if bucket == 1:
        return "dev"
    return "train"


def brown_file_for_semcor(doc_id: str) -> str:
    """The Brown corpus file that a SemCor document was taken from: ``br-a01`` -> ``ca01``."""
    if not doc_id.startswith("br-") or len(doc_id) != 6:
        raise ValueError(f"not a SemCor document id: {doc_id!r}")
    return "c" + doc_id[3:]
