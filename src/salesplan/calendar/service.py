"""Calendar services: connections, event reads with teammate visibility, owner-only updates pushed
to CalDAV first, meeting artifacts. Services never commit; network calls run in a thread."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.calendar.crypto import decrypt_password, encrypt_password
from salesplan.calendar.ical import apply_changes, parse_instances
from salesplan.calendar.provider import (
    CalDAVCalendar,
    PreconditionFailed,
    ProviderFailure,
)
from salesplan.calendar.schemas import ArtifactsIn, ConnectionIn, EventPatch
from salesplan.calendar.sync import _account_links, link_account
from salesplan.errors import (
    Conflict,
    Forbidden,
    NotFound,
    ProviderError,
    Unprocessable,
    ValidationFailed,
)
from salesplan.kit.clock import utcnow
from salesplan.kit.pagination import CursorCodec, ListParams, contains_ci, paginate
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import get_scoped, scoped
from salesplan.models.calendar import (
    CalendarActionItem,
    CalendarArtifact,
    CalendarConnection,
    CalendarEvent,
)
from salesplan.models.identity import Membership
from salesplan.worker.context import wake_worker

TEAM_READERS = ("admin", "consultant")

EVENT_SORT = {
    "start": CalendarEvent.start_at,
    "createdAt": CalendarEvent.created_at,
    "updatedAt": CalendarEvent.updated_at,
}
CONNECTION_SORT = {"createdAt": CalendarConnection.created_at}
ACTION_ITEM_SORT = {"position": CalendarActionItem.position}


def _me(ctx: RequestContext) -> uuid.UUID:
    assert ctx.user_id is not None  # the routes require a user-backed token
    return ctx.user_id


# -- connections ---------------------------------------------------------------------------


def _check(url: str, username: str, password: str) -> None:
    CalDAVCalendar(url, username, password).check()


async def create_connection(
    session: AsyncSession, ctx: RequestContext, data: ConnectionIn, secret: bytes
) -> CalendarConnection:
    try:
        await asyncio.to_thread(_check, data.url, data.username, data.password)
    except ProviderFailure as exc:
        raise Unprocessable(
            f"The calendar cannot be connected: {exc}",
            details={"field": "url", "reason": str(exc)},
        ) from None
    conn = CalendarConnection(
        organization_id=ctx.organization_id,
        user_id=_me(ctx),
        url=data.url,
        username=data.username,
        password_encrypted=encrypt_password(secret, data.password),
        sync_requested_at=utcnow(),
    )
    session.add(conn)
    await session.flush()
    await wake_worker(session)
    return conn


def _own_connections(ctx: RequestContext) -> Any:
    return scoped(select(CalendarConnection), ctx).where(CalendarConnection.user_id == _me(ctx))


async def list_connections(
    session: AsyncSession, ctx: RequestContext, params: ListParams, codec: CursorCodec
) -> tuple[list[CalendarConnection], PaginationMeta]:
    return await paginate(
        session,
        _own_connections(ctx),
        params,
        sort_columns=CONNECTION_SORT,
        id_column=CalendarConnection.id,
        codec=codec,
        scalars=True,
    )


async def get_connection(
    session: AsyncSession, ctx: RequestContext, connection_id: uuid.UUID
) -> CalendarConnection:
    """The caller's own connection; anybody else's is a 404 (credentials are private)."""
    stmt = _own_connections(ctx).where(CalendarConnection.id == connection_id)
    conn = (await session.execute(stmt)).scalar_one_or_none()
    if conn is None:
        raise NotFound("Calendar connection not found.")
    return conn


async def delete_connection(
    session: AsyncSession, ctx: RequestContext, connection_id: uuid.UUID
) -> None:
    """Permanent: the connection, its stored password and its synced events go."""
    conn = await get_connection(session, ctx, connection_id)
    await session.delete(conn)
    await session.flush()


async def request_sync(
    session: AsyncSession, ctx: RequestContext, connection_id: uuid.UUID
) -> CalendarConnection:
    conn = await get_connection(session, ctx, connection_id)
    conn.sync_requested_at = utcnow()
    await session.flush()
    await wake_worker(session)
    return conn


# -- events --------------------------------------------------------------------------------


async def _visible_user(
    session: AsyncSession, ctx: RequestContext, user_id: uuid.UUID | None
) -> uuid.UUID:
    me = _me(ctx)
    if user_id is None or user_id == me:
        return me
    if ctx.role not in TEAM_READERS:
        raise Forbidden(
            "Only admin and consultant members may read a teammate's calendar.",
            details={"reason": "teammate_calendar"},
        )
    member = await session.scalar(
        select(Membership.id).where(
            Membership.organization_id == ctx.organization_id, Membership.user_id == user_id
        )
    )
    if member is None:
        raise NotFound("User not found in this organization.")
    return user_id


def _aware(value: datetime | None) -> datetime | None:
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


async def list_events(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    start: datetime | None,
    end: datetime | None,
    account_id: uuid.UUID | None,
    user_id: uuid.UUID | None,
) -> tuple[list[CalendarEvent], PaginationMeta]:
    start, end = _aware(start), _aware(end)
    if start is not None and end is not None and end < start:
        raise ValidationFailed.at(["query", "to"], "to must not be before from.")
    owner = await _visible_user(session, ctx, user_id)
    stmt = scoped(select(CalendarEvent), ctx).where(CalendarEvent.user_id == owner)
    if start is not None:
        stmt = stmt.where(CalendarEvent.end_at > start)
    if end is not None:
        stmt = stmt.where(CalendarEvent.start_at < end)
    if account_id is not None:
        stmt = stmt.where(CalendarEvent.account_id == account_id)
    if params.search:
        stmt = stmt.where(contains_ci(CalendarEvent.title, params.search))
    return await paginate(
        session,
        stmt,
        params,
        sort_columns=EVENT_SORT,
        id_column=CalendarEvent.id,
        codec=codec,
        scalars=True,
    )


async def get_event(
    session: AsyncSession, ctx: RequestContext, event_id: uuid.UUID, *, for_update: bool = False
) -> CalendarEvent:
    event = await get_scoped(session, CalendarEvent, ctx, event_id, for_update=for_update)
    if event.user_id != _me(ctx) and ctx.role not in TEAM_READERS:
        raise Forbidden(
            "Only admin and consultant members may read a teammate's calendar.",
            details={"reason": "teammate_calendar"},
        )
    return event


def _push(
    url: str,
    username: str,
    password: str,
    href: str,
    etag: str | None,
    uid: str,
    changes: dict[str, Any],
) -> tuple[str | None, str]:
    """Blocking: fetch the object, edit it, PUT it back with If-Match. Answers (etag, ics)."""
    calendar = CalDAVCalendar(url, username, password)
    current = calendar.get(href)
    if current is None:
        raise PreconditionFailed("the event was deleted on the calendar server")
    server_etag, ics = current
    if etag and server_etag and server_etag != etag:
        raise PreconditionFailed("the event changed on the calendar server")
    edited = apply_changes(ics, uid, changes)
    new_etag = calendar.put(href, edited, etag or server_etag or None)
    if not new_etag:
        fetched = calendar.get(href)
        new_etag = fetched[0] if fetched else None
    return new_etag, edited


async def update_event(
    session: AsyncSession,
    ctx: RequestContext,
    event_id: uuid.UUID,
    data: EventPatch,
    secret: bytes,
) -> CalendarEvent:
    sent = data.sent()
    for key in ("title", "start", "end"):
        if key in sent and sent[key] is None:
            raise ValidationFailed.at(["body", key], f"{key} cannot be null.")
    event = await get_scoped(session, CalendarEvent, ctx, event_id)
    if event.user_id != _me(ctx):
        raise Forbidden(
            "Only the owner of an event may update it.", details={"reason": "not_owner"}
        )
    if event.recurrence_key:
        raise Unprocessable(
            "An occurrence of a recurring event cannot be updated through the API; "
            "change the series in the calendar.",
            details={"reason": "recurring_event"},
        )
    start = _aware(sent.get("start", event.start_at))
    end = _aware(sent.get("end", event.end_at))
    assert start is not None and end is not None
    if end < start:
        raise ValidationFailed.at(["body", "end"], "end must not be before start.")
    conn = await session.get(CalendarConnection, event.connection_id)
    if conn is None:
        raise NotFound("Calendar event not found.")
    changes = dict(sent)
    if "start" in changes:
        changes["start"] = start
    if "end" in changes:
        changes["end"] = end
    try:
        password = decrypt_password(secret, conn.password_encrypted)
        new_etag, ics = await asyncio.to_thread(
            _push, conn.url, conn.username, password, event.href, event.etag, event.uid, changes
        )
    except PreconditionFailed as exc:
        raise Conflict(
            f"The event was changed on the calendar server since the last sync: {exc}.",
            details={"reason": "etag_mismatch"},
        ) from None
    except (ProviderFailure, ValueError) as exc:
        raise ProviderError(
            f"The calendar server did not accept the update: {exc}",
            details={"reason": str(exc)},
        ) from None
    # The provider accepted it: store what it now holds.
    margin = timedelta(days=400)
    instances = [
        i for i in parse_instances(ics, start - margin, end + margin) if i.uid == event.uid
    ]
    event.etag = new_etag
    if instances:
        inst = instances[0]
        links = await _account_links(
            session, event.organization_id, {a["email"] for a in inst.attendees}
        )
        event.title = inst.title
        event.description = inst.description
        event.location = inst.location
        event.start_at = inst.start
        event.end_at = inst.end
        event.all_day = inst.all_day
        event.attendees = inst.attendees
        event.account_id = link_account(inst, links)
    event.updated_at = utcnow()
    await session.flush()
    return event


# -- artifacts -----------------------------------------------------------------------------


async def _artifact(session: AsyncSession, event: CalendarEvent) -> CalendarArtifact | None:
    return await session.scalar(
        select(CalendarArtifact).where(CalendarArtifact.event_id == event.id)
    )


async def put_artifacts(
    session: AsyncSession, ctx: RequestContext, event_id: uuid.UUID, data: ArtifactsIn
) -> tuple[CalendarEvent, CalendarArtifact, list[CalendarActionItem]]:
    """Store the parts sent (each replaces what was stored); answers everything stored."""
    event = await get_event(session, ctx, event_id)
    if event.user_id != _me(ctx):
        raise Forbidden(
            "Only the owner of an event may store its artifacts.", details={"reason": "not_owner"}
        )
    sent = data.model_dump(exclude_unset=True)
    artifact = await _artifact(session, event)
    now = utcnow()
    if artifact is None:
        artifact = CalendarArtifact(organization_id=event.organization_id, event_id=event.id)
        session.add(artifact)
    if "summary" in sent:
        artifact.summary = data.summary
        artifact.summary_updated_at = now if data.summary is not None else None
    if "transcript" in sent:
        artifact.transcript = (
            None if data.transcript is None else [s.model_dump() for s in data.transcript.segments]
        )
    if "action_items" in sent:
        await session.execute(
            delete(CalendarActionItem).where(CalendarActionItem.event_id == event.id)
        )
        artifact.has_action_items = data.action_items is not None
        for position, item in enumerate(data.action_items or []):
            session.add(
                CalendarActionItem(
                    organization_id=event.organization_id,
                    event_id=event.id,
                    position=position,
                    **item.model_dump(),
                )
            )
    artifact.updated_at = now
    await session.flush()
    items = list(
        await session.scalars(
            select(CalendarActionItem)
            .where(CalendarActionItem.event_id == event.id)
            .order_by(CalendarActionItem.position)
        )
    )
    return event, artifact, items


async def get_summary(
    session: AsyncSession, ctx: RequestContext, event_id: uuid.UUID
) -> CalendarArtifact:
    event = await get_event(session, ctx, event_id)
    artifact = await _artifact(session, event)
    if artifact is None or artifact.summary is None:
        raise NotFound("This event has no summary.")
    return artifact


async def list_action_items(
    session: AsyncSession,
    ctx: RequestContext,
    event_id: uuid.UUID,
    params: ListParams,
    codec: CursorCodec,
) -> tuple[list[CalendarActionItem], PaginationMeta]:
    event = await get_event(session, ctx, event_id)
    artifact = await _artifact(session, event)
    if artifact is None or not artifact.has_action_items:
        raise NotFound("This event has no action items.")
    stmt = select(CalendarActionItem).where(CalendarActionItem.event_id == event.id)
    return await paginate(
        session,
        stmt,
        params,
        sort_columns=ACTION_ITEM_SORT,
        id_column=CalendarActionItem.id,
        codec=codec,
        scalars=True,
    )


async def get_transcript(
    session: AsyncSession, ctx: RequestContext, event_id: uuid.UUID
) -> CalendarArtifact:
    event = await get_event(session, ctx, event_id)
    artifact = await _artifact(session, event)
    if artifact is None or artifact.transcript is None:
        raise NotFound("This event has no transcript.")
    return artifact
