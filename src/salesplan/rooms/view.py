"""The room's read model: the one place where a plan becomes what its buyer may see.

Everything a room session is answered with — the page, the ICS, the e-mails, whether a task may
be ticked or commented on — is read from a `RoomPlan` built here. A hidden milestone, goal or
task, every task and goal of a hidden milestone, every goal under a hidden goal and every
`internal` comment are left out of it before anything else sees the plan, so no template or
route has to remember to hide them. People are named by their full names, never an address."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from salesplan.kit.clock import today
from salesplan.kit.scoping import TenantScope
from salesplan.plans import repository as plans_repo
from salesplan.plans.render import PlanTree, goal_base, plan_base
from salesplan.rooms import repository as repo

Obj = dict[str, Any]


@dataclass(frozen=True)
class Hidden:
    """A room's hidden items, as ids."""

    milestones: frozenset[uuid.UUID] = frozenset()
    goals: frozenset[uuid.UUID] = frozenset()
    tasks: frozenset[uuid.UUID] = frozenset()

    @classmethod
    def of(cls, row: Any) -> Hidden:
        if row is None:
            return cls()
        return cls(*(frozenset(uuid.UUID(str(i)) for i in ids or ()) for ids in row[:3]))


@dataclass
class RoomComment:
    body: str
    author_name: str
    by_buyer: bool
    created_at: datetime


@dataclass
class RoomTask:
    id: uuid.UUID
    title: str
    description: str | None
    completed: bool
    completed_at: datetime | None
    target_date: date | None
    assignee_name: str | None
    # unassigned, or assigned to a contact of the account: a buyer may tick it
    buyer_task: bool
    overdue: bool
    comments: list[RoomComment] = field(default_factory=list)


@dataclass
class RoomGoal:
    title: str
    description: str | None
    progress: float | None
    target_date: date | None
    children: list[RoomGoal] = field(default_factory=list)


@dataclass
class RoomMilestone:
    id: uuid.UUID
    name: str
    status: str
    target_date: date | None
    owners: list[str]
    tasks: list[RoomTask]
    goals: list[RoomGoal]

    @property
    def done(self) -> int:
        return sum(1 for t in self.tasks if t.completed)

    @property
    def percent(self) -> int:
        return round(self.done / len(self.tasks) * 100) if self.tasks else 0


@dataclass
class RoomPlan:
    id: uuid.UUID
    name: str
    description: str | None
    account_name: str
    welcome_message: str | None
    milestones: list[RoomMilestone]
    goals: list[RoomGoal]  # root goals not under a milestone
    loose_tasks: list[RoomTask]  # tasks under no (visible, live) milestone
    tasks: dict[uuid.UUID, RoomTask]

    @property
    def done(self) -> int:
        return sum(1 for t in self.tasks.values() if t.completed)

    def dated(self) -> list[tuple[str, str, date, bool]]:
        """The visible milestones and tasks with a target date: (uid, title, date, done)."""
        out = [
            (f"milestone-{m.id}", m.name, m.target_date, m.status == "completed")
            for m in self.milestones
            if m.target_date is not None
        ]
        out += [
            (f"task-{t.id}", t.title, t.target_date, t.completed)
            for t in self.tasks.values()
            if t.target_date is not None
        ]
        return out


def _visible_goals(goals: Iterable[Obj], hidden: Hidden) -> list[Obj]:
    """Goals not hidden, not of a hidden milestone, and with every ancestor visible."""
    by_id = {g["id"]: g for g in goals}
    verdict: dict[Any, bool] = {}

    def visible(goal: Obj) -> bool:
        known = verdict.get(goal["id"])
        if known is not None:
            return known
        verdict[goal["id"]] = False  # a cycle (never written) stays hidden
        ok = goal["id"] not in hidden.goals and goal["milestoneId"] not in hidden.milestones
        parent = goal["parentGoalId"]
        if ok and parent is not None:
            ok = parent in by_id and visible(by_id[parent])
        verdict[goal["id"]] = ok
        return ok

    return [g for g in by_id.values() if visible(g)]


