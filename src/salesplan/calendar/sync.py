"""Calendar sync, a worker job kind (see `salesplan.worker.context`).

A connection is due when a sync was asked for (`sync_requested_at`, set on create and by
`POST …/sync`) or its last sync is older than `SYNC_INTERVAL`. `run_calendar_sync` claims a few due
connections (PostgreSQL: `FOR UPDATE SKIP LOCKED`, and a lease so that a killed worker's claim
expires), then syncs each: the CalDAV requests run in a thread with no database transaction open,
and the result is written in one short transaction.

Incremental: with a sync token (RFC 6578) only the changed and deleted hrefs come back and only the
changed objects are fetched; without one, a calendar-query of the window's ETags is compared with
the stored ones. Each object is expanded to its instances in the window (past 30, next 90 days)."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import delete, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.calendar.crypto import decrypt_password
from salesplan.calendar.ical import Instance, parse_instances
from salesplan.calendar.provider import CalDAVCalendar, ProviderFailure, SyncTokenInvalid
from salesplan.calendar.provider import call as provider_call
from salesplan.kit import outbound
from salesplan.kit.clock import utcnow
from salesplan.models.calendar import CalendarConnection, CalendarEvent
from salesplan.models.crm import Account, Contact
from salesplan.worker.context import WorkerContext

log = logging.getLogger("salesplan.calendar.sync")

SYNC_INTERVAL = timedelta(minutes=15)
LEASE = timedelta(minutes=5)
CLAIM_BATCH = 3
RETRY_AFTER_FAILURE = timedelta(minutes=1)
WINDOW_PAST = timedelta(days=30)
WINDOW_FUTURE = timedelta(days=90)


def sync_window(now: datetime | None = None) -> tuple[datetime, datetime]:
    now = now or utcnow()
    return now - WINDOW_PAST, now + WINDOW_FUTURE


@dataclass
class Pulled:
    """What one sync read from the server."""

    token: str | None
    full: bool  # every href of the window is in `objects` (drop the others)
    objects: dict[str, tuple[str, list[Instance]]] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    transferred: int = 0


def pull(
    calendar: CalDAVCalendar,
    token: str | None,
    known_etags: dict[str, str],
    window: tuple[datetime, datetime],
) -> Pulled:
    """Blocking: read what changed since the last sync."""
    start, end = window
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
        wanted = [h for h, etag in changes.changed.items() if known_etags.get(h) != etag]
        pulled = Pulled(changes.token, full=token is None, deleted=set(changes.deleted))
    else:
        etags = calendar.etags_in_window(start, end)
        wanted = [h for h, etag in etags.items() if known_etags.get(h) != etag]
        pulled = Pulled(None, full=False, deleted=set(known_etags) - set(etags))
    for href, (etag, data) in calendar.multiget(wanted).items():
        try:
            pulled.objects[href] = (etag, parse_instances(data, start, end))
        except Exception:  # one malformed object must not stop the sync
            log.warning("calendar object skipped: unparsable iCalendar data")
            pulled.objects[href] = (etag, [])
        pulled.transferred += 1
    return pulled


async def _account_links(
    session: AsyncSession, organization_id: uuid.UUID, emails: set[str]
) -> dict[str, uuid.UUID]:
    """email -> account, by contact e-mail first, else by the account's domain."""
    if not emails:
        return {}
    links: dict[str, uuid.UUID] = {}
    rows = await session.execute(
        select(func.lower(Contact.email), Contact.account_id).where(
            Contact.organization_id == organization_id,
            Contact.archived_at.is_(None),
            func.lower(Contact.email).in_(sorted(emails)),
        )
    )
    for email, account_id in rows:
        links.setdefault(email, account_id)
    domains = {e.rsplit("@", 1)[1] for e in emails if "@" in e and e not in links}
    if domains:
        rows = await session.execute(
            select(func.lower(Account.domain), Account.id).where(
                Account.organization_id == organization_id,
                Account.archived_at.is_(None),
                func.lower(Account.domain).in_(sorted(domains)),
            )
        )
        by_domain: dict[str, uuid.UUID] = {}
        for domain, account_id in rows:
            by_domain.setdefault(domain, account_id)
        for email in emails:
            if email not in links and "@" in email:
                account = by_domain.get(email.rsplit("@", 1)[1])
                if account is not None:
                    links[email] = account
    return links


def link_account(instance: Instance, links: dict[str, uuid.UUID]) -> uuid.UUID | None:
    for att in instance.attendees:
        if att["email"] in links:
            return links[att["email"]]
    return None


