"""What every plan write checks first: the plan (live and locked), the child row, and the
rows a body names (milestone, owners, assignee). A missing reference is a 422 naming its field.

Services never commit; they flush so that the renderers read what was written."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.errors import Unprocessable
from salesplan.kit.clock import utcnow
from salesplan.kit.events import emit
from salesplan.kit.ids import uuid7
from salesplan.kit.patch import reject_nulls
from salesplan.kit.schemas import StrictBody
from salesplan.kit.scoping import get_scoped, not_found
from salesplan.models.identity import Membership
from salesplan.models.plans import Plan, PlanGoal, PlanMilestone, PlanTask
from salesplan.plans import write_repository as writes
from salesplan.plans.events import PlanUpdated
from salesplan.plans.write_repository import Child, Db

MAX_GOAL_DEPTH = 5


def missing(field: str, what: str, value: object) -> Unprocessable:
    return Unprocessable(
        f"{what} {value} does not exist in this organization.",
        details={"field": field, "id": str(value)},
    )


async def find_plan(session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID) -> Plan:
    return await get_scoped(session, Plan, ctx, plan_id)


async def live_plan(session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID) -> Plan:
    """The plan whose children are written: an archived plan is read-only until restored."""
    plan = await _locked_plan(session, ctx, plan_id)
    _refuse_archived(plan)
    return plan


async def live_child(
    session: AsyncSession,
    ctx: RequestContext,
    model: type[Child],
    plan_id: uuid.UUID,
    row_id: uuid.UUID,
) -> Child:
    """A child row written in a live plan: the plan locked, the row found, in the order
    contract §2 puts them: existence (404) before semantics (422, an archived plan)."""
    plan = await _locked_plan(session, ctx, plan_id)
    row = await child_row(session, ctx, model, plan_id, row_id)
    _refuse_archived(plan)
    return row


async def _locked_plan(session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID) -> Plan:
    # Locked until the transaction ends: writes to one plan's content run one after the other,
    # so that a reorder, an archive or a nesting check sees the others' committed result.
    return await get_scoped(session, Plan, ctx, plan_id, for_update=True)


async def plan_written(session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID) -> None:
    """A write to the plan's content, before it is flushed: the plan's `updatedAt` stamped
    (its row is locked and loaded by `live_plan` / `live_child`) and `PlanUpdated` said (its
    version bumped, and its webhook recorded, when the unit of work commits)."""
    plan = await session.get(Plan, plan_id)
    if plan is not None:
        plan.updated_at = utcnow()
    emit(session, PlanUpdated(ctx.organization_id, plan_id))


def plan_archived(plan_id: uuid.UUID) -> Unprocessable:
    return Unprocessable(
        "The plan is archived; restore it before changing its content.",
        details={"planId": str(plan_id), "reason": "plan_archived"},
    )


def _refuse_archived(plan: Plan) -> None:
    if plan.archived_at is not None:
        raise plan_archived(plan.id)


async def child_row(
    session: AsyncSession,
    ctx: RequestContext,
    model: type[Child],
    plan_id: uuid.UUID,
    row_id: uuid.UUID,
) -> Child:
    row = await writes.child_object(session, ctx, model, plan_id, row_id)
    if row is None:
        raise not_found(model, row_id)
    return row


async def check_milestone(
    db: Db, ctx: RequestContext, plan_id: uuid.UUID, milestone_id: uuid.UUID | None
) -> None:
    if milestone_id is None:
        return
    if not await writes.is_live_milestone(db, ctx, plan_id, milestone_id):
        raise Unprocessable(
            "milestoneId must be a live milestone of this plan.",
            details={"field": "milestoneId", "id": str(milestone_id)},
        )


async def check_owners(
    session: AsyncSession,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    prospect_ids: Iterable[uuid.UUID] | None,
    subscriber_ids: Iterable[uuid.UUID] | None,
) -> None:
    """Milestone owners: prospect owners are live contacts of the plan's account (contract
    §16; a USER plan has none), subscriber owners users (members) of the organization. One
    query per kind, whatever the count. The plan's row must be written (flushed) already."""
    prospects = set(prospect_ids or ())
    if prospects:
        found = await writes.account_contact_ids(session, ctx, plan_id, prospects)
        if absent := prospects - found:
            raise not_of_account("prospectOwnerIds", min(absent, key=str))
    subscribers = set(subscriber_ids or ())
    if subscribers:
        column = Membership.user_id
        found = await writes.existing_ids(session, ctx, Membership, column, subscribers)
        if absent := subscribers - found:
            raise missing("subscriberOwnerIds", "User", min(absent, key=str))


def not_of_account(field: str, value: object) -> Unprocessable:
    return Unprocessable(
        f"Contact {value} is not a contact of the plan's account.",
        details={"field": field, "id": str(value)},
    )


async def check_assignee(
    db: Db, ctx: RequestContext, plan_id: uuid.UUID, assignee_id: uuid.UUID | None
) -> None:
    """`assignedToId` names a user of the organization (a seller task) or a live contact of
    the plan's account (a buyer task, contract §16; a USER plan has no such contact)."""
    if assignee_id is not None and not await writes.is_assignable(db, ctx, plan_id, assignee_id):
        raise Unprocessable(
            f"{assignee_id} is neither a user of this organization nor a contact of the "
            "plan's account.",
            details={"field": "assignedToId", "id": str(assignee_id)},
        )


def new_id() -> uuid.UUID:
    return uuid7()


async def open_patch(
    session: AsyncSession,
    ctx: RequestContext,
    model: type[Child],
    plan_id: uuid.UUID,
    row_id: uuid.UUID,
    body: StrictBody,
    not_null: Iterable[str],
) -> tuple[Child, dict[str, Any]]:
    """The start every PATCH of a plan's child shares: the plan live and locked, the row found
    (404 before 422), no null where none may be, and a named milestone live in this plan.
    Answers the row and what was sent."""
    row = await live_child(session, ctx, model, plan_id, row_id)
    sent = body.sent()
    reject_nulls(sent, not_null)
    if sent.get("milestone_id") is not None:
        await check_milestone(session, ctx, plan_id, sent["milestone_id"])
    return row, sent


async def close_patch(
    session: AsyncSession, row: PlanMilestone | PlanGoal | PlanTask, sent: Mapping[str, object]
) -> None:
    """Write what was sent onto the row, stamp it, and flush."""
    for key, value in sent.items():
        setattr(row, key, value)
    row.updated_at = utcnow()
    await session.flush()
