"""What the operations of this domain do, in words for an agent: the route declarations'
`description` (the OpenAPI document and the MCP tool derived from the route share it), and the
descriptions of tool arguments that the parameters and body fields do not carry."""

from __future__ import annotations

ASSIGNED_TO_ID = (
    "Id of who is responsible: a user of the organization (from listOrganizationUsers; "
    "listMyTasks shows a user the tasks assigned to them), or a contact of the plan's account "
    "(a buyer task, which the buyer may tick in the plan's room)."
)
COMPLETED = (
    "true when the task is done; `completedAt` is then set by the server (and cleared when it "
    "becomes false again)."
)
DESCRIPTION = "Details of the task."
MILESTONE_ID = (
    "Id of a milestone of the same plan (from getPlan's `milestones`) to file the task under."
)
TARGET_DATE = "Due date, YYYY-MM-DD."
TITLE = "What is to be done (1..500 characters)."

LIST_PLANS = """
List account plans: `{"data": [plan], "pagination"}`, a plan being `{id, name, description,
entityType, entityId, opportunityId, buyingGroupId, userId, milestones, goals, tasks, createdAt,
updatedAt}`. Find the plans of an account with `accountId` (every plan on its buying groups and
opportunities) or with entityType=ACCOUNT and `entityId` (those on its buying groups); of a
deal or a buying group with `entityType` + `entityId`. In the list, `milestones`, `goals` and
`tasks` are empty unless `include` asks for them (e.g. `milestones,tasks`); getPlan reads one
plan in full. Archived plans are left out unless `includeArchived` (or `archivedOnly`) is true.
What changed since a date-time: `updatedSince` (plans whose updatedAt, moved by any change to
the plan or its milestones, goals and tasks, is at or after it; oldest change first).
"""

GET_PLAN = """
Read one plan with everything in it: its milestones (by sortIndex, each with its tasks and root
goals), its root goals (with nested `childGoals` and derived `progress`) and every live task.
Use it to review a plan or to find milestone and task ids before createPlanTask or
updatePlanTask. An archived plan still answers; a plan of another organization answers
`not_found`.
"""

CREATE_PLAN = """
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
"""

UPDATE_PLAN = """
Change a plan's name, description or attachment. Only the arguments you send change (PATCH, like
the REST updatePlan); the rest stays. Send `entityType` and `entityId` together to move the plan
to another entity (the same rules as createPlan: ACCOUNT goes to the account's default buying
group). Answers the full plan. Milestones, goals and tasks are not changed here: use
createPlanTask / updatePlanTask for tasks.
"""

LIST_MY_TASKS = """
List the plan tasks assigned to the user behind this token, across all live plans of the
organization: `{"data": [{id, planId, milestoneId, title, description, completed, completedAt,
targetDate, assignedToId, createdById, createdAt, updatedAt}], "pagination"}`. Use it to answer
"what do I have to do?": `completed=false` for open tasks, `dueBefore` for what is due soon,
`planId` for one plan. Needs a token that acts for a user (an API key or a user's OAuth token);
an app-only token answers `forbidden`.
"""

CREATE_PLAN_TASK = """
Add a task to a plan; answers the task `{id, planId, milestoneId, title, description,
completed, completedAt, targetDate, assignedToId, createdById, createdAt, updatedAt}`. `title`
is required. To file it under a phase, pass a `milestoneId` of the same plan (from getPlan); to
give it to someone, `assignedToId` (a user of the organization). A milestone or assignee that
does not fit answers `unprocessable`, as does a task on an archived plan.
"""

UPDATE_PLAN_TASK = """
Change a task of a plan. Only the arguments you send change (PATCH, like the REST
updatePlanTask). Mark it done with `completed=true` (the server sets `completedAt`; false
reopens it and clears it), reschedule with `targetDate`, reassign with `assignedToId`, move it
with `milestoneId`. Answers the task. `planId` and `taskId` come from getPlan or listMyTasks
(`planId` of each task).
"""

