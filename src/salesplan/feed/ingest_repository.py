"""The feed's writes (`feed/ingest.py` says what a source becomes; this module stores it).

Each message is stored once (unique `source_key`, INSERT … ON CONFLICT DO NOTHING), and its
thread's counters move only when the message was new. The functions are synchronous over a
`Connection`: the domain events' in-transaction handlers run on the transaction's connection,
and async callers use `run_sync`."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from sqlalchemy import (
    ColumnElement,
    Connection,
    Executable,
    Table,
    Update,
    bindparam,
    case,
    func,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite

from salesplan.kit.clock import utcnow
from salesplan.kit.email import mailbox
from salesplan.kit.ids import uuid7
from salesplan.kit.repository import table_of
from salesplan.kit.scoping import AnyRow, OrgScope, in_organization, organization_parameter
from salesplan.models.calendar import CalendarEvent
from salesplan.models.engage_delivery import EngageMessage, EngageReply
from salesplan.models.feed import FeedMessage, FeedParticipant, FeedThread

SNIPPET = 200
_THREADS = table_of(FeedThread)
_MESSAGES = table_of(FeedMessage)
_PARTICIPANTS = table_of(FeedParticipant)
_REPLIES = table_of(EngageReply)
_EVENTS = table_of(CalendarEvent)


@dataclass
class Incoming:
    organization_id: uuid.UUID
    kind: str  # email | slack | calendar
    thread_key: str
    source_key: str
    direction: str  # inbound | outbound
    occurred_at: datetime
    text: str = ""
    subject: str | None = None
    author_email: str | None = None
    author_name: str | None = None
    participants: list[tuple[str, str | None]] = field(default_factory=list)
    slack_channel: str | None = None
    slack_ts: str | None = None
    calendar_event_id: uuid.UUID | None = None
    author_participates: bool = True


class _Statements(NamedTuple):
    new_thread: Executable
    thread_id: Executable
    new_message: Executable
    participants: Executable
    bump_thread: dict[str, Update]  # by the message's direction: its thread's counters


@functools.cache
def _statements(dialect: str) -> _Statements:
    """The statements that record a message, built once per dialect and run with parameter
    dicts: building a statement with its values inline (and its cache key) cost more than
    running it, and the delivery worker records every sent e-mail here (bench/delivery.py)."""
    t = _THREADS.c
    return _Statements(
        new_thread=_upsert(dialect, _THREADS)
        .on_conflict_do_nothing(index_elements=["organization_id", "kind", "thread_key"])
        .returning(t.id),
        thread_id=select(t.id).where(
            organization_parameter(t, "p_org"),
            t.kind == bindparam("p_kind"),
            t.thread_key == bindparam("p_key"),
        ),
        new_message=_upsert(dialect, _MESSAGES)
        .on_conflict_do_nothing(index_elements=["organization_id", "source_key"])
        .returning(_MESSAGES.c.id),
        participants=_upsert(dialect, _PARTICIPANTS).on_conflict_do_nothing(
            index_elements=["thread_id", "email"]
        ),
        bump_thread={d: _count_statement(d) for d in ("inbound", "outbound")},
    )


def _upsert(dialect: str, table: Table) -> postgresql.Insert | sqlite.Insert:
    """INSERT into `table` on the dialect's own insert (both have ON CONFLICT)."""
    return postgresql.insert(table) if dialect == "postgresql" else sqlite.insert(table)


def _count_statement(direction: str) -> Update:
    """A new message in an existing thread: its counters, latest activity and snippet move."""
    t = _THREADS.c
    at = bindparam("p_at", type_=t.last_activity_at.type)
    newer = t.last_activity_at <= at
    column = t.last_inbound_at if direction == "inbound" else t.last_outbound_at
    values: dict[str, ColumnElement[object]] = {
        "message_count": t.message_count + 1,
        "last_activity_at": case((newer, at), else_=t.last_activity_at),
        "snippet": case(
            (newer | (t.message_count == 0), bindparam("p_snippet", type_=t.snippet.type)),
            else_=t.snippet,
        ),
        "subject": func.coalesce(t.subject, bindparam("p_subject", type_=t.subject.type)),
        "updated_at": bindparam("p_now", type_=t.updated_at.type),
        column.key: case((column.is_(None) | (column < at), at), else_=column),
    }
    return update(_THREADS).where(t.id == bindparam("p_thread")).values(**values)


def snippet(text: str) -> str:
    return " ".join(text.split())[:SNIPPET]


