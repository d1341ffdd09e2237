"""Calendar: CalDAV connections, the events synced from them, and meeting artifacts."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Any

from sqlalchemy import Boolean, Date, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from salesplan.models.base import (
    Base,
    IdMixin,
    TenantMixin,
    TimestampMixin,
    sort_indexes,
)


class CalendarConnection(IdMixin, TenantMixin, TimestampMixin, Base):
    """One CalDAV calendar collection of one user. The password is encrypted (Fernet)."""

    __tablename__ = "calendar_connections"
    __display_name__ = "Calendar connection"
    __table_args__ = sort_indexes("calendar_connections", "created_at", scope=("user_id",))

    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    url: Mapped[str] = mapped_column(String(2048))
    username: Mapped[str] = mapped_column(String(255))
    password_encrypted: Mapped[str] = mapped_column(Text)
    # RFC 6578 token of the last sync, when the server offers sync-collection.
    sync_token: Mapped[str | None] = mapped_column(Text, default=None)
    last_synced_at: Mapped[datetime | None] = mapped_column(default=None)
    # Set by `POST …/sync` (and on create); cleared by the sync that honoured it.
    sync_requested_at: Mapped[datetime | None] = mapped_column(default=None, index=True)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    # Failed attempts in a row (0 after a success): the next waits 1 min * 2^(n-1), at most 1 h.
    sync_failures: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    lease_owner: Mapped[str | None] = mapped_column(String(64), default=None)
    lease_until: Mapped[datetime | None] = mapped_column(default=None)


class CalendarEvent(IdMixin, TenantMixin, TimestampMixin, Base):
    """One occurrence of a calendar object: a recurring event is stored once per instance in the
    sync window (`recurrence_key` = the instance's RECURRENCE-ID, its original start; "" for a
    single event). Its identity is the provider's: (connection, UID, RECURRENCE-ID). A change at
    the provider updates the row in place (same id, artifacts kept); `href` is only where the
    object lives now."""

    __tablename__ = "calendar_events"
    __display_name__ = "Calendar event"
    __table_args__ = (
        UniqueConstraint("connection_id", "uid", "recurrence_key"),
        Index("ix_calendar_events_connection_href", "connection_id", "href"),
        # A user's events (listCalendarEvents) by each sortBy; `start` also the feed's window.
        *sort_indexes(
            "calendar_events", "start_at", "created_at", "updated_at", scope=("user_id",)
        ),
    )

    connection_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("calendar_connections.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    href: Mapped[str] = mapped_column(String(2048))
    etag: Mapped[str | None] = mapped_column(String(255), default=None)
    uid: Mapped[str] = mapped_column(String(1024))
    recurrence_key: Mapped[str] = mapped_column(String(64), default="")
    title: Mapped[str] = mapped_column(String(1024), default="")
    description: Mapped[str | None] = mapped_column(Text, default=None)
    location: Mapped[str | None] = mapped_column(String(1024), default=None)
    start_at: Mapped[datetime] = mapped_column()
    end_at: Mapped[datetime] = mapped_column()
    all_day: Mapped[bool] = mapped_column(Boolean, default=False)
    attendees: Mapped[list[Any]] = mapped_column(default=list)
    organizer_email: Mapped[str | None] = mapped_column(String(320), default=None)
    account_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="SET NULL"), default=None, index=True
    )


class CalendarArtifact(IdMixin, TenantMixin, TimestampMixin, Base):
    """The summary and transcript of a meeting (action items are rows of their own)."""

    __tablename__ = "calendar_artifacts"

    event_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("calendar_events.id", ondelete="CASCADE"), unique=True
    )
    summary: Mapped[str | None] = mapped_column(Text, default=None)
    summary_updated_at: Mapped[datetime | None] = mapped_column(default=None)
    transcript: Mapped[list[Any] | None] = mapped_column(default=None)
    has_action_items: Mapped[bool] = mapped_column(Boolean, default=False)


class CalendarActionItem(IdMixin, TenantMixin, TimestampMixin, Base):
    __tablename__ = "calendar_action_items"

    event_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("calendar_events.id", ondelete="CASCADE"), index=True
    )
    position: Mapped[int] = mapped_column(Integer, default=0)
    text: Mapped[str] = mapped_column(Text)
    assignee_email: Mapped[str | None] = mapped_column(String(320), default=None)
    due_date: Mapped[date | None] = mapped_column(Date, default=None)
    completed: Mapped[bool] = mapped_column(Boolean, default=False)
