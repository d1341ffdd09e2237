"""Calendar sync, a worker job kind (see `salesplan.worker.context`).

A connection is due when a sync was asked for (`sync_requested_at`, set on create and by
`POST …/sync`) or its last sync is older than `SYNC_INTERVAL`. `run_calendar_sync` claims a few due
connections (`worker.claims`: `FOR UPDATE SKIP LOCKED` on PostgreSQL, and a lease so that a killed
worker's claim expires), then syncs each: the CalDAV requests run in a thread with no database transaction open,
and the result is written in one short transaction.

Incremental: with a sync token (RFC 6578) only the changed and deleted hrefs come back and only the
changed objects are fetched; without one, a calendar-query of the window's ETags is compared with
the stored ones. Each object is expanded to its instances in the window (past 30, next 90 days).

Identity (contract §12): an event is (connection, UID, RECURRENCE-ID). A changed object updates
the rows of its instances in place (same id, so the artifacts and the feed thread stay); a row
is removed only when its object is gone from the provider, or its instance no longer is in
the object (an occurrence deleted, or moved out of the window)."""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.calendar import repository as repo
from salesplan.calendar.crypto import decrypt_password
from salesplan.calendar.events import (
    CalendarEventCreated,
    CalendarEventDeleted,
    CalendarEventUpdated,
)
from salesplan.calendar.ical import Instance, parse_instances
from salesplan.calendar.provider import CalDAVCalendar, ProviderFailure, SyncTokenInvalid
from salesplan.calendar.provider import call as provider_call
from salesplan.kit import outbound
from salesplan.kit.clock import utcnow
from salesplan.kit.events import RowEvent, emit
from salesplan.models.calendar import CalendarConnection, CalendarEvent
from salesplan.worker.context import WorkerContext

log = logging.getLogger("salesplan.calendar.sync")

SYNC_INTERVAL = timedelta(minutes=15)
LEASE = timedelta(minutes=5)
CLAIM_BATCH = 3
RETRY_AFTER_FAILURE = timedelta(minutes=1)
RETRY_AT_MOST = timedelta(hours=1)


def retry_wait(failures: int) -> timedelta:
    """The wait after `failures` failed attempts in a row: 1 min, 2, 4, … up to an hour."""
    return min(RETRY_AFTER_FAILURE * 2 ** min(max(failures - 1, 0), 16), RETRY_AT_MOST)


WINDOW_PAST = timedelta(days=30)
WINDOW_FUTURE = timedelta(days=90)


def sync_window(now: datetime | None = None) -> tuple[datetime, datetime]:
    now = now or utcnow()
    return now - WINDOW_PAST, now + WINDOW_FUTURE


@dataclass
class Pulled:
    """What one sync read from the server."""

    token: str | None
    objects: dict[str, tuple[str, list[Instance]]] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)  # hrefs gone from the server
    transferred: int = 0
    # Seconds spent: "listing" (the sync-collection or calendar-query REPORT), "fetch" (the
    # multiget of the changed objects), "parse" (expanding them to instances).
    timings: dict[str, float] = field(default_factory=dict)


@dataclass
class Listing:
    """What the server says changed: `etags` names the changed hrefs (all of them when
    `full`: then a stored href missing from it is gone)."""

    token: str | None
    etags: dict[str, str]
    deleted: set[str]
    full: bool
    seconds: float = 0.0


def list_changes(
    calendar: CalDAVCalendar, token: str | None, window: tuple[datetime, datetime]
) -> Listing:
    """Blocking: the changes since `token` (RFC 6578), else a full listing."""
    began = time.perf_counter()
    changes = None
    try:
        changes = calendar.sync_collection(token)
    except SyncTokenInvalid:
        changes = calendar.sync_collection(None)
        token = None
    except ProviderFailure:
        if token:
            raise
        changes = None  # the server does not offer sync-collection: compare ETags
    if changes is not None and changes.token:
        listing = Listing(changes.token, changes.changed, set(changes.deleted), token is None)
    else:
        listing = Listing(None, calendar.etags_in_window(*window), set(), full=True)
    listing.seconds = time.perf_counter() - began
    return listing


