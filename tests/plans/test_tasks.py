"""Task rules (spec "States and transitions", contract §7), and GET /tasks."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime

from salesplan.auth.principal import Principal, RequestContext
from salesplan.auth.scopes import APPROVED_SCOPES
from salesplan.plans.schemas import TaskCreate
from salesplan.plans.service import create_task
from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_actor, make_org, make_user
from tests.plans import schemas
from tests.plans.helpers import delete, get, new_plan, patch, post


async def _task(client, actor, pid: str, **body) -> dict:
    resp = await post(client, actor, f"/{pid}/tasks", {"title": "t", **body})
    assert resp.status_code == 201, resp.text
    return resp.json()


async def test_a_task_renders_exactly_the_spec_properties(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    task = await _task(client, actor, pid)
    assert set(task) == set(schemas.PLAN_TASK["properties"])
    assert task["completed"] is False and task["completedAt"] is None


async def test_completing_a_task_sets_completed_at(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    task = await _task(client, actor, pid)
    resp = await patch(client, actor, f"/{pid}/tasks/{task['id']}", {"completed": True})
    body = resp.json()
    assert body["completed"] is True
    assert datetime.fromisoformat(body["completedAt"].replace("Z", "+00:00"))


async def test_reopening_a_task_clears_completed_at(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    task = await _task(client, actor, pid, completed=True)
    assert task["completedAt"] is not None
    resp = await patch(client, actor, f"/{pid}/tasks/{task['id']}", {"completed": False})
    assert resp.json()["completed"] is False and resp.json()["completedAt"] is None


async def test_completed_at_is_server_set_only(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    resp = await post(
        client, actor, f"/{pid}/tasks", {"title": "t", "completedAt": "2026-01-01T00:00:00Z"}
    )
    assert_envelope(resp, 400, "validation_error")
    task = await _task(client, actor, pid)
    resp = await patch(
        client, actor, f"/{pid}/tasks/{task['id']}", {"completedAt": "2026-01-01T00:00:00Z"}
    )
    assert_envelope(resp, 400, "validation_error")


async def test_task_milestone_must_be_of_the_same_plan(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    other = await new_plan(client, db, actor, milestones=[{"milestone": {}}])
    resp = await post(
        client, actor, f"/{pid}/tasks", {"title": "t", "milestoneId": other["milestones"][0]["id"]}
    )
    body = assert_envelope(resp, 422, "unprocessable")
    assert body["details"]["field"] == "milestoneId"


async def test_task_assignee_must_be_a_member_of_the_organization(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    stranger = await make_user(db, await make_org(db))
    resp = await post(
        client, actor, f"/{pid}/tasks", {"title": "t", "assignedToId": str(stranger.id)}
    )
    body = assert_envelope(resp, 422, "unprocessable")
    assert body["details"]["field"] == "assignedToId"
    mate = await make_user(db, actor.org)
    task = await _task(client, actor, pid, assignedToId=str(mate.id))
    assert task["assignedToId"] == str(mate.id)


async def test_created_by_is_the_callers_user(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    task = await _task(client, actor, pid)
    assert task["createdById"] == str(actor.user.id)


async def test_created_by_is_null_for_app_tokens(client, db, actor) -> None:
    pid = uuid.UUID((await new_plan(client, db, actor))["id"])
    app_ctx = RequestContext(
        Principal(
            token_id=uuid.uuid4(),
            token_kind="oauth",
            scopes=frozenset(APPROVED_SCOPES),
            organization_ids=frozenset({actor.org.id}),
            app_id=uuid.uuid4(),
        ),
        actor.org.id,
    )
    task_id = await create_task(db, app_ctx, pid, TaskCreate.model_validate({"title": "bot"}))
    await db.commit()
    task = (await get(client, actor, f"/{pid}/tasks/{task_id}")).json()
    assert task["createdById"] is None


async def test_archiving_a_task_removes_it_from_the_plan(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    task = await _task(client, actor, pid)
    assert (await delete(client, actor, f"/{pid}/tasks/{task['id']}")).status_code == 204
    assert (await delete(client, actor, f"/{pid}/tasks/{task['id']}")).status_code == 204
    assert (await get(client, actor, f"/{pid}")).json()["tasks"] == []
    assert (await get(client, actor, f"/{pid}/tasks")).json()["data"] == []
    assert (await get(client, actor, f"/{pid}/tasks/{task['id']}")).status_code == 200


async def test_list_plan_tasks_filters_by_completion(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    done = await _task(client, actor, pid, completed=True)
    await _task(client, actor, pid)
    data = (await get(client, actor, f"/{pid}/tasks", completed="true")).json()["data"]
    assert [t["id"] for t in data] == [done["id"]]


async def test_my_tasks_are_the_tasks_assigned_to_the_caller(client, db, actor) -> None:
    mate = await make_user(db, actor.org)
    p1 = (await new_plan(client, db, actor))["id"]
    p2 = (await new_plan(client, db, actor))["id"]
    mine_open = await _task(
        client, actor, p1, assignedToId=str(actor.user.id), targetDate="2026-03-01"
    )
    mine_done = await _task(client, actor, p2, assignedToId=str(actor.user.id), completed=True)
    await _task(client, actor, p1, assignedToId=str(mate.id))
    await _task(client, actor, p1)
    url = "/api/v1/tasks"
    h = actor.in_org()
    ids = lambda r: [t["id"] for t in r.json()["data"]]  # noqa: E731
    assert set(ids(await client.get(url, headers=h))) == {mine_open["id"], mine_done["id"]}
    assert ids(await client.get(url, headers=h, params={"completed": "false"})) == [mine_open["id"]]
    assert ids(await client.get(url, headers=h, params={"planId": p2})) == [mine_done["id"]]
    assert ids(await client.get(url, headers=h, params={"dueBefore": "2026-04-01"})) == [
        mine_open["id"]
    ]
    assert ids(await client.get(url, headers=h, params={"dueBefore": "2026-02-01"})) == []
    await delete(client, actor, f"/{p2}")
    assert ids(await client.get(url, headers=h)) == [mine_open["id"]]


async def test_an_updated_task_answers_what_a_read_answers(client, db, actor) -> None:
    """updatePlanTask renders the task it wrote without reading it back: the same object,
    byte for byte, as getPlanTask and the plan's own rendering."""
    plan = await new_plan(client, db, actor, milestones=[{"milestone": {"name": "m"}}])
    pid, mid = plan["id"], plan["milestones"][0]["id"]
    task = await _task(client, actor, pid, description="d")
    for body in (
        {"completed": True},
        {"title": "renamed", "targetDate": "2026-12-24", "milestoneId": mid},
        {"assignedToId": str(actor.user.id), "description": None},
        {"completed": False, "milestoneId": None, "assignedToId": None},
    ):
        resp = await patch(client, actor, f"/{pid}/tasks/{task['id']}", body)
        assert resp.status_code == 200, resp.text
        read = await get(client, actor, f"/{pid}/tasks/{task['id']}")
        assert resp.content == read.content
        whole = (await get(client, actor, f"/{pid}")).json()
        rendered = [t for t in whole["tasks"] if t["id"] == task["id"]]
        rendered += [t for m in whole["milestones"] for t in m["tasks"] if t["id"] == task["id"]]
        assert rendered and all(t == resp.json() for t in rendered)


