"""The in-process cache policy: bounded, least recently used out, shared by all sessions.

Loaded encoders are the one exception (``probing.models.registry`` keeps each for the
life of the process: a model is loaded once), and facts about a live object (an encoder's
fingerprint, a tokenizer's no-prefix copy) sit in weak dictionaries that go with it.
Everything else computed per process (encoded lemmas, projections, neighbour vocabularies,
file hashes) goes in an :class:`LRUCache` of a stated size, so a long-running server's
memory stays bounded.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class LRUCache(Generic[V]):
    """A small thread-safe cache of at most ``size`` entries (least recently used dropped)."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("size must be at least 1")
        self.size = size
        self._data: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_make(self, key: Hashable, make: Callable[[], V]) -> V:
        """The cached value for ``key``, made with ``make()`` (and kept) when missing.

        ``make`` runs outside the lock: two sessions asking at once may each compute it, but
        neither blocks the other (or every other key) for the length of a computation.
        """
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
        value = make()
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)
        return value

    def clear(self) -> None:
        """Forget everything (tests)."""
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._data
