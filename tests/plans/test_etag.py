"""getPlan revalidation (issue 15): an ETag derived from the plan's version, which every write to
the plan or its children bumps in the same transaction; If-None-Match with the current tag is a
304 without a body after one statement; another organization's plan stays a 404."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest

from salesplan.plans.versioning import plan_bodies
from tests.fixtures.factories import make_actor
from tests.plans.helpers import PLANS, delete, new_plan, patch, post
from tests.plans.schemas import validate_response
from tests.plans.test_queries import _big, counting, of_the_route


async def _validate_unless_304(response: httpx.Response) -> None:
    if response.status_code != 304:
        await validate_response(response)


@pytest.fixture
async def client(app: Any) -> AsyncIterator[httpx.AsyncClient]:
    """The plans client (every body checked against the spec), a 304's empty body aside."""
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(
        transport=transport,
        base_url="http://testserver",
        event_hooks={"response": [_validate_unless_304]},
    ) as c:
        yield c


async def _fetch(client, actor, pid: str, tag: str | None = None) -> httpx.Response:
    headers = actor.in_org()
    if tag is not None:
        headers["If-None-Match"] = tag
    return await client.get(f"{PLANS}/{pid}", headers=headers)


async def _tagged(client, actor, pid: str) -> tuple[str, dict]:
    resp = await _fetch(client, actor, pid)
    assert resp.status_code == 200, resp.text
    tag = resp.headers["etag"]
    assert tag.startswith('"') and tag.endswith('"')
    return tag, resp.json()


async def _changes(client, actor, pid: str, write: Callable[[], Awaitable[httpx.Response]]) -> dict:
    """The write changes the tag; the old tag then gets a 200 with the new body, the new one a
    304 without a body."""
    before, _ = await _tagged(client, actor, pid)
    resp = await write()
    assert resp.status_code in (200, 201, 204), resp.text
    after, body = await _tagged(client, actor, pid)
    assert after != before
    stale = await _fetch(client, actor, pid, before)
    assert stale.status_code == 200 and stale.json() == body
    assert stale.headers["etag"] == after
    fresh = await _fetch(client, actor, pid, after)
    assert fresh.status_code == 304 and fresh.content == b""
    assert fresh.headers["etag"] == after
    return body


async def test_current_tag_is_304_without_body(client, db, actor) -> None:
    plan = await new_plan(client, db, actor, tasks=[{"title": "t"}])
    tag, body = await _tagged(client, actor, plan["id"])
    assert body == plan
    again, _ = await _tagged(client, actor, plan["id"])
    assert again == tag  # a read does not change it
    resp = await _fetch(client, actor, plan["id"], tag)
    assert resp.status_code == 304 and resp.content == b"" and resp.headers["etag"] == tag
    # A list of tags, weak comparison, and `*`.
    for header in (f'"nope", {tag}', f"W/{tag}", "*"):
        resp = await _fetch(client, actor, plan["id"], header)
        assert resp.status_code == 304, header
    resp = await _fetch(client, actor, plan["id"], '"0.0"')
    assert resp.status_code == 200 and resp.json() == body and resp.headers["etag"] == tag


