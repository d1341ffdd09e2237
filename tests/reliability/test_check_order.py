"""Contract §2's order on an archived plan's child routes (issue 18, defect 13): a child that
does not exist is a 404 before the archived plan's 422."""

from __future__ import annotations

import uuid

import pytest

from tests.fixtures.envelope import assert_envelope
from tests.plans.helpers import PLANS, delete, new_plan, patch, post

CHILD_ROUTES = [
    ("patch", "/milestones/{id}", {"status": "in_progress"}),
    ("delete", "/milestones/{id}", None),
    ("post", "/milestones/{id}/restore", None),
    ("patch", "/goals/{id}", {"title": "x"}),
    ("delete", "/goals/{id}", None),
    ("post", "/goals/{id}/restore", None),
    ("patch", "/tasks/{id}", {"title": "x"}),
    ("delete", "/tasks/{id}", None),
]


async def _call(client, actor, method: str, path: str, body):
    if method == "patch":
        return await patch(client, actor, path, body)
    if method == "delete":
        return await delete(client, actor, path)
    return await post(client, actor, path, body)


@pytest.mark.parametrize(("method", "route", "body"), CHILD_ROUTES)
async def test_a_missing_child_of_an_archived_plan_is_a_404(
    client, db, actor, method, route, body
) -> None:
    plan = await new_plan(client, db, actor)
    assert (await client.delete(f"{PLANS}/{plan['id']}", headers=actor.in_org())).status_code == 204
    path = f"/{plan['id']}" + route.format(id=uuid.uuid4())
    assert_envelope(await _call(client, actor, method, path, body), 404, "not_found")


async def test_an_existing_child_of_an_archived_plan_is_still_a_422(client, db, actor) -> None:
    plan = await new_plan(client, db, actor, milestones=[{"milestone": {}}])
    mid = plan["milestones"][0]["id"]
    assert (await client.delete(f"{PLANS}/{plan['id']}", headers=actor.in_org())).status_code == 204
    resp = await patch(client, actor, f"/{plan['id']}/milestones/{mid}", {"status": "completed"})
    assert_envelope(resp, 422, "unprocessable")
    assert resp.json()["error"]["details"]["reason"] == "plan_archived"
