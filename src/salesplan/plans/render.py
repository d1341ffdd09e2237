"""Plans rendered from flat rows: the spec's strict objects as dicts, trees built in Python.

Rows may be SQLAlchemy Core rows or ORM objects: both expose the column names as attributes.
Every property of the spec is always present (null when empty), and nothing else."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import orjson
from starlette.responses import Response

Row = Any


def json_response(body: Any, status_code: int = 200) -> Response:
    return Response(
        # asyncpg answers its own UUID class, which orjson hands to `default`.
        orjson.dumps(body, option=orjson.OPT_UTC_Z, default=str),
        status_code=status_code,
        media_type="application/json",
    )


def task_dict(t: Row) -> dict[str, Any]:
    return {
        "id": t.id,
        "planId": t.plan_id,
        "milestoneId": t.milestone_id,
        "title": t.title,
        "description": t.description,
        "completed": bool(t.completed),
        "completedAt": t.completed_at,
        "targetDate": t.target_date,
        "assignedToId": t.assigned_to_id,
        "createdById": t.created_by_id,
        "createdAt": t.created_at,
        "updatedAt": t.updated_at,
    }


def _ids(values: Any) -> list[str]:
    return [str(v) for v in (values or [])]


class PlanTree:
    """The live content of one plan, indexed for rendering any part of it."""

    def __init__(self, milestones: Sequence[Row], goals: Sequence[Row], tasks: Sequence[Row]):
        self.milestones = sorted(milestones, key=lambda m: (m.sort_index, m.created_at, m.id))
        self.milestone_by_id = {m.id: m for m in self.milestones}
        self.tasks = sorted(tasks, key=lambda t: (t.created_at, t.id))
        self.task_dicts = [task_dict(t) for t in self.tasks]
        self.tasks_by_milestone: dict[uuid.UUID, list[dict[str, Any]]] = defaultdict(list)
        for td in self.task_dicts:
            if td["milestoneId"] is not None:
                self.tasks_by_milestone[td["milestoneId"]].append(td)
        self.goals = sorted(goals, key=lambda g: (g.created_at, g.id))
        self.goal_by_id = {g.id: g for g in self.goals}
        self.children: dict[uuid.UUID, list[Row]] = defaultdict(list)
        for g in self.goals:
            if g.parent_goal_id is not None:
                self.children[g.parent_goal_id].append(g)
        self.roots = [g for g in self.goals if g.parent_goal_id is None]

    def progress(self, g: Row) -> float | None:
        if g.goal_type == "QUANTIFIABLE":
            if g.target is not None and g.target > 0 and g.actual_value is not None:
                return round(g.actual_value / g.target * 100, 2)
        elif g.goal_type == "MILESTONE_BASED" and g.milestone_id in self.milestone_by_id:
            if self.milestone_by_id[g.milestone_id].status == "completed":
                return 100.0
            linked = self.tasks_by_milestone.get(g.milestone_id, [])
            if not linked:
                return 0.0
            done = sum(1 for t in linked if t["completed"])
            return round(done / len(linked) * 100, 2)
        return None if g.progress is None else float(g.progress)

    def goal(self, g: Row) -> dict[str, Any]:
        return {
            "id": g.id,
            "planId": g.plan_id,
            "milestoneId": g.milestone_id,
            "title": g.title,
            "description": g.description,
            "goalType": g.goal_type,
            "target": g.target,
            "actualValue": g.actual_value,
            "unitType": g.unit_type,
            "label": g.label,
            "progress": self.progress(g),
            "goalTypeCategory": g.goal_type_category,
            "targetDate": g.target_date,
            "periodType": g.period_type,
            "periodLabel": g.period_label,
            "allocations": g.allocations,
            "parentGoalId": g.parent_goal_id,
            "childGoals": [self.goal(c) for c in self.children.get(g.id, [])],
            "createdAt": g.created_at,
            "updatedAt": g.updated_at,
        }

    def milestone(self, m: Row) -> dict[str, Any]:
        return {
            "id": m.id,
            "planId": m.plan_id,
            "milestone": m.milestone if m.milestone is not None else {},
            "objective": m.objective,
            "targetDate": m.target_date,
            "actualDate": m.actual_date,
            "status": m.status,
            "sortIndex": m.sort_index,
            "prospectOwnerIds": _ids(m.prospect_owner_ids),
            "subscriberOwnerIds": _ids(m.subscriber_owner_ids),
            "tasks": self.tasks_by_milestone.get(m.id, []),
            "goals": [self.goal(g) for g in self.roots if g.milestone_id == m.id],
            "createdAt": m.created_at,
            "updatedAt": m.updated_at,
        }

    def plan(self, p: Row, include: Iterable[str] = ("milestones", "goals", "tasks")) -> dict:
        parts = set(include)
        return plan_dict(
            p,
            milestones=[self.milestone(m) for m in self.milestones]
            if "milestones" in parts
            else [],
            goals=[self.goal(g) for g in self.roots] if "goals" in parts else [],
            tasks=self.task_dicts if "tasks" in parts else [],
        )


EMPTY = PlanTree([], [], [])


def plan_dict(
    p: Row,
    *,
    milestones: list[dict[str, Any]],
    goals: list[dict[str, Any]],
    tasks: list[dict[str, Any]],
) -> dict[str, Any]:
    # The archived state has no field on the wire (spec: "not shown"; contract: seed objects
    # are exact), so archived_at is deliberately not rendered.
    return {
        "id": p.id,
        "name": p.name,
        "description": p.description,
        "entityType": p.entity_type,
        "entityId": p.entity_id,
        "opportunityId": p.opportunity_id,
        "buyingGroupId": p.buying_group_id,
        "userId": p.user_id,
        "milestones": milestones,
        "goals": goals,
        "tasks": tasks,
        "createdAt": p.created_at,
        "updatedAt": p.updated_at,
    }
