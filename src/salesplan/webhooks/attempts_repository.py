"""Webhooks' statements for the attempts list, an event's attempt history and replay."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, insert, literal, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.kit.ids import uuid7
from salesplan.kit.pagination import CursorCodec, ListParams, paginate
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import AnyRow, TenantScope, scoped
from salesplan.models.webhooks import (
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
)
from salesplan.webhooks.repository import DELIVERIES, D


async def attempts_page(
    session: AsyncSession,
    ctx: TenantScope,
    endpoint_id: uuid.UUID,
    params: ListParams,
    codec: CursorCodec,
    *,
    status: str | None = None,
    event_type: str | None = None,
) -> tuple[list[Any], PaginationMeta]:
    """The endpoint's deliveries, with `status` and `eventType` (a type or `resource.*`)."""
    where = []
    if status is not None:
        where.append(WebhookDelivery.status == status)
    if event_type is not None:
        where.append(_type_filter([event_type]))
    stmt = scoped(
        select(
            WebhookDelivery.event_id,
            WebhookEvent.type,
            WebhookDelivery.status,
            WebhookDelivery.attempts,
            WebhookDelivery.last_status_code,
            WebhookDelivery.next_attempt_at,
        )
        .join(WebhookEvent, WebhookEvent.id == WebhookDelivery.event_id)
        .where(WebhookDelivery.endpoint_id == endpoint_id, *where),
        ctx,
        WebhookDelivery,
    )
    return await paginate(
        session,
        stmt,
        params,
        sort_columns={"createdAt": WebhookDelivery.created_at},
        id_column=WebhookDelivery.id,
        codec=codec,
    )


async def attempt(
    session: AsyncSession, ctx: TenantScope, endpoint_id: uuid.UUID, event_id: uuid.UUID
) -> tuple[AnyRow, list[AnyRow]] | None:
    """An event's delivery to the endpoint (with the event's payload) and its tries, oldest
    first; None when the endpoint never had the event."""
    found = (
        await session.execute(
            scoped(
                select(
                    WebhookDelivery.id,
                    WebhookDelivery.event_id,
                    WebhookEvent.type,
                    WebhookDelivery.status,
                    WebhookDelivery.attempts,
                    WebhookDelivery.last_status_code,
                    WebhookDelivery.next_attempt_at,
                    WebhookEvent.payload,
                )
                .join(WebhookEvent, WebhookEvent.id == WebhookDelivery.event_id)
                .where(
                    WebhookDelivery.endpoint_id == endpoint_id,
                    WebhookDelivery.event_id == event_id,
                ),
                ctx,
                WebhookDelivery,
            )
        )
    ).first()
    if found is None:
        return None
    tries = scoped(
        select(
            WebhookAttempt.at,
            WebhookAttempt.status_code,
            WebhookAttempt.duration_ms,
            WebhookAttempt.error,
        )
        .where(WebhookAttempt.delivery_id == found.id)
        .order_by(WebhookAttempt.at, WebhookAttempt.id),
        ctx,
        WebhookAttempt,
    )
    return found, list((await session.execute(tries)).all())


def _type_filter(event_types: Sequence[str]) -> ColumnElement[bool]:
    if not event_types:
        return literal(True)
    exact = [t for t in event_types if not t.endswith(".*")]
    prefixes = [t[:-1] for t in event_types if t.endswith(".*")]
    return or_(WebhookEvent.type.in_(exact), *(WebhookEvent.type.startswith(p) for p in prefixes))


async def replay(
    session: AsyncSession,
    ctx: TenantScope,
    endpoint: WebhookEndpoint,
    since: datetime,
    now: datetime,
) -> int:
    """Queue every event of the organization since `since` (that the endpoint subscribes to)
    for the endpoint again: its delivery row is reset to a fresh pending one, or made."""
    events = scoped(
        select(WebhookEvent.id).where(
            WebhookEvent.created_at >= since, _type_filter(endpoint.event_types)
        ),
        ctx,
        WebhookEvent,
    )
    event_ids = list((await session.execute(events)).scalars())
    if not event_ids:
        return 0
    reset = scoped(
        select(WebhookDelivery.event_id).where(
            WebhookDelivery.endpoint_id == endpoint.id,
            WebhookDelivery.event_id.in_(events.scalar_subquery()),
        ),
        ctx,
        WebhookDelivery,
    )
    existing = set((await session.execute(reset)).scalars())
    if existing:
        await session.execute(
            update(DELIVERIES)
            .where(
                D.endpoint_id == endpoint.id,
                D.event_id.in_(reset.scalar_subquery()),
            )
            .values(
                status="pending",
                attempts=0,
                last_status_code=None,
                last_error=None,
                next_attempt_at=now,
                lease_owner=None,
                replay=True,
                updated_at=now,
            )
        )
    fresh = [
        {
            "id": uuid7(),
            "organization_id": endpoint.organization_id,
            "endpoint_id": endpoint.id,
            "event_id": event_id,
            "status": "pending",
            "attempts": 0,
            "next_attempt_at": now,
            "replay": True,
            "created_at": now,
            "updated_at": now,
        }
        for event_id in event_ids
        if event_id not in existing
    ]
    for start in range(0, len(fresh), 500):
        await session.execute(insert(DELIVERIES), fresh[start : start + 500])
    return len(event_ids)


async def replay_running(session: AsyncSession, ctx: TenantScope, endpoint_id: uuid.UUID) -> bool:
    """Whether a replay of the endpoint still has deliveries to make."""
    stmt = scoped(
        select(WebhookDelivery.id).where(
            WebhookDelivery.endpoint_id == endpoint_id,
            WebhookDelivery.status == "pending",
            WebhookDelivery.replay.is_(True),
        ),
        ctx,
        WebhookDelivery,
    ).limit(1)
    return (await session.execute(stmt)).first() is not None
