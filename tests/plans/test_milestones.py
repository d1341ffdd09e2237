"""Milestone rules (contract §7): sortIndex, reorder, status and actualDate, archive/restore."""

from __future__ import annotations

import uuid

from salesplan.kit.clock import today
from tests.fixtures.envelope import assert_envelope
from tests.plans import schemas
from tests.plans.helpers import delete, get, new_plan, patch, post


async def _plan_with(client, db, actor, n: int) -> tuple[str, list[dict]]:
    plan = await new_plan(
        client, db, actor, milestones=[{"milestone": {"name": f"m{i}"}} for i in range(n)]
    )
    return plan["id"], plan["milestones"]


async def test_a_milestone_renders_exactly_the_spec_properties(client, db, actor) -> None:
    pid, _ = await _plan_with(client, db, actor, 0)
    resp = await post(client, actor, f"/{pid}/milestones", {"milestone": {"name": "Kickoff"}})
    assert resp.status_code == 201
    body = resp.json()
    assert set(body) == set(schemas.PLAN_MILESTONE["properties"])
    assert body["objective"] is None and body["targetDate"] is None
    assert body["status"] == "not_started"
    assert body["prospectOwnerIds"] == [] and body["tasks"] == [] and body["goals"] == []


async def test_milestone_is_required_on_create(client, db, actor) -> None:
    pid, _ = await _plan_with(client, db, actor, 0)
    resp = await post(client, actor, f"/{pid}/milestones", {"status": "in_progress"})
    assert_envelope(resp, 400, "validation_error")
    resp = await post(client, actor, f"/{pid}/milestones", {"milestone": {}, "colour": 1})
    assert_envelope(resp, 400, "validation_error")


async def test_sort_index_defaults_to_last_plus_one(client, db, actor) -> None:
    pid, _ = await _plan_with(client, db, actor, 2)
    resp = await post(client, actor, f"/{pid}/milestones", {"milestone": {"name": "third"}})
    assert resp.json()["sortIndex"] == 2
    resp = await post(client, actor, f"/{pid}/milestones", {"milestone": {}, "sortIndex": 9})
    assert resp.json()["sortIndex"] == 9
    resp = await post(client, actor, f"/{pid}/milestones", {"milestone": {}})
    assert resp.json()["sortIndex"] == 10


async def test_milestones_are_ordered_by_sort_index(client, db, actor) -> None:
    pid, ms = await _plan_with(client, db, actor, 3)
    await patch(client, actor, f"/{pid}/milestones/{ms[0]['id']}", {"sortIndex": 7})
    plan = (await get(client, actor, f"/{pid}")).json()
    assert [m["id"] for m in plan["milestones"]] == [ms[1]["id"], ms[2]["id"], ms[0]["id"]]
    listed = (await get(client, actor, f"/{pid}/milestones")).json()["data"]
    assert [m["id"] for m in listed] == [ms[1]["id"], ms[2]["id"], ms[0]["id"]]


async def test_reorder_renumbers_from_zero(client, db, actor) -> None:
    pid, ms = await _plan_with(client, db, actor, 3)
    order = [ms[2]["id"], ms[0]["id"], ms[1]["id"]]
    resp = await post(client, actor, f"/{pid}/milestones/reorder", {"milestoneIds": order})
    assert resp.status_code == 200
    data = resp.json()["data"]
    assert [m["id"] for m in data] == order
    assert [m["sortIndex"] for m in data] == [0, 1, 2]


async def test_reorder_must_name_exactly_the_live_milestones(client, db, actor) -> None:
    pid, ms = await _plan_with(client, db, actor, 3)
    ids = [m["id"] for m in ms]
    for bad in (ids[:2], [*ids, str(uuid.uuid4())], [ids[0], ids[0], ids[1], ids[2]]):
        resp = await post(client, actor, f"/{pid}/milestones/reorder", {"milestoneIds": bad})
        assert_envelope(resp, 422, "unprocessable")
    await delete(client, actor, f"/{pid}/milestones/{ids[2]}")
    resp = await post(client, actor, f"/{pid}/milestones/reorder", {"milestoneIds": ids[:2]})
    assert resp.status_code == 200


