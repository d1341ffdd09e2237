"""Plan rules (contract §7 "plans"), one module a subject: `entities` (what a plan is attached
to), `checks` (loading and reference checks every write shares), `views` (what the routes
answer), `plans`, `milestones`, `goals`, `tasks`. Their SQL is in `repository.py` (reads) and
`write_repository.py` (writes); every write says what happened (`events.py`), which moves
the plan's version (`changes.py`) and reaches webhooks. This module is the domain's one entry point for routers and MCP tools:
`service.create_plan(...)` and so on."""

from __future__ import annotations

from salesplan.plans.checks import MAX_GOAL_DEPTH, find_plan
from salesplan.plans.entities import Attachment, resolve_entity
from salesplan.plans.goals import GOAL_SORT, archive_child, create_goal, restore_goal, update_goal
from salesplan.plans.milestones import (
    MILESTONE_SORT,
    create_milestone,
    reorder_milestones,
    restore_milestone,
    update_milestone,
)
from salesplan.plans.plans import (
    INCLUDE_PATTERN,
    PlanFilters,
    archive_plan,
    create_plan,
    list_plans,
    parse_include,
    restore_plan,
    update_plan,
)
from salesplan.plans.tasks import (
    TASK_SORT,
    create_task,
    list_my_tasks,
    save_task,
    update_task,
    update_task_at_once,
)
from salesplan.plans.views import (
    INCLUDABLE,
    goal_view,
    list_children,
    milestone_view,
    plan_view,
    task_view,
)

__all__ = [
    "GOAL_SORT",
    "INCLUDABLE",
    "INCLUDE_PATTERN",
    "MAX_GOAL_DEPTH",
    "MILESTONE_SORT",
    "TASK_SORT",
    "Attachment",
    "PlanFilters",
    "archive_child",
    "archive_plan",
    "create_goal",
    "create_milestone",
    "create_plan",
    "create_task",
    "find_plan",
    "goal_view",
    "list_children",
    "list_my_tasks",
    "list_plans",
    "milestone_view",
    "parse_include",
    "plan_view",
    "reorder_milestones",
    "resolve_entity",
    "restore_goal",
    "restore_milestone",
    "restore_plan",
    "save_task",
    "task_view",
    "update_goal",
    "update_milestone",
    "update_plan",
    "update_task",
    "update_task_at_once",
]
