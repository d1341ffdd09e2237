"""Goal rules (contract §7): nesting, same plan, no cycles, depth ≤ 5, derived progress,
archive cascades to descendants, restore."""

from __future__ import annotations

from tests.fixtures.envelope import assert_envelope
from tests.plans import schemas
from tests.plans.helpers import delete, get, new_plan, patch, post


async def _goal(client, actor, pid: str, **body) -> dict:
    resp = await post(client, actor, f"/{pid}/goals", {"title": "g", **body})
    assert resp.status_code == 201, resp.text
    return resp.json()


async def _chain(client, actor, pid: str, n: int) -> list[dict]:
    goals: list[dict] = []
    for i in range(n):
        parent = {"parentGoalId": goals[-1]["id"]} if goals else {}
        goals.append(await _goal(client, actor, pid, title=f"L{i + 1}", **parent))
    return goals


async def test_a_goal_renders_exactly_the_spec_properties(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    goal = await _goal(client, actor, pid, goalType="QUANTIFIABLE")
    assert set(goal) == set(schemas.PLAN_GOAL["properties"])
    assert goal["target"] is None and goal["allocations"] is None and goal["childGoals"] == []


async def test_parent_goal_id_nests_goals(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    root = await _goal(client, actor, pid, title="root")
    child = await _goal(client, actor, pid, title="child", parentGoalId=root["id"])
    plan = (await get(client, actor, f"/{pid}")).json()
    assert [g["id"] for g in plan["goals"]] == [root["id"]]
    assert [g["id"] for g in plan["goals"][0]["childGoals"]] == [child["id"]]
    one = (await get(client, actor, f"/{pid}/goals/{root['id']}")).json()
    assert one["childGoals"][0]["parentGoalId"] == root["id"]


async def test_milestone_goals_hold_root_goals_with_children(client, db, actor) -> None:
    plan = await new_plan(client, db, actor, milestones=[{"milestone": {"name": "m"}}])
    pid, mid = plan["id"], plan["milestones"][0]["id"]
    root = await _goal(client, actor, pid, milestoneId=mid)
    await _goal(client, actor, pid, parentGoalId=root["id"])
    milestone = (await get(client, actor, f"/{pid}")).json()["milestones"][0]
    assert [g["id"] for g in milestone["goals"]] == [root["id"]]
    assert len(milestone["goals"][0]["childGoals"]) == 1


async def test_parent_goal_must_be_of_the_same_plan(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    other = (await new_plan(client, db, actor))["id"]
    foreign = await _goal(client, actor, other)
    resp = await post(client, actor, f"/{pid}/goals", {"title": "x", "parentGoalId": foreign["id"]})
    assert_envelope(resp, 422, "unprocessable")


async def test_goal_milestone_must_be_of_the_same_plan(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    other = await new_plan(client, db, actor, milestones=[{"milestone": {}}])
    mid = other["milestones"][0]["id"]
    resp = await post(client, actor, f"/{pid}/goals", {"title": "x", "milestoneId": mid})
    body = assert_envelope(resp, 422, "unprocessable")
    assert body["details"]["field"] == "milestoneId"


async def test_goal_cycles_are_unprocessable(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    a, b, c = await _chain(client, actor, pid, 3)
    for target in (a, c):
        resp = await patch(client, actor, f"/{pid}/goals/{a['id']}", {"parentGoalId": target["id"]})
        assert_envelope(resp, 422, "unprocessable")
    assert b


async def test_goal_depth_is_at_most_five_levels(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    chain = await _chain(client, actor, pid, 5)
    resp = await post(
        client, actor, f"/{pid}/goals", {"title": "L6", "parentGoalId": chain[-1]["id"]}
    )
    assert_envelope(resp, 422, "unprocessable")
    # Moving a two-level subtree under level 4 would reach level 6.
    sub = await _chain(client, actor, pid, 2)
    resp = await patch(
        client, actor, f"/{pid}/goals/{sub[0]['id']}", {"parentGoalId": chain[3]["id"]}
    )
    assert_envelope(resp, 422, "unprocessable")
    resp = await patch(
        client, actor, f"/{pid}/goals/{sub[0]['id']}", {"parentGoalId": chain[2]["id"]}
    )
    assert resp.status_code == 200


async def test_quantifiable_progress_is_actual_over_target(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    goal = await _goal(
        client, actor, pid, goalType="QUANTIFIABLE", target=3, actualValue=1, progress=50
    )
    assert goal["progress"] == 33.33
    zero = await _goal(
        client, actor, pid, goalType="QUANTIFIABLE", target=0, actualValue=1, progress=12.5
    )
    assert zero["progress"] == 12.5
    unset = await _goal(client, actor, pid, goalType="QUANTIFIABLE", target=10)
    assert unset["progress"] is None


async def test_milestone_based_progress_is_the_share_of_completed_tasks(client, db, actor) -> None:
    plan = await new_plan(
        client,
        db,
        actor,
        milestones=[
            {
                "milestone": {"name": "m"},
                "tasks": [{"title": "a", "completed": True}, {"title": "b"}, {"title": "c"}],
            }
        ],
    )
    pid, mid = plan["id"], plan["milestones"][0]["id"]
    goal = await _goal(client, actor, pid, goalType="MILESTONE_BASED", milestoneId=mid)
    assert goal["progress"] == 33.33
    await patch(client, actor, f"/{pid}/milestones/{mid}", {"status": "completed"})
    goal = (await get(client, actor, f"/{pid}/goals/{goal['id']}")).json()
    assert goal["progress"] == 100
    loose = await _goal(client, actor, pid, goalType="MILESTONE_BASED", progress=40)
    assert loose["progress"] == 40


async def test_archiving_a_goal_archives_its_descendants(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    a, b, c = await _chain(client, actor, pid, 3)
    other = await _goal(client, actor, pid, title="other")
    assert (await delete(client, actor, f"/{pid}/goals/{b['id']}")).status_code == 204
    listed = (await get(client, actor, f"/{pid}/goals")).json()["data"]
    assert {g["id"] for g in listed} == {a["id"], other["id"]}
    plan = (await get(client, actor, f"/{pid}")).json()
    assert next(g for g in plan["goals"] if g["id"] == a["id"])["childGoals"] == []
    assert (await get(client, actor, f"/{pid}/goals/{c['id']}")).status_code == 200


async def test_restoring_a_goal_brings_back_what_was_archived_with_it(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    a, b, c = await _chain(client, actor, pid, 3)
    await delete(client, actor, f"/{pid}/goals/{b['id']}")
    resp = await post(client, actor, f"/{pid}/goals/{c['id']}/restore", None)
    assert_envelope(resp, 422, "unprocessable")
    resp = await post(client, actor, f"/{pid}/goals/{b['id']}/restore", None)
    assert resp.status_code == 200
    assert [g["id"] for g in resp.json()["childGoals"]] == [c["id"]]
    assert a


async def test_goal_update_body_is_strict_and_title_cannot_be_null(client, db, actor) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    goal = await _goal(client, actor, pid)
    path = f"/{pid}/goals/{goal['id']}"
    assert_envelope(await patch(client, actor, path, {"progressPct": 1}), 400, "validation_error")
    assert_envelope(await patch(client, actor, path, {"title": None}), 400, "validation_error")
    resp = await patch(client, actor, path, {"label": "ARR", "unitType": "DOLLAR"})
    assert resp.json()["label"] == "ARR" and resp.json()["unitType"] == "DOLLAR"
