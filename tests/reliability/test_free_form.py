"""Free-form objects are validated when written (issue 18, defect 1): one that could not be
read back (too deep, too big, not finite) is a 400 and never breaks the reads of its plan."""

from __future__ import annotations

from tests.fixtures.envelope import assert_envelope
from tests.plans.helpers import get, new_plan, patch, post

MAPS = "/api/v1/relationship-maps"


def _nested(depth: int) -> dict:
    value: dict = {"leaf": 1}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


async def test_a_milestone_nested_deeper_than_32_levels_is_a_400(client, db, actor) -> None:
    plan = await new_plan(client, db, actor)
    pid = plan["id"]
    resp = await post(client, actor, f"/{pid}/milestones", {"milestone": _nested(252)})
    assert_envelope(resp, 400, "validation_error")
    resp = await post(client, actor, f"/{pid}/milestones", {"milestone": _nested(32)})
    assert resp.status_code == 201
    mid = resp.json()["id"]
    resp = await patch(client, actor, f"/{pid}/milestones/{mid}", {"objective": _nested(40)})
    assert_envelope(resp, 400, "validation_error")
    assert (await get(client, actor, f"/{pid}")).status_code == 200
    assert (await get(client, actor, f"/{pid}/milestones")).status_code == 200
    assert (await get(client, actor, "", include="milestones")).status_code == 200


async def test_goal_allocations_are_bounded_in_depth_and_size(client, db, actor) -> None:
    plan = await new_plan(client, db, actor)
    body = {"title": "g", "allocations": _nested(33)}
    assert_envelope(
        await post(client, actor, f"/{plan['id']}/goals", body), 400, "validation_error"
    )
    body = {"title": "g", "allocations": {"k": "x" * (300 * 1024)}}
    assert_envelope(
        await post(client, actor, f"/{plan['id']}/goals", body), 400, "validation_error"
    )


async def test_map_nodes_edges_and_viewport_are_validated(client, db, actor) -> None:
    from tests.fixtures.crm import make_account

    account, _ = await make_account(db, actor.org.id)
    for graph in (
        {"nodes": [_nested(40)]},
        {"edges": [{"x": _nested(40)}]},
        {"viewport": _nested(40)},
    ):
        body = {"entityType": "Account", "entityId": str(account.id), "map": graph}
        resp = await client.post(MAPS, json=body, headers=actor.in_org())
        assert_envelope(resp, 400, "validation_error")
    content = '{"entityType": "Account", "entityId": "%s", "map": {"viewport": {"zoom": NaN}}}'
    resp = await client.post(
        MAPS,
        content=content % account.id,
        headers=actor.in_org() | {"Content-Type": "application/json"},
    )
    assert_envelope(resp, 400, "validation_error")
