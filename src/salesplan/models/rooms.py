"""Buyer rooms (contract §16): a plan as its buyer sees it. The room's settings (hidden items,
welcome message), the shares that let a buyer in (each with its link tokens, sign-in codes and
room sessions, all stored only as hashes) and the comments on a plan's tasks."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from salesplan.kit.clock import utcnow
from salesplan.models.base import Base, IdMixin, TenantMixin, TimestampMixin


class PlanRoom(TenantMixin, TimestampMixin, Base):
    """A plan's room settings; a plan without a row has the defaults (nothing hidden)."""

    __tablename__ = "plan_rooms"

    plan_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("plans.id", ondelete="CASCADE"), primary_key=True
    )
    hidden_milestone_ids: Mapped[list[Any]] = mapped_column(default=list)
    hidden_goal_ids: Mapped[list[Any]] = mapped_column(default=list)
    hidden_task_ids: Mapped[list[Any]] = mapped_column(default=list)
    welcome_message: Mapped[str | None] = mapped_column(Text, default=None)


class PlanShare(IdMixin, TenantMixin, TimestampMixin, Base):
    """One buyer's way into a plan's room: a contact of the plan's account, a role, an expiry.
    Revoked is final (`revoked_at`); expired is `expires_at` passed."""

    __tablename__ = "plan_shares"
    __display_name__ = "Share"
    __table_args__ = (
        Index("ix_plan_shares_org_plan_created", "organization_id", "plan_id", "created_at", "id"),
    )

    plan_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("plans.id", ondelete="CASCADE"), index=True
    )
    contact_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("contacts.id", ondelete="CASCADE"), index=True
    )
    # The address codes and links go to: the contact's when the share was made.
    email: Mapped[str] = mapped_column(String(320))
    role: Mapped[str] = mapped_column(String(16))
    allow_invites: Mapped[bool] = mapped_column(Boolean, default=False)
    invited_by_share_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("plan_shares.id", ondelete="SET NULL"), default=None
    )
    expires_at: Mapped[datetime | None] = mapped_column(default=None)
    revoked_at: Mapped[datetime | None] = mapped_column(default=None)
    last_viewed_at: Mapped[datetime | None] = mapped_column(default=None)
    # When the share's last `viewed` activity was recorded (at most one per 30 minutes).
    view_counted_at: Mapped[datetime | None] = mapped_column(default=None)
    created_by_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )


class PlanShareLink(TenantMixin, Base):
    """A link token of a share (`{public_url}/rooms/{token}`), stored only as its SHA-256: one
    made with the share (answered once), one more each time the link is e-mailed."""

    __tablename__ = "plan_share_links"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    share_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("plan_shares.id", ondelete="CASCADE"), index=True
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class PlanShareCode(IdMixin, TenantMixin, Base):
    """A sign-in code e-mailed to a share's address: its keyed hash, its tries, its expiry."""

    __tablename__ = "plan_share_codes"
    __table_args__ = (Index("ix_plan_share_codes_share_created", "share_id", "created_at"),)

    share_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("plan_shares.id", ondelete="CASCADE"))
    code_hash: Mapped[str] = mapped_column(String(64))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    expires_at: Mapped[datetime] = mapped_column()
    used_at: Mapped[datetime | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class PlanShareSession(IdMixin, TenantMixin, Base):
    """A buyer signed in to a room: the cookie's SHA-256, bound to one share. Read with its
    share on every request, so that revoking the share ends it at once on every process."""

    __tablename__ = "plan_share_sessions"

    share_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("plan_shares.id", ondelete="CASCADE"), index=True
    )
    session_hash: Mapped[str] = mapped_column(String(64), unique=True)
    expires_at: Mapped[datetime] = mapped_column()
    # What the next page view shows once (an action's outcome).
    flash: Mapped[dict[str, Any] | None] = mapped_column(default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class PlanTaskComment(IdMixin, TenantMixin, Base):
    """A comment on a plan's task, by a user (seller side) or a contact (in the room).
    `internal` comments never reach the room. The author's name is kept as it was written."""

    __tablename__ = "plan_task_comments"
    __table_args__ = (
        Index("ix_plan_task_comments_org_task_created", "organization_id", "task_id", "created_at"),
    )

    plan_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("plans.id", ondelete="CASCADE"), index=True
    )
    task_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("plan_tasks.id", ondelete="CASCADE"))
    body: Mapped[str] = mapped_column(Text)
    internal: Mapped[bool] = mapped_column(Boolean, default=False)
    author_type: Mapped[str] = mapped_column(String(16))  # user | contact
    author_user_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
    author_contact_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("contacts.id", ondelete="SET NULL"), default=None
    )
    author_name: Mapped[str] = mapped_column(String(255), default="")
    share_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("plan_shares.id", ondelete="SET NULL"), default=None
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class PlanActivity(IdMixin, TenantMixin, Base):
    """What a buyer did in a plan's room (contract §16 "Activity and engagement"): `viewed`
    (at most one per share per 30 minutes), `task_completed`, `task_reopened`, `commented`,
    `invited`. Written in the transaction of the action, by the subscriber of its domain
    event (`rooms.activity`)."""

    __tablename__ = "plan_activity"
    __table_args__ = (
        Index(
            "ix_plan_activity_org_plan_created", "organization_id", "plan_id", "created_at", "id"
        ),
    )

    plan_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("plans.id", ondelete="CASCADE"))
    type: Mapped[str] = mapped_column(String(32))
    share_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("plan_shares.id", ondelete="SET NULL"), default=None
    )
    contact_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("contacts.id", ondelete="SET NULL"), default=None
    )
    task_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("plan_tasks.id", ondelete="SET NULL"), default=None
    )
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class PlanRoomNotice(TenantMixin, Base):
    """A plan's digest of buyer activity to its sellers (at most one per 15 minutes): `due_at`
    is when the next one goes (null: nothing waiting; a worker's claim moves it forward as
    its lease), `since` the oldest activity it tells, `sent_at` when the last one went."""

    __tablename__ = "plan_room_notices"

    plan_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("plans.id", ondelete="CASCADE"), primary_key=True
    )
    due_at: Mapped[datetime | None] = mapped_column(default=None, index=True)
    since: Mapped[datetime | None] = mapped_column(default=None)
    sent_at: Mapped[datetime | None] = mapped_column(default=None)


class PlanTaskReminder(IdMixin, TenantMixin, Base):
    """A buyer task's due-date reminders to its contact: `sent_on` the day of the last one
    (at most one a day), claimed by the worker through `worker.claims`."""

    __tablename__ = "plan_task_reminders"
    __table_args__ = (UniqueConstraint("task_id", "contact_id"),)

    task_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("plan_tasks.id", ondelete="CASCADE"))
    contact_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    sent_on: Mapped[date | None] = mapped_column(default=None)
