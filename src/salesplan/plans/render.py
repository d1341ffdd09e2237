"""Plans rendered from flat rows: the spec's strict objects as dicts, trees built in Python.

The repository selects each table's columns in wire order (`TASK_KEYS`, …), so that a row
becomes its dict with one `zip`: attribute access on rows costs more than the rest of the
rendering together. Every property of the spec is always present (null when empty), and
nothing else."""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

# A row of a table's wire columns (`TASK_KEYS`, …), in that order: read only by `zip`.
Row = Iterable[object]
Obj = dict[str, Any]

PLAN_KEYS = (
    "id",
    "name",
    "description",
    "entityType",
    "entityId",
    "opportunityId",
    "buyingGroupId",
    "userId",
    "createdAt",
    "updatedAt",
)
MILESTONE_KEYS = (
    "id",
    "planId",
    "milestone",
    "objective",
    "targetDate",
    "actualDate",
    "status",
    "sortIndex",
    "prospectOwnerIds",
    "subscriberOwnerIds",
    "createdAt",
    "updatedAt",
)
GOAL_KEYS = (
    "id",
    "planId",
    "milestoneId",
    "title",
    "description",
    "goalType",
    "target",
    "actualValue",
    "unitType",
    "label",
    "progress",
    "goalTypeCategory",
    "targetDate",
    "periodType",
    "periodLabel",
    "allocations",
    "parentGoalId",
    "createdAt",
    "updatedAt",
)
TASK_KEYS = (
    "id",
    "planId",
    "milestoneId",
    "title",
    "description",
    "completed",
    "completedAt",
    "targetDate",
    "assignedToId",
    "createdById",
    "createdAt",
    "updatedAt",
)


def task_dict(row: Row) -> Obj:
    task = dict(zip(TASK_KEYS, row, strict=False))
    task["completed"] = bool(task["completed"])
    return task


def wire_attribute(key: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in key)


def milestone_base(row: Row) -> Obj:
    m = dict(zip(MILESTONE_KEYS, row, strict=False))
    if m["milestone"] is None:
        m["milestone"] = {}
    m["prospectOwnerIds"] = m["prospectOwnerIds"] or []
    m["subscriberOwnerIds"] = m["subscriberOwnerIds"] or []
    return m


def goal_base(row: Row) -> Obj:
    return dict(zip(GOAL_KEYS, row, strict=False))


def plan_base(row: Row) -> Obj:
    return dict(zip(PLAN_KEYS, row, strict=False))


class PlanTree:
    """The live content of one plan, indexed for rendering any part of it."""

    def __init__(self, milestones: Sequence[Row], goals: Sequence[Row], tasks: Sequence[Row]):
        ms = sorted(
            (milestone_base(r) for r in milestones),
            key=lambda m: m["sortIndex"],
        )
        self.milestones = ms
        self.milestone_by_id = {m["id"]: m for m in ms}
        # Rows come oldest first (created_at, id); milestones are reordered by sortIndex.
        self.tasks = [task_dict(r) for r in tasks]
        self.tasks_by_milestone: dict[uuid.UUID, list[Obj]] = defaultdict(list)
        for t in self.tasks:
            if t["milestoneId"] is not None:
                self.tasks_by_milestone[t["milestoneId"]].append(t)
        self.goals = [goal_base(r) for r in goals]
        self.goal_by_id = {g["id"]: g for g in self.goals}
        self.children: dict[uuid.UUID, list[Obj]] = defaultdict(list)
        for g in self.goals:
            if g["parentGoalId"] is not None:
                self.children[g["parentGoalId"]].append(g)
        self.roots = [g for g in self.goals if g["parentGoalId"] is None]

    def progress(self, g: Obj) -> float | None:
        if g["goalType"] == "QUANTIFIABLE":
            target, actual = g["target"], g["actualValue"]
            if target is not None and target > 0 and actual is not None:
                return round(actual / target * 100, 2)
        elif g["goalType"] == "MILESTONE_BASED" and g["milestoneId"] in self.milestone_by_id:
            if self.milestone_by_id[g["milestoneId"]]["status"] == "completed":
                return 100.0
            linked = self.tasks_by_milestone.get(g["milestoneId"], [])
            if not linked:
                return 0.0
            done = sum(1 for t in linked if t["completed"])
            return round(done / len(linked) * 100, 2)
        stored = g["progress"]
        return None if stored is None else float(stored)

    def goal(self, g: Obj) -> Obj:
        out = dict(g)
        out["progress"] = self.progress(g)
        out["childGoals"] = [self.goal(c) for c in self.children.get(g["id"], ())]
        return out

    def milestone(self, m: Obj) -> Obj:
        out = dict(m)
        out["tasks"] = self.tasks_by_milestone.get(m["id"], [])
        out["goals"] = [self.goal(g) for g in self.roots if g["milestoneId"] == m["id"]]
        return out

    def plan(self, p: Obj, include: Iterable[str] = ("milestones", "goals", "tasks")) -> Obj:
        parts = set(include)
        # The archived state has no field on the wire (spec: "not shown"; contract: seed
        # objects are exact), so archived_at is deliberately not selected.
        out = dict(p)
        out["milestones"] = (
            [self.milestone(m) for m in self.milestones] if "milestones" in parts else []
        )
        out["goals"] = [self.goal(g) for g in self.roots] if "goals" in parts else []
        out["tasks"] = self.tasks if "tasks" in parts else []
        return out


EMPTY = PlanTree([], [], [])


def bare_plan(row: Row) -> Obj:
    """A plan without its content (listPlans without include): `EMPTY.plan`, cheaper."""
    out = dict(zip(PLAN_KEYS, row, strict=False))
    out["milestones"], out["goals"], out["tasks"] = [], [], []
    return out
