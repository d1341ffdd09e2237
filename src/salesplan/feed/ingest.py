"""Writing the feed. Every source lands here, in the transaction that stores the source row:

- engage replies, calendar events and sent engage e-mails, through their domain events
  (`ReplyReceived`, `CalendarEventCreated`/`Updated`, `MessageSent`, wired in
  `salesplan.events`): the code that writes the row says so, and the handlers below run in the
  same transaction when the unit of work commits. A sent message enters the feed when it is
  sent, not when it is queued, so a scheduled, cancelled or failed message never shows in an
  inbox;
- Slack messages, from the signed `/inbound/slack` route.

A message received (a reply, a Slack message) says `FeedMessageReceived`. This module says
what a source becomes in the feed (an `Incoming` message); the statements that store it are
`feed.ingest_repository`'s, synchronous over a `Connection`: the handlers run them through
`run_sync` on the transaction's connection.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from email.utils import parseaddr

from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import AsyncConnection

from salesplan.calendar.events import CalendarEventCreated, CalendarEventUpdated
from salesplan.engage.delivery.events import MessageSent, ReplyReceived
from salesplan.feed import ingest_repository as repo
from salesplan.feed.events import FeedMessageReceived
from salesplan.feed.ingest_repository import Incoming, add_participants, record, snippet
from salesplan.kit.clock import utcnow
from salesplan.kit.email import mailbox
from salesplan.kit.events import emit
from salesplan.kit.scoping import AnyRow
from salesplan.models.engage_delivery import EngageMessage

__all__ = [
    "Incoming",
    "add_participants",
    "calendar_events_changed",
    "engage_message_sent",
    "engage_messages_sent",
    "messages_sent",
    "record",
    "replies_received",
    "snippet",
]


def engage_message_sent(
    conn: Connection, m: EngageMessage, sent_at: datetime, sender: str = ""
) -> None:
    """An outbound engage message the relay accepted at `sent_at` (EMAIL only: Slack posts and
    LinkedIn tasks are not mail threads). `sender` is its From (`SALESPLAN_SMTP_FROM`): the
    message's author; the thread's participants stay the people written to."""
    if m.channel != "EMAIL":
        return
    name, address = parseaddr(sender)
    record(
        conn,
        Incoming(
            organization_id=m.organization_id,
            kind="email",
            thread_key=m.rfc_message_id,
            source_key=f"engage_message:{m.id}",
            direction="outbound",
            occurred_at=sent_at,
            text=m.body or "",
            subject=m.subject,
            author_email=mailbox(address)[:320] or None,
            author_name=name[:320] or None,
            author_participates=False,
            participants=[(m.to_address, None)] if m.to_address else [],
        ),
    )


def engage_messages_sent(
    conn: Connection, messages: list[EngageMessage], sent_at: datetime, sender: str = ""
) -> None:
    """`engage_message_sent` for a batch the delivery worker just sent, set-based
    (`ingest_repository.record_sent_mails`): idempotent like `record`, a message already in
    the feed is skipped and a thread's counters move only for messages that are new."""
    mails = [m for m in messages if m.channel == "EMAIL"]
    if not mails:
        return
    name, address = parseaddr(sender)
    repo.record_sent_mails(conn, mails, sent_at, mailbox(address)[:320] or None, name[:320] or None)


# -- the domain events' handlers (in the transaction, on its connection) -----------------------


def _unique(ids: Sequence[uuid.UUID]) -> list[uuid.UUID]:
    """Each id once, first emitted first: a row written twice in a transaction is one entry."""
    return list(dict.fromkeys(ids))


async def replies_received(conn: AsyncConnection, events: Sequence[ReplyReceived]) -> None:
    """`ReplyReceived`: the reply is an inbound message of the thread of the message it
    answers (by that message's Message-ID), else of a thread of its own; a new message says
    `FeedMessageReceived`."""
    await conn.run_sync(_replies_received, _unique([e.reply_id for e in events]))


def _replies_received(conn: Connection, reply_ids: list[uuid.UUID]) -> None:
    for r in repo.replies(conn, reply_ids):
        message_id = record(conn, _reply_message(r))
        if message_id is not None:
            emit(conn, FeedMessageReceived(r.organization_id, message_id))


def _reply_message(r: AnyRow) -> Incoming:
    return Incoming(
        organization_id=r.organization_id,
        kind="email",
        thread_key=r.answered_key or r.rfc_message_id or f"reply:{r.id}",
        source_key=f"engage_reply:{r.id}",
        direction="inbound",
        occurred_at=r.received_at or utcnow(),
        text=r.text or "",
        subject=r.subject,
        author_email=r.from_address or None,
    )


async def calendar_events_changed(
    conn: AsyncConnection, events: Sequence[CalendarEventCreated | CalendarEventUpdated]
) -> None:
    """A calendar event created or updated: a new event opens its meeting thread; a known
    one's thread and message follow its title, text, start and attendees."""
    await conn.run_sync(_calendar_events_changed, _unique([e.row.id for e in events]))


def _calendar_events_changed(conn: Connection, event_ids: list[uuid.UUID]) -> None:
    for e in repo.calendar_events(conn, event_ids):
        item = _meeting_message(e)
        if record(conn, item) is None:  # an update of a known event: the thread follows it
            repo.follow_calendar_event(conn, item)


async def messages_sent(conn: AsyncConnection, events: Sequence[MessageSent]) -> None:
    """`MessageSent`: the delivery worker's group of sent messages, set-based
    (`engage_messages_sent`), a group per send time and From."""
    groups: dict[tuple[datetime, str], list[EngageMessage]] = {}
    for e in events:
        groups.setdefault((e.sent_at, e.sender), []).append(e.message)
    for (sent_at, sender), messages in groups.items():
        await conn.run_sync(engage_messages_sent, messages, sent_at, sender)


def _event_people(e: AnyRow) -> list[tuple[str, str | None]]:
    people = [(str(a.get("email") or ""), a.get("name")) for a in e.attendees or []]
    if e.organizer_email:
        people.append((e.organizer_email, None))
    return people


def _meeting_message(e: AnyRow) -> Incoming:
    return Incoming(
        organization_id=e.organization_id,
        kind="calendar",
        thread_key=str(e.id),
        source_key=f"calendar:{e.id}",
        direction="outbound",
        occurred_at=e.start_at,
        text=e.description or e.location or "",
        subject=e.title,
        participants=_event_people(e),
        calendar_event_id=e.id,
    )
