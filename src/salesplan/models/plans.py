"""Mutual success plans: plans, their milestones (ordered phases), goals (targets, nested) and
tasks (work items)."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Any

from sqlalchemy import JSON, Boolean, Date, Float, ForeignKey, Index, Integer, String, Text, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from salesplan.models.base import (
    LIVE,
    ArchiveMixin,
    Base,
    IdMixin,
    TenantMixin,
    TimestampMixin,
    sort_indexes,
)

# A null free-form object is SQL NULL, not the JSON literal `null`.
NullableJSON = JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")

ENTITY_TYPES = ("OPPORTUNITY", "BUYING_GROUP", "USER", "ACCOUNT")
MILESTONE_STATUSES = ("not_started", "in_progress", "completed")
GOAL_TYPES = ("MILESTONE_BASED", "QUANTIFIABLE")
UNIT_TYPES = ("NUMBER", "DOLLAR", "PERCENTAGE")
PERIOD_TYPES = ("QUARTERLY", "ANNUAL", "OTHER")


def _live_index(name: str, *columns: str) -> Index:
    """Keyset lists run on live rows: a partial index serves them without touching archived ones."""
    return Index(name, *columns, postgresql_where=LIVE, sqlite_where=LIVE)


class Plan(IdMixin, TenantMixin, TimestampMixin, ArchiveMixin, Base):
    __tablename__ = "plans"
    __display_name__ = "Plan"
    __table_args__ = (
        _live_index("ix_plans_org_created_live", "organization_id", "created_at", "id"),
        _live_index("ix_plans_org_updated_live", "organization_id", "updated_at", "id"),
        # updatedSince with includeArchived / archivedOnly (incremental sync sees archives)
        Index("ix_plans_org_updated", "organization_id", "updated_at", "id"),
        _live_index("ix_plans_org_name_live", "organization_id", "name", "id"),
        Index("ix_plans_org_entity", "organization_id", "entity_type", "entity_id"),
    )

    name: Mapped[str] = mapped_column(String(255))
    description: Mapped[str | None] = mapped_column(Text, default=None)
    # Stored values only: OPPORTUNITY, BUYING_GROUP or USER (ACCOUNT resolves to BUYING_GROUP).
    entity_type: Mapped[str] = mapped_column(String(20))
    entity_id: Mapped[uuid.UUID] = mapped_column()
    opportunity_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("opportunities.id", ondelete="CASCADE"), default=None, index=True
    )
    buying_group_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("buying_groups.id", ondelete="CASCADE"), default=None, index=True
    )
    user_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), default=None, index=True
    )
    # Who created it (a user of the organization; none for plans made before it was kept):
    # told of what buyers do in its room (contract §16).
    created_by_id: Mapped[uuid.UUID | None] = mapped_column(default=None)
    # Bumped by every write to the plan or its children, in the same transaction (the
    # `PlanChanged` event's handler, plans/changes.py; see plans/versioning.py): getPlan's ETag.
    version: Mapped[int] = mapped_column(Integer, default=1, server_default=text("1"))


class PlanMilestone(IdMixin, TenantMixin, TimestampMixin, ArchiveMixin, Base):
    __tablename__ = "plan_milestones"
    __display_name__ = "Milestone"

    plan_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("plans.id", ondelete="CASCADE"), index=True
    )
    milestone: Mapped[dict[str, Any]] = mapped_column()
    objective: Mapped[dict[str, Any] | None] = mapped_column(NullableJSON, default=None)
    target_date: Mapped[date | None] = mapped_column(Date, default=None)
    actual_date: Mapped[date | None] = mapped_column(Date, default=None)
    status: Mapped[str] = mapped_column(String(20), default="not_started")
    sort_index: Mapped[int] = mapped_column(Integer, default=0)
    prospect_owner_ids: Mapped[list[Any]] = mapped_column(default=list)
    subscriber_owner_ids: Mapped[list[Any]] = mapped_column(default=list)


class PlanGoal(IdMixin, TenantMixin, TimestampMixin, ArchiveMixin, Base):
    __tablename__ = "plan_goals"
    __display_name__ = "Goal"

    plan_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("plans.id", ondelete="CASCADE"), index=True
    )
    milestone_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("plan_milestones.id", ondelete="SET NULL"), default=None, index=True
    )
    parent_goal_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("plan_goals.id", ondelete="CASCADE"), default=None, index=True
    )
    title: Mapped[str] = mapped_column(String(500))
    description: Mapped[str | None] = mapped_column(Text, default=None)
    goal_type: Mapped[str] = mapped_column(String(20))
    target: Mapped[float | None] = mapped_column(Float, default=None)
    actual_value: Mapped[float | None] = mapped_column(Float, default=None)
    unit_type: Mapped[str | None] = mapped_column(String(20), default=None)
    label: Mapped[str | None] = mapped_column(String(255), default=None)
    progress: Mapped[float | None] = mapped_column(Float, default=None)
    goal_type_category: Mapped[str | None] = mapped_column(String(255), default=None)
    target_date: Mapped[date | None] = mapped_column(Date, default=None)
    period_type: Mapped[str | None] = mapped_column(String(20), default=None)
    period_label: Mapped[str | None] = mapped_column(String(255), default=None)
    allocations: Mapped[dict[str, Any] | None] = mapped_column(NullableJSON, default=None)


class PlanTask(IdMixin, TenantMixin, TimestampMixin, ArchiveMixin, Base):
    __tablename__ = "plan_tasks"
    __display_name__ = "Task"
    # listMyTasks: the user's tasks by each sortBy.
    __table_args__ = sort_indexes(
        "plan_tasks", "created_at", "updated_at", "title", scope=("assigned_to_id",), live=True
    )

    plan_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("plans.id", ondelete="CASCADE"), index=True
    )
    milestone_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("plan_milestones.id", ondelete="SET NULL"), default=None, index=True
    )
    title: Mapped[str] = mapped_column(String(500))
    description: Mapped[str | None] = mapped_column(Text, default=None)
    completed: Mapped[bool] = mapped_column(Boolean, default=False)
    completed_at: Mapped[datetime | None] = mapped_column(default=None)
    target_date: Mapped[date | None] = mapped_column(Date, default=None)
    # A user of the organization (seller side) or a contact of the plan's account (buyer side,
    # contract §16): no foreign key, the plans service checks which (plans/checks.py).
    assigned_to_id: Mapped[uuid.UUID | None] = mapped_column(default=None, index=True)
    created_by_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), default=None
    )
