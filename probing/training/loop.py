"""The training loop both trainers share (ELMo-mini's language model and the MLM head).

As minGPT's ``Trainer``: the loop owns the schedule of *when* things happen (each step, a
log line every ``log_every`` steps, an evaluation when the trainer says one is due, a
checkpoint every ``checkpoint_minutes``, a clean stop on SIGTERM/SIGINT, at the token budget
or after ``max_steps``); the trainer owns *what* happens, through ``step`` and callbacks::

    loop = TrainingLoop(state, max_tokens=..., max_steps=..., log_every=20,
                        checkpoint_minutes=5.0)
    loop.set_callback("log", print_progress)
    loop.set_callback("eval", evaluate_and_export)
    loop.set_callback("checkpoint", save_checkpoint)
    loop.set_callback("end", final_evaluation)
    loop.run(train_one_batch, eval_due=lambda: ...)

``state`` is the trainer's checkpointed dict: the loop advances its ``step``,
``tokens_seen`` and ``wall_time_s``.
"""

from __future__ import annotations

import signal
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any, Literal

Event = Literal["log", "eval", "checkpoint", "end", "signal"]


class TrainingLoop:
    """Runs training steps until the token budget, the step limit or a signal.

    Args:
        state: the trainer's checkpointed state; ``step``, ``tokens_seen`` and
            ``wall_time_s`` are advanced here.
        max_tokens: stop once ``state["tokens_seen"]`` reaches it.
        max_steps: stop after this many steps in this run (None: no limit).
        log_every: steps between "log" callbacks.
        checkpoint_minutes: minutes between "checkpoint" callbacks.
        wall_time: "run" counts all the time since the run started (evaluations and
            checkpoints included) on top of earlier runs' time; "steps" adds up only the
            time spent in training steps.
    """

    def __init__(
        self,
        state: dict[str, Any],
        *,
        max_tokens: int,
        max_steps: int | None = None,
        log_every: int = 20,
        checkpoint_minutes: float = 5.0,
        wall_time: Literal["run", "steps"] = "steps",
    ) -> None:
        self.state = state
        self.max_tokens = max_tokens
        self.max_steps = max_steps
        self.log_every = log_every
        self.checkpoint_minutes = checkpoint_minutes
        self.wall_time = wall_time
        self.steps_this_run = 0
        self.stopped_by_signal = False
        self._callbacks: dict[str, list[Callable[..., None]]] = defaultdict(list)

    @classmethod
    def from_args(
        cls, state: dict[str, Any], args: Any, wall_time: Literal["run", "steps"]
    ) -> TrainingLoop:
        """The loop a trainer's command line asks for (``max_tokens``, ``max_steps``,
        ``log_every``, ``checkpoint_minutes``)."""
        return cls(
            state,
            max_tokens=args.max_tokens,
            max_steps=args.max_steps,
            log_every=args.log_every,
            checkpoint_minutes=args.checkpoint_minutes,
            wall_time=wall_time,
        )

    def set_callback(self, event: Event, fn: Callable[..., None]) -> None:
        """Call ``fn()`` on ``event`` (``fn(signum)`` for "signal")."""
        self._callbacks[event].append(fn)

    def trigger(self, event: Event, *args: Any) -> None:
        """Run the callbacks of ``event`` in the order they were set."""
        for fn in self._callbacks.get(event, []):
            fn(*args)

    @property
    def finished(self) -> bool:
        """True when the run reached its token budget or its step limit (not a signal)."""
        return self.state["tokens_seen"] >= self.max_tokens or (
            self.max_steps is not None and self.steps_this_run >= self.max_steps
        )

    def _on_signal(self, signum: int, _frame: Any) -> None:
        self.stopped_by_signal = True  # finish the step, checkpoint, exit
        self.trigger("signal", signum)

    def run(self, step: Callable[[], int], eval_due: Callable[[], bool]) -> None:
        """Train until done, then fire "end" and a last "checkpoint".

        Args:
            step: one optimisation step; returns the tokens it trained on.
            eval_due: asked after each step (and its log line) whether to fire "eval".
        """
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        state = self.state
        run_start = last_ckpt = time.time()
        wall_before = state["wall_time_s"]  # earlier runs' time (resume, warm start)
        while state["tokens_seen"] < self.max_tokens and not self.stopped_by_signal:
            if self.max_steps is not None and self.steps_this_run >= self.max_steps:
                break
            step_start = time.time()
            tokens = step()
            state["step"] += 1
            state["tokens_seen"] += tokens
            if self.wall_time == "run":
                state["wall_time_s"] = wall_before + time.time() - run_start
            else:
                state["wall_time_s"] += time.time() - step_start
            self.steps_this_run += 1
            if state["step"] % self.log_every == 0:
                self.trigger("log")
            if eval_due():
                self.trigger("eval")
            if time.time() - last_ckpt >= 60 * self.checkpoint_minutes:
                self.trigger("checkpoint")
                last_ckpt = time.time()
        self.trigger("end")
        self.trigger("checkpoint")