def fetch_changes(
    calendar: CalDAVCalendar,
    listing: Listing,
    known_etags: dict[str, str],
    window: tuple[datetime, datetime],
) -> Pulled:
    """Blocking: fetch and expand the listed objects whose ETag is not the stored one
    (`known_etags`: href -> ETag, of every stored href when the listing is full)."""
    start, end = window
    deleted = set(listing.deleted)
    if listing.full:
        deleted |= set(known_etags) - set(listing.etags)
    pulled = Pulled(listing.token, deleted=deleted)
    wanted = [h for h, etag in listing.etags.items() if known_etags.get(h) != etag]
    listed = time.perf_counter()
    fetched = calendar.multiget(wanted)
    parsing = time.perf_counter()
    for href, (etag, data) in fetched.items():
        try:
            pulled.objects[href] = (etag, parse_instances(data, start, end))
        except Exception:  # one malformed object must not stop the sync
            log.warning("calendar object skipped: unparsable iCalendar data")
            pulled.objects[href] = (etag, [])
        pulled.transferred += 1
    pulled.timings = {
        "listing": listing.seconds,
        "fetch": parsing - listed,
        "parse": time.perf_counter() - parsing,
    }
    return pulled


def pull(
    calendar: CalDAVCalendar,
    token: str | None,
    known_etags: dict[str, str],
    window: tuple[datetime, datetime],
) -> Pulled:
    """Blocking: read what changed since the last sync (`known_etags`: every stored href)."""
    return fetch_changes(calendar, list_changes(calendar, token, window), known_etags, window)


def link_account(instance: Instance, links: dict[str, uuid.UUID]) -> uuid.UUID | None:
    for att in instance.attendees:
        if att["email"] in links:
            return links[att["email"]]
    return None


# Column limits (models/calendar.py): an object whose identity does not fit is skipped, a text
# that does not fit is cut, so that one odd object never fails the whole sync.
MAX_UID_BYTES = 1024
MAX_HREF = 2048


def event_values(
    inst: Instance, href: str, etag: str | None, links: dict[str, uuid.UUID]
) -> dict[str, Any]:
    """The columns of an event row that the provider's instance decides."""
    return {
        "href": href,
        "etag": etag if etag and len(etag) <= 255 else None,
        "title": inst.title[:1024],
        "description": inst.description,
        "location": None if inst.location is None else inst.location[:1024],
        "start_at": inst.start,
        "end_at": inst.end,
        "all_day": inst.all_day,
        "attendees": inst.attendees,
        "organizer_email": None if inst.organizer_email is None else inst.organizer_email[:320],
        "account_id": link_account(inst, links),
    }


def apply_values(event: CalendarEvent, values: dict[str, Any]) -> bool:
    """Set what differs (an unchanged row stays clean: no write, no feed update)."""
    changed = False
    for name, value in values.items():
        if getattr(event, name) != value:
            setattr(event, name, value)
            changed = True
    return changed


async def store_pulled(session: AsyncSession, conn: CalendarConnection, pulled: Pulled) -> int:
    """Write a pull into the events of `conn` (the caller commits): each instance updates the
    row of its (UID, RECURRENCE-ID) in place or adds one; the rows of the changed and deleted
    hrefs that no instance claimed are removed. Answers how many instances were pulled."""
    incoming: dict[tuple[str, str], tuple[str, str, Instance]] = {}
    for href, (etag, instances) in pulled.objects.items():
        if len(href) > MAX_HREF:
            log.warning("calendar object skipped: its href is too long")
            continue
        for inst in instances:
            if not inst.uid or len(inst.uid.encode()) > MAX_UID_BYTES:
                log.warning("calendar object skipped: missing or overlong UID")
                continue
            incoming[(inst.uid, inst.recurrence_key)] = (href, etag, inst)
    touched = set(pulled.deleted) | set(pulled.objects)
    existing = await repo.events_of(session, conn.id, touched, {uid for uid, _ in incoming})
    by_key = {(r.uid, r.recurrence_key): r for r in existing}
    emails = {a["email"] for _, _, inst in incoming.values() for a in inst.attendees}
    links = await repo.account_links(session, conn.organization_id, emails)
    changes: list[RowEvent] = []  # said when flushed
    for key, (href, etag, inst) in incoming.items():
        values = event_values(inst, href, etag, links)
        row = by_key.pop(key, None)
        if row is None:
            row = CalendarEvent(
                organization_id=conn.organization_id,
                connection_id=conn.id,
                user_id=conn.user_id,
                uid=inst.uid,
                recurrence_key=inst.recurrence_key,
                **values,
            )
            session.add(row)
            changes.append(CalendarEventCreated(conn.organization_id, row))
        elif apply_values(row, values):
            changes.append(CalendarEventUpdated(conn.organization_id, row))
    for row in by_key.values():
        if row.href in touched:  # its object is gone, or no longer holds this instance
            changes.append(CalendarEventDeleted(conn.organization_id, row))
            await session.delete(row)
    await session.flush()
    for change in changes:
        emit(session, change)
    return len(incoming)