async def store_pulled(session: AsyncSession, conn: CalendarConnection, pulled: Pulled) -> int:
    """Write a pull into the events of `conn` (the caller commits)."""
    stale = set(pulled.deleted) | set(pulled.objects)
    if pulled.full:
        stored = await session.scalars(
            select(CalendarEvent.href).where(CalendarEvent.connection_id == conn.id).distinct()
        )
        stale |= set(stored) - set(pulled.objects)
    for i in range(0, len(stale), 500):
        chunk = sorted(stale)[i : i + 500]
        await session.execute(
            delete(CalendarEvent).where(
                CalendarEvent.connection_id == conn.id, CalendarEvent.href.in_(chunk)
            )
        )
    emails = {
        a["email"] for _, insts in pulled.objects.values() for i in insts for a in i.attendees
    }
    links = await _account_links(session, conn.organization_id, emails)
    count = 0
    for href, (etag, instances) in pulled.objects.items():
        for inst in instances:
            session.add(
                CalendarEvent(
                    organization_id=conn.organization_id,
                    connection_id=conn.id,
                    user_id=conn.user_id,
                    href=href,
                    etag=etag,
                    uid=inst.uid,
                    recurrence_key=inst.recurrence_key,
                    title=inst.title,
                    description=inst.description,
                    location=inst.location,
                    start_at=inst.start,
                    end_at=inst.end,
                    all_day=inst.all_day,
                    attendees=inst.attendees,
                    organizer_email=inst.organizer_email,
                    account_id=link_account(inst, links),
                )
            )
            count += 1
    await session.flush()
    return count


async def _claim(ctx: WorkerContext) -> list[uuid.UUID]:
    now = utcnow()
    async with ctx.sessionmaker() as session, session.begin():
        stmt = (
            select(CalendarConnection)
            .where(
                or_(
                    CalendarConnection.sync_requested_at.is_not(None),
                    CalendarConnection.last_synced_at.is_(None),
                    CalendarConnection.last_synced_at < now - SYNC_INTERVAL,
                ),
                or_(CalendarConnection.lease_until.is_(None), CalendarConnection.lease_until < now),
            )
            .order_by(CalendarConnection.sync_requested_at.is_(None), CalendarConnection.id)
            .limit(CLAIM_BATCH)
        )
        if ctx.engine.dialect.name == "postgresql":
            stmt = stmt.with_for_update(skip_locked=True)
        rows = list(await session.scalars(stmt))
        for conn in rows:
            conn.lease_owner = ctx.worker_id
            conn.lease_until = now + LEASE
        return [c.id for c in rows]


async def sync_connection(ctx: WorkerContext, connection_id: uuid.UUID) -> int:
    """Sync one claimed connection; answers how many objects were transferred."""
    async with ctx.sessionmaker() as session:
        conn = await session.get(CalendarConnection, connection_id)
        if conn is None or conn.lease_owner != ctx.worker_id:
            return 0
        requested_at = conn.sync_requested_at
        token = conn.sync_token
        rows = await session.execute(
            select(CalendarEvent.href, CalendarEvent.etag)
            .where(CalendarEvent.connection_id == conn.id)
            .distinct()
        )
        known = {href: etag or "" for href, etag in rows}
        url, username, secret = conn.url, conn.username, conn.password_encrypted
        organization = conn.organization_id
        await session.rollback()  # no transaction open across the network calls

    error: str | None = None
    pulled: Pulled | None = None
    try:
        password = decrypt_password(ctx.settings.signing_key, secret)
        calendar = CalDAVCalendar(url, username, password, outbound.policy(ctx.settings))
        pulled = await provider_call(
            pull, calendar, token, known, sync_window(), organization=organization
        )
    except (ProviderFailure, ValueError) as exc:
        error = str(exc)

    async with ctx.sessionmaker() as session, session.begin():
        conn = await session.get(CalendarConnection, connection_id)
        if conn is None or conn.lease_owner != ctx.worker_id:
            return 0  # deleted meanwhile, or the lease expired and another worker took it
        if pulled is not None:
            await store_pulled(session, conn, pulled)
            conn.sync_token = pulled.token
            conn.last_synced_at = utcnow()
        conn.last_error = error
        conn.lease_owner = None
        # After a failure, wait a little before the next attempt instead of retrying at once.
        conn.lease_until = utcnow() + RETRY_AFTER_FAILURE if error else None
        if conn.sync_requested_at == requested_at:
            conn.sync_requested_at = None
    if error:
        log.info("calendar sync of connection %s failed", connection_id)
    return pulled.transferred if pulled is not None else 0


async def run_calendar_sync(ctx: WorkerContext) -> int:
    """The job kind: sync a few due connections; answers how many were synced."""
    ids = await _claim(ctx)
    for connection_id in ids:
        await sync_connection(ctx, connection_id)
    return len(ids)
