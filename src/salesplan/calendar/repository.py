"""Calendar's statements: a user's connections, events, and a meeting's artifacts and action
items, on `kit.repository`'s tenant-scoped base; and the sync job's (`calendar/sync.py`):
the claim of due connections, the stored ETags and rows of a connection, the accounts its
attendees belong to."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, delete, false, func, or_, select, true
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.calendar.visibility import reads_teammates
from salesplan.errors import NotFound
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.repository import Repository, sorts
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import OrgScope, scoped
from salesplan.models.calendar import (
    CalendarActionItem,
    CalendarArtifact,
    CalendarConnection,
    CalendarEvent,
)
from salesplan.models.crm import Account, Contact
from salesplan.models.identity import Membership
from salesplan.worker.claims import claim


def readable(ctx: RequestContext, owner_column: Any) -> ColumnElement[bool]:
    """`visibility.may_read` in SQL, over the column holding an event's owner."""
    if reads_teammates(ctx):
        return true()
    if ctx.user_id is None:
        return false()
    result: ColumnElement[bool] = owner_column == ctx.user_id
    return result


class ConnectionRepository(Repository[CalendarConnection]):
    """Connections hold credentials: only their user's are ever read."""

    model = CalendarConnection
    sort_columns = {"createdAt": CalendarConnection.created_at}

    async def page_of(
        self, user_id: uuid.UUID, params: ListParams, codec: CursorCodec
    ) -> tuple[list[CalendarConnection], PaginationMeta]:
        return await self.list(params, codec, where=[CalendarConnection.user_id == user_id])

    async def get_of(self, user_id: uuid.UUID, connection_id: uuid.UUID) -> CalendarConnection:
        """The user's own connection; anybody else's is a 404."""
        stmt = self.select().where(
            CalendarConnection.user_id == user_id, CalendarConnection.id == connection_id
        )
        conn = (await self.session.execute(stmt)).scalar_one_or_none()
        if conn is None:
            raise NotFound("Calendar connection not found.")
        return conn

    async def delete(self, conn: CalendarConnection) -> None:
        await self.session.delete(conn)
        await self.session.flush()


class EventRepository(Repository[CalendarEvent]):
    model = CalendarEvent
    sort_columns = sorts(CalendarEvent, start=CalendarEvent.start_at)
    search_columns = (CalendarEvent.title,)

    async def page_of(
        self,
        user_id: uuid.UUID,
        params: ListParams,
        codec: CursorCodec,
        *,
        start: datetime | None,
        end: datetime | None,
        account_id: uuid.UUID | None,
    ) -> tuple[list[CalendarEvent], PaginationMeta]:
        """The user's events overlapping [start, end), of one account when named."""
        where = [CalendarEvent.user_id == user_id]
        if start is not None:
            where.append(CalendarEvent.end_at > start)
        if end is not None:
            where.append(CalendarEvent.start_at < end)
        if account_id is not None:
            where.append(CalendarEvent.account_id == account_id)
        return await self.list(params, codec, where=where)

    async def locked(self, event_id: uuid.UUID) -> CalendarEvent | None:
        """The event as it is now, locked for the rest of the transaction (None: gone)."""
        stmt = self.select().where(CalendarEvent.id == event_id).with_for_update()
        found: CalendarEvent | None = (await self.session.scalars(stmt)).one_or_none()
        return found

    async def connection(self, event: CalendarEvent) -> CalendarConnection | None:
        return await self.session.get(CalendarConnection, event.connection_id)

    async def is_member(self, user_id: uuid.UUID) -> bool:
        """Whether the user is a member of the organization."""
        stmt = scoped(select(Membership.id).where(Membership.user_id == user_id), self.ctx)
        return await self.session.scalar(stmt) is not None


class ActionItemRepository(Repository[CalendarActionItem]):
    model = CalendarActionItem
    sort_columns = {"position": CalendarActionItem.position}

    async def page_of(
        self, event: CalendarEvent, params: ListParams, codec: CursorCodec
    ) -> tuple[list[CalendarActionItem], PaginationMeta]:
        return await self.list(params, codec, where=[CalendarActionItem.event_id == event.id])

    async def all_of(self, event: CalendarEvent) -> list[CalendarActionItem]:
        stmt = self.select().where(CalendarActionItem.event_id == event.id)
        return list(await self.session.scalars(stmt.order_by(CalendarActionItem.position)))

    async def replace(self, event: CalendarEvent, items: Iterable[dict[str, object]]) -> None:
        """The event's action items become `items`, in that order."""
        await self.session.execute(
            delete(CalendarActionItem).where(CalendarActionItem.event_id == event.id)
        )
        for position, item in enumerate(items):
            self.session.add(
                CalendarActionItem(
                    organization_id=event.organization_id,
                    event_id=event.id,
                    position=position,
                    **item,
                )
            )


