"""getPlan's cached body (issue 15): each process keeps the rendered body of a plan by (plan id,
version), and every kind of write shows in the next read at once, on the process that wrote and
on another one. Two app instances on one database stand for two worker processes: each has its
own cache, as a process would."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.app import create_app
from salesplan.kit.uow import commit
from salesplan.models.plans import Plan, PlanGoal, PlanTask
from salesplan.plans import repository as repo
from salesplan.plans import versioning
from salesplan.plans import write_repository as writes
from salesplan.plans.versioning import PlanBodies, plan_bodies
from tests.plans.helpers import PLANS, new_plan
from tests.plans.schemas import validate_response

Write = Callable[[], Awaitable[Any]]


@dataclass(frozen=True)
class OrgScope:
    organization_id: uuid.UUID


@pytest.fixture
async def second(app: Any, settings: Any) -> AsyncIterator[Any]:
    """Another app on the same database: another worker, with its own cache."""
    other = create_app(settings)
    async with other.router.lifespan_context(other):
        yield other


@pytest.fixture
async def clients(app: Any, second: Any) -> AsyncIterator[list[httpx.AsyncClient]]:
    out = []
    for each in (app, second):
        transport = httpx.ASGITransport(app=each, raise_app_exceptions=False)
        out.append(
            httpx.AsyncClient(
                transport=transport,
                base_url="http://testserver",
                event_hooks={"response": [validate_response]},
            )
        )
    yield out
    for c in out:
        await c.aclose()


async def _rendered(app: Any, org_id: uuid.UUID, pid: str) -> bytes:
    """The plan's body as the database has it now, rendered without any cache."""
    async with app.state.sessionmaker() as session:
        resp = await versioning.get_plan(
            session, OrgScope(org_id), uuid.UUID(pid), None, PlanBodies()
        )
    return bytes(resp.body)


class Workers:
    """Two workers (app instances) serving one plan; `check` reads it from both."""

    def __init__(self, apps: list[Any], clients: list[httpx.AsyncClient], actor: Any, pid: str):
        self.apps, self.clients, self.actor, self.pid = apps, clients, actor, pid
        self.writes = 0

    async def read(self, i: int) -> httpx.Response:
        resp = await self.clients[i].get(f"{PLANS}/{self.pid}", headers=self.actor.in_org())
        assert resp.status_code == 200, resp.text
        return resp

    async def warm(self) -> bytes:
        """Both workers read the plan, so both hold its current body."""
        bodies = [(await self.read(i)).content for i in (0, 1)]
        assert bodies[0] == bodies[1]
        for app in self.apps:
            assert plan_bodies(app).get(uuid.UUID(self.pid), self.version) is not None
        return bodies[0]

    async def check(self, what: str, write: Callable[[httpx.AsyncClient], Awaitable[Any]]) -> dict:
        """Warm both caches, write through one worker (alternately), read from both: each
        answers the new body, equal to a fresh rendering, and different from the old one."""
        self.version = await self._current_version()
        before = await self.warm()
        writer = self.clients[self.writes % 2]
        self.writes += 1
        result = await write(writer)
        if isinstance(result, httpx.Response):
            assert result.status_code in (200, 201, 204), result.text
        truth = await _rendered(self.apps[0], self.actor.org.id, self.pid)
        assert truth != before, f"{what}: the write changed nothing to check"
        for i in (1, 0, 1, 0):  # the other worker first; then both again, now from cache
            got = await self.read(i)
            assert got.content == truth, f"{what}: worker {i} answered a stale body"
        return httpx.Response(200, content=truth).json()

    async def _current_version(self) -> int:
        async with self.apps[0].state.sessionmaker() as session:
            conn = await session.connection()
            found = await versioning.plan_version(
                conn, OrgScope(self.actor.org.id), uuid.UUID(self.pid)
            )
        assert found is not None
        return found


