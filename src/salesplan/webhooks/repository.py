"""Webhooks' statements: endpoints (tenant-scoped, the generic base), the subscribed endpoints
an event goes to, the attempts list, replay, the worker's claim and outcomes, and pruning."""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime

from sqlalchemy import (
    bindparam,
    delete,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.kit.driver import DriverStatement
from salesplan.kit.repository import Repository, sorts, table_of
from salesplan.kit.scoping import AnyRow, AnySelect
from salesplan.models.webhooks import (
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
)
from salesplan.worker.claims import claim as claim_rows

Db = AsyncSession | AsyncConnection
ENDPOINTS = table_of(WebhookEndpoint)
DELIVERIES = table_of(WebhookDelivery)
EVENTS = table_of(WebhookEvent)
TRIES = table_of(WebhookAttempt)
E = ENDPOINTS.c
D = DELIVERIES.c
V = EVENTS.c


class EndpointRepository(Repository[WebhookEndpoint]):
    model = WebhookEndpoint
    sort_columns = sorts(WebhookEndpoint)

    async def all(self) -> list[WebhookEndpoint]:
        stmt = self.select().order_by(WebhookEndpoint.created_at, WebhookEndpoint.id)
        return list((await self.session.execute(stmt)).scalars())


# The outbox's statements run straight on the driver (`kit.driver`), so that they join any
# transaction of the change they report: a session's, an engine connection's, or one opened
# on the driver itself (`kit.driver.transaction`, where SQLAlchemy statements must not run).
_ENABLED = DriverStatement(
    select(E.id, E.event_types).where(
        E.organization_id == bindparam("organization_id"), E.enabled.is_(True)
    )
)
INSERT_EVENT = DriverStatement(
    insert(EVENTS).values(
        {c: bindparam(c) for c in ("id", "organization_id", "type", "payload", "created_at")}
    )
)
_DELIVERY_COLUMNS = (
    "id",
    "organization_id",
    "endpoint_id",
    "event_id",
    "status",
    "attempts",
    "next_attempt_at",
    "created_at",
    "updated_at",
)
INSERT_DELIVERY = DriverStatement(
    insert(DELIVERIES).values({c: bindparam(c) for c in _DELIVERY_COLUMNS})
)


_RECORD_SQL = """
    WITH event AS (
        INSERT INTO webhook_events (id, organization_id, type, payload, created_at)
        VALUES (:id, :organization_id, :type, :payload, :created_at)
    ), deliveries AS (
        INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, status,
                                        attempts, next_attempt_at, created_at, updated_at)
        SELECT d.id, :organization_id, d.endpoint_id, :id, 'pending', 0,
               :created_at, :created_at, :created_at
        FROM unnest(CAST(:delivery_ids AS uuid[]), CAST(:endpoint_ids AS uuid[]))
             AS d(id, endpoint_id)
    )
"""
# PostgreSQL: an event and its deliveries in one statement; with the worker's wake-up (a
# NOTIFY, delivered on COMMIT) or without.
RECORD_ON_POSTGRESQL = DriverStatement(
    text(_RECORD_SQL + "SELECT pg_notify('salesplan_worker', '')")
)
RECORD_ON_POSTGRESQL_QUIETLY = DriverStatement(text(_RECORD_SQL + "SELECT 1"))


async def record_on_postgresql(
    db: Db, event_rows: Sequence[Mapping[str, object]], *, notify: bool
) -> None:
    """PostgreSQL: each event with its deliveries (`delivery_ids`, `endpoint_ids`) in one
    statement, the batch's sent at once (one round trip); with the worker's wake-up or
    without."""
    statement = RECORD_ON_POSTGRESQL if notify else RECORD_ON_POSTGRESQL_QUIETLY
    if len(event_rows) == 1:  # a prepared statement's fetch costs less than executemany
        await statement.fetchval(db, event_rows[0])
    else:
        await statement.executemany(db, event_rows)


async def insert_events(
    db: Db,
    event_rows: Sequence[Mapping[str, object]],
    delivery_rows: Sequence[Mapping[str, object]],
) -> None:
    """Events and their deliveries in two statements (SQLite's path)."""
    await INSERT_EVENT.executemany(db, event_rows)
    await INSERT_DELIVERY.executemany(db, delivery_rows)


async def enabled_endpoints(
    db: Db, organization_ids: Collection[uuid.UUID]
) -> dict[uuid.UUID, list[tuple[uuid.UUID, list[str]]]]:
    """The enabled endpoints of these organizations with their `eventTypes` (the outbox's one
    read per organization; one without endpoints is not in the answer)."""
    found: dict[uuid.UUID, list[tuple[uuid.UUID, list[str]]]] = {}
    for org in organization_ids:
        rows = await _ENABLED.fetch(db, {"organization_id": org})
        if rows:
            found[org] = [(row[0], _types(row[1])) for row in rows]
    return found


def _types(value: object) -> list[str]:
    # The driver answers JSON as text on PostgreSQL (no result processing there).
    if isinstance(value, str):
        value = json.loads(value)
    return [str(t) for t in value] if isinstance(value, list) else []


# -- the worker ------------------------------------------------------------------------------


def due_candidates(now: datetime, per_endpoint: int, limit: int) -> AnySelect:
    """Due deliveries of enabled endpoints, at most `per_endpoint` of each endpoint (oldest
    first), so that one endpoint's backlog cannot fill a batch."""
    ranked = (
        select(
            D.id,
            D.endpoint_id,
            D.next_attempt_at,
            func.row_number()
            .over(partition_by=D.endpoint_id, order_by=(D.next_attempt_at, D.id))
            .label("rank"),
        )
        .join(ENDPOINTS, E.id == D.endpoint_id)
        .where(D.status == "pending", D.next_attempt_at <= now, E.enabled.is_(True))
        .subquery()
    )
    return (
        select(ranked.c.id, ranked.c.endpoint_id)
        .where(ranked.c.rank <= per_endpoint)
        .order_by(ranked.c.next_attempt_at)
        .limit(limit)
    )


async def claim(
    session: AsyncSession,
    ids: Sequence[uuid.UUID],
    worker_id: str,
    now: datetime,
    lease_until: datetime,
) -> list[AnyRow]:
    """Take the deliveries still due among `ids` (a concurrent worker's claim re-checks the
    condition after the row lock, so a row is taken once) with a lease: `next_attempt_at`
    moves to the lease's end, so that a killed worker's delivery comes due again."""
    if not ids:
        return []
    result = await claim_rows(
        session,
        DELIVERIES,
        due=(D.id.in_(ids), D.status == "pending", D.next_attempt_at <= now),
        order_by=(D.next_attempt_at,),
        limit=len(ids),
        values=_lease(worker_id, now, lease_until),
        returning=_CLAIMED,
    )
    return list(result.all())


def _lease(worker_id: str, now: datetime, lease_until: datetime) -> dict[str, object]:
    """A delivery's lease: `next_attempt_at` moves to its end, one more attempt."""
    return {
        "lease_owner": worker_id,
        "next_attempt_at": lease_until,
        "attempts": D.attempts + 1,
        "updated_at": now,
    }


_CLAIMED = (D.id, D.organization_id, D.endpoint_id, D.event_id, D.attempts)


_ENDPOINT_PARTS = (
    E.id,
    E.url,
    E.secret_encrypted,
    E.previous_secret_encrypted,
    E.previous_secret_expires_at,
    E.failing_since,
    E.payload,
)


async def claim_next(
    db: AsyncConnection,
    endpoint_id: uuid.UUID,
    worker_id: str,
    now: datetime,
    lease_until: datetime,
) -> tuple[AnyRow, AnyRow, str] | None:
    """The endpoint's next due delivery, claimed (as `claim`), with the endpoint's current
    url and secrets and the event's payload; None when none is due or it is disabled."""
    claimed = await claim_rows(
        db,
        DELIVERIES,
        due=(D.endpoint_id == endpoint_id, D.status == "pending", D.next_attempt_at <= now),
        order_by=(D.next_attempt_at,),
        limit=1,
        values=_lease(worker_id, now, lease_until),
        returning=_CLAIMED,
        # Only while the endpoint is enabled (read as the row is taken).
        recheck=(
            D.status == "pending",
            D.next_attempt_at <= now,
            select(E.enabled).where(E.id == endpoint_id).scalar_subquery().is_(True),
        ),
    )
    row = claimed.first()
    if row is None:
        return None
    parts = (
        await db.execute(
            select(*_ENDPOINT_PARTS, V.payload.label("event_payload"))
            .select_from(ENDPOINTS.join(EVENTS, V.id == row.event_id))
            .where(E.id == endpoint_id)
        )
    ).first()
    if parts is None:
        return None
    return row, parts, parts.event_payload


async def claimed_parts(
    session: Db, endpoint_ids: Collection[uuid.UUID], event_ids: Collection[uuid.UUID]
) -> tuple[dict[uuid.UUID, AnyRow], dict[uuid.UUID, str]]:
    """The endpoints (url, secrets) and event payloads of claimed deliveries."""
    endpoints = {
        row.id: row
        for row in (
            await session.execute(select(*_ENDPOINT_PARTS).where(E.id.in_(list(endpoint_ids))))
        ).all()
    }
    payloads: dict[uuid.UUID, str] = dict(
        (await session.execute(select(V.id, V.payload).where(V.id.in_(list(event_ids))))).all()
    )
    return endpoints, payloads


async def write_outcome(
    db: AsyncConnection, delivery_id: uuid.UUID, worker_id: str, values: Mapping[str, object]
) -> bool:
    """One delivery's outcome, written only while this worker still holds its lease."""
    result = await db.execute(
        update(DELIVERIES)
        .where(D.id == delivery_id, D.lease_owner == worker_id, D.status == "pending")
        .values(lease_owner=None, **values)
    )
    return result.rowcount == 1


async def add_try(db: AsyncConnection, values: Mapping[str, object]) -> None:
    """One try of a delivery, for its attempt history."""
    await db.execute(insert(TRIES).values(values))


async def endpoint_succeeded(db: AsyncConnection, endpoint_id: uuid.UUID) -> None:
    await db.execute(
        update(ENDPOINTS)
        .where(E.id == endpoint_id, E.failing_since.is_not(None))
        .values(failing_since=None)
    )


async def endpoint_failed(
    db: AsyncConnection, endpoint_id: uuid.UUID, now: datetime, disable_before: datetime
) -> None:
    """Start the endpoint's failing spell, or disable it when the spell began before
    `disable_before` (5 days of nothing but failures)."""
    await db.execute(
        update(ENDPOINTS)
        .where(E.id == endpoint_id, E.failing_since.is_(None))
        .values(failing_since=now)
    )
    await db.execute(
        update(ENDPOINTS)
        .where(E.id == endpoint_id, E.enabled.is_(True), E.failing_since < disable_before)
        .values(
            enabled=False,
            disabled_reason="Every delivery attempt failed for 5 days.",
            updated_at=now,
        )
    )


async def disable_endpoint(
    db: AsyncConnection, endpoint_id: uuid.UUID, reason: str, now: datetime
) -> None:
    await db.execute(
        update(ENDPOINTS)
        .where(E.id == endpoint_id, E.enabled.is_(True))
        .values(enabled=False, disabled_reason=reason, updated_at=now)
    )


async def prune(db: AsyncConnection, before: datetime) -> int:
    """Forget events older than `before` and their deliveries."""
    old = select(V.id).where(V.created_at < before).scalar_subquery()
    old_deliveries = select(D.id).where(D.event_id.in_(old)).scalar_subquery()
    await db.execute(delete(TRIES).where(TRIES.c.delivery_id.in_(old_deliveries)))
    await db.execute(delete(DELIVERIES).where(D.event_id.in_(old)))
    result = await db.execute(delete(EVENTS).where(V.created_at < before))
    return int(result.rowcount or 0)