def _new_thread(conn: Connection, item: Incoming) -> uuid.UUID | None:
    """Create the message's thread with the message counted in it; None when the thread
    exists. A message's thread follows from the message (its `thread_key`), so a message whose
    thread is new is new too: its first message needs no second look at the thread."""
    at, now = item.occurred_at, utcnow()
    row = {
        "id": uuid7(),
        "organization_id": item.organization_id,
        "kind": item.kind,
        "thread_key": item.thread_key,
        "subject": item.subject,
        "snippet": snippet(item.text),
        "message_count": 1,
        "last_activity_at": at,
        "last_inbound_at": at if item.direction == "inbound" else None,
        "last_outbound_at": None if item.direction == "inbound" else at,
        "calendar_event_id": item.calendar_event_id,
        "created_at": now,
        "updated_at": now,
    }
    return conn.execute(_statements(conn.dialect.name).new_thread, row).scalar_one_or_none()


def _thread_id(conn: Connection, item: Incoming) -> uuid.UUID:
    key = {"p_org": item.organization_id, "p_kind": item.kind, "p_key": item.thread_key}
    return conn.execute(_statements(conn.dialect.name).thread_id, key).scalar_one()


def add_participants(
    conn: Connection,
    organization_id: uuid.UUID,
    thread_id: uuid.UUID,
    people: Iterable[tuple[str, str | None]],
) -> None:
    rows = {}
    for email, name in people:
        address = mailbox(email or "")
        if "@" in address and address not in rows:
            rows[address] = {
                "thread_id": thread_id,
                "email": address[:320],
                "organization_id": organization_id,
                "domain": address.rsplit("@", 1)[1][:255],
                "name": (name or None) and str(name)[:320],
            }
    if rows:
        conn.execute(_statements(conn.dialect.name).participants, list(rows.values()))


def record(conn: Connection, item: Incoming) -> uuid.UUID | None:
    """Store one message (once); answers its id, or None when it was already stored. Three
    statements when the message opens a thread, five when the thread exists."""
    new_thread = _new_thread(conn, item)
    thread_id = new_thread or _thread_id(conn, item)
    row = {
        "id": uuid7(),
        "organization_id": item.organization_id,
        "thread_id": thread_id,
        "kind": item.kind,
        "direction": item.direction,
        "source_key": item.source_key,
        "author_email": item.author_email,
        "author_name": item.author_name,
        "subject": item.subject,
        "text": item.text,
        "occurred_at": item.occurred_at,
        "slack_channel": item.slack_channel,
        "slack_ts": item.slack_ts,
        "created_at": utcnow(),
    }
    message_id = conn.execute(_statements(conn.dialect.name).new_message, row).scalar_one_or_none()
    if message_id is None:
        return None
    if new_thread is None:
        _count_in_thread(conn, thread_id, item)
    people = list(item.participants)
    if item.author_email and item.author_participates:
        people.append((item.author_email, item.author_name))
    add_participants(conn, item.organization_id, thread_id, people)
    return message_id


def _count_in_thread(conn: Connection, thread_id: uuid.UUID, item: Incoming) -> None:
    """A new message in an existing thread: its counters, latest activity and snippet move."""
    params = {
        "p_thread": thread_id,
        "p_at": item.occurred_at,
        "p_snippet": snippet(item.text),
        "p_subject": item.subject,
        "p_now": utcnow(),
    }
    direction = "inbound" if item.direction == "inbound" else "outbound"
    conn.execute(_statements(conn.dialect.name).bump_thread[direction], params)


# -- outbound engage mail, a batch at a time ----------------------------------------------------


