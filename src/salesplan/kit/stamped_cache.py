"""Rendered bodies kept in this process by key, each valid for one stamp of what it was
rendered from (a plan's version, a room's state): a reader looks the current stamp up (one
indexed statement it runs anyway) and is served the kept body only when the stamps match, so
other processes need no message to stay exact.

Least recently used first out past `max_bytes`; one body per key (a new stamp replaces the
old one); a body over a quarter of the budget is not kept. `max_age` bounds how long a body
may be served for what its stamp does not cover (names read beside the stamped rows, say)."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sized
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
S = TypeVar("S")
B = TypeVar("B", bound=Sized)


@dataclass(frozen=True, slots=True)
class _Kept(Generic[S, B]):
    stamp: S
    body: B
    made: float


class StampedCache(Generic[K, S, B]):
    def __init__(
        self,
        max_bytes: int = 32 * 1024 * 1024,
        *,
        max_age: float | None = None,
        supersedes: Callable[[S, S], bool] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`supersedes(kept, new)`: True when the kept stamp is newer than the one offered
        (a slower reader of an older state must not replace a newer body)."""
        self.max_bytes = max_bytes
        self.max_age = max_age
        self.size = 0
        self._supersedes = supersedes
        self._clock = clock
        self._kept: OrderedDict[K, _Kept[S, B]] = OrderedDict()

    def get(self, key: K, stamp: S) -> B | None:
        found = self._kept.get(key)
        if found is None or found.stamp != stamp:
            return None
        if self.max_age is not None and self._clock() - found.made > self.max_age:
            return None
        self._kept.move_to_end(key)
        return found.body

    def put(self, key: K, stamp: S, body: B) -> None:
        old = self._kept.pop(key, None)
        if old is not None:
            self.size -= len(old.body)
            if self._supersedes is not None and self._supersedes(old.stamp, stamp):
                self._kept[key] = old
                self.size += len(old.body)
                return
        if len(body) > self.max_bytes // 4:  # too big to keep (its older state goes too)
            return
        self._kept[key] = _Kept(stamp, body, self._clock())
        self.size += len(body)
        while self.size > self.max_bytes:
            _, evicted = self._kept.popitem(last=False)
            self.size -= len(evicted.body)

    def clear(self) -> None:
        self._kept.clear()
        self.size = 0

    def __len__(self) -> int:
        return len(self._kept)
