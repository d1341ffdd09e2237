"""The delivery job kind: claim due outbox rows, send them, record the outcome.

Claiming is one `UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED LIMIT n) RETURNING` that
sets a lease by moving `next_attempt_at` forward: several workers never take the same row, and
the rows of a worker killed mid-batch come due again when the lease ends (at-least-once; the
`Message-ID` stays the same, so a receiving server can tell a duplicate). Outcomes are written
only where the lease is still this worker's.

Sent messages are recorded in groups (`_SentRecorder`): each SMTP connection waits until its
message's `sent` is committed before it sends its next, and whatever the connections had
accepted meanwhile is written together — one multi-row statement per table (message states,
feed entries, enrollments), idempotent on the message (the lease check and the feed's unique
source keys), so a crash and re-claim never records a message twice and re-sends only what was
in flight. `after_sent` is the one place where a group's sent messages are known, in the
transaction that marks them `sent`.

Sender caps (contract §14) are counted at claim time from the messages themselves: those one
From address sent in the window plus those it has in flight (claimed: `from_address` set,
`sent_at` null), under an advisory lock on PostgreSQL so that several workers never overshoot.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import random
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parseaddr
from typing import Any

import aiosmtplib
import httpx
import orjson
from sqlalchemy import Table, and_, bindparam, case, func, not_, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.config import Settings
from salesplan.engage.delivery import sequence
from salesplan.engage.delivery.dkim import DkimSigner, load_signer
from salesplan.engage.delivery.integrations import slack_webhook_url
from salesplan.engage.delivery.mime import build_email
from salesplan.feed.ingest import engage_messages_sent
from salesplan.idempotency import prune_expired
from salesplan.kit import outbound
from salesplan.kit.clock import utcnow
from salesplan.models.engage_delivery import EngageMessage, SenderPause
from salesplan.webhooks import events
from salesplan.worker.context import WorkerContext

BATCH = 200
SMTP_CONNECTIONS = 16
LEASE = timedelta(minutes=5)
MAX_ATTEMPTS = 5
BACKOFF_BASE = timedelta(seconds=30)
BACKOFF_CAP = timedelta(hours=1)
# How long a throttled sender rests when the provider names no time.
DEFAULT_PAUSE = timedelta(seconds=60)
THROTTLE_CODES = frozenset({421, 451, 452})
PRUNE_EVERY_SECONDS = 60.0
CAP_REACHED = "sender cap reached"
# When the cap is full of messages still in flight: look again after this.
CAP_RECHECK = timedelta(seconds=10)

_last_prune = 0.0


def backoff(attempts: int) -> timedelta:
    """Exponential with full jitter in [0.5, 1.5) of the step, capped."""
    step = min(BACKOFF_BASE * (2 ** max(0, attempts - 1)), BACKOFF_CAP)
    return step * random.uniform(0.5, 1.5)


@dataclass
class Outcome:
    """What happened to one claimed message."""

    message_id: Any
    kind: str  # sent | retry | failed | throttled
    error: str | None = None
    pause_until: datetime | None = None


OnSent = Callable[[EngageMessage], Awaitable[None]]


async def run_delivery(ctx: WorkerContext) -> int:
    """Deliver one batch of due messages; the number handled (0 when nothing was due)."""
    await _prune(ctx)
    signer = load_signer(ctx.settings)
    async with ctx.sessionmaker() as session:
        messages, deferred = await claim(session, ctx.settings, ctx.worker_id)
        await session.commit()
    if not messages:
        return deferred
    email = [m for m in messages if m.channel == "EMAIL"]
    slack = [m for m in messages if m.channel == "SLACK"]
    recorder = _SentRecorder(ctx)
    outcomes: list[Outcome] = []
    if email:
        outcomes += await send_email_batch(ctx.settings, email, recorder.sent, signer)
    if slack:
        async with ctx.sessionmaker() as session:
            outcomes += await send_slack_batch(session, ctx.settings, slack, recorder.sent)
    async with ctx.sessionmaker() as session:
        await record(session, ctx.worker_id, messages, outcomes)
        await session.commit()
    return len(messages) + deferred


def envelope_sender(settings: Settings) -> str:
    """The From mailbox (lower case): what sender caps count by."""
    return (parseaddr(settings.smtp_from)[1] or settings.smtp_from).lower()[:320]


class _SentRecorder:
    """Group commit of sent messages. `sent(message)` returns once the message is recorded
    `sent`; the messages that arrive while a group is being written form the next group."""

    def __init__(self, ctx: WorkerContext) -> None:
        self.ctx = ctx
        self.sender = envelope_sender(ctx.settings)
        self.pending: list[tuple[EngageMessage, asyncio.Future[None]]] = []
        self.writer: asyncio.Task[None] | None = None

    async def sent(self, message: EngageMessage) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.pending.append((message, done))
        if self.writer is None or self.writer.done():
            self.writer = asyncio.create_task(self._write_groups())
        await done

    async def _write_groups(self) -> None:
        while self.pending:
            group, self.pending = self.pending, []
            try:
                await self._write([m for m, _ in group])
            except Exception as exc:
                for _, done in group:
                    done.set_exception(exc)
            else:
                for _, done in group:
                    done.set_result(None)

    async def _write(self, messages: list[EngageMessage]) -> None:
        sent_at = utcnow()
        async with self.ctx.engine.begin() as conn:
            ids = {m.id for m in messages}
            written = set(
                (
                    await conn.execute(
                        _sent_statement(),
                        {
                            "b_ids": list(ids),
                            "b_owner": self.ctx.worker_id,
                            "b_at": sent_at,
                            "b_from": self.sender,
                        },
                    )
                ).scalars()
            )
            # A message whose lease was lost is another worker's to record.
            sent = [m for m in messages if m.id in written]
            if sent:
                await after_sent(conn, self.ctx.settings, sent, sent_at)


async def after_sent(
    conn: AsyncConnection, settings: Settings, sent: list[EngageMessage], sent_at: datetime
) -> None:
    """Everything that follows from a group of messages the providers accepted at `sent_at`,
    in the transaction that marks them `sent` (each message is here exactly once): the feed
    records the e-mails (feed/ingest.py), and campaign enrollments move to `sent` so that the
    next step is scheduled from this send (campaigns.py), and the webhook events are recorded."""
    await conn.run_sync(engage_messages_sent, sent, sent_at, settings.smtp_from)
    await sequence.mark_sent_many(conn, [m for m in sent if m.campaign_id is not None], sent_at)
    # Outbound webhooks (contract §13): `engage_message.sent`, one set-based write per group.
    changed = {"status": "sent", "sent_at": sent_at, "updated_at": sent_at}
    await events.record_engage_messages(conn, [(m, "engage_message.sent", changed) for m in sent])


@functools.cache
def _sent_statement() -> Any:
    """A group's `sent`, written only where this worker still holds the lease; answers the
    ids written."""
    table: Table = EngageMessage.__table__  # type: ignore[assignment]
    at = bindparam("b_at", type_=table.c.sent_at.type)
    return (
        table.update()
        .where(
            table.c.id.in_(bindparam("b_ids", expanding=True)),
            table.c.lease_owner == bindparam("b_owner"),
        )
        .values(
            status="sent",
            last_error=None,
            next_attempt_at=None,
            sent_at=at,
            from_address=case(
                (table.c.channel == "EMAIL", bindparam("b_from", type_=table.c.from_address.type)),
                else_=None,
            ),
            lease_owner=None,
            lease_expires_at=None,
            updated_at=at,
        )
        .returning(table.c.id)
    )


async def _prune(ctx: WorkerContext) -> None:
    global _last_prune
    if time.monotonic() - _last_prune < PRUNE_EVERY_SECONDS:
        return
    _last_prune = time.monotonic()
    async with ctx.sessionmaker() as session:
        await prune_expired(session)
        await session.commit()


async def claim(
    session: AsyncSession, settings: Settings, worker_id: str
) -> tuple[list[EngageMessage], int]:
    """Lease a batch of due messages: (the messages, how many due e-mails were deferred to the
    sender's next free slot by a sender cap)."""
    now = utcnow()
    pauses = (
        await session.execute(select(SenderPause.sender).where(SenderPause.paused_until > now))
    ).scalars()
    paused = set(pauses)
    due = select(EngageMessage.id).where(EngageMessage.next_attempt_at <= now)
    slack_paused = [s.split(":", 1)[1] for s in paused if s.startswith("slack:")]
    if slack_paused:
        orgs = [uuid.UUID(s) for s in slack_paused]
        due = due.where(
            not_(and_(EngageMessage.channel == "SLACK", EngageMessage.organization_id.in_(orgs)))
        )
    sender = envelope_sender(settings)
    email_sendable = bool(settings.smtp_host) and "smtp" not in paused
    capped = email_sendable and (
        settings.send_limit_per_hour is not None or settings.send_limit_per_day is not None
    )
    if not capped:
        if not email_sendable:
            # No relay configured: e-mail stays queued until one is (contract §10).
            due = due.where(EngageMessage.channel != "EMAIL")
        return await _lease(session, due, BATCH, worker_id, sender, now), 0
    others = await _lease(
        session, due.where(EngageMessage.channel != "EMAIL"), BATCH, worker_id, sender, now
    )
    emails = due.where(EngageMessage.channel == "EMAIL")
    room, free_at = await sender_room(session, settings, sender, now)
    if room > 0:
        return others + await _lease(session, emails, room, worker_id, sender, now), 0
    return others, await _defer(session, emails, free_at)


async def _lease(
    session: AsyncSession, due: Any, limit: int, worker_id: str, sender: str, now: datetime
) -> list[EngageMessage]:
    due = due.order_by(EngageMessage.next_attempt_at).limit(limit).with_for_update(skip_locked=True)
    stmt = (
        update(EngageMessage)
        .where(EngageMessage.id.in_(due.scalar_subquery()))
        .values(
            status="sending",
            attempts=EngageMessage.attempts + 1,
            lease_owner=worker_id,
            lease_expires_at=now + LEASE,
            next_attempt_at=now + LEASE,
            # In flight from this sender: sender caps count it (see sender_room).
            from_address=case((EngageMessage.channel == "EMAIL", sender), else_=None),
            updated_at=now,
        )
        .returning(EngageMessage)
        .execution_options(synchronize_session=False)
    )
    return list((await session.scalars(stmt)).all())


async def sender_room(
    session: AsyncSession, settings: Settings, sender: str, now: datetime
) -> tuple[int, datetime]:
    """How many more e-mails `sender` may hand to the relay now under the caps (those in
    flight count), and, when none, when its next slot frees. On PostgreSQL the sender's
    advisory lock is held to the end of the transaction, so that the claims of several workers
    are counted one after the other; SQLite has one writer, and a claim whose snapshot another
    process's claim made stale fails and is retried."""
    if session.get_bind().dialect.name == "postgresql":
        lock = int.from_bytes(hashlib.sha256(sender.encode()).digest()[:8], "big", signed=True)
        await session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": lock})
    mine = EngageMessage.from_address == sender
    in_flight = await session.scalar(
        select(func.count()).select_from(EngageMessage).where(mine, EngageMessage.sent_at.is_(None))
    )
    busy = int(in_flight or 0)
    room, free_at = BATCH, now
    windows = (
        (settings.send_limit_per_hour, timedelta(hours=1)),
        (settings.send_limit_per_day, timedelta(days=1)),
    )
    for limit, window in windows:
        if limit is None:
            continue
        since = now - window
        in_window = mine & (EngageMessage.sent_at > since)
        count = int(
            await session.scalar(select(func.count()).select_from(EngageMessage).where(in_window))
            or 0
        )
        left = limit - count - busy
        room = min(room, left)
        if left > 0:
            continue
        # The slot frees when the send that must leave the window for one to open does.
        nth = count + busy - limit  # 0-based, among this window's sends, oldest first
        if nth >= count:  # the cap is full of messages in flight: look again shortly
            free_at = max(free_at, now + CAP_RECHECK)
            continue
        oldest = await session.scalar(
            select(EngageMessage.sent_at)
            .where(in_window)
            .order_by(EngageMessage.sent_at)
            .offset(nth)
            .limit(1)
        )
        free_at = max(free_at, (oldest or now) + window)
    return max(0, room), free_at


async def _defer(session: AsyncSession, due: Any, until: datetime) -> int:
    """Due e-mails over the sender's cap wait for its next free slot (contract §14): still
    `scheduled`, never refused, and not an attempt."""
    due = due.order_by(EngageMessage.next_attempt_at).limit(BATCH).with_for_update(skip_locked=True)
    result = await session.execute(
        update(EngageMessage)
        .where(EngageMessage.id.in_(due.scalar_subquery()))
        .values(status="scheduled", last_error=CAP_REACHED, next_attempt_at=until)
        .execution_options(synchronize_session=False)
    )
    return int(getattr(result, "rowcount", 0) or 0)


def _smtp_outcome(message: EngageMessage, exc: Exception) -> Outcome:
    code = getattr(exc, "code", None)
    if isinstance(exc, aiosmtplib.SMTPRecipientsRefused) and exc.recipients:
        code = exc.recipients[0].code
        exc = exc.recipients[0]
    text = f"SMTP {code}: {getattr(exc, 'message', '') or exc}" if code else f"SMTP: {exc}"
    text = text[:1000]
    if code in THROTTLE_CODES:
        return Outcome(message.id, "throttled", text, utcnow() + DEFAULT_PAUSE)
    if isinstance(code, int) and 500 <= code < 600:
        return Outcome(message.id, "failed", text)
    return Outcome(message.id, "retry", text)


async def _smtp_client(settings: Settings) -> aiosmtplib.SMTP:
    client = aiosmtplib.SMTP(
        hostname=settings.smtp_host,
        port=settings.smtp_port,
        start_tls=settings.smtp_starttls,
        timeout=30,
    )
    await client.connect()
    if settings.smtp_username:
        await client.login(settings.smtp_username, settings.smtp_password or "")
    return client


async def send_email_batch(
    settings: Settings,
    messages: list[EngageMessage],
    on_sent: OnSent,
    signer: DkimSigner | None = None,
) -> list[Outcome]:
    """Send over a few SMTP connections at once, each reused for its share of the batch. The
    first throttling answer stops the whole batch: the rest waits for the pause."""
    origin, key = settings.public_url, settings.signing_key
    envelope_from = parseaddr(settings.smtp_from)[1] or settings.smtp_from
    throttled: list[datetime] = []
    outcomes: dict[Any, Outcome] = {}
    lanes = min(SMTP_CONNECTIONS, len(messages))

    async def lane(share: list[EngageMessage]) -> None:
        client: aiosmtplib.SMTP | None = None
        try:
            for message in share:
                if throttled:
                    break
                try:
                    if client is None or not client.is_connected:
                        client = await _smtp_client(settings)
                    mail = build_email(message, settings.smtp_from, origin, key, signer)
                    await client.sendmail(envelope_from, [message.to_address or ""], mail)
                    outcomes[message.id] = Outcome(message.id, "sent")
                    await on_sent(message)
                except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
                    outcome = _smtp_outcome(message, exc)
                    outcomes[message.id] = outcome
                    if outcome.kind == "throttled" and outcome.pause_until is not None:
                        throttled.append(outcome.pause_until)
                    if isinstance(exc, aiosmtplib.SMTPServerDisconnected | OSError):
                        client = None
        finally:
            if client is not None and client.is_connected:
                try:
                    await client.quit()
                except (aiosmtplib.SMTPException, OSError):
                    client.close()

    await asyncio.gather(*(lane(messages[i::lanes]) for i in range(lanes)))
    until = max(throttled) if throttled else None
    result = []
    for message in messages:
        outcome = outcomes.get(message.id)
        if outcome is None:  # not tried: the sender was throttled meanwhile
            outcome = Outcome(message.id, "throttled", "Sender paused by the provider.", until)
        if outcome.kind == "throttled":
            outcome.pause_until = until
        result.append(outcome)
    return result


async def send_slack_batch(
    session: AsyncSession, settings: Settings, messages: list[EngageMessage], on_sent: OnSent
) -> list[Outcome]:
    results: list[Outcome] = []
    paused: dict[Any, datetime] = {}
    urls: dict[Any, str | None] = {}
    # Contract §12: the webhook is a user's URL: public destinations only, no redirects, our
    # own error texts (never the server's body).
    async with outbound.async_client(outbound.policy(settings)) as http:
        for message in messages:
            org = message.organization_id
            if org in paused:
                results.append(Outcome(message.id, "throttled", "Sender paused.", paused[org]))
                continue
            if org not in urls:
                urls[org] = await slack_webhook_url(session, settings, org)
            url = urls[org]
            if not url:
                results.append(Outcome(message.id, "failed", "No Slack webhook URL configured."))
                continue
            text = f"*{message.subject}*\n{message.body}" if message.subject else message.body
            try:
                response = await http.post(
                    url,
                    content=orjson.dumps({"text": text}),
                    headers={"Content-Type": "application/json"},
                )
            except outbound.DestinationNotAllowed:
                results.append(Outcome(message.id, "failed", outbound.REFUSED))
                continue
            except httpx.InvalidURL:
                results.append(Outcome(message.id, "failed", "invalid Slack webhook URL"))
                continue
            except (httpx.HTTPError, outbound.OutboundError):
                results.append(Outcome(message.id, "retry", outbound.UNREACHABLE))
                continue
            if response.status_code == 429:
                seconds = _retry_after(response.headers.get("Retry-After"))
                paused[org] = utcnow() + seconds
                results.append(Outcome(message.id, "throttled", "Slack 429", paused[org]))
            elif response.is_success:
                results.append(Outcome(message.id, "sent"))
                await on_sent(message)
            elif response.status_code >= 500:
                results.append(Outcome(message.id, "retry", f"Slack {response.status_code}"))
            else:  # the status only: the body is the server's, not ours to repeat
                results.append(Outcome(message.id, "failed", f"Slack {response.status_code}"))
    return results


def _retry_after(value: str | None) -> timedelta:
    try:
        return timedelta(seconds=max(1, min(3600, int(value or ""))))
    except ValueError:
        return DEFAULT_PAUSE


async def record(
    session: AsyncSession, worker_id: str, messages: list[EngageMessage], outcomes: list[Outcome]
) -> None:
    """Write the outcomes other than `sent` (written as they happen, by `_SentRecorder`) where
    the lease is still ours, and the senders' pauses."""
    now = utcnow()
    by_id = {m.id: m for m in messages}
    rows: list[dict[str, Any]] = []
    pauses: dict[str, datetime] = {}
    failed: list[EngageMessage] = []
    for outcome in outcomes:
        if outcome.kind == "sent":
            continue
        message = by_id[outcome.message_id]
        row: dict[str, Any] = {
            "b_id": message.id,
            "b_owner": worker_id,
            "status": message.status,
            "attempts": message.attempts,
            "last_error": outcome.error,
            "next_attempt_at": None,
            "sent_at": None,
            "updated_at": now,
        }
        if outcome.kind == "throttled":
            until = outcome.pause_until or now + DEFAULT_PAUSE
            # A throttle is not the message's fault: it does not count as an attempt.
            row |= {
                "status": "scheduled" if message.scheduled_at else "queued",
                "attempts": max(0, message.attempts - 1),
                "next_attempt_at": until,
            }
            sender = "smtp" if message.channel == "EMAIL" else f"slack:{message.organization_id}"
            pauses[sender] = max(until, pauses.get(sender, until))
        elif outcome.kind == "retry" and message.attempts < MAX_ATTEMPTS:
            row |= {"status": "queued", "next_attempt_at": now + backoff(message.attempts)}
        else:
            row |= {"status": "failed"}
            if message.campaign_id is not None:
                failed.append(message)
        rows.append(row)
    if rows:
        await session.execute(_outcome_statement(), rows)
    await events.record_engage_messages(session, events.failures(by_id, rows))  # webhooks (§13)
    await sequence.stop_failed(session, failed)
    for sender, until in pauses.items():
        await pause_sender(session, sender, until, "throttled by the provider")


@functools.cache
def _outcome_statement() -> Any:
    """One message's outcome, written only while this worker still holds its lease."""
    table: Table = EngageMessage.__table__  # type: ignore[assignment]
    return (
        table.update()
        .where(table.c.id == bindparam("b_id"), table.c.lease_owner == bindparam("b_owner"))
        .values(
            status=bindparam("status"),
            attempts=bindparam("attempts"),
            last_error=bindparam("last_error"),
            next_attempt_at=bindparam("next_attempt_at"),
            sent_at=bindparam("sent_at"),
            from_address=None,
            lease_owner=None,
            lease_expires_at=None,
            updated_at=bindparam("updated_at"),
        )
    )


async def pause_sender(session: AsyncSession, sender: str, until: datetime, reason: str) -> None:
    existing = await session.get(SenderPause, sender)
    if existing is None:
        session.add(SenderPause(sender=sender, paused_until=until, reason=reason))
    elif existing.paused_until < until:
        existing.paused_until = until
        existing.reason = reason
    await session.flush()