class ArtifactRepository(Repository[CalendarArtifact]):
    model = CalendarArtifact

    async def of(self, event: CalendarEvent) -> CalendarArtifact | None:
        """The event's artifact row (one at most), or None."""
        return await self.session.scalar(self.select().where(CalendarArtifact.event_id == event.id))


# -- the sync job (no request: by connection, or by the connection's organization) ------------


async def claim_due_connections(
    session: AsyncSession,
    worker_id: str,
    now: datetime,
    *,
    interval: timedelta,
    lease: timedelta,
    limit: int,
) -> list[uuid.UUID]:
    """Lease at most `limit` due connections to `worker_id` (`worker.claims`), asked-for
    syncs first: a sync was requested, or none happened yet or in the last `interval`, and no
    other worker holds a live lease. Answers their ids in that order."""
    c = CalendarConnection
    due = [
        or_(
            c.sync_requested_at.is_not(None),
            c.last_synced_at.is_(None),
            c.last_synced_at < now - interval,
        ),
        or_(c.lease_until.is_(None), c.lease_until < now),
    ]
    rows = await claim(
        session,
        c,
        due=due,
        order_by=[c.sync_requested_at.is_(None), c.id],
        limit=limit,
        values={"lease_owner": worker_id, "lease_until": now + lease},
        returning=[c.id, c.sync_requested_at],
    )
    # RETURNING does not keep the subquery's order: the same order, in Python.
    claimed = sorted(rows, key=lambda r: (r.sync_requested_at is None, r.id))
    return [r.id for r in claimed]


async def connection_by_id(
    session: AsyncSession, connection_id: uuid.UUID
) -> CalendarConnection | None:
    return await session.get(CalendarConnection, connection_id)


def _chunks(values: Iterable[str], size: int = 500) -> list[list[str]]:
    ordered = sorted(values)
    return [ordered[i : i + size] for i in range(0, len(ordered), size)]


async def known_etags(
    session: AsyncSession, connection_id: uuid.UUID, hrefs: set[str] | None
) -> dict[str, str]:
    """href -> stored ETag, of the connection's rows (of `hrefs` only, when given: an
    incremental sync needs the few it was told about, not all of them)."""
    stmt = select(CalendarEvent.href, CalendarEvent.etag).where(
        CalendarEvent.connection_id == connection_id
    )
    if hrefs is None:
        return {href: etag or "" for href, etag in await session.execute(stmt.distinct())}
    out: dict[str, str] = {}
    for chunk in _chunks(hrefs):
        rows = await session.execute(stmt.where(CalendarEvent.href.in_(chunk)))
        out.update((href, etag or "") for href, etag in rows)
    return out


async def events_of(
    session: AsyncSession, connection_id: uuid.UUID, hrefs: set[str], uids: set[str]
) -> list[CalendarEvent]:
    """The connection's rows of these hrefs or these UIDs."""
    rows: dict[uuid.UUID, CalendarEvent] = {}
    for column, values in ((CalendarEvent.href, hrefs), (CalendarEvent.uid, uids)):
        for chunk in _chunks(values):
            found = await session.scalars(
                select(CalendarEvent).where(
                    CalendarEvent.connection_id == connection_id, column.in_(chunk)
                )
            )
            rows.update((r.id, r) for r in found)
    return list(rows.values())


async def account_links(
    session: AsyncSession, organization_id: uuid.UUID, emails: set[str]
) -> dict[str, uuid.UUID]:
    """email -> account, by contact e-mail first, else by the account's domain."""
    if not emails:
        return {}
    links: dict[str, uuid.UUID] = {}
    org = OrgScope(organization_id)
    rows = await session.execute(
        scoped(select(func.lower(Contact.email), Contact.account_id), org, Contact).where(
            Contact.archived_at.is_(None),
            func.lower(Contact.email).in_(sorted(emails)),
        )
    )
    for email, account_id in rows:
        links.setdefault(email, account_id)
    domains = {e.rsplit("@", 1)[1] for e in emails if "@" in e and e not in links}
    if domains:
        rows = await session.execute(
            scoped(select(func.lower(Account.domain), Account.id), org, Account).where(
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
