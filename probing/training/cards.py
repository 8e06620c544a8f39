"""The reproducing command a model card shows: the training command without the flags that
only say where files go on the machine that trained it."""

from __future__ import annotations

import shlex

# Where checkpoints and exports were written changes nothing in the model.
_LOCAL_FLAGS = ("--checkpoint-dir", "--export-dir")


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
