"""The webhook delivery job kinds (contract §13 "Delivery").

`run_webhook_delivery` claims due deliveries (a lease on `next_attempt_at`: a worker killed
mid-delivery leaves rows that come due again when the lease ends, so nothing is lost; the
`webhook-id` is the event's id, the same on every attempt) and starts each as a task of its own,
at most `PER_ENDPOINT` at once per endpoint and at most one batch's worth per endpoint claimed at
a time, so that a slow receiver holds only its own slots, never another endpoint's deliveries nor
the worker's other job kinds. Each task writes its own outcome (only while it holds the lease).

Outcomes: 2xx delivered; 410 disables the endpoint at once; anything else (a redirect, a
timeout of 15 s, a refused destination) is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
14 h, 20 h and 24 h (± 10 %; `Retry-After` honoured on 429/503), then failed; an endpoint whose
every attempt failed for 5 days is disabled with a reason.
"""

from __future__ import annotations

import asyncio
import email.utils
import errno
import logging
import random
import ssl
import time
import uuid
from collections import Counter
from collections.abc import Coroutine
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import httpx

from salesplan.kit import outbound
from salesplan.kit.clock import utcnow
from salesplan.kit.ids import uuid7
from salesplan.kit.scoping import AnyRow
from salesplan.webhooks import events, repository, signing
from salesplan.worker.context import WorkerContext

log = logging.getLogger("salesplan.webhooks")

PER_ENDPOINT = 4
BATCH = 100
TIMEOUT_SECONDS = 15.0
RETRY_DELAYS = tuple(
    timedelta(seconds=s)
    for s in (5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 14 * 3600, 20 * 3600, 24 * 3600)
)
JITTER = 0.10
MAX_RETRY_AFTER = timedelta(hours=24)
_MAX_RETRY_AFTER_SECONDS = int(MAX_RETRY_AFTER.total_seconds())
# Attempts an event gets: the first and one per retry delay. A claim counts as an attempt
# (killed worker, crashed delivery included); a claim past the limit sends nothing and fails.
MAX_ATTEMPTS = 1 + len(RETRY_DELAYS)
# A receiver's answer: its status and headers; a body is read only when it says it is this
# small (the connection is kept then), otherwise the connection is dropped unread.
MAX_ANSWER_BYTES = 4096
DISABLE_AFTER = timedelta(days=5)
KEEP_EVENTS = timedelta(days=30)
PRUNE_EVERY_SECONDS = 3600.0
GONE_REASON = "The endpoint answered 410 Gone."


def retry_delay(attempts: int, retry_after: timedelta | None = None) -> timedelta | None:
    """When to try again after the `attempts`-th failed attempt (None: no more attempts)."""
    if attempts > len(RETRY_DELAYS):
        return None
    if retry_after is not None:
        return min(retry_after, MAX_RETRY_AFTER)
    return RETRY_DELAYS[attempts - 1] * random.uniform(1 - JITTER, 1 + JITTER)


def parse_retry_after(value: str | None, now: datetime) -> timedelta | None:
    """RFC 9110 `Retry-After`: seconds, or an HTTP date; at most 24 h whatever it says
    (`99999999999999999999` is 24 h), and never raises: what cannot be read is ignored."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        # Compared as text first: a number of thousands of digits is not even converted.
        if len(value) > len(str(_MAX_RETRY_AFTER_SECONDS)):
            return MAX_RETRY_AFTER
        return timedelta(seconds=min(int(value), _MAX_RETRY_AFTER_SECONDS))
    if len(value) > 64:  # an HTTP date is 29 characters
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        return None
    try:
        wait = when - now
    except OverflowError:
        return MAX_RETRY_AFTER
    return min(max(wait, timedelta(0)), MAX_RETRY_AFTER)


@dataclass
class _Dispatcher:
    """One worker's deliveries in flight."""

    ctx: WorkerContext
    in_flight: Counter[uuid.UUID] = field(default_factory=Counter)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    client: httpx.AsyncClient | None = None
    watcher: asyncio.Task[None] | None = None

    def http(self) -> httpx.AsyncClient:
        if self.client is None:
            pol = outbound.policy(self.ctx.settings)
            self.client = outbound.async_client(pol, timeout=TIMEOUT_SECONDS)
        return self.client

    def start(self, coro: Coroutine[object, None, None], endpoint_id: uuid.UUID) -> None:
        self.in_flight[endpoint_id] += 1
        task = asyncio.create_task(coro)
        self.tasks.add(task)

        def done(t: asyncio.Task[None]) -> None:
            self.tasks.discard(t)
            self.in_flight[endpoint_id] -= 1
            if self.in_flight[endpoint_id] <= 0:
                del self.in_flight[endpoint_id]

        task.add_done_callback(done)
        if self.watcher is None:
            self.watcher = asyncio.create_task(self._stop_when_stopping())

    async def _stop_when_stopping(self) -> None:
        await self.ctx.stopping.wait()
        for task in list(self.tasks):
            task.cancel()  # their leases run out; another worker takes them over
        await asyncio.gather(*self.tasks, return_exceptions=True)
        if self.client is not None:
            await self.client.aclose()
        _DISPATCHERS.pop(self.ctx.worker_id, None)


