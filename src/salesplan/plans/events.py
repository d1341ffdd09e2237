"""What the plans domain says happened (`kit.events`). Who follows what is wired in
`salesplan.events`: the version bump (`changes.bump_versions`) follows `PlanChanged`,
`PlanUpdated` and `PlanDeleted`; the webhooks (contract §13) follow the resource events.

A plan event renders the plan as getPlan answers it, a milestone, goal or task event the child
as its get operation answers it, on the transaction's connection, only when a subscriber
asks."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection

from salesplan.kit.events import DomainEvent, Resource, ResourceEvent
from salesplan.models.plans import PlanTask
from salesplan.plans.views import goal_view_on, milestone_view_on, plan_view_on, task_view_on


@dataclass(frozen=True)
class PlanChanged(DomainEvent):
    """The plan's content was written (a bulk write to its milestones, goals or tasks): its
    version moves. The writes the API names say so with `PlanUpdated` / `PlanDeleted`."""

    plan_id: uuid.UUID


@dataclass(frozen=True)
class _PlanEvent(ResourceEvent):
    organization_id: uuid.UUID
    plan_id: uuid.UUID

    async def resource(self, conn: AsyncConnection) -> Resource:
        return await plan_view_on(conn, self, self.plan_id)


class PlanCreated(_PlanEvent):
    """A plan was created (it starts at version 1)."""


class PlanUpdated(_PlanEvent):
    """The plan or one of its milestones, goals or tasks was written: its version moves."""


class PlanDeleted(_PlanEvent):
    """The plan was archived: its version moves."""


@dataclass(frozen=True)
class TaskCreated(ResourceEvent):
    organization_id: uuid.UUID
    plan_id: uuid.UUID
    task: PlanTask

    async def resource(self, conn: AsyncConnection) -> Resource:
        return await task_view_on(conn, self, self.plan_id, self.task.id)


@dataclass(frozen=True)
class _TaskWritten(ResourceEvent):
    """A task written on the driver path: it carries the task as the API answers it."""

    organization_id: uuid.UUID
    task: Mapping[str, object]
    # Who wrote it when not a user of the organization (a buyer's tick in a room).
    by: Mapping[str, object] | None = None

    def actor(self) -> Mapping[str, object] | None:
        return self.by

    async def resource(self, conn: AsyncConnection) -> Resource:
        return self.task


class TaskUpdated(_TaskWritten):
    """A task was changed (and not completed by this change)."""


class TaskCompleted(_TaskWritten):
    """A task was completed by this change."""


@dataclass(frozen=True)
class TaskDeleted(ResourceEvent):
    """A task was archived."""

    organization_id: uuid.UUID
    plan_id: uuid.UUID
    task_id: uuid.UUID

    async def resource(self, conn: AsyncConnection) -> Resource:
        return await task_view_on(conn, self, self.plan_id, self.task_id)


@dataclass(frozen=True)
class _MilestoneEvent(ResourceEvent):
    organization_id: uuid.UUID
    plan_id: uuid.UUID
    milestone_id: uuid.UUID

    async def resource(self, conn: AsyncConnection) -> Resource:
        return await milestone_view_on(conn, self, self.plan_id, self.milestone_id)


class MilestoneCreated(_MilestoneEvent):
    """A milestone was added to a plan."""


class MilestoneUpdated(_MilestoneEvent):
    """A milestone was changed, moved by a reorder, or restored."""


class MilestoneDeleted(_MilestoneEvent):
    """A milestone was archived."""


@dataclass(frozen=True)
class _GoalEvent(ResourceEvent):
    organization_id: uuid.UUID
    plan_id: uuid.UUID
    goal_id: uuid.UUID

    async def resource(self, conn: AsyncConnection) -> Resource:
        return await goal_view_on(conn, self, self.plan_id, self.goal_id)


class GoalCreated(_GoalEvent):
    """A goal was added to a plan."""


class GoalUpdated(_GoalEvent):
    """A goal was changed or restored (its sub-goals restored with it say so too)."""


class GoalDeleted(_GoalEvent):
    """A goal was archived (its sub-goals archived with it say so too)."""
