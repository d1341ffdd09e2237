"""Rate-limit stores. A store answers one question atomically: may one more unit be spent in
this bucket in the rolling window, and what is left.

Both stores keep a sliding log (one timestamp per spent unit) rather than fixed buckets, so that a
client can never spend twice the limit across a window edge: a unit frees up exactly `window` seconds
after it was spent.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import math
import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError

log = logging.getLogger("salesplan.ratelimit")

# A store error is logged at most once per this many seconds, so that an outage does not flood
# the log with one line per request.
ERROR_LOG_INTERVAL = 60.0


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int  # units left after this request (the current one counted as spent)
    reset_at: int  # Unix seconds when a unit next frees up
    retry_after: int  # seconds to wait before retrying (0 when allowed)


class StoreUnavailable(Exception):
    """The store could not answer; the limiter fails open."""


class RateLimitStore(Protocol):
    name: str  # "memory" or "shared"

    async def hit(self, key: str, limit: int, window: float) -> Decision: ...

    async def kv_get(self, key: str) -> str | None:
        """Small shared state beside the counters (MCP session organization)."""
        ...

    async def kv_set(self, key: str, value: str, ttl_seconds: int) -> None:
        """Raises StoreUnavailable when the value was not stored."""
        ...

    async def reset(self) -> None: ...

    async def close(self) -> None: ...


def _decision(
    allowed: bool, limit: int, count: int, oldest: float, window: float, now: float
) -> Decision:
    """`count` units in the log after this request, `oldest` the first of them (seconds)."""
    frees_at = oldest + window
    if allowed:
        return Decision(True, limit, max(0, limit - count), math.ceil(frees_at), 0)
    return Decision(False, limit, 0, math.ceil(frees_at), max(1, math.ceil(frees_at - now)))


class MemoryStore:
    """A sliding log per bucket, for one process (the embedded default).

    Memory stays bounded: at most once per window a sweep drops every bucket whose newest entry
    has left the window (and expired key-value entries).
    """

    name = "memory"

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._logs: dict[str, deque[float]] = {}
        self._kv: dict[str, tuple[str, float]] = {}
        self._last_sweep = clock()
        self._max_window = 60.0

    def __len__(self) -> int:
        return len(self._logs)

    def keys(self) -> list[str]:
        return list(self._logs)

    def _sweep(self, now: float) -> None:
        horizon = now - self._max_window
        for key in [
            k for k, entries in self._logs.items() if not entries or entries[-1] <= horizon
        ]:
            del self._logs[key]
        for key in [k for k, (_, expires) in self._kv.items() if expires <= now]:
            del self._kv[key]
        self._last_sweep = now

    def hit_sync(self, key: str, limit: int, window: float) -> Decision:
        now = self._clock()
        if window > self._max_window:
            self._max_window = window
        if now - self._last_sweep >= self._max_window:
            self._sweep(now)
        entries = self._logs.get(key)
        if entries is None:
            entries = self._logs[key] = deque()
        horizon = now - window
        while entries and entries[0] <= horizon:
            entries.popleft()
        if len(entries) < limit:
            entries.append(now)
            return _decision(True, limit, len(entries), entries[0], window, now)
        oldest = entries[0] if entries else now
        return _decision(False, limit, len(entries), oldest, window, now)

    async def hit(self, key: str, limit: int, window: float) -> Decision:
        # One event loop and no await between the read and the write: atomic already.
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
        self._kv[key] = (value, self._clock() + ttl_seconds)

    async def reset(self) -> None:
        self._logs.clear()
        self._kv.clear()

    async def close(self) -> None:
        return None


# KEYS[1] = the bucket; ARGV = limit, window in microseconds, a member unique to this call.
# Redis's own clock (TIME) stamps the entry, so that every worker and machine agrees on time.
# Effects replication (the default since Redis 5; asked for explicitly on 3.2 and 4) is what
# allows TIME before a write.
SLIDING_LOG_LUA = """
if redis.replicate_commands then redis.replicate_commands() end
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
local count = redis.call('ZCARD', key)
local allowed = 0
if count < limit then
  redis.call('ZADD', key, now, ARGV[3])
  redis.call('PEXPIRE', key, math.ceil(window / 1000))
  count = count + 1
  allowed = 1
