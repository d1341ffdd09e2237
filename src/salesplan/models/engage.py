"""Engage content and audiences: templates, drafts, lists, campaigns, enrollments and the
enrollment jobs the worker runs. The sending side (issue 13) adds to these tables: an enrollment
row per (campaign, contact) carries its current step and state, which a campaign start schedules."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from salesplan.kit.clock import utcnow
from salesplan.models.base import (
    ArchiveMixin,
    Base,
    IdMixin,
    TenantMixin,
    TimestampMixin,
    sort_indexes,
)

CHANNELS = ("EMAIL", "LINKEDIN", "SLACK")
LIST_TYPES = ("MANUAL", "DYNAMIC")
CAMPAIGN_STATUSES = ("draft", "active", "paused", "completed")
JOB_STATUSES = ("queued", "running", "completed", "failed")
SKIP_REASONS = ("no_email", "suppressed", "already_enrolled")
# An enrollment's states (issue 13): `pending` (enrolled; its first step not scheduled yet),
# `scheduled` (the message of `current_step` is in the outbox), `sent` (that message went out at
# `last_sent_at`; the next step is due to be scheduled), then one final state.
ENROLLMENT_STATES = ("pending", "scheduled", "sent", "completed", "replied", "stopped", "skipped")
ENROLLMENT_FINAL = ("completed", "replied", "stopped", "skipped")


class EngageTemplate(IdMixin, TenantMixin, TimestampMixin, ArchiveMixin, Base):
    __tablename__ = "engage_templates"
    __display_name__ = "Template"
    __table_args__ = (
        *sort_indexes("engage_templates", "created_at"),
        *sort_indexes("engage_templates", "updated_at", "name", live=True),
    )

    name: Mapped[str] = mapped_column(String(255))
    channel: Mapped[str] = mapped_column(String(16))
    subject: Mapped[str | None] = mapped_column(String(998), default=None)
    body: Mapped[str] = mapped_column(Text)
    body_html: Mapped[str | None] = mapped_column(Text, default=None)


class EngageDraft(IdMixin, TenantMixin, TimestampMixin, Base):
    """Drafts are deleted for good (spec "Archiving" 4): no archive column."""

    __tablename__ = "engage_drafts"
    __display_name__ = "Draft"
    __table_args__ = sort_indexes("engage_drafts", "created_at", "updated_at")

    name: Mapped[str | None] = mapped_column(String(255), default=None)
    channel: Mapped[str] = mapped_column(String(16))
    subject: Mapped[str | None] = mapped_column(String(998), default=None)
    body: Mapped[str | None] = mapped_column(Text, default=None)
    body_html: Mapped[str | None] = mapped_column(Text, default=None)
    contact_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("contacts.id", ondelete="SET NULL"), default=None
    )
    template_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("engage_templates.id", ondelete="SET NULL"), default=None
    )
    created_by_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )


class EngageList(IdMixin, TenantMixin, TimestampMixin, ArchiveMixin, Base):
    __tablename__ = "engage_lists"
    __display_name__ = "List"
    __table_args__ = (
        *sort_indexes("engage_lists", "created_at"),
        *sort_indexes("engage_lists", "updated_at", "name", live=True),
    )

    name: Mapped[str] = mapped_column(String(255))
    description: Mapped[str | None] = mapped_column(Text, default=None)
    type: Mapped[str] = mapped_column(String(16))
    # DYNAMIC only: the validated criteria (camelCase keys, as sent).
    criteria: Mapped[dict[str, Any] | None] = mapped_column(default=None)


class EngageListMember(TenantMixin, Base):
    """A MANUAL list's explicit member. The primary key (list, contact) is also the keyset index
    the members endpoint pages on."""

    __tablename__ = "engage_list_members"

    list_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("engage_lists.id", ondelete="CASCADE"), primary_key=True
    )
    contact_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("contacts.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    added_at: Mapped[datetime] = mapped_column(default=utcnow)


class EngageCampaign(IdMixin, TenantMixin, TimestampMixin, Base):
    __tablename__ = "engage_campaigns"
    __display_name__ = "Campaign"
    __table_args__ = sort_indexes("engage_campaigns", "created_at", "updated_at", "name")

    name: Mapped[str] = mapped_column(String(255))
    description: Mapped[str | None] = mapped_column(Text, default=None)
    status: Mapped[str] = mapped_column(String(16), default="draft")
    # {"steps": [{"channel", "templateId", "delayMinutes"}]}
    flow: Mapped[dict[str, Any]] = mapped_column(default=lambda: {"steps": []})
    # {"days": ["MON", …], "start": "09:00", "end": "17:00", "timeZone": "contact" | IANA,
    # "fallbackTimeZone"?} or null: when steps may go out (contract §14, engage/delivery/windows).
    send_window: Mapped[dict[str, Any] | None] = mapped_column(default=None)
    # Set by startEngageCampaign: from then on, enrollments of the active campaign get their
    # steps scheduled (merge fields name the user who started it as the sender).
    started_at: Mapped[datetime | None] = mapped_column(default=None)
    started_by_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )


class EngageEnrollment(IdMixin, TenantMixin, Base):
    """One contact in one campaign. `state` starts `pending` (enrolled, nothing scheduled);
    the sending side moves it along the flow (`current_step`, `next_run_at`)."""

    __tablename__ = "engage_enrollments"
    __table_args__ = (
        UniqueConstraint("campaign_id", "contact_id"),
        Index("ix_engage_enrollments_campaign_step_state", "campaign_id", "current_step", "state"),
        # The campaign job's scan: enrollments of a started campaign in a given state.
        Index("ix_engage_enrollments_campaign_state", "campaign_id", "state"),
    )

    campaign_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("engage_campaigns.id", ondelete="CASCADE")
    )
    contact_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("contacts.id", ondelete="CASCADE"), index=True
    )
    job_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("engage_enrollment_jobs.id", ondelete="SET NULL"), default=None
    )
    state: Mapped[str] = mapped_column(String(16), default="pending")
    current_step: Mapped[int] = mapped_column(Integer, default=0)
    next_run_at: Mapped[datetime | None] = mapped_column(default=None)
    last_sent_at: Mapped[datetime | None] = mapped_column(default=None)
    # Why a `skipped` or `stopped` enrollment ended (SKIP_REASONS, `bounced`, `unsubscribed`, …).
    reason: Mapped[str | None] = mapped_column(String(32), default=None)
    enrolled_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class EngageEnrollmentJob(IdMixin, TenantMixin, TimestampMixin, Base):
    """An enrollment request, run by the worker in batches. The row is both the queue entry
    (status, lease) and the record `getEngageEnrollmentJob` shows (counts)."""

    __tablename__ = "engage_enrollment_jobs"
    __display_name__ = "Enrollment job"
    __table_args__ = (Index("ix_engage_enrollment_jobs_status_created", "status", "created_at"),)

    campaign_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("engage_campaigns.id", ondelete="CASCADE"), index=True
    )
    list_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("engage_lists.id", ondelete="SET NULL"), default=None
    )
    contact_ids: Mapped[list[Any] | None] = mapped_column(default=None)
    status: Mapped[str] = mapped_column(String(16), default="queued")
    total: Mapped[int] = mapped_column(Integer, default=0)
    processed: Mapped[int] = mapped_column(Integer, default=0)
    enrolled: Mapped[int] = mapped_column(Integer, default=0)
    skipped: Mapped[int] = mapped_column(Integer, default=0)
    skipped_reasons: Mapped[dict[str, Any]] = mapped_column(default=dict)
    errors: Mapped[list[Any]] = mapped_column(default=list)
    # Keyset position: the last contact id of the last committed batch.
    cursor: Mapped[uuid.UUID | None] = mapped_column(default=None)
    worker_id: Mapped[str | None] = mapped_column(String(255), default=None)
    lease_expires_at: Mapped[datetime | None] = mapped_column(default=None)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    started_at: Mapped[datetime | None] = mapped_column(default=None)
    completed_at: Mapped[datetime | None] = mapped_column(default=None)


SUPPRESSION_REASONS = ("unsubscribed", "hard_bounce", "complaint", "manual")


class EngageSuppression(IdMixin, TenantMixin, Base):
    """An address that must not be contacted (hard bounces, unsubscribes, complaints; filled by
    the sending side, lifted by deleteEngageSuppression). `email` is the parsed address
    (kit.email.mailbox), the `address` of listEngageSuppressions."""

    __tablename__ = "engage_suppressions"
    __display_name__ = "Suppression"
    __table_args__ = (
        UniqueConstraint("organization_id", "email"),
        Index("ix_engage_suppressions_org_created", "organization_id", "created_at", "id"),
        *sort_indexes("engage_suppressions", "email"),
    )

    email: Mapped[str] = mapped_column(String(320))
    reason: Mapped[str] = mapped_column(String(64))  # SUPPRESSION_REASONS
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
