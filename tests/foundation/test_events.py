"""One transaction world (issue #39): the ORM path (a session) and the driver path (a unit of
work's `writer()` / `atomic()`) queue domain events the same way, and the unit of work runs the
same handlers on the transaction's connection, before COMMIT, on both; webhooks are a
subscriber of the domains' events, which no domain module imports.

The rule on `salesplan.webhooks`: only `webhooks/` itself, the composition root (`app.py`,
`routers.py`, `events.py` — the wiring — and `jobs/kinds.py`, the job wiring) and the
presentation layers above every domain (`web/` pages and `cli/` commands, which drive the
webhooks' service as its router does) may import it. A domain says what happened; it never
calls the outbox."""

from __future__ import annotations

import ast
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import bindparam, func, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

import salesplan
from salesplan.accounts.schemas import AccountIn
from salesplan.accounts.service import create_account
from salesplan.auth.principal import RequestContext
from salesplan.db import create_database
from salesplan.kit.driver import DriverStatement
from salesplan.kit.events import DomainEvent, EventHandlers, emit, emit_committed, interested
from salesplan.kit.uow import UnitOfWork
from salesplan.models.crm import Account
from salesplan.models.webhooks import WebhookEvent
from tests.fixtures.crm import make_account
from tests.webhooks.conftest import make_endpoint

SRC = Path(salesplan.__file__).parent
COMPOSITION_ROOT = {"app.py", "routers.py", "events.py", "jobs/kinds.py"}
PRESENTATION = ("web/", "cli/")


