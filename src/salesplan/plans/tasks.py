"""Tasks: completion, assignees, and the caller's own tasks across plans.

Services never commit; they flush so that the renderers read what was written."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.kit import events
from salesplan.kit.clock import utcnow
from salesplan.kit.events import DomainEvent, emit
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.patch import reject_nulls
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import not_found
from salesplan.kit.uow import UnitOfWork
from salesplan.models.plans import Plan, PlanTask
from salesplan.plans import repository as repo
from salesplan.plans import write_repository as writes
from salesplan.plans.changes import bump_versions
from salesplan.plans.checks import (
    check_assignee,
    check_milestone,
    live_plan,
    plan_archived,
    plan_written,
)
from salesplan.plans.events import PlanUpdated, TaskCompleted, TaskCreated, TaskUpdated
from salesplan.plans.render import task_dict
from salesplan.plans.schemas import (
    TaskCreate,
    TaskFields,
    TaskUpdate,
)

TASK_SORT = repo.TASK_SORT


def task_row(
    fields: TaskFields, plan: Plan, ctx: RequestContext, **extra: uuid.UUID | None
) -> PlanTask:
    data = fields.model_dump(exclude={"milestone_id"})
    return PlanTask(
        organization_id=plan.organization_id,
        plan_id=plan.id,
        completed_at=utcnow() if data["completed"] else None,
        created_by_id=ctx.user_id,
        **data,
        **extra,
    )


async def create_task(
    session: AsyncSession, ctx: RequestContext, plan_id: uuid.UUID, body: TaskCreate
) -> uuid.UUID:
    plan = await live_plan(session, ctx, plan_id)
    await check_milestone(session, ctx, plan_id, body.milestone_id)
    await check_assignee(session, ctx, plan_id, body.assigned_to_id)
    row = task_row(body, plan, ctx, milestone_id=body.milestone_id)
    session.add(row)
    emit(session, TaskCreated(ctx.organization_id, plan_id, row))
    await plan_written(session, ctx, plan_id)
    await session.flush()
    return row.id


# --- updatePlanTask: the hot write, in Core on the driver ------------------------------------


def _params(ctx: RequestContext, plan_id: uuid.UUID, task_id: uuid.UUID) -> dict[str, object]:
    return {
        "plan_id": plan_id,
        "task_id": task_id,
        "organization_id": ctx.organization_id,
        "new_updated_at": utcnow(),
    }


def _set(params: dict[str, object], sent: Mapping[str, object]) -> None:
    """The statement's `new_…` values of what was sent."""
    for key, value in sent.items():
        params[f"new_{key}"] = value
    if "completed" in sent:
        params["new_completed_at"] = params["new_updated_at"] if sent["completed"] else None


async def update_task_at_once(
    conn: AsyncConnection,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    task_id: uuid.UUID,
    body: TaskUpdate,
) -> dict[str, Any] | None:
    """updatePlanTask in one statement, committing on its own (PostgreSQL, on a connection
    outside any transaction): the task as the API answers it. None, with nothing written,
    when the statement does not apply (SQLite; a body naming a milestone or an assignee, or
    a null where none may be, which `update_task` checks first) or wrote nothing (no such
    plan or task, or an archived plan): then `update_task`, in a transaction, finds the
    exact answer. One round trip instead of four (BEGIN, lock and bump, UPDATE, COMMIT), and
    the plan's row lock held for one statement."""
    sent = body.sent()
    if conn.dialect.name != "postgresql" or _may_be_refused(sent):
        return None
    # The statement does the bump itself; anything else following the write (a webhook's
    # subscriber) needs `update_task`'s transaction.
    if await events.interested(conn, ctx.organization_id, _EVENTS, besides=[bump_versions]):
        return None
    params = _params(ctx, plan_id, task_id)
    _set(params, sent)
    row = await writes.task_update_at_once(frozenset(sent)).fetchrow(conn, params)
    if row is None:
        return None
    task = task_dict(row)
    events.emit_committed(conn, *_events(ctx, plan_id, task, _completed(task, sent, params)))
    return task


_EVENTS = (TaskUpdated, TaskCompleted, PlanUpdated)


