"""Plans: listing with filters, nested creation in one transaction, update, archive, restore.

Services never commit; they flush so that the renderers read what was written."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.errors import PreconditionFailed, ValidationFailed
from salesplan.kit.clock import utcnow
from salesplan.kit.events import emit
from salesplan.kit.pagination import CursorCodec, ListParams, changed_since
from salesplan.kit.patch import reject_nulls
from salesplan.kit.responses import if_match_holds
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import get_scoped
from salesplan.kit.search import like_pattern
from salesplan.models.plans import Plan
from salesplan.plans import repository as repo
from salesplan.plans.checks import check_assignee, check_owners, new_id
from salesplan.plans.entities import attach, resolve_entity
from salesplan.plans.events import PlanCreated, PlanDeleted, PlanUpdated
from salesplan.plans.goals import seed_goals
from salesplan.plans.milestones import milestone_row
from salesplan.plans.render import EMPTY, bare_plan, plan_base
from salesplan.plans.schemas import (
    PlanCreate,
    PlanUpdate,
)
from salesplan.plans.tasks import task_row
from salesplan.plans.versioning import etag
from salesplan.plans.views import INCLUDABLE


@dataclass(frozen=True)
class PlanFilters:
    entity_type: str | None = None
    entity_id: uuid.UUID | None = None
    account_id: uuid.UUID | None = None
    include_archived: bool = False
    archived_only: bool = False
    updated_since: datetime | None = None


INCLUDE_PATTERN = "^({0})(,({0}))*$".format("|".join(INCLUDABLE))


def parse_include(raw: str | None) -> tuple[str, ...]:
    if raw is None or not raw.strip():
        return ()
    parts = tuple(p.strip() for p in raw.split(",") if p.strip())
    bad = [p for p in parts if p not in INCLUDABLE]
    if bad:
        raise ValidationFailed.at(
            ["query", "include"], f"include takes a list of: {', '.join(INCLUDABLE)}."
        )
    return parts


async def list_plans(
    conn: AsyncConnection,
    ctx: RequestContext,
    params: ListParams,
    filters: PlanFilters,
    include: Sequence[str],
    codec: CursorCodec,
) -> tuple[list[dict[str, Any]], PaginationMeta]:
    search = params.search or None
    on_account = filters.entity_type == "ACCOUNT"
    shape = dict(
        archived_only=filters.archived_only,
        include_archived=filters.include_archived,
        search=search is not None,
        entity_type=filters.entity_type is not None and not on_account,
        on_account=on_account,
        entity_id=filters.entity_id is not None,
        account_id=filters.account_id is not None,
        updated_since=filters.updated_since is not None,
    )
    values: dict[str, Any] = {"organization_id": ctx.organization_id}
    if filters.updated_since is not None:
        values["updated_since"] = filters.updated_since
        params = changed_since(params, filters.updated_since)
    if search is not None:
        values["search"] = like_pattern(search)
    if filters.entity_type is not None and not on_account:
        values["entity_type"] = filters.entity_type
    if filters.entity_id is not None:
        values["entity_id"] = filters.entity_id
    if filters.account_id is not None:
        values["account_id"] = filters.account_id
    rows, meta = await repo.plan_page(conn, params, codec, values, **shape)
    if not include:
        return [bare_plan(r) for r in rows], meta
    # Rows straight from the driver on PostgreSQL (asyncpg Records): by position, id first.
    trees = await repo.plan_trees(conn, ctx, [r[0] for r in rows])
    return [trees.get(r[0], EMPTY).plan(plan_base(r), include) for r in rows], meta


async def create_plan(session: AsyncSession, ctx: RequestContext, body: PlanCreate) -> uuid.UUID:
    attachment = await resolve_entity(session, ctx, body.entity_type, body.entity_id)
    plan = Plan(
        id=new_id(),
        organization_id=ctx.organization_id,
        name=body.name,
        description=body.description,
        entity_type=attachment.entity_type,
        entity_id=attachment.entity_id,
        created_by_id=ctx.user_id,
    )
    attach(plan, attachment)
    session.add(plan)
    # Flushed table by table: without ORM relationships the unit of work does not order
    # inserts by foreign keys. The plan first: the checks read its account (contract §16).
    await session.flush()
    assignees = {t.assigned_to_id for t in body.tasks or []}
    for seed in body.milestones or []:
        assignees |= {t.assigned_to_id for t in seed.tasks or []}
    for assignee_id in sorted(assignees - {None}, key=str):
        await check_assignee(session, ctx, plan.id, assignee_id)
    await check_owners(
        session,
        ctx,
        plan.id,
        [i for seed in body.milestones or [] for i in seed.prospect_owner_ids or []],
        [i for seed in body.milestones or [] for i in seed.subscriber_owner_ids or []],
    )
    milestones = []
    for i, seed in enumerate(body.milestones or []):
        milestone = milestone_row(seed, plan, i)
        milestone.id = new_id()
        session.add(milestone)
        milestones.append((milestone, seed))
    await session.flush()
    for milestone, seed in milestones:
        seed_goals(
            session,
            plan,
            seed.goals or [],
            milestone_id=milestone.id,
            parent=None,
            level=1,
            location=["body", "milestones", milestones.index((milestone, seed)), "goals"],
        )
    seed_goals(
        session,
        plan,
        body.goals or [],
        milestone_id=None,
        parent=None,
        level=1,
        location=["body", "goals"],
    )
    await session.flush()
    for milestone, seed in milestones:
        for t in seed.tasks or []:
            session.add(task_row(t, plan, ctx, milestone_id=milestone.id))
    for t in body.tasks or []:
        session.add(task_row(t, plan, ctx))
    await session.flush()
    emit(session, PlanCreated(ctx.organization_id, plan.id))
    return plan.id


async def matching_plan(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, if_match: str | None
) -> Plan:
    """The plan a write changes, locked until commit. With the client's `If-Match` (getPlan's
    ETag), the plan's current tag must be one it names (RFC 9110 §13.1.1), else 412
    `precondition_failed` and nothing changes; the lock keeps it current until the write
    commits (a concurrent write waits, then bumps the version)."""
    plan = await get_scoped(session, Plan, ctx, plan_id, for_update=True)
    if if_match is not None and not if_match_holds(if_match, etag(plan.version)):
        raise PreconditionFailed(
            "The plan changed since the representation named by If-Match: read it again.",
            details={"reason": "etag_mismatch"},
        )
    return plan


async def update_plan(
    session: AsyncSession,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    body: PlanUpdate,
    if_match: str | None = None,
) -> None:
    plan = await matching_plan(session, ctx, plan_id, if_match)
    sent = body.sent()
    reject_nulls(sent, ("name", "entity_type"))
    if "name" in sent:
        plan.name = sent["name"]
    if "description" in sent:
        plan.description = sent["description"]
    if "entity_type" in sent or "entity_id" in sent:
        entity_type = sent.get("entity_type") or plan.entity_type
        if "entity_id" in sent:
            entity_id = sent["entity_id"]
        elif "entity_type" in sent and sent["entity_type"] != plan.entity_type:
            entity_id = None
        else:
            entity_id = plan.entity_id
        attach(plan, await resolve_entity(session, ctx, entity_type, entity_id))
    plan.updated_at = utcnow()
    await session.flush()
    emit(session, PlanUpdated(ctx.organization_id, plan_id))


async def archive_plan(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, if_match: str | None = None
) -> None:
    plan = await matching_plan(session, ctx, plan_id, if_match)
    if plan.archived_at is None:
        plan.archived_at = utcnow()
        await session.flush()
        emit(session, PlanDeleted(ctx.organization_id, plan_id))


async def restore_plan(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, if_match: str | None = None
) -> None:
    plan = await matching_plan(session, ctx, plan_id, if_match)
    if plan.archived_at is not None:
        plan.archived_at = None
        plan.updated_at = utcnow()
        await session.flush()
        emit(session, PlanUpdated(ctx.organization_id, plan_id))
