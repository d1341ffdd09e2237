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
import logging
import random
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import httpx

from salesplan.kit import outbound
from salesplan.kit.clock import utcnow
from salesplan.webhooks import repository, signing
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
    """RFC 9110 `Retry-After`: seconds, or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return timedelta(seconds=int(value))
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(when - now, timedelta(0))


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

    def start(self, coro: Any, endpoint_id: uuid.UUID) -> None:
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


def _secrets(ctx: WorkerContext, endpoint: Any, now: datetime) -> list[str]:
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

    @property
    def delivered(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


async def post(
    client: httpx.AsyncClient, url: str, message_id: str, body: bytes, secrets_: list[str]
) -> _Result:
    """One attempt: the signed POST; never raises for the receiver's or the network's sake."""
    timestamp = int(time.time())
    headers = {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signing.signatures(secrets_, message_id, timestamp, body),
        "content-type": "application/json",
        "user-agent": "salesplan-webhooks/1",
    }
    try:
        async with asyncio.timeout(TIMEOUT_SECONDS):
            response = await client.post(url, content=body, headers=headers)
    except outbound.DestinationNotAllowed:
        return _Result(None, outbound.REFUSED)
    except (TimeoutError, httpx.HTTPError, OSError, outbound.OutboundError):
        return _Result(None, outbound.UNREACHABLE)
    code = response.status_code
    retry_after = None
    if code in (429, 503):
        retry_after = parse_retry_after(response.headers.get("retry-after"), utcnow())
    # The receiver's body is never kept (contract §12): its status says enough.
    error = None if 200 <= code < 300 else f"HTTP {code}"
    if 300 <= code < 400:
        error = f"HTTP {code} (redirects are not followed)"
    return _Result(code, error, retry_after)


async def _deliver(dispatcher: _Dispatcher, row: Any, endpoint: Any, payload: str) -> None:
    """A lane: deliver `row`, then, in the transaction that records its outcome, claim the
    endpoint's next due delivery and deliver that, until none is due (so that a backlog drains
    without waiting for the worker loop's next turn)."""
    ctx = dispatcher.ctx
    while not ctx.stopping.is_set():
        try:
            secrets_ = _secrets(ctx, endpoint, utcnow())
            result = await post(
                dispatcher.http(), endpoint.url, str(row.event_id), payload.encode(), secrets_
            )
        except ValueError:  # a secret that no longer decrypts (the server's key changed)
            result = _Result(None, "the signing secret cannot be read")
        try:
            following = await _record(ctx, row, endpoint, result)
        except Exception:  # the lease runs out and the delivery is tried again
            log.exception("webhooks: recording a delivery's outcome failed")
            return
        if following is None:
            return
        row, endpoint, payload = following


async def _record(
    ctx: WorkerContext, row: Any, endpoint: Any, result: _Result
) -> tuple[Any, Any, str] | None:
    """Write the outcome; answers the endpoint's next due delivery, claimed in the same
    transaction (None when there is none, or the endpoint is no longer enabled)."""
    now = utcnow()
    lease_until = now + timedelta(seconds=ctx.settings.worker_lease_seconds)
    values: dict[str, Any] = {
        "last_status_code": result.status_code,
        "last_error": result.error,
        "updated_at": now,
    }
    async with ctx.unit_of_work() as uow, uow.atomic() as conn:
        if result.delivered:
            values |= {"status": "delivered", "next_attempt_at": None}
            written = await repository.write_outcome(conn, row.id, ctx.worker_id, values)
            if written and endpoint.failing_since is not None:  # as of the claim
                await repository.endpoint_succeeded(conn, row.endpoint_id)
        elif result.status_code == 410:
            values |= {"status": "failed", "next_attempt_at": None}
            if await repository.write_outcome(conn, row.id, ctx.worker_id, values):
                await repository.disable_endpoint(conn, row.endpoint_id, GONE_REASON, now)
            return None
        else:
            delay = retry_delay(row.attempts, result.retry_after)
            if delay is None:
                values |= {"status": "failed", "next_attempt_at": None}
            else:
                values |= {"next_attempt_at": now + delay}
            if await repository.write_outcome(conn, row.id, ctx.worker_id, values):
                await repository.endpoint_failed(conn, row.endpoint_id, now, now - DISABLE_AFTER)
        return await repository.claim_next(conn, row.endpoint_id, ctx.worker_id, now, lease_until)


async def prune_webhook_events(ctx: WorkerContext) -> None:
    """Forget events older than 30 days (and their deliveries); run by the pruning job kind
    (`jobs.pruning.Periodic`) at most once an hour."""
    async with ctx.unit_of_work() as uow, uow.atomic() as conn:
        await repository.prune(conn, utcnow() - KEEP_EVENTS)
