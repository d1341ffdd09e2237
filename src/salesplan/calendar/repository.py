"""Calendar's statements: a user's connections, events, and a meeting's artifacts and action
items, on `kit.repository`'s tenant-scoped base; and who may read an event, in SQL."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, delete, false, select, true

from salesplan.auth.principal import RequestContext
from salesplan.calendar.visibility import reads_teammates
from salesplan.errors import NotFound
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.repository import Repository, sorts
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import scoped
from salesplan.models.calendar import (
    CalendarActionItem,
    CalendarArtifact,
    CalendarConnection,
    CalendarEvent,
)
from salesplan.models.identity import Membership


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
