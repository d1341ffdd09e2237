"""Domain events: what a write tells the rest of the app, said explicitly by the code that
writes, handled by the unit of work (`kit.uow`) that owns the transaction.

A service that writes something another domain follows says so:

    emit(session, TaskCompleted(ctx.organization_id, task))

`emit` queues the event on the transaction `db` writes in: a session, or a connection of a
unit of work (its driver path, `uow.writer()`). Both reach the same machinery: when the unit
of work ends a transaction it first runs the *in-transaction* handlers of every queued event,
on the transaction's connection (a plan's version bump, the feed's entry for a reply, a
webhook's event row), then commits, then runs the *after-commit* handlers (waking an
in-process worker). A handler may emit further events on the connection it was given; they
are handled in the next round of the same transaction. A rollback drops the queue.

Which handler follows which event is wired in one place, `salesplan.events.handlers()` (the
composition root), and handed to the unit of work: no registry filled at import time, and
`kit` imports no domain. Handlers run in the order they were wired; each receives the events
of the kinds it subscribed to, in the order they were emitted.

An event about one resource of an organization that outsiders may hear of (webhooks, room
activity) is a `ResourceEvent`: it renders the resource as the API answers it, on demand, so
that only a subscriber pays for the rendering.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar, cast, overload

from pydantic import BaseModel
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.orm import Session


class DomainEvent:
    """Base of the events (frozen dataclasses in the domain that emits them)."""

    __slots__ = ()


# A resource as the API answers it: its response model, or the dict built from its row.
Resource = BaseModel | Mapping[str, object]


class ResourceEvent(DomainEvent):
    """What happened to one resource of an organization (created, updated, completed, …)."""

    __slots__ = ()

    organization_id: uuid.UUID  # a field of every subclass

    def actor(self) -> Mapping[str, object] | None:
        """Who did it when it was not the organization's own side (a buyer in a room:
        `{"type": "contact", "id"}`), said beside `data` in a webhook; None otherwise."""
        return None

    async def resource(self, conn: AsyncConnection) -> Resource:
        """The resource as the API answers it, read on the transaction's connection when the
        event does not carry it already (called only for a subscriber)."""
        raise NotImplementedError


@dataclass(frozen=True)
class RowEvent(ResourceEvent):
    """A `ResourceEvent` of one row: the ORM object written (rendered by the class's `schema`
    when a subscriber asks), or the resource already rendered (a bulk write's dicts)."""

    organization_id: uuid.UUID
    row: object
    schema: ClassVar[type[BaseModel]]

    async def resource(self, conn: AsyncConnection) -> Resource:
        if isinstance(self.row, Mapping):
            return self.row
        return self.schema.model_validate(self.row)


E = TypeVar("E", bound=DomainEvent)
E2 = TypeVar("E2", bound=DomainEvent)
E3 = TypeVar("E3", bound=DomainEvent)

# Runs inside the transaction, on its connection: the events of the kinds it follows, in the
# order they were emitted.
InTransaction = Callable[[AsyncConnection, Sequence[E]], Awaitable[None]]
# Runs after the commit, outside any transaction.
AfterCommit = Callable[[Sequence[E]], Awaitable[None]]
# Whether an in-transaction handler would act on events of these kinds in this organization
# (asked by a write that commits on its own before it runs: `interested`).
Interest = Callable[[AsyncConnection, uuid.UUID, Sequence[type[DomainEvent]]], Awaitable[bool]]

_QUEUE = "salesplan_events"
HANDLERS = "salesplan_handlers"
# A handler that keeps emitting would loop forever: a bound on the rounds.
MAX_ROUNDS = 10

Db = AsyncSession | AsyncConnection | Session | Connection


class EventQueue:
    """One transaction's events and the handlers that follow them: `pending` (handled in the
    transaction, before COMMIT) and `committed` (of writes that committed on their own: only
    their after-commit handlers run). A session keeps its queue in its `info`; a unit of
    work's connection has its unit of work's (`own`)."""

    __slots__ = ("committed", "handlers", "pending")

    def __init__(self, handlers: EventHandlers | None) -> None:
        self.handlers = handlers
        self.pending: list[DomainEvent] = []
        self.committed: list[DomainEvent] = []

    def take(self) -> list[DomainEvent]:
        batch, self.pending = self.pending, []
        return batch

    def take_committed(self) -> list[DomainEvent]:
        batch, self.committed = self.committed, []
        return batch


def _info(db: Db) -> dict[object, object]:
    if isinstance(db, AsyncSession):
        return db.sync_session.info
    return db.info


def queue_of(db: Db) -> EventQueue:
    """The queue of the transaction `db` writes in: a session's (made on first use), or the
    unit of work's that owns the connection."""
    info = _info(db)
    found = info.get(_QUEUE)
    if isinstance(found, EventQueue):
        return found
    if not isinstance(db, AsyncSession | Session):
        raise RuntimeError("domain event emitted on a connection no unit of work owns")
    handlers = info.get(HANDLERS)
    queue = info[_QUEUE] = EventQueue(handlers if isinstance(handlers, EventHandlers) else None)
    return queue


def emit(db: Db, event: DomainEvent) -> None:
    """Queue `event` on the transaction `db` writes in; handled when it commits."""
    queue_of(db).pending.append(event)


def emit_committed(conn: AsyncConnection, *events: DomainEvent) -> None:
    """The events of a write that committed on its own (one statement outside any
    transaction, which asked `interested` first): only their after-commit handlers run, when
    the unit of work ends."""
    queue_of(conn).committed.extend(events)


def pending(db: Db) -> bool:
    found = _info(db).get(_QUEUE)
    return isinstance(found, EventQueue) and bool(found.pending)


def drop(db: Db) -> None:
    """Forget the queue (a rollback)."""
    found = _info(db).get(_QUEUE)
    if isinstance(found, EventQueue):
        found.take()


def own(conn: AsyncConnection, queue: EventQueue) -> None:
    """A unit of work's connection: events emitted on it go to `queue`, and a write on it
    asks `queue.handlers` what they follow (`interested`)."""
    conn.info[_QUEUE] = queue


def disown(conn: AsyncConnection) -> None:
    """The connection goes back to the pool: nothing queued on it may reach its next user."""
    conn.info.pop(_QUEUE, None)


def handlers_info(handlers: EventHandlers) -> dict[object, object]:
    """A session factory's `info`: its sessions commit with `handlers`."""
    return {HANDLERS: handlers}


def handlers_on(db: Db) -> EventHandlers | None:
    found = _info(db).get(HANDLERS)
    return found if isinstance(found, EventHandlers) else None


async def interested(
    conn: AsyncConnection,
    organization_id: uuid.UUID,
    kinds: Sequence[type[DomainEvent]],
    *,
    besides: Sequence[InTransaction[E]] = (),
) -> bool:
    """Whether an in-transaction handler other than `besides` (whose work the caller's one
    statement does itself) would act on events of `kinds` in this organization: a write that
    commits on its own may run only when none would."""
    handlers = queue_of(conn).handlers
    if handlers is None:
        raise RuntimeError("no event handlers on this connection")
    return await handlers.interested(conn, organization_id, kinds, besides=besides)


@dataclass(frozen=True)
class _Subscription:
    kinds: frozenset[type[DomainEvent]]
    handler: Callable[[AsyncConnection, Sequence[DomainEvent]], Awaitable[None]]
    interest: Interest | None


@dataclass(frozen=True)
class _AfterCommit:
    kinds: frozenset[type[DomainEvent]]
    handler: Callable[[Sequence[DomainEvent]], Awaitable[None]]


class EventHandlers:
    """Who handles which event. Built once by `salesplan.events.handlers()`."""

    def __init__(self) -> None:
        self._during: list[_Subscription] = []
        self._after: list[_AfterCommit] = []
        self._followers: dict[
            tuple[tuple[type[DomainEvent], ...], tuple[object, ...]],
            list[tuple[Interest | None, tuple[type[DomainEvent], ...]]],
        ] = {}

    @overload
    def during(
        self, kinds: type[E], handler: InTransaction[E], *, interest: Interest | None = None
    ) -> None: ...
    @overload
    def during(
        self,
        kinds: tuple[type[E], type[E2]],
        handler: InTransaction[E | E2],
        *,
        interest: Interest | None = None,
    ) -> None: ...
    @overload
    def during(
        self,
        kinds: tuple[type[E], type[E2], type[E3]],
        handler: InTransaction[E | E2 | E3],
        *,
        interest: Interest | None = None,
    ) -> None: ...
    @overload
    def during(
        self,
        kinds: Sequence[type[E]],
        handler: InTransaction[E],
        *,
        interest: Interest | None = None,
    ) -> None: ...
    def during(
        self,
        kinds: type[DomainEvent] | Sequence[type[DomainEvent]],
        handler: InTransaction[Any],
        *,
        interest: Interest | None = None,
    ) -> None:
        """`handler` runs in the transaction for the events of `kinds`. `interest` answers
        whether it would act for an organization (without it: always)."""
        # The kinds filter below hands the handler nothing but events of its kinds.
        any_handler = cast(InTransaction[DomainEvent], handler)
        self._during.append(_Subscription(_kinds(kinds), any_handler, interest))
        self._followers.clear()

    def after(self, kinds: type[E] | Sequence[type[E]], handler: AfterCommit[E]) -> None:
        any_handler = cast(AfterCommit[DomainEvent], handler)
        self._after.append(_AfterCommit(_kinds(kinds), any_handler))

    async def run_in_transaction(
        self, conn: AsyncConnection, events: Sequence[DomainEvent]
    ) -> None:
        for subscription in self._during:
            batch = [e for e in events if type(e) in subscription.kinds]
            if batch:
                await subscription.handler(conn, batch)

    async def run_after_commit(self, events: Sequence[DomainEvent]) -> None:
        for subscription in self._after:
            batch = [e for e in events if type(e) in subscription.kinds]
            if batch:
                await subscription.handler(batch)

    async def interested(
        self,
        conn: AsyncConnection,
        organization_id: uuid.UUID,
        kinds: Sequence[type[DomainEvent]],
        *,
        besides: Sequence[object] = (),
    ) -> bool:
        key = (tuple(kinds), tuple(besides))
        followers = self._followers.get(key)
        if followers is None:  # worked out once per question (a hot write asks each time)
            followers = self._followers[key] = [
                (subscription.interest, tuple(k for k in kinds if k in subscription.kinds))
                for subscription in self._during
                if subscription.handler not in besides
                and any(k in subscription.kinds for k in kinds)
            ]
        for interest, followed in followers:
            if interest is None or await interest(conn, organization_id, followed):
                return True
        return False


def _kinds(kinds: type[DomainEvent] | Sequence[type[DomainEvent]]) -> frozenset[type[DomainEvent]]:
    return frozenset([kinds] if isinstance(kinds, type) else kinds)
