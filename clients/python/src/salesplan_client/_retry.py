"""When a call is tried again, and after how long (contract §17): connection errors, 408, 429,
500, 502, 503 and 504, up to `max_retries` times, with exponential backoff and jitter, and never
before the server's `Retry-After` (or, for a 429 without it, `X-RateLimit-Reset`). A method
that is not idempotent by itself (POST, PATCH) is tried again only with an Idempotency-Key."""

from __future__ import annotations

import random
import time

import httpx

from salesplan_client._errors import retry_after_of

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
INITIAL_DELAY = 0.5
MAX_DELAY = 8.0
# A server asking for a longer wait than this is answered with the error instead: the caller
# decides (the API's windows are 60 seconds).
MAX_SERVER_WAIT = 60.0


def backoff(attempt: int) -> float:
    """0.5 s, 1 s, 2 s, … up to 8 s, each shortened by up to a quarter at random."""
    delay: float = min(INITIAL_DELAY * 2.0**attempt, MAX_DELAY)
    return delay * (1 - 0.25 * random.random())


def server_wait(response: httpx.Response) -> float | None:
    """How long the server asks to wait: `Retry-After`, else on a 429 until `X-RateLimit-Reset`
    (Unix seconds when a unit frees up)."""
    wait = retry_after_of(response.headers)
    if wait is None and response.status_code == 429:
        reset = response.headers.get("x-ratelimit-reset")
        try:
            wait = max(0.0, float(reset) - time.time()) if reset is not None else None
        except ValueError:
            wait = None
    return wait


def delay_after(attempt: int, response: httpx.Response | None) -> float | None:
    """Seconds to wait before attempt `attempt + 1`, or None when it must not be tried again."""
    delay = backoff(attempt)
    if response is None:
        return delay
    if response.status_code not in RETRY_STATUSES:
        return None
    wait = server_wait(response)
    if wait is None:
        return delay
    if wait > MAX_SERVER_WAIT:
        return None
    # At least what the server asked, plus a little jitter so that clients told the same
    # instant do not all come back at once.
    return max(wait, delay) + random.random() * min(0.25, 0.1 * max(wait, delay))