async def test_every_kind_of_write_shows_at_once_on_both_workers(
    app, second, clients, db, actor
) -> None:
    plan = await new_plan(
        clients[0],
        db,
        actor,
        milestones=[
            {
                "milestone": {"name": "m1"},
                "goals": [{"title": "linked", "goalType": "MILESTONE_BASED"}],
                "tasks": [{"title": "t1"}, {"title": "t2"}],
            },
            {"milestone": {"name": "m2"}},
        ],
        goals=[{"title": "root", "childGoals": [{"title": "child"}]}],
        tasks=[{"title": "loose"}],
    )
    pid = plan["id"]
    m1, m2 = (m["id"] for m in plan["milestones"])
    root = next(g for g in plan["goals"] if g["title"] == "root")
    child = root["childGoals"][0]["id"]
    t1 = plan["milestones"][0]["tasks"][0]["id"]
    w = Workers([app, second], clients, actor, pid)
    headers = actor.in_org()
    base = f"{PLANS}/{pid}"

    def call(method: str, path: str, body: Any = None) -> Callable[[httpx.AsyncClient], Any]:
        async def go(c: httpx.AsyncClient) -> httpx.Response:
            return await c.request(method, base + path, json=body, headers=headers)

        return go

    # The plan's own fields.
    body = await w.check("plan name", call("PATCH", "", {"name": "Renamed"}))
    assert body["name"] == "Renamed"
    body = await w.check("plan description", call("PATCH", "", {"description": "why"}))
    assert body["description"] == "why"
    body = await w.check(
        "plan attachment",
        call("PATCH", "", {"entityType": "USER", "entityId": str(actor.user.id)}),
    )
    assert body["entityType"] == "USER"
    # Milestones.
    made: dict[str, Any] = {}

    async def create_milestone(c: httpx.AsyncClient) -> httpx.Response:
        resp = await call("POST", "/milestones", {"milestone": {"name": "m3"}})(c)
        made.update(resp.json())
        return resp

    body = await w.check("milestone created", create_milestone)
    m3 = made["id"]
    body = await w.check(
        "milestone updated", call("PATCH", f"/milestones/{m2}", {"objective": {"text": "close"}})
    )
    assert next(m for m in body["milestones"] if m["id"] == m2)["objective"] == {"text": "close"}
    body = await w.check(
        "milestones reordered",
        call("POST", "/milestones/reorder", {"milestoneIds": [m3, m2, m1]}),
    )
    assert [m["id"] for m in body["milestones"]] == [m3, m2, m1]
    body = await w.check("milestone archived", call("DELETE", f"/milestones/{m3}"))
    assert m3 not in [m["id"] for m in body["milestones"]]
    body = await w.check("milestone restored", call("POST", f"/milestones/{m3}/restore", {}))
    assert m3 in [m["id"] for m in body["milestones"]]
    # Tasks, and the progress of the goal linked to their milestone.
    body = await w.check("task completed", call("PATCH", f"/tasks/{t1}", {"completed": True}))
    linked = next(m for m in body["milestones"] if m["id"] == m1)["goals"][0]
    assert linked["progress"] == 50.0
    body = await w.check("task renamed", call("PATCH", f"/tasks/{t1}", {"title": "first"}))
    body = await w.check("task created", call("POST", "/tasks", {"title": "new"}))
    assert "new" in [t["title"] for t in body["tasks"]]
    body = await w.check("task archived", call("DELETE", f"/tasks/{t1}"))
    assert t1 not in [t["id"] for t in body["tasks"]]
    # Goals: update, move, archive of a subtree, restore, create.
    body = await w.check("goal updated", call("PATCH", f"/goals/{child}", {"title": "renamed"}))
    body = await w.check("goal moved", call("PATCH", f"/goals/{child}", {"parentGoalId": None}))
    assert child in [g["id"] for g in body["goals"]]
    body = await w.check("goal archived", call("DELETE", f"/goals/{root['id']}"))
    assert root["id"] not in [g["id"] for g in body["goals"]]
    body = await w.check("goal restored", call("POST", f"/goals/{root['id']}/restore", {}))
    body = await w.check("goal created", call("POST", "/goals", {"title": "another"}))
    # The plan archived and restored.
    await w.check("plan restored after archive", _archive_then_restore(call))
    # The repository's bulk UPDATEs through a session (no request), committed by the unit of
    # work's commit: child tables, and the plans table.
    plan_id = uuid.UUID(pid)

    def bulk(
        write: Callable[[AsyncSession], Awaitable[None]],
    ) -> Callable[[httpx.AsyncClient], Awaitable[None]]:
        async def go(_c: httpx.AsyncClient) -> None:
            await write(db)
            await commit(db)

        return go

    body = await w.check(
        "bulk child update",
        bulk(
            lambda s: writes.update_children(
                s, PlanTask, [PlanTask.plan_id == plan_id], {"description": "bulk"}
            )
        ),
    )
    assert {t["description"] for t in body["tasks"]} == {"bulk"}
    body = await w.check(
        "bulk plan update",
        bulk(lambda s: writes.update_plans(s, [Plan.id == plan_id], {"name": "bulk"})),
    )
    assert body["name"] == "bulk"
    body = await w.check(
        "bulk goal archive",
        bulk(
            lambda s: writes.update_children(
                s,
                PlanGoal,
                [PlanGoal.plan_id == plan_id, PlanGoal.title == "another"],
                {"archived_at": PlanGoal.created_at},
            )
        ),
    )
    assert "another" not in [g["title"] for g in body["goals"]]