# --- updatePlanTask's write path (Core on the driver, one transaction) -----------------------


async def _tag(client, actor, pid: str) -> str:
    resp = await get(client, actor, f"/{pid}")
    assert resp.status_code == 200, resp.text
    return resp.headers["ETag"]


async def test_completing_a_completed_task_keeps_its_completed_at(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    task = await _task(client, actor, pid, completed=True)
    again = await patch(client, actor, f"/{pid}/tasks/{task['id']}", {"completed": True})
    assert again.status_code == 200, again.text
    assert again.json()["completedAt"] == task["completedAt"]
    reopened = await patch(client, actor, f"/{pid}/tasks/{task['id']}", {"completed": False})
    assert reopened.json()["completedAt"] is None
    still = await patch(client, actor, f"/{pid}/tasks/{task['id']}", {"completed": False})
    assert still.json()["completedAt"] is None


async def test_a_task_write_moves_the_plans_updated_at_and_tag(client, db, actor) -> None:
    plan = await new_plan(client, db, actor)
    pid = plan["id"]
    task = await _task(client, actor, pid)
    before = (await get(client, actor, f"/{pid}")).json()["updatedAt"]
    tag = await _tag(client, actor, pid)
    resp = await patch(client, actor, f"/{pid}/tasks/{task['id']}", {"title": "renamed"})
    assert resp.status_code == 200, resp.text
    after = await get(client, actor, f"/{pid}")
    assert after.headers["ETag"] != tag
    assert after.json()["updatedAt"] > before
    assert after.json()["updatedAt"] == resp.json()["updatedAt"]


async def test_a_refused_task_write_changes_nothing(client, db, actor) -> None:
    """The plan's version is bumped before the task is checked: every refusal rolls it back
    with the rest (the tag and the body are what they were)."""
    plan = await new_plan(client, db, actor, milestones=[{"milestone": {"name": "m"}}])
    pid = plan["id"]
    other = (await new_plan(client, db, actor, milestones=[{"milestone": {"name": "o"}}]))[
        "milestones"
    ][0]["id"]
    task = await _task(client, actor, pid, description="kept")
    path = f"/{pid}/tasks/{task['id']}"
    tag, body = await _tag(client, actor, pid), (await get(client, actor, path)).content
    refusals = [
        ({"title": "x", "assignedToId": str(uuid.uuid4())}, 422),
        ({"title": "x", "milestoneId": other}, 422),
        ({"title": None, "description": "x"}, 400),
        ({"completed": None}, 400),
    ]
    for sent, status in refusals:
        resp = await patch(client, actor, path, sent)
        assert resp.status_code == status, (sent, resp.text)
        assert await _tag(client, actor, pid) == tag
        assert (await get(client, actor, path)).content == body


async def test_task_refusals_come_in_the_contracts_order(client, db, actor) -> None:
    """Plan 404, task 404, archived plan 422, null 400, references 422 (contract §2)."""
    pid = (await new_plan(client, db, actor))["id"]
    task = await _task(client, actor, pid)
    absent = uuid.uuid4()
    resp = await patch(client, actor, f"/{absent}/tasks/{task['id']}", {"title": None})
    assert_envelope(resp, 404, "not_found")
    assert resp.json()["error"]["message"] == "Plan not found."
    for sent in ({"title": None}, {"assignedToId": str(uuid.uuid4())}, {"completed": True}):
        resp = await patch(client, actor, f"/{pid}/tasks/{absent}", sent)
        assert_envelope(resp, 404, "not_found")
        assert resp.json()["error"]["message"] == "Task not found."
    resp = await patch(client, actor, f"/{pid}/tasks/{task['id']}", {"title": None})
    assert_envelope(resp, 400, "validation_error")
    assert (await delete(client, actor, f"/{pid}")).status_code == 204
    resp = await patch(client, actor, f"/{pid}/tasks/{absent}", {"title": "x"})
    assert_envelope(resp, 404, "not_found")
    for sent in ({"title": None}, {"title": "x"}, {"assignedToId": str(uuid.uuid4())}):
        resp = await patch(client, actor, f"/{pid}/tasks/{task['id']}", sent)
        assert_envelope(resp, 422, "unprocessable")
        assert resp.json()["error"]["details"]["reason"] == "plan_archived"


async def test_another_organizations_task_is_404(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    task = await _task(client, actor, pid)
    stranger = await make_actor(db)
    resp = await patch(client, stranger, f"/{pid}/tasks/{task['id']}", {"title": "mine"})
    assert_envelope(resp, 404, "not_found")
    assert (await get(client, actor, f"/{pid}/tasks/{task['id']}")).json()["title"] == "t"


async def test_parallel_task_toggles_all_land(client, db, actor) -> None:
    """Writes to one plan run one after the other under its row lock: every one answers 200,
    each bumps the version once, and the last state is the last write's."""
    pid = (await new_plan(client, db, actor))["id"]
    tasks = [await _task(client, actor, pid, title=f"t{i}") for i in range(4)]
    first = int((await _tag(client, actor, pid)).strip('"').split(".")[0])
    responses = await asyncio.gather(
        *(
            patch(client, actor, f"/{pid}/tasks/{tasks[i % 4]['id']}", {"completed": i % 2 == 0})
            for i in range(24)
        )
    )
    assert [r.status_code for r in responses] == [200] * 24
    assert int((await _tag(client, actor, pid)).strip('"').split(".")[0]) == first + 24
    for task in tasks:
        read = (await get(client, actor, f"/{pid}/tasks/{task['id']}")).json()
        assert (read["completedAt"] is None) is (not read["completed"])
