"""The room's settings (`GET/PUT /plans/{planId}/room`) and the seller's side of task comments
(`GET/POST /plans/{planId}/tasks/{taskId}/comments`), contract §16."""

from __future__ import annotations

from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_actor
from tests.plans.helpers import PLANS, new_plan, post
from tests.rooms.helpers import SELLER_EMAIL, SELLER_NAME, make_deal, new_id

ROOM_KEYS = {"hiddenMilestoneIds", "hiddenGoalIds", "hiddenTaskIds", "welcomeMessage"}
COMMENT_KEYS = {"id", "taskId", "body", "author", "internal", "createdAt"}


async def test_a_plan_without_settings_hides_nothing(client, db, actor) -> None:
    plan = await new_plan(client, db, actor)
    resp = await client.get(f"{PLANS}/{plan['id']}/room", headers=actor.in_org())
    assert resp.status_code == 200
    assert resp.json() == {
        "hiddenMilestoneIds": [], "hiddenGoalIds": [], "hiddenTaskIds": [], "welcomeMessage": None
    }  # fmt: skip


async def test_put_replaces_the_settings(client, db, actor) -> None:
    deal = await make_deal(client, db, actor)
    url = f"{PLANS}/{deal.plan_id}/room"
    current = (await client.get(url, headers=actor.in_org())).json()
    assert set(current) == ROOM_KEYS
    assert current["hiddenMilestoneIds"] == [deal.ids["hidden_milestone"]]
    assert current["welcomeMessage"].startswith("Welcome, Ada")
    resp = await client.put(
        url, json={"hiddenTaskIds": [deal.ids["open_task"]] * 2}, headers=actor.in_org()
    )
    assert resp.status_code == 200
    assert resp.json() == {
        "hiddenMilestoneIds": [], "hiddenGoalIds": [], "hiddenTaskIds": [deal.ids["open_task"]],
        "welcomeMessage": None,
    }  # fmt: skip
    assert (await client.get(url, headers=actor.in_org())).json() == resp.json()


async def test_hidden_ids_must_be_the_plans(client, db, actor) -> None:
    deal = await make_deal(client, db, actor)
    other = await new_plan(client, db, actor, tasks=[{"title": "elsewhere"}])
    url = f"{PLANS}/{deal.plan_id}/room"
    for field, value in (
        ("hiddenTaskIds", other["tasks"][0]["id"]),
        ("hiddenMilestoneIds", deal.ids["open_task"]),  # a task is not a milestone
        ("hiddenGoalIds", new_id()),
    ):
        resp = await client.put(url, json={field: [value]}, headers=actor.in_org())
        assert_envelope(resp, 422, "unprocessable")
        assert resp.json()["error"]["details"]["field"] == field
    for body in ({"hiddenTaskIds": ["nope"]}, {"hidden": []}, {"welcomeMessage": "x" * 4001}):
        assert_envelope(
            await client.put(url, json=body, headers=actor.in_org()), 400, "validation_error"
        )
    stranger = await make_actor(db)
    assert_envelope(await client.get(url, headers=stranger.in_org()), 404, "not_found")
    assert_envelope(await client.put(url, json={}, headers=stranger.in_org()), 404, "not_found")


async def test_comments_carry_their_author_and_stay_in_order(client, db, actor) -> None:
    deal = await make_deal(client, db, actor)
    url = f"{PLANS}/{deal.plan_id}/tasks/{deal.ids['buyer_task']}/comments"
    resp = await client.get(url, headers=actor.in_org())
    assert resp.status_code == 200
    data = resp.json()["data"]
    assert [c["body"] for c in data] == [
        "Questionnaire attached to the kickoff notes.",
        "Internal: they are price sensitive",
    ]
    assert [c["internal"] for c in data] == [False, True]
    first = data[0]
    assert set(first) == COMMENT_KEYS and first["taskId"] == deal.ids["buyer_task"]
    assert first["author"] == {"type": "user", "id": str(actor.user.id), "name": SELLER_NAME}
    assert SELLER_EMAIL not in resp.text
    page = await client.get(url, params={"limit": 1}, headers=actor.in_org())
    assert page.json()["pagination"]["hasNextPage"] is True
    rest = await client.get(
        url, params={"cursor": page.json()["pagination"]["nextCursor"]}, headers=actor.in_org()
    )
    assert [c["id"] for c in rest.json()["data"]] == [data[1]["id"]]


async def test_a_comment_is_plain_text_of_at_most_4000_characters(client, db, actor) -> None:
    deal = await make_deal(client, db, actor)
    url = f"{PLANS}/{deal.plan_id}/tasks/{deal.ids['open_task']}/comments"
    body = "<b>bold</b> & " + "x" * (4000 - 14)
    resp = await client.post(url, json={"body": body}, headers=actor.in_org())
    assert resp.status_code == 201, resp.text
    assert resp.json()["body"] == body and resp.json()["internal"] is False
    for bad in ({"body": "x" * 4001}, {"body": "   "}, {"body": ""}, {}, {"body": "x", "pin": 1}):
        assert_envelope(
            await client.post(url, json=bad, headers=actor.in_org()), 400, "validation_error"
        )


async def test_comments_of_a_missing_or_foreign_task_are_404s(client, db, actor) -> None:
    deal = await make_deal(client, db, actor)
    other = await new_plan(client, db, actor, tasks=[{"title": "elsewhere"}])
    for task_id in (other["tasks"][0]["id"], new_id()):
        url = f"{PLANS}/{deal.plan_id}/tasks/{task_id}/comments"
        assert_envelope(await client.get(url, headers=actor.in_org()), 404, "not_found")
        resp = await client.post(url, json={"body": "hi"}, headers=actor.in_org())
        assert_envelope(resp, 404, "not_found")
    stranger = await make_actor(db)
    url = f"{PLANS}/{deal.plan_id}/tasks/{deal.ids['open_task']}/comments"
    assert_envelope(await client.get(url, headers=stranger.in_org()), 404, "not_found")


async def test_an_archived_plans_tasks_take_no_comment(client, db, actor) -> None:
    deal = await make_deal(client, db, actor)
    await client.delete(f"{PLANS}/{deal.plan_id}", headers=actor.in_org())
    url = f"{PLANS}/{deal.plan_id}/tasks/{deal.ids['open_task']}/comments"
    assert_envelope(
        await client.post(url, json={"body": "x"}, headers=actor.in_org()), 422, "unprocessable"
    )
    assert (await client.get(url, headers=actor.in_org())).status_code == 200


async def test_plan_objects_stay_exact(client, db, actor) -> None:
    """The spec's Plan objects are untouched by rooms: no share, room or comment property."""
    deal = await make_deal(client, db, actor)
    plan = (await client.get(f"{PLANS}/{deal.plan_id}", headers=actor.in_org())).json()
    task = (await post(client, actor, f"/{deal.plan_id}/tasks", {"title": "t"})).json()
    from tests.plans import schemas

    assert set(plan) <= set(schemas.PLAN["properties"])
    assert set(task) <= set(schemas.PLAN_TASK["properties"])