_DISPATCHERS: dict[str, _Dispatcher] = {}


def _dispatcher(ctx: WorkerContext) -> _Dispatcher:
    found = _DISPATCHERS.get(ctx.worker_id)
    if found is None:
        found = _DISPATCHERS[ctx.worker_id] = _Dispatcher(ctx)
    return found


async def settle(ctx: WorkerContext) -> None:
    """Wait for this worker's deliveries in flight (tests, the bench)."""
    found = _DISPATCHERS.get(ctx.worker_id)
    while found is not None and found.tasks:
        await asyncio.gather(*list(found.tasks), return_exceptions=True)


async def run_webhook_delivery(ctx: WorkerContext) -> int:
    """Claim due deliveries and start them; answers how many were started."""
    dispatcher = _dispatcher(ctx)
    now = utcnow()
    lease_until = now + timedelta(seconds=ctx.settings.worker_lease_seconds)
    async with ctx.unit_of_work() as uow:
        session = await uow.session()
        candidates = (
            await session.execute(repository.due_candidates(now, PER_ENDPOINT, BATCH))
        ).all()
        chosen: list[uuid.UUID] = []
        taken: Counter[uuid.UUID] = Counter()
        for delivery_id, endpoint_id in candidates:
            if dispatcher.in_flight[endpoint_id] + taken[endpoint_id] < PER_ENDPOINT:
                taken[endpoint_id] += 1
                chosen.append(delivery_id)
        if not chosen:
            return 0
        claimed = await repository.claim(session, chosen, ctx.worker_id, now, lease_until)
        endpoints, payloads = await repository.claimed_parts(
            session, {r.endpoint_id for r in claimed}, {r.event_id for r in claimed}
        )
    for row in claimed:
        endpoint = endpoints.get(row.endpoint_id)
        payload = payloads.get(row.event_id)
        if endpoint is None or payload is None:
            continue  # deleted meanwhile: the cascade took the delivery too
        dispatcher.start(_deliver(dispatcher, row, endpoint, payload), row.endpoint_id)
    return len(claimed)


def _secrets(ctx: WorkerContext, endpoint: AnyRow, now: datetime) -> list[str]:
    key = ctx.settings.signing_key
    live = [signing.unseal(key, endpoint.secret_encrypted)]
    expires = endpoint.previous_secret_expires_at
    if endpoint.previous_secret_encrypted and expires is not None and expires > now:
        live.append(signing.unseal(key, endpoint.previous_secret_encrypted))
    return live


