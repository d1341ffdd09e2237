"""Rate-limit stores. A store answers one question atomically: may one more unit be spent in
this bucket in the rolling window, and what is left."""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int
    reset_at: int  # Unix seconds when a unit next frees up
    retry_after: int  # seconds to wait before retrying (0 when allowed)


class RateLimitStore(Protocol):
    name: str  # "memory" or "shared"

    async def hit(self, key: str, limit: int, window: int) -> Decision: ...

    async def kv_get(self, key: str) -> str | None:
        """Small shared state beside the counters (MCP session organization)."""
        ...

    async def kv_set(self, key: str, value: str, ttl_seconds: int) -> None: ...

    async def reset(self) -> None: ...

    async def close(self) -> None: ...


class MemoryStore:
    """A sliding log per bucket, for one process (the embedded default).

    Memory stays bounded: a bucket whose newest entry has left the window is dropped by a sweep
    that runs at most once per window.
    """

    name = "memory"

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._logs: dict[str, deque[float]] = {}
        self._kv: dict[str, tuple[str, float]] = {}
        self._lock = asyncio.Lock()
        self._last_sweep = clock()
        self._max_window = 60

    def __len__(self) -> int:
        return len(self._logs)

    def _sweep(self, now: float) -> None:
        horizon = now - self._max_window
        stale = [k for k, log in self._logs.items() if not log or log[-1] <= horizon]
        for key in stale:
            del self._logs[key]
        self._last_sweep = now

    def hit_sync(self, key: str, limit: int, window: int) -> Decision:
        now = self._clock()
        self._max_window = max(self._max_window, window)
        if now - self._last_sweep >= self._max_window:
            self._sweep(now)
        log = self._logs.get(key)
        if log is None:
            log = self._logs[key] = deque()
        horizon = now - window
        while log and log[0] <= horizon:
            log.popleft()
        if len(log) < limit:
            log.append(now)
            oldest = log[0]
            return Decision(True, limit, limit - len(log), math.ceil(oldest + window), 0)
        oldest = log[0]
        retry = max(1, math.ceil(oldest + window - now))
        return Decision(False, limit, 0, math.ceil(oldest + window), retry)

    async def hit(self, key: str, limit: int, window: int) -> Decision:
        # Single event loop: no await between read and write, so this is atomic already.
        return self.hit_sync(key, limit, window)

    async def kv_get(self, key: str) -> str | None:
        item = self._kv.get(key)
        if item is None:
            return None
        value, expires = item
        if expires <= self._clock():
            del self._kv[key]
            return None
        return value

    async def kv_set(self, key: str, value: str, ttl_seconds: int) -> None:
        now = self._clock()
        if len(self._kv) > 10_000:
            self._kv = {k: v for k, v in self._kv.items() if v[1] > now}
        self._kv[key] = (value, now + ttl_seconds)

    async def reset(self) -> None:
        self._logs.clear()
        self._kv.clear()

    async def close(self) -> None:
        return None
