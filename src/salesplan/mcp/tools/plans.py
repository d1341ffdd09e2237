"""listPlans, getPlan, createPlan, updatePlan, listMyTasks, createPlanTask, updatePlanTask
(contract §9 extras)."""

from __future__ import annotations

import uuid
from datetime import date
from typing import Any

import orjson
from pydantic import Field

from salesplan.mcp.call import ToolCall
from salesplan.mcp.registry import ListArgs, ToolArgs, mcp_tool
from salesplan.plans import service
from salesplan.plans.render import json_response
from salesplan.plans.schemas import EntityType, PlanCreate, PlanUpdate, TaskCreate, TaskUpdate

PLAN_ID = "Id of the plan (an `id` from listPlans)."
TASK_ID = "Id of the task (an `id` in the plan's `tasks`, from getPlan)."

ENTITY_TYPE = (
    "What the plan is attached to: `ACCOUNT` (stored on the account's default buying group), "
    "`BUYING_GROUP`, `OPPORTUNITY` or `USER` (a personal plan)."
)
ENTITY_ID = (
    "Id of the entity named by `entityType`: an account id (ACCOUNT), a buying group id "
    "(BUYING_GROUP, from listAccountBuyingGroups or listBuyingGroups), an opportunity id "
    "(OPPORTUNITY) or a user id (USER; left out = you)."
)
TASK_FIELDS = {
    "title": "What is to be done (1..500 characters).",
    "description": "Details of the task.",
    "completed": "true when the task is done; `completedAt` is then set by the server (and "
    "cleared when it becomes false again).",
    "targetDate": "Due date, YYYY-MM-DD.",
    "assignedToId": "Id of the user responsible (a member of the organization, from "
    "listOrganizationUsers); listMyTasks shows a user the tasks assigned to them.",
    "milestoneId": "Id of a milestone of the same plan (from getPlan's `milestones`) to file "
    "the task under.",
}


def wire(body: Any) -> Any:
    """The REST body exactly as the plans routes write it (their own JSON renderer)."""
    return orjson.loads(json_response(body).body)


def _list(items: list[dict[str, Any]], meta: Any) -> Any:
    return wire({"data": items, "pagination": meta.model_dump(by_alias=True)})


class ListPlansArgs(ListArgs):
    sortable = ("createdAt", "updatedAt", "name")
    docs = {"search": "Case-insensitive substring of the plan's name."}

    entity_type: EntityType | None = Field(
        default=None,
        description="With `entityId`: only plans on that entity. ACCOUNT matches the plans on "
        "the account's buying groups.",
    )
    entity_id: uuid.UUID | None = Field(default=None, description="See `entityType`.")
    account_id: uuid.UUID | None = Field(
        default=None,
        description="Every plan of this account: those on its buying groups and on its "
        "opportunities.",
    )
    include_archived: bool = Field(
        default=False, description="true to list archived plans too; default false."
    )
    archived_only: bool = Field(default=False, description="true to list only archived plans.")
    include: str | None = Field(
        default=None,
        description="Comma-separated parts to fill in each plan: `milestones`, `goals`, "
        "`tasks`. Without it these are empty arrays in the list (getPlan always has them).",
    )


class PlanArgs(ToolArgs):
    plan_id: uuid.UUID = Field(description=PLAN_ID)


class CreatePlanArgs(ToolArgs, PlanCreate):
    docs = {
        "name": "Name of the plan (1..255 characters), e.g. `Acme FY27 account plan`.",
        "description": "What the plan is for.",
        "entityType": ENTITY_TYPE,
        "entityId": ENTITY_ID + " Required unless entityType is USER.",
        "milestones": "Optional phases created with the plan, in order: each "
        '`{"milestone": {"name": "…"}, "status", "targetDate", "objective", "goals": [...], '
        '"tasks": [...]}`; its goals and tasks are linked to it.',
        "goals": "Optional goals of the whole plan: each `{title, goalType (QUANTIFIABLE | "
        "MILESTONE_BASED), target, actualValue, unitType (NUMBER | DOLLAR | PERCENTAGE), "
        "targetDate, childGoals: [...]}` (at most 5 levels).",
        "tasks": "Optional tasks of the whole plan: each `{title, description, completed, "
        "targetDate, assignedToId}`.",
    }