@dataclass
class _Result:
    status_code: int | None
    error: str | None
    retry_after: timedelta | None = None
    duration_ms: int = 0

    @property
    def delivered(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


# What a try's `error` says (contract §13 "Attempt history"): our own words, never the
# receiver's body.
REDIRECT = "redirect not followed"
REFUSED_CONNECTION = "connection refused"
TLS_FAILED = "TLS handshake failed"
INTERNAL = "internal error"
LIMIT_REACHED = "attempt limit reached"


def timeout_error() -> str:
    return f"timeout after {TIMEOUT_SECONDS:g} s"


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc`, its causes and contexts, and the members of exception groups among them."""
    seen: list[BaseException] = []
    stack = [exc]
    while stack and len(seen) < 32:
        current = stack.pop()
        if any(current is s for s in seen):
            continue
        seen.append(current)
        stack.extend(e for e in (current.__cause__, current.__context__) if e is not None)
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)
    return seen


def network_error(exc: BaseException) -> str:
    """A network failure in our own words: a timeout, a refused connection, a failed TLS
    handshake, or (anything else) "could not connect to the server"."""
    chain = _chain(exc)
    if any(isinstance(e, TimeoutError | httpx.TimeoutException) for e in chain):
        return timeout_error()
    if any(isinstance(e, ssl.SSLError) for e in chain):
        return TLS_FAILED
    if any(isinstance(e, ConnectionRefusedError) for e in chain) or any(
        getattr(e, "errno", None) == errno.ECONNREFUSED or "connection refused" in str(e).lower()
        for e in chain
    ):
        return REFUSED_CONNECTION
    return outbound.UNREACHABLE


async def post(
    client: httpx.AsyncClient, url: str, message_id: str, body: bytes, secrets_: list[str]
) -> _Result:
    """One attempt: the signed POST; never raises for the receiver's or the network's sake.
    The answer's status and headers are read, its body only when it says it is at most
    MAX_ANSWER_BYTES: a receiver streaming gigabytes costs one dropped connection."""
    timestamp = int(time.time())
    headers = {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signing.signatures(secrets_, message_id, timestamp, body),
        "content-type": "application/json",
        "user-agent": "salesplan-webhooks/1",
    }
    started = time.monotonic()

    def took() -> int:
        return int((time.monotonic() - started) * 1000)

    try:
        async with asyncio.timeout(TIMEOUT_SECONDS):
            async with client.stream("POST", url, content=body, headers=headers) as response:
                code = response.status_code
                retry_header = response.headers.get("retry-after")
                if _small(response.headers.get("content-length")):
                    await response.aread()
                # Leaving the block unread closes the connection: nothing more is received.
    except outbound.DestinationNotAllowed:
        return _Result(None, outbound.REFUSED, duration_ms=took())
    except (TimeoutError, httpx.HTTPError, OSError, outbound.OutboundError) as exc:
        return _Result(None, network_error(exc), duration_ms=took())
    retry_after = None
    if code in (429, 503):
        retry_after = parse_retry_after(retry_header, utcnow())
    # The receiver's body is never kept (contract §12): its status says enough.
    error = None if 200 <= code < 300 else f"HTTP {code}"
    if 300 <= code < 400:
        error = REDIRECT
    return _Result(code, error, retry_after, took())


def _small(content_length: str | None) -> bool:
    if content_length is None or not content_length.isascii() or not content_length.isdigit():
        return False
    return len(content_length) <= 5 and int(content_length) <= MAX_ANSWER_BYTES


async def _deliver(dispatcher: _Dispatcher, row: AnyRow, endpoint: AnyRow, payload: str) -> None:
    """A lane: deliver `row`, then, in the transaction that records its outcome, claim the
    endpoint's next due delivery and deliver that, until none is due (so that a backlog drains
    without waiting for the worker loop's next turn)."""
    ctx = dispatcher.ctx
    while not ctx.stopping.is_set():
        result = await _attempt(dispatcher, row, endpoint, payload)
        try:
            following = await _record(ctx, row, endpoint, result)
        except Exception:  # the lease runs out and the delivery is tried again
            log.exception("webhooks: recording a delivery's outcome failed")
            return
        if following is None:
            return
        row, endpoint, payload = following


async def _attempt(dispatcher: _Dispatcher, row: AnyRow, endpoint: AnyRow, payload: str) -> _Result:
    """One attempt's outcome, whatever goes wrong: past the attempt limit nothing is sent (a
    delivery whose outcome could not be written is claimed again, one attempt more each time),
    and a crash is an outcome like a refusal, so the attempt counts and the limit holds."""
    if row.attempts > MAX_ATTEMPTS:
        return _Result(None, LIMIT_REACHED)
    try:
        try:
            secrets_ = _secrets(dispatcher.ctx, endpoint, utcnow())
        except ValueError:  # a secret that no longer decrypts (the server's key changed)
            return _Result(None, "the signing secret cannot be read")
        if endpoint.payload == "thin":  # `data` = what names the resource
            payload = events.thin(payload)
        return await post(
            dispatcher.http(), endpoint.url, str(row.event_id), payload.encode(), secrets_
        )
    except Exception:
        log.exception("webhooks: a delivery attempt crashed")
        return _Result(None, INTERNAL)


async def _record(
    ctx: WorkerContext, row: AnyRow, endpoint: AnyRow, result: _Result
) -> tuple[AnyRow, AnyRow, str] | None:
    """Write the outcome and the try; answers the endpoint's next due delivery, claimed in
    the same transaction (None when there is none, or the endpoint is no longer enabled)."""
    now = utcnow()
    lease_until = now + timedelta(seconds=ctx.settings.worker_lease_seconds)
    values: dict[str, object] = {
        "last_status_code": result.status_code,
        "last_error": result.error,
        "updated_at": now,
    }
    gone = result.status_code == 410
    if result.delivered or gone:
        values |= {"status": "delivered" if result.delivered else "failed"}
        values |= {"next_attempt_at": None}
    else:
        delay = None
        if result.error != LIMIT_REACHED:
            delay = retry_delay(row.attempts, result.retry_after)
        if delay is None:
            values |= {"status": "failed", "next_attempt_at": None}
        else:
            values |= {"next_attempt_at": now + delay}
    async with ctx.unit_of_work() as uow, uow.atomic() as conn:
        written = await repository.write_outcome(conn, row.id, ctx.worker_id, values)
        if written and result.error != LIMIT_REACHED:
            await repository.add_try(
                conn,
                {
                    "id": uuid7(),
                    "organization_id": row.organization_id,
                    "delivery_id": row.id,
                    "at": now,
                    "status_code": result.status_code,
                    "duration_ms": result.duration_ms,
                    "error": result.error,
                },
            )
        if written and result.delivered and endpoint.failing_since is not None:  # as of claim
            await repository.endpoint_succeeded(conn, row.endpoint_id)
        elif written and gone:
            await repository.disable_endpoint(conn, row.endpoint_id, GONE_REASON, now)
        elif written and not result.delivered:
            await repository.endpoint_failed(conn, row.endpoint_id, now, now - DISABLE_AFTER)
        if gone:
            return None
        return await repository.claim_next(conn, row.endpoint_id, ctx.worker_id, now, lease_until)


async def prune_webhook_events(ctx: WorkerContext) -> None:
    """Forget events older than 30 days (and their deliveries); run by the pruning job kind
    (`jobs.pruning.Periodic`) at most once an hour."""
    async with ctx.unit_of_work() as uow, uow.atomic() as conn:
        await repository.prune(conn, utcnow() - KEEP_EVENTS)