def record_sent_mails(
    conn: Connection,
    mails: Sequence[EngageMessage],
    sent_at: datetime,
    author_email: str | None,
    author_name: str | None,
) -> None:
    """Store e-mails the delivery worker just sent (`feed.ingest.engage_messages_sent`),
    set-based: one multi-row statement per table (threads, messages, participants) instead of
    three to five statements a message. Idempotent like `record`: a message already in the
    feed (its `source_key`) is skipped, and a thread's counters move only for messages that
    are new."""
    st = _statements(conn.dialect.name)
    now = utcnow()
    # Each outbound engage mail opens its own thread (keyed by its Message-ID), with the
    # mail counted in it; a thread that exists already (a re-recorded mail) is looked up.
    threads = [
        {
            "id": uuid7(),
            "organization_id": m.organization_id,
            "kind": "email",
            "thread_key": m.rfc_message_id,
            "subject": m.subject,
            "snippet": snippet(m.body or ""),
            "message_count": 1,
            "last_activity_at": sent_at,
            "last_inbound_at": None,
            "last_outbound_at": sent_at,
            "calendar_event_id": None,
            "created_at": now,
            "updated_at": now,
        }
        for m in mails
    ]
    t = _THREADS.c
    by_key: dict[tuple[uuid.UUID, str], uuid.UUID] = {}
    created: set[uuid.UUID] = set()
    for row in conn.execute(_new_threads_statement(conn.dialect.name), threads):
        by_key[(row.organization_id, row.thread_key)] = row.id
        created.add(row.id)
    missing = [
        m.rfc_message_id for m in mails if (m.organization_id, m.rfc_message_id) not in by_key
    ]
    if missing:
        found = select(t.id, t.organization_id, t.thread_key).where(
            t.kind == "email", t.thread_key.in_(missing)
        )
        for row in conn.execute(found):
            by_key[(row.organization_id, row.thread_key)] = row.id
    rows = []
    thread_of: dict[str, uuid.UUID] = {}
    for m in mails:
        thread_id = by_key[(m.organization_id, m.rfc_message_id)]
        source_key = f"engage_message:{m.id}"
        thread_of[source_key] = thread_id
        rows.append(
            {
                "id": uuid7(),
                "organization_id": m.organization_id,
                "thread_id": thread_id,
                "kind": "email",
                "direction": "outbound",
                "source_key": source_key,
                "author_email": author_email,
                "author_name": author_name,
                "subject": m.subject,
                "text": m.body or "",
                "occurred_at": sent_at,
                "slack_channel": None,
                "slack_ts": None,
                "created_at": now,
            }
        )
    new = [r.source_key for r in conn.execute(_new_messages_statement(conn.dialect.name), rows)]
    if not new:
        return
    by_source = {f"engage_message:{m.id}": m for m in mails}
    bumps = []
    people = {}
    for source_key in new:
        m, thread_id = by_source[source_key], thread_of[source_key]
        if thread_id not in created:  # a new message in a thread that was there already
            bumps.append(
                {
                    "p_thread": thread_id,
                    "p_at": sent_at,
                    "p_snippet": snippet(m.body or ""),
                    "p_subject": m.subject,
                    "p_now": now,
                }
            )
        address_to = mailbox(m.to_address or "")
        if "@" in address_to:
            people[(thread_id, address_to)] = {
                "thread_id": thread_id,
                "email": address_to[:320],
                "organization_id": m.organization_id,
                "domain": address_to.rsplit("@", 1)[1][:255],
                "name": None,
            }
    if bumps:
        conn.execute(st.bump_thread["outbound"], bumps)
    if people:
        conn.execute(st.participants, list(people.values()))


@functools.cache
def _new_threads_statement(dialect: str) -> Executable:
    return (
        _upsert(dialect, _THREADS)
        .on_conflict_do_nothing(index_elements=["organization_id", "kind", "thread_key"])
        .returning(_THREADS.c.id, _THREADS.c.organization_id, _THREADS.c.thread_key)
    )


@functools.cache
def _new_messages_statement(dialect: str) -> Executable:
    return (
        _upsert(dialect, _MESSAGES)
        .on_conflict_do_nothing(index_elements=["organization_id", "source_key"])
        .returning(_MESSAGES.c.source_key)
    )


# -- the sources the domain events name ---------------------------------------------------------


def replies(conn: Connection, reply_ids: Sequence[uuid.UUID]) -> list[AnyRow]:
    """The engage replies of `reply_ids` as stored (columns by name), each with the Message-ID
    of the message it answers (`answered_key`, None when it answers none), in that order."""
    r = _REPLIES.c
    stmt = (
        select(_REPLIES, EngageMessage.rfc_message_id.label("answered_key"))
        .outerjoin(EngageMessage, EngageMessage.id == r.message_id)
        .where(r.id.in_(list(reply_ids)))
    )
    by_id = {row.id: row for row in conn.execute(stmt)}
    return [by_id[i] for i in reply_ids if i in by_id]


def calendar_events(conn: Connection, event_ids: Sequence[uuid.UUID]) -> list[AnyRow]:
    """The calendar events of `event_ids` as stored (columns by name), in that order (an
    event removed meanwhile is left out)."""
    stmt = select(_EVENTS).where(_EVENTS.c.id.in_(list(event_ids)))
    by_id = {row.id: row for row in conn.execute(stmt)}
    return [by_id[i] for i in event_ids if i in by_id]


def follow_calendar_event(conn: Connection, item: Incoming) -> None:
    """A known meeting changed: its thread and its message take the event's title, text and
    start (`item`, as `feed.ingest` makes it from the event), its attendees join."""
    scope = OrgScope(item.organization_id)
    t = _THREADS.c
    thread_id = conn.execute(
        update(_THREADS)
        .where(in_organization(t, scope), t.kind == "calendar", t.thread_key == item.thread_key)
        .values(
            subject=item.subject,
            snippet=snippet(item.text),
            last_activity_at=item.occurred_at,
            updated_at=utcnow(),
        )
        .returning(t.id)
    ).scalar_one_or_none()
    m = _MESSAGES.c
    conn.execute(
        update(_MESSAGES)
        .where(in_organization(m, scope), m.source_key == item.source_key)
        .values(subject=item.subject, text=item.text, occurred_at=item.occurred_at)
    )
    if thread_id is not None:
        add_participants(conn, item.organization_id, thread_id, item.participants)