def _imports_webhooks(tree: ast.Module) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            if node.module == "salesplan":
                names += [f"salesplan.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        if any(n == "salesplan.webhooks" or n.startswith("salesplan.webhooks.") for n in names):
            lines.append(node.lineno)
    return lines


def test_no_domain_imports_webhooks() -> None:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith(("webhooks/", "migrations/", *PRESENTATION)) or rel in COMPOSITION_ROOT:
            continue
        found += [f"{rel}:{n}" for n in _imports_webhooks(ast.parse(path.read_text()))]
    assert found == []


def test_the_rule_sees_an_import_of_webhooks() -> None:
    assert _imports_webhooks(ast.parse("from salesplan.webhooks import events")) == [1]
    assert _imports_webhooks(ast.parse("def f():\n    import salesplan.webhooks.events")) == [2]
    assert _imports_webhooks(ast.parse("from salesplan import webhooks")) == [1]
    assert _imports_webhooks(ast.parse("from salesplan.worker import context")) == []


# -- the queue and the handlers, on both paths ---------------------------------------------


@dataclass(frozen=True)
class Renamed(DomainEvent):
    account_id: uuid.UUID


@dataclass
class Seen:
    during: list[tuple[str, list[uuid.UUID], str | None]]
    after: list[list[uuid.UUID]]


_NAME = DriverStatement(
    select(Account.__table__.c.name).where(
        Account.__table__.c.id == bindparam("id", type_=Account.__table__.c.id.type)
    )
)
_RENAME = DriverStatement(
    update(Account.__table__)
    .where(Account.__table__.c.id == bindparam("id", type_=Account.__table__.c.id.type))
    .values(name=bindparam("name"), updated_at=Account.__table__.c.updated_at)
)


def _database(app: object, seen: Seen) -> UnitOfWork:
    """A unit of work whose handlers note what they were given: which connection's
    transaction (`path`), the events, and the account's name as the transaction sees it."""
    handlers = EventHandlers()

    async def during(conn: AsyncConnection, events: Sequence[Renamed]) -> None:
        assert conn.in_transaction()
        name = await _NAME.fetchval(conn, {"id": events[0].account_id})
        seen.during.append((conn.info.get("path", ""), [e.account_id for e in events], name))

    async def after(events: Sequence[Renamed]) -> None:
        seen.after.append([e.account_id for e in events])

    handlers.during(Renamed, during)
    handlers.after(Renamed, after)
    return UnitOfWork(create_database(app.state.engine, handlers))  # type: ignore[attr-defined]


async def _name(db: object, account_id: uuid.UUID) -> str:
    return await db.scalar(select(Account.name).where(Account.id == account_id))  # type: ignore[attr-defined,no-any-return]


async def test_an_orm_write_and_a_driver_write_emit_through_the_same_queue(app, db, actor) -> None:
    one, _ = await make_account(db, actor.org.id, "One")
    two, _ = await make_account(db, actor.org.id, "Two")
    seen = Seen([], [])
    async with _database(app, seen) as uow:
        session = await uow.session()
        account = await session.get(Account, one.id)
        assert account is not None
        account.name = "One (ORM)"
        emit(session, Renamed(one.id))
        async with uow.atomic() as conn:
            conn.info["path"] = "driver"
            await _RENAME.fetchval(conn, {"id": two.id, "name": "Two (driver)"})
            emit(conn, Renamed(two.id))
        # The driver's transaction committed with its events handled in it, before COMMIT.
        assert seen.during == [("driver", [two.id], "Two (driver)")]
        assert seen.after == [[two.id]]
        conn.info.pop("path")
    # The session's, when the unit of work ended: the same handler, in its transaction, which
    # saw the ORM write flushed.
    assert seen.during[1][1:] == ([one.id], "One (ORM)")
    assert seen.after == [[two.id], [one.id]]
    assert await _name(db, one.id) == "One (ORM)"
    assert await _name(db, two.id) == "Two (driver)"


async def test_atomic_allows_events_and_a_rollback_drops_them(app, db, actor) -> None:
    account, _ = await make_account(db, actor.org.id, "Kept")
    seen = Seen([], [])
    with pytest.raises(RuntimeError, match="refused"):
        async with _database(app, seen) as uow, uow.atomic() as conn:
            await _RENAME.fetchval(conn, {"id": account.id, "name": "Lost"})
            emit(conn, Renamed(account.id))
            raise RuntimeError("refused")
    assert seen == Seen([], [])
    assert await _name(db, account.id) == "Kept"
    # A handler that fails rolls the write back with it.
    failing = EventHandlers()

    async def boom(conn: AsyncConnection, events: Sequence[Renamed]) -> None:
        raise RuntimeError("handler failed")

    failing.during(Renamed, boom)
    uow = UnitOfWork(create_database(app.state.engine, failing))
    with pytest.raises(RuntimeError, match="handler failed"):
        async with uow, uow.atomic() as conn:
            await _RENAME.fetchval(conn, {"id": account.id, "name": "Lost"})
            emit(conn, Renamed(account.id))
    assert await _name(db, account.id) == "Kept"


async def test_events_of_a_write_that_committed_alone_run_after_commit_only(app, db, actor) -> None:
    account, _ = await make_account(db, actor.org.id, "Alone")
    seen = Seen([], [])
    async with _database(app, seen) as uow:
        conn = await uow.writer()
        emit_committed(conn, Renamed(account.id))
    assert seen == Seen([], [[account.id]])
    # An event emitted outside a transaction, without saying it committed, is refused.
    with pytest.raises(RuntimeError, match="outside a transaction"):
        async with _database(app, seen) as uow:
            emit(await uow.writer(), Renamed(account.id))
    # A connection no unit of work owns has no queue.
    async with app.state.engine.connect() as conn:
        with pytest.raises(RuntimeError, match="no unit of work"):
            emit(conn, Renamed(account.id))


async def test_a_write_that_commits_alone_asks_who_follows_it(app, client, actor) -> None:
    """`interested`: the webhooks' recorder follows an organization's events only while an
    endpoint subscribes; a handler without an interest test always does."""
    from salesplan.plans.changes import bump_versions
    from salesplan.plans.events import PlanUpdated, TaskUpdated

    async with UnitOfWork(app.state.database) as uow:
        conn = await uow.writer()
        assert not await interested(conn, actor.org.id, [TaskUpdated])
        # The bump follows PlanUpdated always, unless the caller's statement does it.
        assert await interested(conn, actor.org.id, [PlanUpdated])
        assert not await interested(conn, actor.org.id, [PlanUpdated], besides=[bump_versions])
    await make_endpoint(client, actor, "https://hooks.example.com/in", eventTypes=["plan_task.*"])
    async with UnitOfWork(app.state.database) as uow:
        conn = await uow.writer()
        assert await interested(conn, actor.org.id, [TaskUpdated])
        assert not await interested(conn, uuid.uuid4(), [TaskUpdated])


async def test_webhooks_are_recorded_by_a_subscriber_in_the_transaction(
    app, client, db, actor
) -> None:
    """A service emits `AccountCreated`; the recorder writes its webhook row when the unit of
    work handles the events, in the transaction (gone with a rollback)."""
    await make_endpoint(client, actor, "https://hooks.example.com/in")
    ctx = RequestContext.internal(actor.org.id, actor.user.id)
    count = select(func.count()).select_from(WebhookEvent)
    with pytest.raises(RuntimeError):
        async with UnitOfWork(app.state.database) as uow:
            session = await uow.session()
            await create_account(session, ctx, AccountIn(name="Never"))
            assert await session.scalar(count) == 0  # not yet: said, not recorded
            raise RuntimeError("rolled back")
    assert await db.scalar(count) == 0
    async with UnitOfWork(app.state.database) as uow:
        await create_account(await uow.session(), ctx, AccountIn(name="Kept"))
    assert await db.scalar(count) == 1