class UpdatePlanArgs(ToolArgs, PlanUpdate):
    docs = {
        "planId": "Id of the plan to change.",
        "name": "New name (1..255 characters).",
        "description": "New description; null clears it.",
        "entityType": "Re-attach the plan: " + ENTITY_TYPE,
        "entityId": "Re-attach the plan: " + ENTITY_ID,
    }

    plan_id: uuid.UUID


class ListMyTasksArgs(ListArgs):
    sortable = ("createdAt", "updatedAt", "title")
    docs = {"search": "Case-insensitive substring of the task's title."}

    completed: bool | None = Field(
        default=None, description="true: only done tasks; false: only open ones; absent: both."
    )
    plan_id: uuid.UUID | None = Field(default=None, description="Only the tasks of this plan.")
    due_before: date | None = Field(
        default=None, description="Only tasks whose targetDate is before this date (YYYY-MM-DD)."
    )


class CreatePlanTaskArgs(ToolArgs, TaskCreate):
    docs = {"planId": "Id of the plan to add the task to.", **TASK_FIELDS}

    plan_id: uuid.UUID


class UpdatePlanTaskArgs(ToolArgs, TaskUpdate):
    docs = {
        "planId": "Id of the plan the task belongs to.",
        "taskId": TASK_ID,
        **TASK_FIELDS,
    }

    plan_id: uuid.UUID
    task_id: uuid.UUID


@mcp_tool(
    "listPlans",
    scope="plans:read",
    group="plans",
    args=ListPlansArgs,
    title="List plans",
    description="""
List account plans: `{"data": [plan], "pagination"}`, a plan being `{id, name, description,
entityType, entityId, opportunityId, buyingGroupId, userId, milestones, goals, tasks, createdAt,
updatedAt}`. Find the plans of an account with `accountId` (every plan on its buying groups and
opportunities) or with entityType=ACCOUNT and `entityId` (those on its buying groups); of a
deal or a buying group with `entityType` + `entityId`. In the list, `milestones`, `goals` and
`tasks` are empty unless `include` asks for them (e.g. `milestones,tasks`); getPlan reads one
plan in full. Archived plans are left out unless `includeArchived` (or `archivedOnly`) is true.
""",
)
async def list_plans(call: ToolCall, args: ListPlansArgs) -> Any:
    parts = service.parse_include(args.include)
    filters = service.PlanFilters(
        entity_type=args.entity_type,
        entity_id=args.entity_id,
        account_id=args.account_id,
        include_archived=args.include_archived,
        archived_only=args.archived_only,
    )
    items, meta = await service.list_plans(
        call.session, call.ctx, args.list_params(), filters, parts, call.codec
    )
    return _list(items, meta)


@mcp_tool(
    "getPlan",
    scope="plans:read",
    group="plans",
    args=PlanArgs,
    title="Read a plan in full",
    description="""
Read one plan with everything in it: its milestones (by sortIndex, each with its tasks and root
goals), its root goals (with nested `childGoals` and derived `progress`) and every live task.
Use it to review a plan or to find milestone and task ids before createPlanTask or
updatePlanTask. An archived plan still answers; a plan of another organization answers
`not_found`.
""",
)
async def get_plan(call: ToolCall, args: PlanArgs) -> Any:
    return wire(await service.plan_view(call.session, call.ctx, args.plan_id))


@mcp_tool(
    "createPlan",
    scope="plans:write",
    group="plans",
    args=CreatePlanArgs,
    read_only=False,
    title="Create a plan",
    description="""
Create a plan, optionally with its milestones, goals and tasks, in one transaction; answers the
full plan (like getPlan). Where it goes:
- an account-level plan: entityType=ACCOUNT with the account id; it is stored on the account's
  DEFAULT buying group (the answer has entityType=BUYING_GROUP and buyingGroupId set);
- a plan for another (non-default) buying group of the account: first call
  listAccountBuyingGroups (or listBuyingGroups with `accountId`), pick the group, then
  entityType=BUYING_GROUP with that group's id;
- a deal plan: entityType=OPPORTUNITY with the opportunity id;
- a personal plan: entityType=USER (entityId left out = you).
An entity that does not exist in the organization answers `unprocessable`.
""",
)
async def create_plan(call: ToolCall, args: CreatePlanArgs) -> Any:
    plan_id = await service.create_plan(call.session, call.ctx, args.body(PlanCreate))
    return wire(await service.plan_view(call.session, call.ctx, plan_id))