def milestone_name(milestone: Obj) -> str:
    value = (milestone.get("milestone") or {}).get("name")
    return str(value) if value not in (None, "") else "Milestone"


async def room_plan(
    conn: AsyncConnection, scope: TenantScope, plan_id: uuid.UUID
) -> RoomPlan | None:
    """The plan as its room shows it, or None when there is no such plan."""
    row = await plans_repo.plan_row(conn, scope, plan_id)
    if row is None:
        return None
    plan = plan_base(row)
    settings = await repo.room_settings(conn, scope, plan_id)
    hidden = Hidden.of(settings)
    children: tuple[Sequence[Any], ...] = await plans_repo.child_rows(conn, scope, [plan_id])
    milestones, goals, tasks = children
    visible = {g["id"] for g in _visible_goals((goal_base(r) for r in goals), hidden)}
    # Goals read against the visible milestones and tasks only: a milestone-based goal's
    # progress counts the tasks the buyer sees.
    tree = PlanTree(
        [m for m in milestones if m[0] not in hidden.milestones],
        [g for g in goals if g[0] in visible],
        [t for t in tasks if t[0] not in hidden.tasks and t[2] not in hidden.milestones],
    )
    owner_ids = {i for m in tree.milestones for i in m["prospectOwnerIds"]}
    assignees = {t["assignedToId"] for t in tree.tasks} - {None}
    users, contacts = await repo.people(
        conn, scope, {uuid.UUID(str(i)) for i in owner_ids} | assignees
    )
    account_name = await repo.account_name_of_plan(conn, scope, plan_id)
    now = today()

    def task(t: Obj) -> RoomTask:
        assignee = t["assignedToId"]
        name = None
        if assignee is not None:
            name = contacts.get(assignee) or users.get(assignee) or "Someone"
        target = t["targetDate"]
        return RoomTask(
            id=t["id"],
            title=t["title"],
            description=t["description"],
            completed=t["completed"],
            completed_at=t["completedAt"],
            target_date=target,
            assignee_name=name,
            buyer_task=assignee is None or assignee in contacts,
            overdue=not t["completed"] and target is not None and target < now,
        )

    def goal(g: Obj) -> RoomGoal:
        return RoomGoal(
            title=g["title"],
            description=g["description"],
            progress=tree.progress(g),
            target_date=g["targetDate"],
            children=[goal(c) for c in tree.children.get(g["id"], ())],
        )

    by_id = {t["id"]: task(t) for t in tree.tasks}
    comments: Sequence[Any] = await repo.room_comments(conn, scope, plan_id)
    for c in comments:
        if c[1] in by_id:
            by_id[c[1]].comments.append(RoomComment(c[2], c[4], c[3] == "contact", c[5]))
    shown = []
    for m in tree.milestones:
        owners = [
            contacts[u] for i in m["prospectOwnerIds"] if (u := uuid.UUID(str(i))) in contacts
        ]
        shown.append(
            RoomMilestone(
                id=m["id"],
                name=milestone_name(m),
                status=m["status"],
                target_date=m["targetDate"],
                owners=[o for o in owners if o],
                tasks=[by_id[t["id"]] for t in tree.tasks_by_milestone.get(m["id"], ())],
                goals=[goal(g) for g in tree.roots if g["milestoneId"] == m["id"]],
            )
        )
    under = {t.id for m in shown for t in m.tasks}
    return RoomPlan(
        id=plan["id"],
        name=plan["name"],
        description=plan["description"],
        account_name=account_name,
        welcome_message=settings[3] if settings is not None else None,
        milestones=shown,
        goals=[goal(g) for g in tree.roots if g["milestoneId"] not in tree.milestone_by_id],
        loose_tasks=[t for i, t in by_id.items() if i not in under],
        tasks=by_id,
    )
