"""Calendar services: connections, event reads with teammate visibility, owner-only updates pushed
to CalDAV first, meeting artifacts. Services never commit; network calls run in a thread."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.calendar.crypto import decrypt_password, encrypt_password
from salesplan.calendar.ical import apply_changes, parse_instances
from salesplan.calendar.provider import (
    AuthFailure,
    CalDAVCalendar,
    DestinationRefused,
    PreconditionFailed,
    ProviderFailure,
)
from salesplan.calendar.provider import call as provider_call
from salesplan.calendar.repository import (
    ActionItemRepository,
    ArtifactRepository,
    ConnectionRepository,
    EventRepository,
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
from salesplan.kit import outbound
from salesplan.kit.clock import utcnow
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.patch import reject_nulls
from salesplan.kit.schemas import PaginationMeta
from salesplan.models.calendar import (
    CalendarActionItem,
    CalendarArtifact,
    CalendarConnection,
    CalendarEvent,
)
from salesplan.worker.context import wake_worker

TEAM_READERS = ("admin", "consultant")


def _me(ctx: RequestContext) -> uuid.UUID:
    assert ctx.user_id is not None  # the routes require a user-backed token
    return ctx.user_id


# -- connections ---------------------------------------------------------------------------


def _check(url: str, username: str, password: str, policy: outbound.OutboundPolicy) -> None:
    CalDAVCalendar(url, username, password, policy).check()


async def create_connection(
    session: AsyncSession,
    ctx: RequestContext,
    data: ConnectionIn,
    secret: bytes,
    policy: outbound.OutboundPolicy,
) -> CalendarConnection:
    await outbound.require_allowed(policy, data.url, field="url")
    try:
        await provider_call(
            _check, data.url, data.username, data.password, policy, organization=ctx.organization_id
        )
    except DestinationRefused as exc:  # found at connect time: after DNS, or on a redirect
        raise Unprocessable(
            f"The calendar cannot be connected: {exc}",
            details={"field": "url", "reason": "destination_not_allowed"},
        ) from None
    except ProviderFailure as exc:
        raise Unprocessable(
            f"The calendar cannot be connected: {exc}",
            details={
                "field": "password" if isinstance(exc, AuthFailure) else "url",
                "reason": str(exc),
            },
        ) from None
    conn = CalendarConnection(
        user_id=_me(ctx),
        url=data.url,
        username=data.username,
        password_encrypted=encrypt_password(secret, data.password),
        sync_requested_at=utcnow(),
    )
    await ConnectionRepository(session, ctx).insert(conn)
    await wake_worker(session)
    return conn


async def list_connections(
    session: AsyncSession, ctx: RequestContext, params: ListParams, codec: CursorCodec
) -> tuple[list[CalendarConnection], PaginationMeta]:
    return await ConnectionRepository(session, ctx).page_of(_me(ctx), params, codec)


async def get_connection(
    session: AsyncSession, ctx: RequestContext, connection_id: uuid.UUID
) -> CalendarConnection:
    """The caller's own connection; anybody else's is a 404 (credentials are private)."""
    return await ConnectionRepository(session, ctx).get_of(_me(ctx), connection_id)


async def delete_connection(
    session: AsyncSession, ctx: RequestContext, connection_id: uuid.UUID
) -> None:
    """Permanent: the connection, its stored password and its synced events go."""
    connections = ConnectionRepository(session, ctx)
    await connections.delete(await connections.get_of(_me(ctx), connection_id))


async def request_sync(
    session: AsyncSession, ctx: RequestContext, connection_id: uuid.UUID
) -> CalendarConnection:
    connections = ConnectionRepository(session, ctx)
    conn = await connections.get_of(_me(ctx), connection_id)
    await connections.update(conn, {"sync_requested_at": utcnow()})
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
    if not await EventRepository(session, ctx).is_member(user_id):
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
    return await EventRepository(session, ctx).page_of(
        owner, params, codec, start=start, end=end, account_id=account_id
    )


async def get_event(
    session: AsyncSession, ctx: RequestContext, event_id: uuid.UUID, *, for_update: bool = False
) -> CalendarEvent:
    event = await EventRepository(session, ctx).get(event_id, for_update=for_update)
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
    policy: outbound.OutboundPolicy,
) -> tuple[str | None, str]:
    """Blocking: fetch the object, edit it, PUT it back with If-Match. Answers (etag, ics)."""
    calendar = CalDAVCalendar(url, username, password, policy)
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
    policy: outbound.OutboundPolicy,
) -> CalendarEvent:
    sent = data.sent()
    reject_nulls(sent, ("title", "start", "end"))
    events = EventRepository(session, ctx)
    event = await events.get(event_id)
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
    conn = await events.connection(event)
    if conn is None:
        raise NotFound("Calendar event not found.")
    changes = dict(sent)
    if "start" in changes:
        changes["start"] = start
    if "end" in changes:
        changes["end"] = end
    try:
        password = decrypt_password(secret, conn.password_encrypted)
        new_etag, ics = await provider_call(
            _push,
            conn.url,
            conn.username,
            password,
            event.href,
            event.etag,
            event.uid,
            changes,
            policy,
            organization=event.organization_id,
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
    await events.flush(event)
    return event


# -- artifacts -----------------------------------------------------------------------------


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
    artifacts = ArtifactRepository(session, ctx)
    items = ActionItemRepository(session, ctx)
    artifact = await artifacts.of(event)
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
        artifact.has_action_items = data.action_items is not None
        await items.replace(event, [i.model_dump() for i in data.action_items or []])
    artifact.updated_at = now
    await artifacts.flush(artifact)
    return event, artifact, await items.all_of(event)


async def _stored(
    session: AsyncSession, ctx: RequestContext, event_id: uuid.UUID, part: str
) -> tuple[CalendarEvent, CalendarArtifact]:
    """A readable event and its artifact, which must hold `part` (else a 404 naming it)."""
    event = await get_event(session, ctx, event_id)
    artifact = await ArtifactRepository(session, ctx).of(event)
    stored = {
        "summary": lambda a: a.summary is not None,
        "action items": lambda a: a.has_action_items,
        "transcript": lambda a: a.transcript is not None,
    }[part]
    if artifact is None or not stored(artifact):
        raise NotFound(f"This event has no {part}.")
    return event, artifact


async def get_summary(
    session: AsyncSession, ctx: RequestContext, event_id: uuid.UUID
) -> CalendarArtifact:
    return (await _stored(session, ctx, event_id, "summary"))[1]


async def list_action_items(
    session: AsyncSession,
    ctx: RequestContext,
    event_id: uuid.UUID,
    params: ListParams,
    codec: CursorCodec,
) -> tuple[list[CalendarActionItem], PaginationMeta]:
    event, _ = await _stored(session, ctx, event_id, "action items")
    return await ActionItemRepository(session, ctx).page_of(event, params, codec)


async def get_transcript(
    session: AsyncSession, ctx: RequestContext, event_id: uuid.UUID
) -> CalendarArtifact:
    return (await _stored(session, ctx, event_id, "transcript"))[1]
