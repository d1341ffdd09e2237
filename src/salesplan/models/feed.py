"""The feed: conversations (threads) of e-mail, Slack and calendar, their messages, and who took
part. Threads carry no account: which accounts a thread belongs to is decided when it is read,
by joining its participants' addresses to contacts and account domains, so that it follows
every contact or domain change at once."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from salesplan.kit.clock import utcnow
from salesplan.models.base import Base, IdMixin, TenantMixin, TimestampMixin
from salesplan.models.engage_delivery import EngageMessage


class FeedThread(IdMixin, TenantMixin, TimestampMixin, Base):
    """One conversation: an e-mail thread (key: the root Message-ID), a Slack thread (key:
    `{channel}:{thread_ts}`) or a meeting (key: the calendar event id)."""

    __tablename__ = "feed_threads"
    __display_name__ = "Thread"
    __table_args__ = (
        UniqueConstraint("organization_id", "kind", "thread_key"),
        # The inbox: newest activity first, keyset on (last_activity_at, id).
        Index("ix_feed_threads_org_activity", "organization_id", "last_activity_at", "id"),
    )

    kind: Mapped[str] = mapped_column(String(16))  # email | slack | calendar
    thread_key: Mapped[str] = mapped_column(String(512))
    subject: Mapped[str | None] = mapped_column(String(998), default=None)
    snippet: Mapped[str] = mapped_column(Text, default="")
    message_count: Mapped[int] = mapped_column(Integer, default=0)
    last_activity_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Needs attention: the last message from outside, and our last answer.
    last_inbound_at: Mapped[datetime | None] = mapped_column(default=None)
    last_outbound_at: Mapped[datetime | None] = mapped_column(default=None)
    # Meetings go with their event (a deleted event or connection takes its thread).
    calendar_event_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("calendar_events.id", ondelete="CASCADE"), default=None, index=True
    )


class FeedParticipant(Base):
    """An address that took part in a thread (lower-cased), with its domain for account domain
    matches."""

    __tablename__ = "feed_participants"
    __table_args__ = (
        Index("ix_feed_participants_org_email", "organization_id", "email"),
        Index("ix_feed_participants_org_domain", "organization_id", "domain"),
    )

    thread_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("feed_threads.id", ondelete="CASCADE"), primary_key=True
    )
    email: Mapped[str] = mapped_column(String(320), primary_key=True)
    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    domain: Mapped[str] = mapped_column(String(255))
    name: Mapped[str | None] = mapped_column(String(320), default=None)


class FeedMessage(IdMixin, TenantMixin, Base):
    """One message of a thread. `source_key` names where it came from (`engage_message:{id}`,
    `engage_reply:{id}`, `slack:{event_id}`, `calendar:{id}`) and is unique per organization: a
    retried Slack event or a replayed hook never makes a second message."""

    __tablename__ = "feed_messages"
    __display_name__ = "Message"
    __table_args__ = (
        UniqueConstraint("organization_id", "source_key"),
        Index("ix_feed_messages_thread_occurred", "thread_id", "occurred_at", "id"),
        Index("ix_feed_messages_org_kind_occurred", "organization_id", "kind", "occurred_at"),
    )

    thread_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("feed_threads.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(16))
    direction: Mapped[str] = mapped_column(String(16))  # inbound | outbound
    source_key: Mapped[str] = mapped_column(String(300))
    author_email: Mapped[str | None] = mapped_column(String(320), default=None)
    author_name: Mapped[str | None] = mapped_column(String(320), default=None)
    subject: Mapped[str | None] = mapped_column(String(998), default=None)
    text: Mapped[str] = mapped_column(Text, default="")
    occurred_at: Mapped[datetime] = mapped_column(default=utcnow)
    slack_channel: Mapped[str | None] = mapped_column(String(64), default=None)
    slack_ts: Mapped[str | None] = mapped_column(String(32), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class FeedOwnDomain(Base):
    """A domain an admin declared the organization's own (contract §12 "Feed visibility and
    attribution"): when the organization has any, they replace the own domains derived from its
    users' addresses (`salesplan admin set-integration --own-domains`, developer settings)."""

    __tablename__ = "feed_own_domains"

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), primary_key=True
    )
    domain: Mapped[str] = mapped_column(String(255), primary_key=True)


# Communication analytics count sent e-mail by (organization, sent_at): an index the outbox had
# no need of. Declared here (the feed's reads need it) on the engage table; covering the columns
# the count reads, so that PostgreSQL answers from the index alone.
Index(
    "ix_engage_messages_org_sent",
    EngageMessage.organization_id,
    EngageMessage.sent_at,
    postgresql_include=["channel", "replied_at"],
)