LIST_PLANS_ARGS = {
    "accountId": "Every plan of this account: those on its buying groups and on its opportunities.",
    "archivedOnly": "true to list only archived plans.",
    "entityId": "See `entityType`.",
    "entityType": (
        "With `entityId`: only plans on that entity. ACCOUNT matches the plans on the "
        "account's buying groups."
    ),
    "include": (
        "Comma-separated parts to fill in each plan: `milestones`, `goals`, `tasks`. Without "
        "it these are empty arrays in the list (getPlan always has them)."
    ),
    "includeArchived": "true to list archived plans too; default false.",
    "search": "Case-insensitive substring of the plan's name.",
}
GET_PLAN_ARGS = {"planId": "Id of the plan (an `id` from listPlans)."}
CREATE_PLAN_ARGS = {
    "description": "What the plan is for.",
    "entityId": (
        "Id of the entity named by `entityType`: an account id (ACCOUNT), a buying group id "
        "(BUYING_GROUP, from listAccountBuyingGroups or listBuyingGroups), an opportunity id "
        "(OPPORTUNITY) or a user id (USER; left out = you). Required unless entityType is "
        "USER."
    ),
    "entityType": (
        "What the plan is attached to: `ACCOUNT` (stored on the account's default buying "
        "group), `BUYING_GROUP`, `OPPORTUNITY` or `USER` (a personal plan)."
    ),
    "goals": (
        "Optional goals of the whole plan: each `{title, goalType (QUANTIFIABLE | "
        "MILESTONE_BASED), target, actualValue, unitType (NUMBER | DOLLAR | PERCENTAGE), "
        "targetDate, childGoals: [...]}` (at most 5 levels)."
    ),
    "milestones": (
        'Optional phases created with the plan, in order: each `{"milestone": {"name": "…"}, '
        '"status", "targetDate", "objective", "goals": [...], "tasks": [...]}`; its goals and '
        "tasks are linked to it."
    ),
    "name": "Name of the plan (1..255 characters), e.g. `Acme FY27 account plan`.",
    "tasks": (
        "Optional tasks of the whole plan: each `{title, description, completed, targetDate, "
        "assignedToId}`."
    ),
}
UPDATE_PLAN_ARGS = {
    "description": "New description; null clears it.",
    "entityId": (
        "Re-attach the plan: Id of the entity named by `entityType`: an account id (ACCOUNT), "
        "a buying group id (BUYING_GROUP, from listAccountBuyingGroups or listBuyingGroups), "
        "an opportunity id (OPPORTUNITY) or a user id (USER; left out = you)."
    ),
    "entityType": (
        "Re-attach the plan: What the plan is attached to: `ACCOUNT` (stored on the account's "
        "default buying group), `BUYING_GROUP`, `OPPORTUNITY` or `USER` (a personal plan)."
    ),
    "name": "New name (1..255 characters).",
    "planId": "Id of the plan to change.",
}
LIST_MY_TASKS_ARGS = {
    "completed": "true: only done tasks; false: only open ones; absent: both.",
    "dueBefore": "Only tasks whose targetDate is before this date (YYYY-MM-DD).",
    "planId": "Only the tasks of this plan.",
    "search": "Case-insensitive substring of the task's title.",
}
TASK_FIELDS = {
    "title": TITLE,
    "description": DESCRIPTION,
    "completed": COMPLETED,
    "targetDate": TARGET_DATE,
    "assignedToId": ASSIGNED_TO_ID,
    "milestoneId": MILESTONE_ID,
}
CREATE_PLAN_TASK_ARGS = {"planId": "Id of the plan to add the task to.", **TASK_FIELDS}
UPDATE_PLAN_TASK_ARGS = {
    "planId": "Id of the plan the task belongs to.",
    "taskId": "Id of the task (an `id` in the plan's `tasks`, from getPlan).",
    **TASK_FIELDS,
}

# The MCP tool's description (contract §9, 2026-11-27: at most ~200 characters).
LIST_PLANS_BRIEF = (
    "List account plans; by `accountId`, or by `entityType` + `entityId`. Their milestones, "
    "goals and tasks are empty unless `include` names them; getPlan reads one plan in full."
)

# The MCP tool's description (contract §9, 2026-11-27: at most ~200 characters).
CREATE_PLAN_BRIEF = (
    "Create a plan with its milestones, goals and tasks; answers the full plan. ACCOUNT: on "
    "the account's default buying group; for another group, pick it with "
    "listAccountBuyingGroups and use BUYING_GROUP."
)
