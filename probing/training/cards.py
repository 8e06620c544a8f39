"""Model cards of the embedded models, rendered from the templates in ``card_templates/``.

A card states what its training log says (data, schedule, held-out scores, the reproducing
command without the flags that only say where files went); :func:`render_card` fills a
template's ``${name}`` fields, the ``*_card_values`` functions compute them.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from string import Template
from typing import Any

TEMPLATES_DIR = Path(__file__).with_name("card_templates")

# Where checkpoints and exports were written changes nothing in the model.
_LOCAL_FLAGS = ("--checkpoint-dir", "--export-dir", "--work-dir")


def reproducing_command(command: str) -> str:
    """``command`` without ``--checkpoint-dir``/``--export-dir`` (either ``--x v`` or ``--x=v``)."""
    out: list[str] = []
    skip = False
    for word in shlex.split(command):
        if skip:
            skip = False
            continue
        if word in _LOCAL_FLAGS:
            skip = True
            continue
        if word.startswith(tuple(f"{f}=" for f in _LOCAL_FLAGS)):
            continue
        out.append(word)
    return shlex.join(out)


def read_card_inputs(folder: str | Path, log_name: str, *others: str) -> dict[str, Any]:
    """The training log ``folder/log_name`` a card is written from (``--write-card FOLDER``),
    after checking that ``folder`` holds it and the ``others`` files the card reads too.

    Raises:
        TrainingLogNotFoundError: ``folder`` is not a folder, or a file is missing.
        ResultFileError: the log is not JSON.
    """
    import json

    from probing.errors import ResultFileError, TrainingLogNotFoundError

    folder = Path(folder)
    if not folder.is_dir():
        raise TrainingLogNotFoundError(
            f"--write-card needs the folder a training run exported to; {folder} is not a folder."
        )
    missing = [name for name in (log_name, *others) if not (folder / name).is_file()]
    if missing:
        raise TrainingLogNotFoundError(
            f"{folder} lacks {', '.join(missing)}: --write-card rewrites the card of a "
            "folder a training run exported to (its --export-dir), from that run's log."
        )
    try:
        return json.loads((folder / log_name).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ResultFileError(
            f"{folder / log_name} cannot be read as a training log: {exc}"
        ) from None


def render_card(template: str, values: dict[str, Any]) -> str:
    """``card_templates/<template>.md`` with every ``${name}`` replaced (all must be given)."""
    text = (TEMPLATES_DIR / f"{template}.md").read_text(encoding="utf-8")
    return Template(text).substitute({k: str(v) for k, v in values.items()})


def _fmt_duration(seconds: float) -> str:
    h, m = divmod(int(seconds) // 60, 60)
    return f"{h} h {m:02d} min"


def _stopped_early(log: dict[str, Any]) -> str:
    seen, planned = log.get("tokens_seen", 0), log.get("max_tokens", 0)
    if not planned or seen >= planned:
        return ""
    return f" (stopped at {seen:,}, {100 * seen / planned:.0f} % of the way)"


def _stop_note(log: dict[str, Any]) -> str:
    if not _stopped_early(log) or not log.get("steps"):
        return ""
    return (
        f"These weights are from step {log['steps']:,}, where the run was stopped (SIGTERM "
        f"exports): add `--max-steps {log['steps']}` to stop a fresh run at the same point. "
    )


def elmo_card_values(
    log: dict[str, Any], options: dict[str, Any], size_mb: float, card_folder: str
) -> dict[str, Any]:
    """Fields of the ELMo-mini card from its training log and ``ElmoConfig`` attributes
    (``options``: name -> value, as ``vars(config)`` plus ``n_filters`` and ``output_dim``)."""
    hist = log.get("heldout", [])
    last = hist[-1] if hist else None
    ppl = (
        f"forward **{last['ppl_forward']:.1f}**, backward **{last['ppl_backward']:.1f}** "
        f"({last['predictions']:,} predictions on the first {log.get('eval_words', 0):,} words "
        "of UD-EWT dev; words outside the LM vocabulary count as `<UNK>`)"
        if last
        else "not measured yet"
    )
    o = options
    return {
        "corpus_mwords": f"{log.get('corpus_words', 0) / 1e6:.1f}",
        "size_mb": f"{size_mb:.1f}",
        **{
            k: o[k]
            for k in (
                "max_characters_per_token",
                "char_embed_dim",
                "n_filters",
                "activation",
                "n_highway",
                "projection_dim",
                "n_layers",
                "lstm_dim",
                "cell_clip",
                "proj_clip",
                "use_skip_connections",
                "output_dim",
            )
        },
        "filters": [list(f) for f in o["filters"]],
        "vocab_size": f"{log.get('vocab_size', 0):,}",
        "sources": ", ".join(log.get("sources", [])),
        "corpus_sentences": f"{log.get('corpus_sentences', 0):,}",
        "corpus_words": f"{log.get('corpus_words', 0):,}",
        "tokens_seen": f"{log.get('tokens_seen', 0):,}",
        "passes": f"{log.get('tokens_seen', 0) / max(1, log.get('corpus_words', 1)):.1f}",
        "wall_time": _fmt_duration(log.get("wall_time_s", 0)),
        "threads": log.get("threads", 1),
        "lr": log.get("lr"),
        "max_tokens": f"{log.get('max_tokens', 0):,}",
        "stopped_early": _stopped_early(log),
        "clip": log.get("clip"),
        "dropout": log.get("dropout"),
        "ppl": ppl,
        "rows": "\n".join(
            f"| {h['tokens_seen']:,} | {_fmt_duration(h['wall_time_s'])} | "
            f"{h['ppl_forward']:.1f} | {h['ppl_backward']:.1f} |"
            for h in hist
        ),
        "command": reproducing_command(log.get("command", "")),
        "stop_note": _stop_note(log),
        "card_folder": card_folder,
    }


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f} %"


def _mlm_schedule(log: dict[str, Any], command: str) -> tuple[str, str]:
    """(where the lr decay ends, the command lines that replay the run) from the log.

    When the decay end was moved on a resume, the card says so and gives one command per
    schedule segment (``--max-steps`` stops each where the next one began).
    """
    args = log.get("args") or {}
    schedule = log.get("schedule") or []
    if len(schedule) <= 1:
        return f"{args.get('max_tokens', 0):,} pieces", command
    moves = "; ".join(
        f"at {seg['from_tokens']:,} pieces (step {seg['from_step']:,}) it was moved to "
        f"{seg['max_tokens']:,}"
        for seg in schedule[1:]
    )
    steps = [seg["from_step"] for seg in schedule[1:]] + [None]
    lines = []
    for seg, end in zip(schedule, steps, strict=True):
        line = re.sub(r"--max-tokens[ =]\d+", f"--max-tokens {seg['max_tokens']}", command)
        if "--max-tokens" not in line:
            line += f" --max-tokens {seg['max_tokens']}"
        if end is not None:
            line += f" --max-steps {end - seg['from_step']}"
        lines.append(line)
    return f"{schedule[0]['max_tokens']:,} pieces as first set; {moves}", "\n".join(lines)


def mlm_card_values(log: dict[str, Any], default_eval_seed: int) -> dict[str, Any]:
    """Fields of the minilm-l6-mlm card from its training log."""
    ex = log.get("exported") or {}
    ev = ex.get("eval") or {}
    uni = log.get("unigram_baseline") or {}
    corpus = log.get("corpus") or {}
    args = log.get("args") or {}
    command = "OMP_WAIT_POLICY=PASSIVE HF_HUB_OFFLINE=1 " + reproducing_command(
        log.get("command", "python -m probing.training.mlm_head")
    )
    schedule_end, reproduce = _mlm_schedule(log, command)
    return {
        "n_top": args.get("unfreeze_top", "?"),
        "size_mb": f"{ex.get('delta_bytes', 0) / 1e6:.1f}",
        "base_sha256_16": str(log.get("base_sha256", ""))[:16],
        "corpus_sentences": f"{corpus.get('sentences', 0):,}",
        "corpus_words": f"{corpus.get('words', 0):,}",
        "corpus_pieces": f"{corpus.get('pieces', 0):,}",
        "corpus_sequences": f"{corpus.get('sequences', 0):,}",
        "seq_len": args.get("seq_len", "?"),
        "lr_head": args.get("lr_head"),
        "lr": args.get("lr"),
        "weight_decay": args.get("weight_decay"),
        "warmup_tokens": f"{args.get('warmup_tokens', 0):,}",
        "schedule": args.get("schedule"),
        "schedule_end": schedule_end,
        "batch_size": args.get("batch_size"),
        "tokens_seen": f"{ex.get('tokens_seen', 0):,}",
        "passes": f"{ex.get('tokens_seen', 0) / max(corpus.get('packed_pieces', 1), 1):.1f}",
        "steps": f"{ex.get('step', 0):,}",
        "hours": f"{ex.get('wall_time_s', 0.0) / 3600:.1f}",
        "eval_n": f"{ev.get('n', 0):,}",
        "eval_seed": args.get("eval_seed", default_eval_seed),
        "unigram_pieces": ", ".join(f"`{t}`" for t in log.get("unigram_top5_pieces", [])),
        "unigram_top1": _pct(uni.get("top1")),
        "unigram_top5": _pct(uni.get("top5")),
        "top1": _pct(ev.get("top1")),
        "top5": _pct(ev.get("top5")),
        "curve": "\n".join(
            f"| {e['tokens_seen']:,} | {_pct(e.get('top1'))} | {_pct(e.get('top5'))} |"
            for e in log.get("evals", [])
            if e.get("tokens_seen")
        ),
        "reproduce": reproduce,
    }


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _cpu_min(seconds: float | None) -> str:
    return "CPU time not recorded" if seconds is None else f"{seconds / 60:.0f} CPU-min"


def elmo_softmax_values(
    slog: dict[str, Any] | None, training_ppl: tuple[float, float] | None
) -> dict[str, str]:
    """The card's LM-softmax line and section from ``softmax_log.json`` (None: not fitted)."""
    if not slog:
        return {
            "softmax_line": "none (an encoder only; `python -m probing train-elmo-softmax` fits one)",
            "softmax_section": "",
        }
    h = slog["heldout"]
    lay = slog["layout"]
    then = (
        f" The jointly trained head scored forward {training_ppl[0]:.1f}, backward "
        f"{training_ppl[1]:.1f} on the same words at the end of training: the fitted one is "
        f"{100 * (h['ppl_forward'] / training_ppl[0] - 1):.0f} % and "
        f"{100 * (h['ppl_backward'] / training_ppl[1] - 1):.0f} % higher (a fresh head, fitted "
        "on part of the corpus, reading states that were shaped for the lost one)."
        if training_ppl
        else ""
    )
    line = (
        f"`softmax.safetensors` ({slog['size_bytes'] / 1e6:.2f} MB, fp16), **fitted after the "
        "fact on the frozen encoder** (not the head trained with it; see below)"
    )
    section = f"""## Fitted LM softmax

The training head was not exported and the training checkpoint is gone, so ContextLens fitted
a new one on the frozen encoder (`probing.training.elmo_softmax`): the same module as in
training (one adaptive softmax over the {lay["vocab_size"]:,} words of `vocab.txt`, cutoffs
{lay["cutoffs"]}, div value {lay["div_value"]:g}, shared by the forward and the backward
LM), the same targets (the forward LM predicts word t+1 from its top layer at t, the backward
LM word t-1 from its top layer at t; `<S> w1 … wn </S>`, zero state), on every
{_ordinal(slog["every"])} sentence of the same corpus ({slog["corpus_sentences"]:,} sentences,
{slog["corpus_words"]:,} words, {slog["predictions"]:,} predictions in both directions), the
encoder's top-layer states computed once without gradients. {slog["epochs"]} pass(es) (Adam, lr
{slog["lr"]}, batches of {slog["batch_size"]:,} predictions, cosine decay, dropout
{slog["dropout"]} on the states); {_fmt_duration(slog["states_wall_s"])} wall
({_cpu_min(slog["states_cpu_s"])}) for the states and {_fmt_duration(slog["train_wall_s"])}
wall ({_cpu_min(slog["train_cpu_s"])}) for the fit, on {slog["threads"]} thread(s) of
a shared machine.{" " + slog["note"] if slog.get("note") else ""}

- Held-out perplexity with the shipped fp16 weights: forward **{h["ppl_forward"]:.1f}**,
  backward **{h["ppl_backward"]:.1f}** ({h["predictions"]:,} predictions on the first
  {slog["eval_words"]:,} words of UD-EWT dev, measured as in training; words outside the
  vocabulary count as `<UNK>`).{then} A unigram model (add-one counts of the words read)
  scores {slog["unigram_ppl"]:.1f}.
- What uses it: `probing.encoders.elmo_softmax` (loaded with the encoder when the file is
  there; a folder without it is an encoder only), erasure's bi-LM effect, forward-LM
  agreement and patching (read through `probing.encoders.elmo_surface`).
- Reproduce: `{reproducing_command(slog["command"])}`

"""
    return {"softmax_line": line, "softmax_section": section}