@mcp_tool(
    "updatePlan",
    scope="plans:write",
    group="plans",
    args=UpdatePlanArgs,
    read_only=False,
    title="Update a plan",
    description="""
Change a plan's name, description or attachment. Only the arguments you send change (PATCH, like
the REST updatePlan); the rest stays. Send `entityType` and `entityId` together to move the plan
to another entity (the same rules as createPlan: ACCOUNT goes to the account's default buying
group). Answers the full plan. Milestones, goals and tasks are not changed here: use
createPlanTask / updatePlanTask for tasks.
""",
)
async def update_plan(call: ToolCall, args: UpdatePlanArgs) -> Any:
    await service.update_plan(call.session, call.ctx, args.plan_id, args.body(PlanUpdate))
    return wire(await service.plan_view(call.session, call.ctx, args.plan_id))


@mcp_tool(
    "listMyTasks",
    scope="plans:read",
    group="plans",
    args=ListMyTasksArgs,
    user_token=True,
    title="List my tasks",
    description="""
List the plan tasks assigned to the user behind this token, across all live plans of the
organization: `{"data": [{id, planId, milestoneId, title, description, completed, completedAt,
targetDate, assignedToId, createdById, createdAt, updatedAt}], "pagination"}`. Use it to answer
"what do I have to do?": `completed=false` for open tasks, `dueBefore` for what is due soon,
`planId` for one plan. Needs a token that acts for a user (an API key or a user's OAuth token);
an app-only token answers `forbidden`.
""",
)
async def list_my_tasks(call: ToolCall, args: ListMyTasksArgs) -> Any:
    items, meta = await service.list_my_tasks(
        call.session,
        call.ctx,
        args.list_params(),
        call.codec,
        completed=args.completed,
        plan_id=args.plan_id,
        due_before=args.due_before,
    )
    return _list(items, meta)


@mcp_tool(
    "createPlanTask",
    scope="plans:write",
    group="plans",
    args=CreatePlanTaskArgs,
    read_only=False,
    title="Add a task to a plan",
    description="""
Add a task to a plan; answers the task `{id, planId, milestoneId, title, description,
completed, completedAt, targetDate, assignedToId, createdById, createdAt, updatedAt}`. `title`
is required. To file it under a phase, pass a `milestoneId` of the same plan (from getPlan); to
give it to someone, `assignedToId` (a user of the organization). A milestone or assignee that
does not fit answers `unprocessable`, as does a task on an archived plan.
""",
)
async def create_plan_task(call: ToolCall, args: CreatePlanTaskArgs) -> Any:
    task_id = await service.create_task(call.session, call.ctx, args.plan_id, args.body(TaskCreate))
    return wire(await service.task_view(call.session, call.ctx, args.plan_id, task_id))


@mcp_tool(
    "updatePlanTask",
    scope="plans:write",
    group="plans",
    args=UpdatePlanTaskArgs,
    read_only=False,
    title="Update a plan task",
    description="""
Change a task of a plan. Only the arguments you send change (PATCH, like the REST
updatePlanTask). Mark it done with `completed=true` (the server sets `completedAt`; false
reopens it and clears it), reschedule with `targetDate`, reassign with `assignedToId`, move it
with `milestoneId`. Answers the task. `planId` and `taskId` come from getPlan or listMyTasks
(`planId` of each task).
""",
)
async def update_plan_task(call: ToolCall, args: UpdatePlanTaskArgs) -> Any:
    await service.update_task(
        call.session, call.ctx, args.plan_id, args.task_id, args.body(TaskUpdate)
    )
    return wire(await service.task_view(call.session, call.ctx, args.plan_id, args.task_id))