def _archive_then_restore(call: Any) -> Callable[[httpx.AsyncClient], Awaitable[Any]]:
    async def go(c: httpx.AsyncClient) -> httpx.Response:
        resp = await call("DELETE", "")(c)
        assert resp.status_code == 204, resp.text
        return await call("POST", "/restore", {})(c)

    return go


async def test_another_organization_never_reads_a_cached_body(app, client, db, actor) -> None:
    from tests.fixtures.factories import make_actor

    plan = await new_plan(client, db, actor)
    resp = await client.get(f"{PLANS}/{plan['id']}", headers=actor.in_org())
    assert resp.status_code == 200
    assert len(plan_bodies(app)) >= 1
    other = await make_actor(db)
    resp = await client.get(f"{PLANS}/{plan['id']}", headers=other.in_org())
    assert resp.status_code == 404


async def test_a_write_between_the_reads_of_a_miss_is_not_cached_under_the_old_version(
    app, client, db, actor, monkeypatch
) -> None:
    """A write committed after the plan's row was read but before its children were: the
    children may show it (PostgreSQL reads each statement's own snapshot), so the body must not
    be kept under the version read first. SQLite reads one snapshot: there the body is the old
    version's, and may be kept."""
    plan = await new_plan(client, db, actor, tasks=[{"title": "before"}])
    pid = plan["id"]
    old_version = await _version(app, actor, pid)
    before = await _rendered(app, actor.org.id, pid)
    plan_bodies(app).clear()
    real = repo.plan_tree

    async def with_a_write_first(conn: Any, ctx: Any, plan_id: uuid.UUID) -> Any:
        async with app.state.sessionmaker() as other:
            await writes.update_children(
                other, PlanTask, [PlanTask.plan_id == plan_id], {"title": "after"}
            )
            await commit(other)
        return await real(conn, ctx, plan_id)

    monkeypatch.setattr(repo, "plan_tree", with_a_write_first)
    resp = await client.get(f"{PLANS}/{pid}", headers=actor.in_org())
    monkeypatch.setattr(repo, "plan_tree", real)
    assert resp.status_code == 200
    assert resp.headers["etag"] == versioning.etag(old_version)
    kept = plan_bodies(app).get(uuid.UUID(pid), old_version)
    assert kept is None or kept == before
    resp = await client.get(f"{PLANS}/{pid}", headers=actor.in_org())
    assert resp.json()["tasks"][0]["title"] == "after"
    assert resp.headers["etag"] != versioning.etag(old_version)


async def _version(app: Any, actor: Any, pid: str) -> int:
    async with app.state.sessionmaker() as session:
        found = await versioning.plan_version(
            await session.connection(), OrgScope(actor.org.id), uuid.UUID(pid)
        )
    assert found is not None
    return found


def test_bodies_keep_one_version_a_plan_and_evict_the_least_recently_used() -> None:
    bodies = PlanBodies(max_bytes=100)
    a, b, c, d, e, f = (uuid.uuid4() for _ in range(6))
    bodies.put(a, 1, b"a" * 20)
    bodies.put(a, 2, b"A" * 20)  # a newer version replaces the older
    assert bodies.get(a, 1) is None and bodies.get(a, 2) == b"A" * 20
    bodies.put(a, 1, b"a" * 20)  # a slow reader of the older one does not bring it back
    assert bodies.get(a, 2) == b"A" * 20 and bodies.get(a, 1) is None
    for pid in (b, c, d, e):
        bodies.put(pid, 1, b"x" * 20)
    assert len(bodies) == 5 and bodies.size == 100
    bodies.get(a, 2)  # a is now the most recently used: b goes first
    bodies.put(f, 1, b"f" * 20)
    assert bodies.get(b, 1) is None and bodies.get(a, 2) is not None
    assert len(bodies) == 5 and bodies.size == 100
    bodies.put(c, 2, b"C" * 26)  # over a quarter of the budget: not kept, nor the old one
    assert bodies.get(c, 2) is None and bodies.get(c, 1) is None
    assert len(bodies) == 4 and bodies.size == 80
    bodies.clear()
    assert len(bodies) == 0 and bodies.size == 0
