"""Plans on the wire. The response models document the spec's strict objects in our OpenAPI
document; the hot paths render the same shapes as dicts straight from rows (render.py)."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Any, Literal

from pydantic import ConfigDict, Field, model_validator

from salesplan.kit.fields import Date
from salesplan.kit.schemas import (
    ApiModel,
    FreeForm,
    NonNegativeInt32,
    PaginationMeta,
    SeedObject,
    StrictBody,
    equals,
    present,
)

EntityType = Literal["OPPORTUNITY", "BUYING_GROUP", "USER", "ACCOUNT"]
MilestoneStatus = Literal["not_started", "in_progress", "completed"]
GoalType = Literal["MILESTONE_BASED", "QUANTIFIABLE"]
UnitType = Literal["NUMBER", "DOLLAR", "PERCENTAGE"]
PeriodType = Literal["QUARTERLY", "ANNUAL", "OTHER"]

Name = Field(min_length=1, max_length=255)
MAX_OWNERS = 100
Title = Field(min_length=1, max_length=500)


# --- responses (documentation of the strict seed objects) ---------------------------------


class PlanTaskOut(SeedObject):
    """A task of a plan (spec PlanTask)."""

    id: uuid.UUID
    plan_id: uuid.UUID
    milestone_id: uuid.UUID | None = None
    title: str
    description: str | None = None
    completed: bool
    completed_at: datetime | None = None
    target_date: date | None = None
    assigned_to_id: uuid.UUID | None = None
    created_by_id: uuid.UUID | None = None
    created_at: datetime
    updated_at: datetime = None  # type: ignore[assignment]  # optional, never null


class PlanGoalOut(SeedObject):
    """A goal of a plan (spec PlanGoal)."""

    id: uuid.UUID
    plan_id: uuid.UUID
    milestone_id: uuid.UUID | None = None
    title: str
    description: str | None = None
    goal_type: GoalType
    target: float | None = None
    actual_value: float | None = None
    unit_type: UnitType | None = None
    label: str | None = None
    progress: float | None = Field(
        default=None,
        description="Derived when possible: QUANTIFIABLE with target > 0 and actualValue set → "
        "round(actualValue / target * 100, 2); MILESTONE_BASED with a milestone → share of that "
        "milestone's live tasks completed (100 when the milestone is completed); else the stored "
        "value.",
    )
    goal_type_category: str | None = None
    target_date: date | None = None
    period_type: PeriodType | None = None
    period_label: str | None = None
    allocations: dict[str, Any] | None = None
    parent_goal_id: uuid.UUID | None = None
    child_goals: list[PlanGoalOut] = Field(
        default_factory=list, description="Live child goals, nested."
    )
    created_at: datetime
    updated_at: datetime = None  # type: ignore[assignment]  # optional, never null


class PlanMilestoneOut(SeedObject):
    """A milestone (phase) of a plan (spec PlanMilestone)."""

    id: uuid.UUID
    plan_id: uuid.UUID
    milestone: dict[str, Any]
    objective: dict[str, Any] | None = None
    target_date: date | None = None
    actual_date: date | None = None
    status: MilestoneStatus
    sort_index: int
    prospect_owner_ids: list[uuid.UUID] = Field(default_factory=list)
    subscriber_owner_ids: list[uuid.UUID] = Field(default_factory=list)
    tasks: list[PlanTaskOut] = Field(
        default_factory=list, description="Live tasks linked to this milestone."
    )
    goals: list[PlanGoalOut] = Field(
        default_factory=list,
        description="Live root goals linked to this milestone, with their childGoals.",
    )
    created_at: datetime
    updated_at: datetime


class PlanOut(SeedObject):
    """A plan with its milestones, goals and tasks (spec Plan)."""

    id: uuid.UUID
    name: str
    description: str | None = None
    entity_type: EntityType
    entity_id: uuid.UUID = Field(
        description="The attached entity; for USER plans the owner (same as userId)."
    )
    opportunity_id: uuid.UUID | None = None
    buying_group_id: uuid.UUID | None = None
    user_id: uuid.UUID | None = None
    milestones: list[PlanMilestoneOut] = Field(
        default_factory=list, description="Live milestones by sortIndex."
    )
    goals: list[PlanGoalOut] = Field(
        default_factory=list, description="Live root goals with their childGoals."
    )
    tasks: list[PlanTaskOut] = Field(
        default_factory=list, description="Every live task of the plan."
    )
    created_at: datetime
    updated_at: datetime


class PlanListResponse(SeedObject):
    """A page of plans (spec PlanListResponse)."""

    data: list[PlanOut]
    pagination: PaginationMeta


class MilestoneList(ApiModel):
    data: list[PlanMilestoneOut]
    pagination: PaginationMeta


class MilestoneOrder(ApiModel):
    data: list[PlanMilestoneOut]


class GoalList(ApiModel):
    data: list[PlanGoalOut]
    pagination: PaginationMeta


class TaskList(ApiModel):
    data: list[PlanTaskOut]
    pagination: PaginationMeta


# --- request bodies (strict) ----------------------------------------------------------------


class TaskFields(StrictBody):
    title: str = Title
    description: str | None = None
    completed: bool = False
    target_date: Date | None = None
    assigned_to_id: uuid.UUID | None = Field(
        default=None, description="A user of the organization."
    )


class TaskCreate(TaskFields):
    """`completedAt` is server-set: it is set when `completed` becomes true, cleared when false."""

    milestone_id: uuid.UUID | None = Field(default=None, description="A milestone of this plan.")


class TaskSeed(TaskFields):
    """A task created with its plan: linked to the milestone it is nested in, if any."""

    milestone_id: None = None


class TaskUpdate(StrictBody):
    """Only the properties sent change. `completedAt` is server-set."""

    not_null = ("title", "completed")  # may be left out, never null (400)
    title: str | None = Field(default=None, min_length=1, max_length=500)
    description: str | None = None
    completed: bool | None = None
    target_date: Date | None = None
    assigned_to_id: uuid.UUID | None = None
    milestone_id: uuid.UUID | None = None


class GoalFields(StrictBody):
    title: str = Title
    description: str | None = None
    goal_type: GoalType = "QUANTIFIABLE"
    target: float | None = None
    actual_value: float | None = None
    unit_type: UnitType | None = None
    label: str | None = Field(default=None, max_length=255)
    progress: float | None = Field(
        default=None, description="Stored; answered only when it cannot be derived."
    )
    goal_type_category: str | None = Field(default=None, max_length=255)
    target_date: Date | None = None
    period_type: PeriodType | None = None
    period_label: str | None = Field(default=None, max_length=255)
    allocations: FreeForm | None = None


class GoalCreate(GoalFields):
    milestone_id: uuid.UUID | None = Field(default=None, description="A milestone of this plan.")
    parent_goal_id: uuid.UUID | None = Field(
        default=None,
        description="A goal of this plan; no cycles; a root goal is level 1, at most 5 levels.",
    )


class GoalSeed(GoalFields):
    """A goal created with its plan; `childGoals` nest (at most 5 levels). Its milestone and
    parent come from where it is nested, so `milestoneId`/`parentGoalId` may only be null."""

    child_goals: list[GoalSeed] | None = None
    milestone_id: None = None
    parent_goal_id: None = None


class GoalUpdate(StrictBody):
    not_null = ("title", "goal_type")  # may be left out, never null (400)
    title: str | None = Field(default=None, min_length=1, max_length=500)
    description: str | None = None
    goal_type: GoalType | None = None
    target: float | None = None
    actual_value: float | None = None
    unit_type: UnitType | None = None
    label: str | None = Field(default=None, max_length=255)
    progress: float | None = None
    goal_type_category: str | None = Field(default=None, max_length=255)
    target_date: Date | None = None
    period_type: PeriodType | None = None
    period_label: str | None = Field(default=None, max_length=255)
    allocations: FreeForm | None = None
    milestone_id: uuid.UUID | None = None
    parent_goal_id: uuid.UUID | None = None


class MilestoneCreate(StrictBody):
    milestone: FreeForm = Field(
        description="Free-form properties of the phase; a `name` key is the convention."
    )
    objective: FreeForm | None = None
    target_date: Date | None = None
    actual_date: Date | None = None
    status: MilestoneStatus = "not_started"
    sort_index: NonNegativeInt32 | None = Field(
        default=None, description="Defaults to the last milestone's sortIndex + 1."
    )
    prospect_owner_ids: list[uuid.UUID] | None = Field(
        default=None, max_length=MAX_OWNERS, description="Contacts of the organization."
    )
    subscriber_owner_ids: list[uuid.UUID] | None = Field(
        default=None, max_length=MAX_OWNERS, description="Users of the organization."
    )


class MilestoneSeed(MilestoneCreate):
    """A milestone created with its plan; its `goals` and `tasks` are linked to it."""

    goals: list[GoalSeed] | None = Field(
        default=None, description="Goals linked to this milestone (childGoals nest)."
    )
    tasks: list[TaskSeed] | None = Field(default=None, description="Tasks of this milestone.")


class MilestoneUpdate(StrictBody):
    not_null = ("milestone", "status", "sort_index")  # may be left out, never null (400)
    milestone: FreeForm | None = None
    objective: FreeForm | None = None
    target_date: Date | None = None
    actual_date: Date | None = None
    status: MilestoneStatus | None = None
    sort_index: NonNegativeInt32 | None = None
    prospect_owner_ids: list[uuid.UUID] | None = Field(default=None, max_length=MAX_OWNERS)
    subscriber_owner_ids: list[uuid.UUID] | None = Field(default=None, max_length=MAX_OWNERS)


class MilestoneReorder(StrictBody):
    milestone_ids: list[uuid.UUID] = Field(
        description="Every live milestone of the plan, each once, in the new order."
    )


class PlanCreate(StrictBody):
    """A plan, optionally with its whole content, created in one transaction.

    `ACCOUNT` + an account id is stored as `BUYING_GROUP` on the account's default buying group.
    `USER` without `entityId` is the caller's personal plan (user-backed token required).
    `milestones[].goals` and `milestones[].tasks` are linked to their milestone; `goals` and
    `tasks` at the top level are not linked to one; `childGoals` nest goals.
    """

    model_config = ConfigDict(
        json_schema_extra={"if": equals(entityType="USER"), "else": present("entityId")}
    )

    name: str = Name
    description: str | None = None
    entity_type: EntityType
    entity_id: uuid.UUID | None = None
    milestones: list[MilestoneSeed] | None = None
    goals: list[GoalSeed] | None = None
    tasks: list[TaskSeed] | None = None

    @model_validator(mode="after")
    def _entity_id_needed(self) -> PlanCreate:
        if self.entity_id is None and self.entity_type != "USER":
            raise ValueError("entityId is required unless entityType is USER.")
        return self


class PlanUpdate(StrictBody):
    """Only the properties sent change; `entityType` and `entityId` re-attach the plan."""

    not_null = ("name", "entity_type")  # may be left out, never null (400)
    name: str | None = Field(default=None, min_length=1, max_length=255)
    description: str | None = None
    entity_type: EntityType | None = None
    entity_id: uuid.UUID | None = None
