"""What probing an upload will allocate, estimated from its sizes before anything is allocated.

The job budget (``config.limits().job_memory_bytes``) is enforced by a watchdog that can only
stop a job between Python bytecodes; a single native call (scipy's ``shortest_path`` on a
10,000-word sentence, a torch matmul over a padded ``(batch, T, T)`` block) allocates
gigabytes inside one bytecode, past the watchdog. So an upload is sized first:

- **per-task sentence-length caps** (demo mode): ``max_tree_sentence_words`` for the
  structural tasks, whose targets are ``n x n`` tree distances, and
  ``max_upload_sentence_words`` for the others;
- **a memory estimate** of the largest allocations, in every mode, against the job budget:
  the in-memory features (float16, plus one float32 layer while a probe fits), one forward
  pass over the longest sentence, and for the structural tasks the ``n x n`` targets of
  every sentence plus the padded training batch with its loss intermediates.

A request over either is refused with a :class:`~probing.errors.ResourceLimitError` that gives
the numbers; no word of the file is echoed.
"""

from __future__ import annotations

from collections.abc import Sequence

from probing import config
from probing.datasets.types import Sentence
from probing.errors import ResourceLimitError
from probing.probes.tasks import get_task

PIECES_PER_WORD = 2.0  # subword pieces per word, generous (UD-EWT with WordPiece: ~1.3)
TREE_BATCH = 20  # sentences per structural-probe training batch (StructuralProbe.batch_size)
# Live (T x T) float32 blocks per training sentence: target, prediction, |pred - y|, mask,
# and the autograd copies of the prediction's terms.
TREE_LOSS_BLOCKS = 8


def _mb(n_bytes: float) -> str:
    return f"{n_bytes / 1024**2:,.0f} MB"


def sentence_cap(task: str) -> int | None:
    """Most words per uploaded sentence for ``task`` on this server (None: no cap)."""
    lim = config.limits()
    return lim.max_tree_sentence_words if _is_tree(task) else lim.max_upload_sentence_words


def _is_tree(task: str) -> bool:
    """Structural probes (tree distance, depth) hold per-sentence targets in memory."""
    return get_task(task).kind == "structural"


def estimate_bytes(lengths: Sequence[int], task: str, n_layers: int, dim: int) -> int:
    """Peak bytes of probing ``task`` on sentences of ``lengths`` words (train and test
    together) with ``n_layers`` layers of ``dim`` dimensions kept (see module doc)."""
    n_words = sum(lengths)
    longest = max(lengths, default=0)
    features = n_words * n_layers * dim * 2 + 2 * n_words * dim * 4
    forward = longest * PIECES_PER_WORD * (n_layers + 1) * dim * 4 * 2
    total = features + forward
    if get_task(task).kind == "structural" and get_task(task).variant == "distance":
        targets = sum(n * n for n in lengths) * (8 + 4)  # float64 distances, float32 batch
        # shortest_path on the longest sentence: a dense adjacency matrix and its result
        path = 2 * longest * longest * 8
        batch = min(TREE_BATCH, len(lengths)) * longest * longest * 4 * TREE_LOSS_BLOCKS
        total += targets + path + batch
    return int(total)


def check_upload_size(
    sentences: Sequence[Sentence], task: str, n_layers: int, dim: int, name: str = "upload"
) -> int:
    """Refuse an upload whose sentences are too long for ``task``, or whose estimated peak
    memory exceeds the job budget; return the estimate in bytes.

    Raises:
        ResourceLimitError: the message gives the sentence, its length and the cap, or the
            estimate and the budget.
    """
    cap = sentence_cap(task)
    if cap is not None:
        for s in sentences:
            if len(s.words) > cap:
                why = " (its tree distances grow as n x n)" if _is_tree(task) else ""
                raise ResourceLimitError(
                    f"Sentence {s.sent_id} of {name} has {len(s.words):,} words; for the "
                    f"{task} probe this server takes sentences of at most {cap:,} words{why}. "
                    "Split the long sentences or leave them out."
                )
    need = estimate_bytes([len(s.words) for s in sentences], task, n_layers, dim)
    budget = config.limits().job_memory_bytes
    if need > budget:
        longest = max(len(s.words) for s in sentences)
        raise ResourceLimitError(
            f"Probing {task} on {name} would need about {_mb(need)} of memory (longest sentence "
            f"{longest:,} words); one job on this server may use {_mb(budget)}. Upload shorter "
            "sentences or fewer of them."
        )
    return need