def _completed(
    task: Mapping[str, object], sent: Mapping[str, object], params: Mapping[str, object]
) -> bool:
    """Whether this write completed the task: completedAt is its own stamp (a task already
    completed keeps its stamp)."""
    completed_at = task.get("completedAt")
    if isinstance(completed_at, datetime) and completed_at.tzinfo is None:
        completed_at = completed_at.replace(tzinfo=UTC)  # SQLite's naive UTC
    return sent.get("completed") is True and completed_at == params["new_updated_at"]


def _events(
    ctx: RequestContext,
    plan_id: uuid.UUID,
    task: dict[str, Any],
    completed: bool,
    actor: Mapping[str, object] | None = None,
) -> tuple[DomainEvent, DomainEvent]:
    kind = TaskCompleted if completed else TaskUpdated
    return kind(ctx.organization_id, task, actor), PlanUpdated(ctx.organization_id, plan_id)


async def save_task(
    uow: UnitOfWork,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    task_id: uuid.UUID,
    body: TaskUpdate,
) -> dict[str, Any]:
    """updatePlanTask on the unit of work's driver connection: one statement when it applies
    (`update_task_at_once`), else the checks and the write in one transaction
    (`update_task`); committed before it returns. What the route and a buyer's tick in a
    room (contract §16) both run."""
    task = await update_task_at_once(await uow.writer(), ctx, plan_id, task_id, body)
    if task is None:
        async with uow.atomic() as conn:
            task = await update_task(conn, ctx, plan_id, task_id, body)
    return task


def _may_be_refused(sent: Mapping[str, object]) -> bool:
    """Whether something sent may be refused: a null where none may be, or a reference."""
    nulls = any(k in sent and sent[k] is None for k in TaskUpdate.not_null)
    return nulls or sent.get("milestone_id") is not None or sent.get("assigned_to_id") is not None


async def update_task(
    conn: AsyncConnection,
    ctx: RequestContext,
    plan_id: uuid.UUID,
    task_id: uuid.UUID,
    body: TaskUpdate,
    *,
    actor: Mapping[str, object] | None = None,
) -> dict[str, Any]:
    """The task updated, as the API answers it (the UPDATE's RETURNING row). Run inside the
    unit of work's `atomic()`: two statements when nothing sent can be refused, the plan's
    lock-and-stamp and the task's UPDATE; its events (`TaskUpdated` or `TaskCompleted`, and
    `PlanUpdated`) are handled in the transaction, before COMMIT, as an ORM write's are;
    `actor` is who wrote it when not a user (a buyer's tick: its task event says so).

    The refusals come in the order of contract §2, as every plan write's (`open_patch`): the
    plan (404), the task (404), an archived plan (422), a null where none may be (400), the
    milestone and the assignee (422). When something sent or the plan's state could be
    refused, the task's existence is read first; otherwise the UPDATE finding no row is the
    task's 404."""
    sent = body.sent()
    params = _params(ctx, plan_id, task_id)
    plan = await writes.LOCK_AND_STAMP.fetchrow(conn, params)
    if plan is None:
        raise not_found(Plan, plan_id)
    archived = plan[0] is not None
    if archived or _may_be_refused(sent):
        if await writes.TASK_EXISTS.fetchval(conn, params) is None:
            raise not_found(PlanTask, task_id)
        if archived:
            raise plan_archived(plan_id)
        reject_nulls(sent, TaskUpdate.not_null)
        await check_milestone(conn, ctx, plan_id, sent.get("milestone_id"))
        await check_assignee(conn, ctx, plan_id, sent.get("assigned_to_id"))
    _set(params, sent)
    row = await writes.task_update(frozenset(sent)).fetchrow(conn, params)
    if row is None:
        raise not_found(PlanTask, task_id)
    task = task_dict(row)
    for event in _events(ctx, plan_id, task, _completed(task, sent, params), actor):
        emit(conn, event)
    return task


async def list_my_tasks(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    completed: bool | None,
    plan_id: uuid.UUID | None,
    due_before: date | None,
) -> tuple[list[dict[str, Any]], PaginationMeta]:
    rows, meta = await repo.my_task_page(
        session,
        ctx,
        ctx.user_id,
        params,
        codec,
        completed=completed,
        plan_id=plan_id,
        due_before=due_before,
    )
    return [task_dict(r) for r in rows], meta