end
local oldest = now
if count > 0 then
  oldest = tonumber(redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')[2])
end
return {allowed, count, oldest, now}
"""


class RedisStore:
    """The shared store: one sorted set per bucket, updated by one Lua script, so that every
    worker process and every machine sees one count. One round trip per request (EVALSHA; EVAL
    once when the server has not seen the script yet).

    Every key starts with `prefix`. When Redis fails, `hit` raises StoreUnavailable (the limiter
    then serves the request unlimited), the key-value calls answer "nothing", and an error is
    logged at most once per ERROR_LOG_INTERVAL.
    """

    name = "shared"

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "salesplan:",
        timeout: float = 1.0,
        pause: float = 1.0,
        client: Any = None,
    ) -> None:
        self.prefix = prefix
        # One immediate retry heals a pooled connection that died with a restarted server; no
        # backoff, so that an outage costs a request milliseconds, not seconds. Never retried
        # on a timeout: the script may have run, and a retry would spend a second unit.
        self._redis: Any = client or Redis.from_url(
            url,
            socket_timeout=timeout,
            socket_connect_timeout=timeout,
            retry=Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
            health_check_interval=30,
        )
        self._sha = hashlib.sha1(SLIDING_LOG_LUA.encode()).hexdigest()
        self._member_prefix = f"{os.getpid()}-{os.urandom(4).hex()}-"
        self._counter = itertools.count()
        self._last_error_log = -math.inf
        # After a failure, calls skip Redis for `pause` seconds: a hung server then costs one
        # request per pause a timeout, not every request.
        self._pause = pause
        self._down_until = -math.inf
        self.errors = 0  # failed calls since start (for tests and health)

    def _paused(self) -> bool:
        return time.monotonic() < self._down_until

    def _failed(self, operation: str, exc: BaseException) -> None:
        self.errors += 1
        now = time.monotonic()
        self._down_until = now + self._pause
        if now - self._last_error_log >= ERROR_LOG_INTERVAL:
            self._last_error_log = now
            log.error(
                "rate-limit store (Redis) unavailable during %s: %s; serving requests without "
                "limits until it answers again",
                operation,
                type(exc).__name__,
            )

    async def _run_script(self, key: str, limit: int, window_us: int, member: str) -> Any:
        try:
            return await self._redis.evalsha(self._sha, 1, key, limit, window_us, member)
        except NoScriptError:
            # A server that has not seen the script (new, restarted or flushed): EVAL caches it.
            return await self._redis.eval(SLIDING_LOG_LUA, 1, key, limit, window_us, member)

    async def hit(self, key: str, limit: int, window: float) -> Decision:
        window_us = max(1, round(window * 1_000_000))
        member = f"{self._member_prefix}{next(self._counter)}"
        if self._paused():
            raise StoreUnavailable("paused after a failure")
        try:
            allowed, count, oldest, now = await self._run_script(
                self.prefix + key, limit, window_us, member
            )
        except Exception as exc:
            self._failed("hit", exc)
            raise StoreUnavailable(str(exc)) from exc
        return _decision(
            bool(allowed), limit, int(count), int(oldest) / 1e6, window, int(now) / 1e6
        )

    async def kv_get(self, key: str) -> str | None:
        if self._paused():
            return None
        try:
            value = await self._redis.get(self.prefix + "kv:" + key)
        except Exception as exc:
            self._failed("kv_get", exc)
            return None
        return value.decode() if isinstance(value, bytes) else value

    async def kv_set(self, key: str, value: str, ttl_seconds: int) -> None:
        """Raises StoreUnavailable when the value could not be stored: a caller that promises
        to remember something must not answer success."""
        if self._paused():
            raise StoreUnavailable("paused after a failure")
        try:
            await self._redis.set(self.prefix + "kv:" + key, value, ex=ttl_seconds)
        except Exception as exc:
            self._failed("kv_set", exc)
            raise StoreUnavailable(str(exc)) from exc

    async def ping(self) -> bool:
        """Always asks Redis (health checks must see recovery); success ends a pause."""
        try:
            ok = bool(await self._redis.ping())
        except Exception as exc:
            self._failed("ping", exc)
            return False
        self._down_until = -math.inf
        return ok

    async def reset(self) -> None:
        """Drop every key under the prefix (tests)."""
        keys = [k async for k in self._redis.scan_iter(match=self.prefix + "*", count=500)]
        for start in range(0, len(keys), 500):
            await self._redis.delete(*keys[start : start + 500])

    async def close(self) -> None:
        await self._redis.aclose()
