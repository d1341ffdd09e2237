"""Calendar services: connections, event reads with teammate visibility, owner-only updates pushed
to CalDAV first, meeting artifacts. Services never commit; network calls run in a thread."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.calendar.crypto import decrypt_password, encrypt_password
from salesplan.calendar.events import CalendarEventUpdated
from salesplan.calendar.ical import OccurrenceMissing, apply_changes, parse_instances
from salesplan.calendar.provider import (
    AuthFailure,
    CalDAVCalendar,
    DestinationRefused,
    ProviderFailure,
)
from salesplan.calendar.provider import PreconditionFailed as ChangedAtProvider
from salesplan.calendar.provider import call as provider_call
from salesplan.calendar.repository import (
    ActionItemRepository,
    ArtifactRepository,
    ConnectionRepository,
    EventRepository,
    account_links,
)
from salesplan.calendar.schemas import ArtifactsIn, ConnectionIn, EventOut, EventPatch
from salesplan.calendar.sync import apply_values, event_values
from salesplan.calendar.visibility import may_read, reads_teammates
from salesplan.errors import (
    Conflict,
    Forbidden,
    NotFound,
    PreconditionFailed,
    ProviderError,
    Unprocessable,
    ValidationFailed,
)
from salesplan.kit import outbound
from salesplan.kit.clock import utcnow
from salesplan.kit.events import emit
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.patch import reject_nulls
from salesplan.kit.responses import if_match_holds
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.uow import UnitOfWork
from salesplan.models.calendar import (
    CalendarActionItem,
    CalendarArtifact,
    CalendarConnection,
    CalendarEvent,
)
from salesplan.worker.context import wake_worker


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
    if not reads_teammates(ctx):
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
    if not may_read(ctx, event.user_id):
        raise Forbidden(
            "Only admin and consultant members may read a teammate's calendar.",
            details={"reason": "teammate_calendar"},
        )
    return event


@dataclass(frozen=True)
class _Target:
    """What the provider write needs, read before the request's transaction ends."""

    event_id: uuid.UUID
    href: str
    etag: str | None
    uid: str
    recurrence_key: str
    start: datetime
    end: datetime
    url: str
    username: str
    password_encrypted: str


def _push(
    target: _Target, password: str, changes: dict[str, Any], policy: outbound.OutboundPolicy
) -> tuple[str | None, str]:
    """Blocking: fetch the object, edit it (the occurrence's override for one occurrence of a
    recurring event), PUT it back with If-Match. Answers (etag, ics)."""
    calendar = CalDAVCalendar(target.url, target.username, password, policy)
    current = calendar.get(target.href)
    if current is None:
        raise ChangedAtProvider("the event was deleted on the calendar server")
    server_etag, ics = current
    if target.etag and server_etag and server_etag != target.etag:
        raise ChangedAtProvider("the event changed on the calendar server")
    try:
        edited = apply_changes(
            ics,
            target.uid,
            changes,
            recurrence_key=target.recurrence_key,
            start=target.start,
            end=target.end,
        )
    except OccurrenceMissing as exc:
        raise ChangedAtProvider(str(exc)) from None
    new_etag = calendar.put(target.href, edited, target.etag or server_etag or None)
    if not new_etag:
        fetched = calendar.get(target.href)
        new_etag = fetched[0] if fetched else None
    return new_etag, edited


def event_tag(event: CalendarEvent) -> str:
    """The event's ETag: the entity tag of its representation (`EventOut.etag`)."""
    return EventOut.of(event).etag


async def _push_target(
    session: AsyncSession,
    ctx: RequestContext,
    event_id: uuid.UUID,
    sent: dict[str, Any],
    if_match: str | None,
) -> tuple[_Target, dict[str, Any], datetime, datetime]:
    """The event's provider coordinates, the changes to push and the event's new start and
    end (aware), after the checks: owner only, `If-Match`, end not before start."""
    events = EventRepository(session, ctx)
    event = await events.get(event_id)
    if event.user_id != _me(ctx):
        raise Forbidden(
            "Only the owner of an event may update it.", details={"reason": "not_owner"}
        )
    if if_match is not None and not if_match_holds(if_match, event_tag(event)):
        raise PreconditionFailed(
            "The event changed since the representation named by If-Match: read it again.",
            details={"reason": "etag_mismatch"},
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
    target = _Target(
        event_id=event.id,
        href=event.href,
        etag=event.etag,
        uid=event.uid,
        recurrence_key=event.recurrence_key,
        start=event.start_at,
        end=event.end_at,
        url=conn.url,
        username=conn.username,
        password_encrypted=conn.password_encrypted,
    )
    return target, changes, start, end


async def update_event(
    uow: UnitOfWork,
    ctx: RequestContext,
    event_id: uuid.UUID,
    data: EventPatch,
    secret: bytes,
    policy: outbound.OutboundPolicy,
    if_match: str | None = None,
) -> CalendarEvent:
    """Push the change to the provider, then store what the provider now holds. The provider
    is called with no database transaction open: the reads before it are a unit of work of
    their own, ended first; the row is read again afterwards, in the request's, and written
    only if no sync changed it meanwhile (else the newer row is answered as it is)."""
    sent = data.sent()
    reject_nulls(sent, ("title", "start", "end"))
    async with uow.separate(read_only=True) as reads:
        reading = await reads.session()
        target, changes, start, end = await _push_target(reading, ctx, event_id, sent, if_match)
    try:
        password = decrypt_password(secret, target.password_encrypted)
        new_etag, ics = await provider_call(
            _push, target, password, changes, policy, organization=ctx.organization_id
        )
    except ChangedAtProvider as exc:
        raise Conflict(
            f"The event was changed on the calendar server since the last sync: {exc}.",
            details={"reason": "etag_mismatch"},
        ) from None
    except (ProviderFailure, ValueError) as exc:
        raise ProviderError(
            f"The calendar server did not accept the update: {exc}",
            details={"reason": str(exc)},
        ) from None
    # The provider accepted it: store what it now holds, on the row as it is now.
    session = await uow.session()
    events = EventRepository(session, ctx)
    current = await events.locked(target.event_id)
    if current is None:
        raise NotFound(
            "Calendar event not found: it was removed while the calendar server was updated."
        )
    event = current
    if event.etag != target.etag or event.href != target.href:
        return event  # a sync stored the provider's newer state meanwhile
    margin = timedelta(days=1)
    window = (min(start, target.start) - margin, max(end, target.end) + margin)
    instances = [
        i
        for i in parse_instances(ics, *window)
        if i.uid == target.uid and i.recurrence_key == target.recurrence_key
    ]
    values: dict[str, Any] = {"etag": new_etag}
    if instances:
        inst = instances[0]
        links = await account_links(
            session, event.organization_id, {a["email"] for a in inst.attendees}
        )
        values = event_values(inst, event.href, new_etag, links)
    apply_values(event, values)
    event.updated_at = utcnow()
    await events.flush(event)
    emit(session, CalendarEventUpdated(ctx.organization_id, event))
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
