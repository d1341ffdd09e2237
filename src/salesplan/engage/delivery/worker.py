"""The delivery job kind: claim due outbox rows, send them (`transports.py`), record the outcome.

Claiming is worker/claims.py's one `UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED
LIMIT n) RETURNING` (`repository.lease`), which sets a lease by moving `next_attempt_at` forward: several workers never take the same row, and
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
import random
import uuid
from datetime import datetime, timedelta
from email.utils import parseaddr
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.config import Settings
from salesplan.engage.delivery import repository, sequence_repository
from salesplan.engage.delivery.dkim import load_signer
from salesplan.engage.delivery.events import MessageFailed, MessageSent
from salesplan.engage.delivery.transports import (
    DEFAULT_PAUSE,
    Outcome,
    send_email_batch,
    send_slack_batch,
)
from salesplan.kit.clock import utcnow
from salesplan.kit.events import emit
from salesplan.models.engage_delivery import EngageMessage
from salesplan.worker.context import WorkerContext

BATCH = 200
LEASE = timedelta(minutes=5)
MAX_ATTEMPTS = 5
BACKOFF_BASE = timedelta(seconds=30)
BACKOFF_CAP = timedelta(hours=1)
CAP_REACHED = "sender cap reached"
# When the cap is full of messages still in flight: look again after this.
CAP_RECHECK = timedelta(seconds=10)


def backoff(attempts: int) -> timedelta:
    """Exponential with full jitter in [0.5, 1.5) of the step, capped."""
    step = min(BACKOFF_BASE * (2 ** max(0, attempts - 1)), BACKOFF_CAP)
    return step * random.uniform(0.5, 1.5)


async def run_delivery(ctx: WorkerContext) -> int:
    """Deliver one batch of due messages; the number handled (0 when nothing was due)."""
    signer = load_signer(ctx.settings)
    async with ctx.unit_of_work() as uow:
        messages, deferred = await claim(await uow.session(), ctx.settings, ctx.worker_id)
    if not messages:
        return deferred
    email = [m for m in messages if m.channel == "EMAIL"]
    slack = [m for m in messages if m.channel == "SLACK"]
    recorder = _SentRecorder(ctx)
    outcomes: list[Outcome] = []
    if email:
        outcomes += await send_email_batch(ctx.settings, email, recorder.sent, signer)
    if slack:
        async with ctx.unit_of_work() as uow:
            outcomes += await send_slack_batch(
                await uow.session(), ctx.settings, slack, recorder.sent
            )
    async with ctx.unit_of_work() as uow:
        await record(await uow.session(), ctx.worker_id, messages, outcomes)
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
                    if not done.done():  # a waiter that gave up (cancelled) is left alone
                        done.set_exception(exc)
            else:
                for _, done in group:
                    if not done.done():
                        done.set_result(None)

    async def _write(self, messages: list[EngageMessage]) -> None:
        sent_at = utcnow()
        async with self.ctx.unit_of_work() as uow, uow.atomic() as conn:
            ids = {m.id for m in messages}
            written = set(
                (
                    await conn.execute(
                        repository.sent_statement(),
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
    in the transaction that marks them `sent` (each message is here exactly once): campaign
    enrollments move to `sent` so that the next step is scheduled from this send
    (campaign_runs.py), and each message says `MessageSent` (the feed records the e-mails and
    the webhooks their `engage_message.sent`, set-based, when the transaction commits)."""
    await sequence_repository.mark_sent_many(
        conn, [m for m in sent if m.campaign_id is not None], sent_at
    )
    for m in sent:
        emit(conn, MessageSent(m.organization_id, m, sent_at, settings.smtp_from))


async def claim(
    session: AsyncSession, settings: Settings, worker_id: str
) -> tuple[list[EngageMessage], int]:
    """Lease a batch of due messages: (the messages, how many due e-mails were deferred to the
    sender's next free slot by a sender cap)."""
    now = utcnow()
    until = now + LEASE
    paused = await repository.paused_senders(session, now)
    slack_paused = [uuid.UUID(s.split(":", 1)[1]) for s in paused if s.startswith("slack:")]
    sender = envelope_sender(settings)

    async def lease(email: bool | None, limit: int) -> list[EngageMessage]:
        return await repository.lease(
            session,
            now,
            slack_paused,
            email,
            limit=limit,
            worker_id=worker_id,
            sender=sender,
            until=until,
        )

    email_sendable = bool(settings.smtp_host) and "smtp" not in paused
    capped = email_sendable and (
        settings.send_limit_per_hour is not None or settings.send_limit_per_day is not None
    )
    if not capped:
        # No relay configured: e-mail stays queued until one is (contract §10).
        email = None if email_sendable else False
        return await lease(email, BATCH), 0
    others = await lease(False, BATCH)
    room, free_at = await sender_room(session, settings, sender, now)
    if room > 0:
        return others + await lease(True, room), 0
    # Due e-mails over the sender's cap wait for its next free slot (contract §14): still
    # `scheduled`, never refused, and not an attempt.
    deferred = await repository.defer_emails(
        session, now, slack_paused, limit=BATCH, until=free_at, reason=CAP_REACHED
    )
    return others, deferred


async def sender_room(
    session: AsyncSession, settings: Settings, sender: str, now: datetime
) -> tuple[int, datetime]:
    """How many more e-mails `sender` may hand to the relay now under the caps (those in
    flight count), and, when none, when its next slot frees. On PostgreSQL the sender's
    advisory lock is held to the end of the transaction, so that the claims of several workers
    are counted one after the other; SQLite has one writer, and a claim whose snapshot another
    process's claim made stale fails and is retried."""
    await repository.lock_sender(session, sender)
    busy = await repository.in_flight(session, sender)
    room, free_at = BATCH, now
    windows = (
        (settings.send_limit_per_hour, timedelta(hours=1)),
        (settings.send_limit_per_day, timedelta(days=1)),
    )
    for limit, window in windows:
        if limit is None:
            continue
        since = now - window
        count = await repository.sent_since(session, sender, since)
        left = limit - count - busy
        room = min(room, left)
        if left > 0:
            continue
        # The slot frees when the send that must leave the window for one to open does.
        nth = count + busy - limit  # 0-based, among this window's sends, oldest first
        if nth >= count:  # the cap is full of messages in flight: look again shortly
            free_at = max(free_at, now + CAP_RECHECK)
            continue
        oldest = await repository.nth_sent_since(session, sender, since, nth)
        free_at = max(free_at, (oldest or now) + window)
    return max(0, room), free_at


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
    await repository.write_outcomes(session, rows)
    for row in rows:
        if row["status"] == "failed":
            changed = {k: row[k] for k in ("status", "attempts", "last_error", "updated_at")}
            message = by_id[row["b_id"]]
            emit(session, MessageFailed(message.organization_id, message, changed))
    await sequence_repository.stop_failed(session, failed)
    for sender, until in pauses.items():
        await repository.pause_sender(session, sender, until, "throttled by the provider")
