"""Domain events: what a write tells the rest of the app, said explicitly by the code that
writes, handled by the unit of work (`kit.uow`) that owns the transaction.

A service that writes something another domain follows says so:

    emit(session, PlanChanged(plan.id))

`emit` queues the event on the session or connection the write went through (its `info`
dict: nothing global, nothing hidden in a flush hook). When the unit of work commits, it
first runs the *in-transaction* handlers of every queued event, in the same transaction (a
plan's version bump, the feed's entry for a reply), then commits, then runs the
*after-commit* handlers (waking an in-process worker). A handler may emit further events;
they are handled in the same round. A rollback drops the queue.

Which handler follows which event is wired in one place, `salesplan.events.handlers()`,
and handed to the unit of work: no registry filled at import time, and `kit` imports no
domain.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.orm import Session


class DomainEvent:
    """Base of the events (frozen dataclasses in the domain that emits them)."""

    __slots__ = ()


E = TypeVar("E", bound=DomainEvent)

# Runs inside the transaction, on its connection (sync, through `run_sync`): the events of
# one type, in the order they were emitted.
InTransaction = Callable[[Connection, Sequence[Any]], None]
# Runs after the commit, outside any transaction.
AfterCommit = Callable[[Sequence[Any]], Awaitable[None]]

_QUEUE = "salesplan_events"
# A handler that keeps emitting would loop forever: a bound on the rounds.
MAX_ROUNDS = 10

Db = AsyncSession | AsyncConnection | Session | Connection


def _info(db: Db) -> dict[Any, Any]:
    if isinstance(db, AsyncSession):
        return db.sync_session.info
    return db.info


def emit(db: Db, event: DomainEvent) -> None:
    """Queue `event` on the transaction `db` writes in; handled when it commits."""
    _info(db).setdefault(_QUEUE, []).append(event)


def take(db: Db) -> list[DomainEvent]:
    """The queued events, removed from the queue."""
    return _info(db).pop(_QUEUE, None) or []


def pending(db: Db) -> bool:
    return bool(_info(db).get(_QUEUE))


def drop(db: Db) -> None:
    """Forget the queue (a rollback)."""
    _info(db).pop(_QUEUE, None)


@dataclass
class EventHandlers:
    """Who handles which event. Built once by `salesplan.events.handlers()`."""

    in_transaction: dict[type[DomainEvent], list[InTransaction]] = field(
        default_factory=lambda: defaultdict(list)
    )
    after_commit: dict[type[DomainEvent], list[AfterCommit]] = field(
        default_factory=lambda: defaultdict(list)
    )

    def during(self, kind: type[E], handler: Callable[[Connection, Sequence[E]], None]) -> None:
        self.in_transaction[kind].append(handler)

    def after(self, kind: type[E], handler: Callable[[Sequence[E]], Awaitable[None]]) -> None:
        self.after_commit[kind].append(handler)

    def run_in_transaction(self, conn: Connection, events: Sequence[DomainEvent]) -> None:
        for kind, batch in group(events).items():
            for handler in self.in_transaction.get(kind, ()):
                handler(conn, batch)

    async def run_after_commit(self, events: Sequence[DomainEvent]) -> None:
        for kind, batch in group(events).items():
            for handler in self.after_commit.get(kind, ()):
                await handler(batch)


def group(events: Sequence[DomainEvent]) -> dict[type[DomainEvent], list[DomainEvent]]:
    """Events by type, each type's in emission order (dict order: first emitted first)."""
    out: dict[type[DomainEvent], list[DomainEvent]] = {}
    for event in events:
        out.setdefault(type(event), []).append(event)
    return out
