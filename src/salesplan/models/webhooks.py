"""Outbound webhooks (contract §13): an organization's endpoints, the events recorded with the
changes they report (the outbox), and one delivery row per (endpoint, event) that the worker
sends and retries."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, String, Text, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column

from salesplan.kit.clock import utcnow
from salesplan.kit.ids import uuid7
from salesplan.models.base import Base, IdMixin, TenantMixin, TimestampMixin, sort_indexes


class WebhookEndpoint(IdMixin, TenantMixin, TimestampMixin, Base):
    """Where an organization's events go. Secrets are encrypted (they must be readable to
    sign); a rotated-out secret keeps signing beside the new one until it expires."""

    __tablename__ = "webhook_endpoints"
    __display_name__ = "Webhook endpoint"
    __table_args__ = sort_indexes("webhook_endpoints", "created_at", "updated_at")

    url: Mapped[str] = mapped_column(String(2048))
    description: Mapped[str | None] = mapped_column(String(500), default=None)
    event_types: Mapped[list[Any]] = mapped_column(default=list)  # empty = every type
    enabled: Mapped[bool] = mapped_column(default=True)
    disabled_reason: Mapped[str | None] = mapped_column(String(200), default=None)
    secret_encrypted: Mapped[str] = mapped_column(Text)
    previous_secret_encrypted: Mapped[str | None] = mapped_column(Text, default=None)
    previous_secret_expires_at: Mapped[datetime | None] = mapped_column(default=None)
    # The first failed attempt since the last success: 5 days of failures disable it.
    failing_since: Mapped[datetime | None] = mapped_column(default=None)
    # What `data` holds: "snapshot" (the resource as the API answers it) or "thin" (its id
    # and updatedAt).
    payload: Mapped[str] = mapped_column(String(16), default="snapshot", server_default="snapshot")


class WebhookEvent(TenantMixin, Base):
    """One change, recorded in the transaction that made it. `payload` is the exact body sent
    (and signed): `{"type", "timestamp", "data"}`."""

    __tablename__ = "webhook_events"
    __table_args__ = (Index("ix_webhook_events_created_at", "created_at"),)

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid7)
    type: Mapped[str] = mapped_column(String(64))
    payload: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class WebhookDelivery(IdMixin, TenantMixin, Base):
    """One event for one endpoint: the queue the worker claims (a lease on `next_attempt_at`)
    and the attempt record `listWebhookAttempts` reads."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        UniqueConstraint("endpoint_id", "event_id"),
        Index("ix_webhook_deliveries_due", "status", "next_attempt_at"),
        Index("ix_webhook_deliveries_endpoint_due", "endpoint_id", "status", "next_attempt_at"),
    )

    endpoint_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("webhook_endpoints.id", ondelete="CASCADE")
    )
    event_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("webhook_events.id", ondelete="CASCADE"), index=True
    )
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_status_code: Mapped[int | None] = mapped_column(Integer, default=None)
    last_error: Mapped[str | None] = mapped_column(String(200), default=None)
    next_attempt_at: Mapped[datetime | None] = mapped_column(default=utcnow)
    lease_owner: Mapped[str | None] = mapped_column(String(64), default=None)
    # Queued again by a replay (one replay per endpoint runs at a time: while any of its
    # deliveries is pending, another is a 409).
    replay: Mapped[bool] = mapped_column(server_default=false())
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class WebhookAttempt(IdMixin, TenantMixin, Base):
    """One try of a delivery (`GET …/attempts/{eventId}`): when, the receiver's status, how
    long it took, and what went wrong in our own words (never the receiver's body)."""

    __tablename__ = "webhook_attempts"

    delivery_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("webhook_deliveries.id", ondelete="CASCADE"), index=True
    )
    at: Mapped[datetime] = mapped_column(default=utcnow)
    status_code: Mapped[int | None] = mapped_column(Integer, default=None)
    duration_ms: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(String(200), default=None)
