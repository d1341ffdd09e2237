"""`plan.updated` (contract §13) for a write to a plan's milestones, goals or tasks: once per
request, the plan as getPlan answers it after the write, beside the `plan_task.*` events."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.plans.helpers import delete, get, new_plan, patch, post
from tests.webhooks.conftest import deliver_due, make_endpoint, worker_ctx


async def test_child_writes_record_plan_updated_once_per_request(
    app, client, db, actor, receiver
) -> None:
    plan = await new_plan(client, db, actor)
    pid = plan["id"]
    await make_endpoint(client, actor, receiver.url, eventTypes=["plan.updated", "plan_task.*"])
    seen = 0

    async def step(resp: Any, status: int, task_event: str | None = None) -> None:
        nonlocal seen
        assert resp.status_code == status, resp.text
        await deliver_due(worker_ctx(app))
        got = [json.loads(r.body) for r in receiver.received[seen:]]
        seen = len(receiver.received)
        updated = [e for e in got if e["type"] == "plan.updated"]
        assert len(updated) == 1, [e["type"] for e in got]
        current = await get(client, actor, f"/{pid}")
        assert updated[0]["data"] == current.json()
        assert [e["type"] for e in got if e["type"] != "plan.updated"] == (
            [task_event] if task_event else []
        )

    milestone = await post(client, actor, f"/{pid}/milestones", {"milestone": {"name": "Kick"}})
    await step(milestone, 201)
    mid = milestone.json()["id"]
    await step(await patch(client, actor, f"/{pid}/milestones/{mid}", {"status": "completed"}), 200)
    goal = await post(client, actor, f"/{pid}/goals", {"title": "g"})
    await step(goal, 201)
    await step(await patch(client, actor, f"/{pid}/goals/{goal.json()['id']}", {"title": "h"}), 200)
    task = await post(client, actor, f"/{pid}/tasks", {"title": "t"})
    await step(task, 201, "plan_task.created")
    tid = task.json()["id"]
    done = await patch(client, actor, f"/{pid}/tasks/{tid}", {"completed": True})
    await step(done, 200, "plan_task.completed")
    await step(
        await patch(client, actor, f"/{pid}/tasks/{tid}", {"title": "u"}), 200, "plan_task.updated"
    )
    await step(await delete(client, actor, f"/{pid}/tasks/{tid}"), 204, "plan_task.deleted")
    await step(await delete(client, actor, f"/{pid}/milestones/{mid}"), 204)


async def test_update_plan_task_keeps_its_one_statement_without_a_subscriber(
    app, client, db, actor, receiver, is_postgres, monkeypatch
) -> None:
    if not is_postgres:
        pytest.skip("the one-statement path is PostgreSQL's")
    from salesplan.plans import service

    plan = await new_plan(client, db, actor)
    pid = plan["id"]
    task = await post(client, actor, f"/{pid}/tasks", {"title": "t"})
    tid = task.json()["id"]
    checked = service.update_task

    async def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the transaction path ran")

    monkeypatch.setattr(service, "update_task", refuse)
    resp = await patch(client, actor, f"/{pid}/tasks/{tid}", {"title": "u"})
    assert resp.status_code == 200, resp.text  # update_task_at_once answered alone
    monkeypatch.setattr(service, "update_task", checked)
    # A subscriber of plan.updated alone takes the transaction path, which records it.
    await make_endpoint(client, actor, receiver.url, eventTypes=["plan.updated"])
    resp = await patch(client, actor, f"/{pid}/tasks/{tid}", {"title": "v"})
    assert resp.status_code == 200, resp.text
    await deliver_due(worker_ctx(app))
    [event] = [json.loads(r.body) for r in receiver.received]
    assert event["type"] == "plan.updated"
    assert event["data"]["tasks"][0]["title"] == "v"
