"""Engage delivery: idempotency records, the outbox of messages (which is also the queue that
`listEngageQueue` reads), inbound replies, the suppression list, sender pauses and an
organization's integration secrets."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import Mapped, mapped_column, validates

from salesplan.kit.clock import utcnow
from salesplan.kit.email import mailbox_default, mailbox_or_none
from salesplan.models.base import (
    Base,
    IdMixin,
    TenantMixin,
    TimestampMixin,
    sort_indexes,
)


class IdempotencyRecord(IdMixin, TenantMixin, Base):
    """One `Idempotency-Key` use (contract §6). The unique constraint is what makes concurrent
    requests with one key meet: exactly one insert wins, on any number of processes."""

    __tablename__ = "idempotency_records"
    __table_args__ = (
        UniqueConstraint("organization_id", "token_id", "operation", "key"),
        Index("ix_idempotency_records_expires_at", "expires_at"),
    )

    token_id: Mapped[uuid.UUID] = mapped_column()
    operation: Mapped[str] = mapped_column(String(64))
    key: Mapped[str] = mapped_column(String(255))
    fingerprint: Mapped[str] = mapped_column(String(64))
    # in_flight until the operation's transaction commits its result (status + body).
    state: Mapped[str] = mapped_column(String(16), default="in_flight")
    status_code: Mapped[int | None] = mapped_column(Integer, default=None)
    response_body: Mapped[dict[str, Any] | None] = mapped_column(default=None)
    locked_at: Mapped[datetime] = mapped_column(default=utcnow)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime] = mapped_column()


class EngageMessage(IdMixin, TenantMixin, TimestampMixin, Base):
    """An outbound message: the outbox row the worker delivers and the queue item clients read."""

    __tablename__ = "engage_messages"
    __display_name__ = "Queue item"
    __table_args__ = (
        # The worker's claim: due rows in due order (an index scan at any queue size).
        Index("ix_engage_messages_due", "next_attempt_at", "id"),
        Index("ix_engage_messages_org_created", "organization_id", "created_at", "id"),
        *sort_indexes("engage_messages", "updated_at"),
        Index("ix_engage_messages_rfc_message_id", "rfc_message_id", unique=True),
        # A suppression's waiting messages: one indexed equality on the parsed address.
        Index("ix_engage_messages_org_to_mailbox", "organization_id", "to_mailbox"),
        # Sender caps (contract §14): what one From address sent in a window, and what it has
        # in flight (claimed, `sent_at` still null), counted from the index.
        Index("ix_engage_messages_from_sent", "from_address", "sent_at"),
    )

    channel: Mapped[str] = mapped_column(String(16))
    contact_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("contacts.id", ondelete="SET NULL"), default=None, index=True
    )
    # Campaign messages are written by the campaign engine; plain sends leave these null.
    campaign_id: Mapped[uuid.UUID | None] = mapped_column(default=None, index=True)
    enrollment_id: Mapped[uuid.UUID | None] = mapped_column(default=None)
    step_index: Mapped[int | None] = mapped_column(Integer, default=None)
    to_address: Mapped[str | None] = mapped_column(String(320), default=None)
    # kit.email.mailbox of `to_address`, written with it (contract §12).
    to_mailbox: Mapped[str | None] = mapped_column(
        String(320), default=mailbox_default("to_address")
    )
    subject: Mapped[str | None] = mapped_column(String(998), default=None)
    body: Mapped[str] = mapped_column(Text)
    body_html: Mapped[str | None] = mapped_column(Text, default=None)
    # A transactional message's secrets (a room link, a sign-in code; contract §16), encrypted
    # (`engage/delivery/sealed.py`): the body holds placeholders, filled in only in the e-mail
    # handed to the relay, and this is erased once the message is sent or has failed. So the
    # queue, the feed and the webhooks show the placeholders, and no secret stays at rest.
    sealed: Mapped[str | None] = mapped_column(Text, default=None)
    status: Mapped[str] = mapped_column(String(16), default="queued")
    # LINKEDIN: a person sends it by hand; the worker never claims it.
    manual: Mapped[bool] = mapped_column(default=False)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text, default=None)
    scheduled_at: Mapped[datetime | None] = mapped_column(default=None)
    # When the worker may next take it; null once it needs no more work.
    next_attempt_at: Mapped[datetime | None] = mapped_column(default=None)
    lease_owner: Mapped[str | None] = mapped_column(String(64), default=None)
    lease_expires_at: Mapped[datetime | None] = mapped_column(default=None)
    # The RFC 5322 Message-ID, fixed when the message is queued: stable across retries, and what
    # replies and DSNs are threaded by.
    rfc_message_id: Mapped[str] = mapped_column(String(255))
    sent_at: Mapped[datetime | None] = mapped_column(default=None)
    # EMAIL: the From address (mailbox) while claimed and once sent; null otherwise.
    from_address: Mapped[str | None] = mapped_column(String(320), default=None)
    delivered_at: Mapped[datetime | None] = mapped_column(default=None)
    bounced_at: Mapped[datetime | None] = mapped_column(default=None)
    opened_at: Mapped[datetime | None] = mapped_column(default=None)
    open_count: Mapped[int] = mapped_column(Integer, default=0)
    clicked_at: Mapped[datetime | None] = mapped_column(default=None)
    click_count: Mapped[int] = mapped_column(Integer, default=0)
    replied_at: Mapped[datetime | None] = mapped_column(default=None)

    @validates("to_address")
    def _to_changed(self, key: str, value: str | None) -> str | None:
        self.to_mailbox = mailbox_or_none(value)
        return value


class EngageReply(IdMixin, TenantMixin, Base):
    """An inbound e-mail threaded to the outbound message it answers."""

    __tablename__ = "engage_replies"
    __display_name__ = "Reply"
    __table_args__ = (
        Index("ix_engage_replies_org_received", "organization_id", "received_at", "id"),
        # The same Message-ID delivered twice to one organization is stored once (§12).
        Index(
            "uq_engage_replies_org_rfc_message_id",
            "organization_id",
            "rfc_message_id",
            unique=True,
        ),
    )

    message_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("engage_messages.id", ondelete="SET NULL"), default=None, index=True
    )
    contact_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("contacts.id", ondelete="SET NULL"), default=None
    )
    campaign_id: Mapped[uuid.UUID | None] = mapped_column(default=None)
    from_address: Mapped[str] = mapped_column(String(320))
    subject: Mapped[str | None] = mapped_column(String(998), default=None)
    text: Mapped[str] = mapped_column(Text, default="")
    html: Mapped[str | None] = mapped_column(Text, default=None)
    rfc_message_id: Mapped[str | None] = mapped_column(String(255), default=None)
    # An automatic answer (out of office, RFC 3834): listed, but not a reply to the sequence
    # (contract §14: no repliedAt, not counted, the sequence goes on).
    auto_reply: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    received_at: Mapped[datetime] = mapped_column(default=utcnow)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SenderPause(Base):
    """A provider answered "throttled": that sender (`smtp`, or `slack:{organizationId}`) is
    left alone until `paused_until`."""

    __tablename__ = "engage_sender_pauses"

    sender: Mapped[str] = mapped_column(String(80), primary_key=True)
    paused_until: Mapped[datetime] = mapped_column()
    reason: Mapped[str | None] = mapped_column(Text, default=None)


class OrganizationIntegration(TimestampMixin, Base):
    """An organization's integration settings. Secrets are encrypted (AES-GCM, key derived from
    the server's signing key): they must be readable to sign and verify HMACs."""

    __tablename__ = "organization_integrations"

    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE"), primary_key=True
    )
    slack_webhook_url_encrypted: Mapped[bytes | None] = mapped_column(LargeBinary, default=None)
    slack_signing_secret_encrypted: Mapped[bytes | None] = mapped_column(LargeBinary, default=None)
    inbound_secret_encrypted: Mapped[bytes | None] = mapped_column(LargeBinary, default=None)