async def _claim(ctx: WorkerContext) -> list[uuid.UUID]:
    async with ctx.unit_of_work() as uow:
        return await repo.claim_due_connections(
            await uow.session(),
            ctx.worker_id,
            utcnow(),
            interval=SYNC_INTERVAL,
            lease=LEASE,
            limit=CLAIM_BATCH,
        )


async def sync_connection(
    ctx: WorkerContext, connection_id: uuid.UUID, timings: dict[str, float] | None = None
) -> int:
    """Sync one claimed connection; answers how many objects were transferred. `timings`, when
    given, receives the seconds of each step (bench/calendar_sync.py prints them)."""
    began = time.perf_counter()
    # No transaction open across the network calls: the unit of work ends with the read.
    async with ctx.unit_of_work() as uow:
        conn = await repo.connection_by_id(await uow.session(), connection_id)
        if conn is None or conn.lease_owner != ctx.worker_id:
            return 0
        requested_at = conn.sync_requested_at
        token = conn.sync_token
        url, username, secret = conn.url, conn.username, conn.password_encrypted
        organization = conn.organization_id

    # Network calls in a thread, each with no transaction open; between them one short read of
    # the stored ETags (of the listed hrefs only, unless the listing is full).
    error: str | None = None
    pulled: Pulled | None = None
    known_seconds = 0.0
    try:
        password = decrypt_password(ctx.settings.signing_key, secret)
        calendar = CalDAVCalendar(url, username, password, outbound.policy(ctx.settings))
        window = sync_window()
        listing = await provider_call(
            list_changes, calendar, token, window, organization=organization
        )
        reading = time.perf_counter()
        async with ctx.unit_of_work() as uow:
            known = await repo.known_etags(
                await uow.session(), connection_id, None if listing.full else set(listing.etags)
            )
        known_seconds = time.perf_counter() - reading
        pulled = await provider_call(
            fetch_changes, calendar, listing, known, window, organization=organization
        )
    except (ProviderFailure, ValueError) as exc:
        error = str(exc)
    network = time.perf_counter()

    async with ctx.unit_of_work() as uow:
        session = await uow.session()
        conn = await repo.connection_by_id(session, connection_id)
        if conn is None or conn.lease_owner != ctx.worker_id:
            return 0  # deleted meanwhile, or the lease expired and another worker took it
        if pulled is not None:
            await store_pulled(session, conn, pulled)
            conn.sync_token = pulled.token
            conn.last_synced_at = utcnow()
        conn.last_error = error
        conn.lease_owner = None
        # After a failure, wait before the next attempt: 1 min, doubling, at most an hour.
        conn.sync_failures = conn.sync_failures + 1 if error else 0
        wait = retry_wait(conn.sync_failures) if error else None
        conn.lease_until = utcnow() + wait if wait else None
        failures = conn.sync_failures
        if conn.sync_requested_at == requested_at:
            conn.sync_requested_at = None
    if timings is not None:
        timings["known"] = known_seconds
        if pulled is not None:
            timings.update(pulled.timings)
            spent = sum(pulled.timings.values()) + known_seconds
            timings["provider_other"] = network - began - spent
        timings["store"] = time.perf_counter() - network
    if error:
        log.warning(
            "calendar sync of connection %s (%s) failed (%d in a row; next attempt in %s): %s",
            connection_id,
            urlsplit(url).hostname,
            failures,
            retry_wait(failures),
            error,
        )
    return pulled.transferred if pulled is not None else 0


async def run_calendar_sync(ctx: WorkerContext) -> int:
    """The job kind: sync a few due connections; answers how many were synced."""
    ids = await _claim(ctx)
    for connection_id in ids:
        await sync_connection(ctx, connection_id)
    return len(ids)