async def test_plan_update_archive_and_restore_change_the_tag(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    body = await _changes(
        client, actor, pid, lambda: patch(client, actor, f"/{pid}", {"name": "Renamed"})
    )
    assert body["name"] == "Renamed"
    before, _ = await _tagged(client, actor, pid)
    assert (await delete(client, actor, f"/{pid}")).status_code == 204
    archived = await _fetch(client, actor, pid, before)
    assert archived.status_code in (200, 404)  # whatever getPlan answers for archived plans
    if archived.status_code == 200:
        assert archived.headers["etag"] != before
    assert (await post(client, actor, f"/{pid}/restore", {})).status_code == 200
    after, _ = await _tagged(client, actor, pid)
    assert after != before


async def test_milestone_writes_change_the_tag(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    created: dict[str, Any] = {}

    async def create() -> httpx.Response:
        resp = await post(client, actor, f"/{pid}/milestones", {"milestone": {"name": "one"}})
        created.update(resp.json())
        return resp

    body = await _changes(client, actor, pid, create)
    mid = created["id"]
    assert [m["id"] for m in body["milestones"]] == [mid]
    body = await _changes(
        client,
        actor,
        pid,
        lambda: patch(client, actor, f"/{pid}/milestones/{mid}", {"status": "in_progress"}),
    )
    assert body["milestones"][0]["status"] == "in_progress"
    second = (
        await post(client, actor, f"/{pid}/milestones", {"milestone": {"name": "two"}})
    ).json()
    body = await _changes(
        client,
        actor,
        pid,
        lambda: post(
            client, actor, f"/{pid}/milestones/reorder", {"milestoneIds": [second["id"], mid]}
        ),
    )
    assert [m["id"] for m in body["milestones"]] == [second["id"], mid]
    body = await _changes(
        client, actor, pid, lambda: delete(client, actor, f"/{pid}/milestones/{mid}")
    )
    assert [m["id"] for m in body["milestones"]] == [second["id"]]
    body = await _changes(
        client, actor, pid, lambda: post(client, actor, f"/{pid}/milestones/{mid}/restore", {})
    )
    assert mid in [m["id"] for m in body["milestones"]]


def _goal_ids(body: dict) -> set[str]:
    out: set[str] = set()

    def walk(goals: list[dict] | None) -> None:
        for g in goals or []:
            out.add(g["id"])
            walk(g.get("childGoals"))

    walk(body["goals"])
    for m in body["milestones"]:
        walk(m.get("goals"))
    return out


async def test_goal_writes_and_moves_change_the_tag(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor, milestones=[{"milestone": {"name": "m"}}]))["id"]
    root = (await post(client, actor, f"/{pid}/goals", {"title": "root"})).json()
    other = (await post(client, actor, f"/{pid}/goals", {"title": "other"})).json()
    made: dict[str, Any] = {}

    async def create() -> httpx.Response:
        resp = await post(
            client, actor, f"/{pid}/goals", {"title": "child", "parentGoalId": root["id"]}
        )
        made.update(resp.json())
        return resp

    body = await _changes(client, actor, pid, create)
    child = made["id"]
    assert child in _goal_ids(body)
    body = await _changes(
        client,
        actor,
        pid,
        lambda: patch(client, actor, f"/{pid}/goals/{child}", {"title": "renamed"}),
    )
    assert "renamed" in str(body["goals"])
    # A move: to another parent.
    body = await _changes(
        client,
        actor,
        pid,
        lambda: patch(client, actor, f"/{pid}/goals/{child}", {"parentGoalId": other["id"]}),
    )
    moved = next(g for g in body["goals"] if g["id"] == other["id"])
    assert [c["id"] for c in moved["childGoals"]] == [child]
    # Archiving a parent archives its subtree (one bulk UPDATE); restoring brings it back.
    body = await _changes(
        client, actor, pid, lambda: delete(client, actor, f"/{pid}/goals/{other['id']}")
    )
    assert not {other["id"], child} & _goal_ids(body)
    body = await _changes(
        client, actor, pid, lambda: post(client, actor, f"/{pid}/goals/{other['id']}/restore", {})
    )
    assert {other["id"], child} <= _goal_ids(body)


async def test_task_writes_change_the_tag(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    made: dict[str, Any] = {}

    async def create() -> httpx.Response:
        resp = await post(client, actor, f"/{pid}/tasks", {"title": "call"})
        made.update(resp.json())
        return resp

    body = await _changes(client, actor, pid, create)
    tid = made["id"]
    assert [t["id"] for t in body["tasks"]] == [tid]
    body = await _changes(
        client,
        actor,
        pid,
        lambda: patch(client, actor, f"/{pid}/tasks/{tid}", {"completed": True}),
    )
    assert body["tasks"][0]["completed"] is True
    body = await _changes(client, actor, pid, lambda: delete(client, actor, f"/{pid}/tasks/{tid}"))
    assert body["tasks"] == []


async def test_bulk_update_of_children_through_the_session_bumps(client, db, actor) -> None:
    """The repository's bulk UPDATE of a child table announces the plans owning the rows it
    matches, whatever its condition (no plan id)."""
    import uuid

    from salesplan.kit.uow import commit
    from salesplan.models.plans import PlanTask
    from salesplan.plans import write_repository as writes

    plan = await new_plan(client, db, actor, tasks=[{"title": "t"}])
    pid = plan["id"]
    before, _ = await _tagged(client, actor, pid)
    await writes.update_children(
        db, PlanTask, [PlanTask.id == uuid.UUID(plan["tasks"][0]["id"])], {"title": "bulk"}
    )
    await commit(db)
    after, body = await _tagged(client, actor, pid)
    assert after != before and body["tasks"][0]["title"] == "bulk"


async def test_another_organizations_plan_is_404_even_with_its_tag(client, db, actor) -> None:
    plan = await new_plan(client, db, actor)
    tag, _ = await _tagged(client, actor, plan["id"])
    other = await make_actor(db)
    for header in (tag, "*", None):
        resp = await _fetch(client, other, plan["id"], header)
        assert resp.status_code == 404, header
        assert "etag" not in resp.headers
        assert resp.json()["error"]["code"] == "not_found"


async def test_a_304_and_a_cached_200_are_one_statement_a_cold_200_a_fixed_count(
    client, db, actor, app
) -> None:
    big = await new_plan(client, db, actor, **_big(20, 20, 300))
    small = await new_plan(client, db, actor, tasks=[{"title": "only"}])

    async def count(pid: str, tag: str | None, *, cold: bool = False) -> tuple[int, int]:
        await _fetch(client, actor, pid, tag)  # warm: the key's last-used stamp
        if cold:
            plan_bodies(app).clear()
        with counting(app.state.engine) as statements:
            resp = await _fetch(client, actor, pid, tag)
        return resp.status_code, len(of_the_route(statements))

    big_tag, _ = await _tagged(client, actor, big["id"])
    small_tag, _ = await _tagged(client, actor, small["id"])
    assert await count(big["id"], big_tag) == (304, 1)
    assert await count(small["id"], small_tag) == (304, 1)
    # The body of the current version is this process's: the one lookup, whatever the size,
    # with no tag or a stale one.
    for pid in (big["id"], small["id"]):
        assert await count(pid, None) == (200, 1)
        assert await count(pid, '"0.0"') == (200, 1)
    # Not cached: the plan's row, its children (three statements), its version again.
    assert await count(big["id"], None, cold=True) == (200, 5)
    assert await count(small["id"], None, cold=True) == (200, 5)
    assert await count(big["id"], '"0.0"', cold=True) == (200, 5)


async def test_bulk_update_of_plans_through_the_session_bumps(client, db, actor) -> None:
    import uuid

    from salesplan.kit.uow import commit
    from salesplan.models.plans import Plan
    from salesplan.plans import write_repository as writes

    pid = (await new_plan(client, db, actor))["id"]
    before, _ = await _tagged(client, actor, pid)
    await writes.update_plans(db, [Plan.id == uuid.UUID(pid)], {"description": "bulk"})
    await commit(db)
    after, body = await _tagged(client, actor, pid)
    assert after != before and body["description"] == "bulk"


async def test_a_task_update_with_references_changes_the_tag(client, db, actor) -> None:
    """updatePlanTask naming a milestone and an assignee: the checks and the write in one
    driver transaction (not the one statement), which bumps the plan in its statements."""
    plan = await new_plan(
        client, db, actor, milestones=[{"milestone": {"name": "m"}}], tasks=[{"title": "t"}]
    )
    pid, tid = plan["id"], plan["tasks"][0]["id"]
    mid = plan["milestones"][0]["id"]
    sent = {"milestoneId": mid, "assignedToId": str(actor.user.id)}
    body = await _changes(
        client, actor, pid, lambda: patch(client, actor, f"/{pid}/tasks/{tid}", sent)
    )
    task = body["milestones"][0]["tasks"][0]
    assert task["id"] == tid and task["assignedToId"] == str(actor.user.id)


async def test_a_refused_write_leaves_the_tag(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor, tasks=[{"title": "t"}]))["id"]
    before, _ = await _tagged(client, actor, pid)
    resp = await post(client, actor, f"/{pid}/goals", {"title": "g", "parentGoalId": pid})
    assert resp.status_code == 422, resp.text
    after, _ = await _tagged(client, actor, pid)
    assert after == before


async def test_announced_plans_are_bumped_once_per_commit(client, db, actor) -> None:
    """`PlanChanged` events: the commit's handler bumps each announced plan once, in the
    transaction, however many writes announced it; a rollback drops them."""
    import uuid

    from sqlalchemy import select

    from salesplan.kit.uow import commit, rollback
    from salesplan.models.plans import Plan
    from salesplan.plans.changes import changed

    a = uuid.UUID((await new_plan(client, db, actor))["id"])
    b = uuid.UUID((await new_plan(client, db, actor))["id"])
    c = uuid.UUID((await new_plan(client, db, actor))["id"])

    async def versions() -> dict[uuid.UUID, int]:
        rows = await db.execute(select(Plan.id, Plan.version).where(Plan.id.in_([a, b, c])))
        found = {row.id: row.version for row in rows}
        await db.commit()
        return found

    before = await versions()
    assert before == {a: 1, b: 1, c: 1}  # a new plan starts at 1
    for plan_id in (a, b, a, a):
        changed(db, plan_id)
    await commit(db)
    assert await versions() == {a: 2, b: 2, c: 1}
    changed(db, c)
    await rollback(db)
    await commit(db)
    assert await versions() == {a: 2, b: 2, c: 1}


def test_no_plan_hook_on_the_global_session() -> None:
    """The versions follow explicit events only (issue 30): the plans domain installs no
    SQLAlchemy event hook (no flush or execute hook on the global Session)."""
    import ast
    from pathlib import Path

    import salesplan.plans

    for path in Path(salesplan.plans.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sqlalchemy"):
                assert "event" not in {a.name for a in node.names}, path.name
            if isinstance(node, ast.Attribute):
                assert node.attr not in ("listens_for", "listen"), path.name
