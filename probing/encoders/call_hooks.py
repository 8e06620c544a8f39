"""Forward hooks that belong to one call, not to the model.

A model is loaded once per process and shared: the app serves every browser session's
script from its own thread of one server, all reading the same cached model. A hook put on
that model with ``register_forward_hook`` acts on *every* thread's forward pass while it is
registered — one session switching heads off changed another session's fill-mask — and
registering or removing it changes a dict that other threads' passes iterate.

Here a module that an analysis hooks carries one permanent pair of dispatchers, installed
once (under a lock) and never removed. A dispatcher runs the functions that the *current
context* attached to that module — a :class:`contextvars.ContextVar`, so per thread (and
per asyncio task) — and returns at once when there are none. :func:`forward_hook` and
:func:`forward_pre_hook` attach a function for the duration of a ``with`` block in the
calling thread only: another thread running the same module at the same moment sees none
of it, and the model's hook dicts never change after the first install.

Examples:
    >>> import torch
    >>> lin = torch.nn.Linear(2, 2)
    >>> x = torch.ones(1, 2)
    >>> with forward_hook(lin, lambda _m, _a, out: out * 0):
    ...     float(lin(x).abs().sum())
    0.0
    >>> bool(lin(x).abs().sum() > 0)  # outside the block (and in other threads): untouched
    True
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any

import torch

PostFn = Callable[[torch.nn.Module, tuple, Any], Any]
"""(module, positional args, output) -> a replacement output, or None to keep it."""
PreFn = Callable[[torch.nn.Module, tuple, dict], "tuple[tuple, dict] | None"]
"""(module, positional args, keyword args) -> replacement (args, kwargs), or None."""

_EMPTY: Mapping[torch.nn.Module, tuple] = {}
_POST: ContextVar[Mapping[torch.nn.Module, tuple[PostFn, ...]]] = ContextVar(
    "contextlens_post_hooks", default=_EMPTY
)
_PRE: ContextVar[Mapping[torch.nn.Module, tuple[PreFn, ...]]] = ContextVar(
    "contextlens_pre_hooks", default=_EMPTY
)
_MARK = "_contextlens_call_hooks"
_install_lock = threading.Lock()


def _dispatch_post(module: torch.nn.Module, args: tuple, output: Any) -> Any:
    fns = _POST.get().get(module)
    if not fns:
        return None
    for fn in fns:
        new = fn(module, args, output)
        if new is not None:
            output = new
    return output


def _dispatch_pre(module: torch.nn.Module, args: tuple, kwargs: dict) -> tuple | None:
    fns = _PRE.get().get(module)
    if not fns:
        return None
    for fn in fns:
        new = fn(module, args, kwargs)
        if new is not None:
            args, kwargs = new
    return args, kwargs


def install(module: torch.nn.Module) -> None:
    """Give ``module`` its dispatchers (once; idempotent, thread-safe). A deep copy of the
    module keeps them: the dispatchers look functions up by the
    module they are called on."""
    if module.__dict__.get(_MARK):
        return
    with _install_lock:
        if module.__dict__.get(_MARK):
            return
        module.register_forward_pre_hook(_dispatch_pre, with_kwargs=True)
        module.register_forward_hook(_dispatch_post)
        module.__dict__[_MARK] = True


def install_all(modules: list[torch.nn.Module]) -> None:
    """:func:`install` on each of ``modules`` (an encoder does this when it is loaded, so
    that no hook dict changes while other threads run it)."""
    for m in modules:
        install(m)


@contextlib.contextmanager
def _attached(var: ContextVar, module: torch.nn.Module, fn: PostFn | PreFn) -> Iterator[None]:
    install(module)
    current = var.get()
    token = var.set({**current, module: (*current.get(module, ()), fn)})
    try:
        yield
    finally:
        var.reset(token)


def forward_hook(module: torch.nn.Module, fn: PostFn) -> contextlib.AbstractContextManager:
    """Within the block and in this thread only, ``fn`` sees (and may replace) ``module``'s
    output, after any function attached before it."""
    return _attached(_POST, module, fn)


def forward_pre_hook(module: torch.nn.Module, fn: PreFn) -> contextlib.AbstractContextManager:
    """Within the block and in this thread only, ``fn`` sees (and may replace) the
    positional and keyword arguments ``module`` is called with."""
    return _attached(_PRE, module, fn)


def active() -> int:
    """How many functions this context has attached (0 outside every block)."""
    return sum(len(v) for v in _POST.get().values()) + sum(len(v) for v in _PRE.get().values())


def has_foreign_hooks(model: torch.nn.Module) -> bool:
    """A forward hook on ``model`` or its submodules that is neither one of these dispatchers
    nor the model library's own (``transformers`` 5 installs permanent output-capturing hooks
    the first time attentions or hidden states are asked for): a caller's own
    ``register_forward_hook``."""
    ours = (_dispatch_post, _dispatch_pre)
    return any(
        h not in ours and not getattr(h, "__module__", "").startswith("transformers.")
        for m in model.modules()
        for h in (*m._forward_hooks.values(), *m._forward_pre_hooks.values())
    )