async def test_status_moves_freely_between_the_three_values(client, db, actor) -> None:
    pid, ms = await _plan_with(client, db, actor, 1)
    path = f"/{pid}/milestones/{ms[0]['id']}"
    for status in ("completed", "not_started", "in_progress", "not_started", "completed"):
        resp = await patch(client, actor, path, {"status": status})
        assert resp.status_code == 200 and resp.json()["status"] == status
    assert_envelope(await patch(client, actor, path, {"status": "done"}), 400, "validation_error")


async def test_entering_completed_sets_actual_date_to_today_when_null(client, db, actor) -> None:
    pid, ms = await _plan_with(client, db, actor, 2)
    resp = await patch(client, actor, f"/{pid}/milestones/{ms[0]['id']}", {"status": "completed"})
    assert resp.json()["actualDate"] == today().isoformat()
    resp = await patch(
        client,
        actor,
        f"/{pid}/milestones/{ms[1]['id']}",
        {"status": "completed", "actualDate": "2026-01-15"},
    )
    assert resp.json()["actualDate"] == "2026-01-15"


async def test_leaving_completed_clears_actual_date_unless_one_is_sent(client, db, actor) -> None:
    pid, ms = await _plan_with(client, db, actor, 1)
    path = f"/{pid}/milestones/{ms[0]['id']}"
    await patch(client, actor, path, {"status": "completed"})
    resp = await patch(client, actor, path, {"status": "in_progress"})
    assert resp.json()["actualDate"] is None
    await patch(client, actor, path, {"status": "completed"})
    resp = await patch(client, actor, path, {"status": "in_progress", "actualDate": "2026-02-01"})
    assert resp.json()["actualDate"] == "2026-02-01"


async def test_archiving_a_milestone_hides_it_and_restore_brings_it_back(client, db, actor) -> None:
    pid, ms = await _plan_with(client, db, actor, 2)
    path = f"/{pid}/milestones/{ms[0]['id']}"
    assert (await delete(client, actor, path)).status_code == 204
    assert (await delete(client, actor, path)).status_code == 204
    plan = (await get(client, actor, f"/{pid}")).json()
    assert [m["id"] for m in plan["milestones"]] == [ms[1]["id"]]
    assert len((await get(client, actor, f"/{pid}/milestones")).json()["data"]) == 1
    listed = (await get(client, actor, f"/{pid}/milestones", includeArchived="true")).json()
    assert len(listed["data"]) == 2
    assert (await get(client, actor, path)).status_code == 200
    resp = await post(client, actor, f"{path}/restore", None)
    assert resp.status_code == 200 and resp.json()["id"] == ms[0]["id"]
    assert len((await get(client, actor, f"/{pid}")).json()["milestones"]) == 2


async def test_milestone_of_another_plan_is_not_found(client, db, actor) -> None:
    pid, _ = await _plan_with(client, db, actor, 0)
    _, other = await _plan_with(client, db, actor, 1)
    resp = await get(client, actor, f"/{pid}/milestones/{other[0]['id']}")
    assert_envelope(resp, 404, "not_found")


async def test_milestone_tasks_are_those_linked_to_it(client, db, actor) -> None:
    pid, ms = await _plan_with(client, db, actor, 2)
    await post(client, actor, f"/{pid}/tasks", {"title": "a", "milestoneId": ms[0]["id"]})
    await post(client, actor, f"/{pid}/tasks", {"title": "b"})
    plan = (await get(client, actor, f"/{pid}")).json()
    assert [t["title"] for t in plan["milestones"][0]["tasks"]] == ["a"]
    assert plan["milestones"][1]["tasks"] == []
    assert {t["title"] for t in plan["tasks"]} == {"a", "b"}
    one = (await get(client, actor, f"/{pid}/milestones/{ms[0]['id']}")).json()
    assert [t["title"] for t in one["tasks"]] == ["a"]
