"""A room's activity and each buyer's engagement (contract §16 "Activity and engagement"):
every buyer action is a row written in the action's transaction; a view counts once per share
per 30 minutes; the score is 0 to 5 by the contract's formula, on a clock the test sets."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select

from salesplan.kit import clock
from salesplan.models.rooms import PlanActivity, PlanShare, PlanTaskComment
from salesplan.models.webhooks import WebhookEvent
from salesplan.rooms import activity_repository
from salesplan.rooms import repository as rooms_repo
from salesplan.rooms.activity import score
from tests.engage_delivery.conftest import smtp
from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_actor
from tests.plans.helpers import PLANS
from tests.rooms.helpers import DOMAIN, Buyer, make_deal, make_share, token_of
from tests.webhooks.conftest import make_endpoint

__all__ = ["smtp"]

ITEM_KEYS = {"id", "type", "shareId", "contactId", "taskId", "createdAt"}
T0 = datetime(2030, 3, 4, 9, 0, tzinfo=UTC)


class Clock:
    """The app's clock (`kit.clock.utcnow`), set by the test."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, now: datetime) -> None:
        self.now = now
        monkeypatch.setattr(clock, "utcnow", lambda: self.now)

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


async def _activity(client, deal, **params) -> dict:
    resp = await client.get(
        f"{PLANS}/{deal.plan_id}/activity", params=params, headers=deal.actor.in_org()
    )
    assert resp.status_code == 200, resp.text
    return dict(resp.json())


async def _count(db, model) -> int:
    return int((await db.execute(select(func.count()).select_from(model))).scalar_one())


async def test_every_buyer_action_is_an_activity_row(app, client, db, actor, smtp) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal, allowInvites=True)
    task_id = deal.ids["buyer_task"]
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.sign_in(app, smtp)  # the room opened: viewed
        await buyer.post(f"/tasks/{task_id}/completion", {"completed": "true"})
        await buyer.post(f"/tasks/{task_id}/completion", {"completed": "true"})  # no change
        await buyer.post(f"/tasks/{task_id}/completion", {"completed": "false"})
        await buyer.post(f"/tasks/{task_id}/comments", {"body": "Sent it over."})
        resp = await buyer.post("/invitations", {"email": f"grace@{DOMAIN}"})
        assert "We e-mailed" in resp.text
    page = await _activity(client, deal)
    items = page["data"]
    assert [i["type"] for i in items] == [
        "viewed", "task_completed", "task_reopened", "commented", "invited",
    ]  # fmt: skip
    assert all(set(i) == ITEM_KEYS for i in items)
    assert {i["shareId"] for i in items} == {share["id"]}
    assert {i["contactId"] for i in items} == {str(deal.ada.id)}
    assert [i["taskId"] for i in items] == [None, task_id, task_id, task_id, None]
    assert page["pagination"]["totalCount"] == 5
    # Cursor mode (contract §4): keyset pages, newest first on asking.
    first = await _activity(client, deal, limit=2, order="desc")
    assert [i["type"] for i in first["data"]] == ["invited", "commented"]
    assert first["pagination"]["hasNextPage"] is True
    second = await _activity(client, deal, limit=2, order="desc",
                             cursor=first["pagination"]["nextCursor"])  # fmt: skip
    assert [i["type"] for i in second["data"]] == ["task_reopened", "task_completed"]
    # The seller's own comment is no buyer activity.
    resp = await client.post(
        f"{PLANS}/{deal.plan_id}/tasks/{task_id}/comments",
        json={"body": "Thanks!"},
        headers=actor.in_org(),
    )
    assert resp.status_code == 201
    assert (await _activity(client, deal))["pagination"]["totalCount"] == 5


async def test_a_view_counts_once_per_share_per_30_minutes(
    app, client, db, actor, smtp, monkeypatch
) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal, role="viewer")
    now = Clock(monkeypatch, clock.utcnow())
    start = now.now
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.sign_in(app, smtp)  # the room at 0: counted
        for minutes in (10, 29, 31, 50, 61, 62):  # 31 and 61 count (30 after the last counted)
            now.now = start + timedelta(minutes=minutes)
            assert (await buyer.view()).status_code == 200
        # A GET of the page counts nothing, signed in or not (contract §16): only the page's
        # script does, by posting its view form, which link scanners never do.
        now.now = start + timedelta(minutes=100)
        assert 'id="room-view"' in (await buyer.get()).text
    items = (await _activity(client, deal))["data"]
    assert [i["type"] for i in items] == ["viewed"] * 3
    at = [datetime.fromisoformat(i["createdAt"]) for i in items]
    assert at == [start, start + timedelta(minutes=31), start + timedelta(minutes=61)]
    row = await db.get(PlanShare, uuid.UUID(share["id"]))
    await db.refresh(row)
    assert row is not None and row.last_viewed_at == start + timedelta(minutes=62)
    # A GET of the link without a room session counts nothing (link scanners).
    now.advance(hours=2)
    async with Buyer(app, token_of(share["url"])) as stranger:
        assert (await stranger.get()).status_code == 200
    assert (await _activity(client, deal))["pagination"]["totalCount"] == 3


def test_the_score_formula_on_fixed_timelines() -> None:
    day = timedelta(days=1)
    assert score([], T0) == 0
    assert score([("viewed", T0 - day)], T0) == 1
    # Two views on one day are one point; on two days, two.
    assert (
        score([("viewed", T0 - timedelta(hours=1)), ("viewed", T0 - timedelta(hours=2))], T0) == 1
    )
    assert score([("viewed", T0 - day), ("viewed", T0 - 3 * day)], T0) == 2
    assert score([("viewed", T0 - i * day) for i in range(10)], T0) == 2
    # A view 15 days ago is too old; a tick, a comment, an invite count for 30 days.
    assert score([("viewed", T0 - 15 * day)], T0) == 0
    everything = [
        ("viewed", T0 - day), ("viewed", T0 - 2 * day), ("task_completed", T0 - 29 * day),
        ("commented", T0 - 20 * day), ("invited", T0 - 10 * day),
    ]  # fmt: skip
    assert score(everything, T0) == 5
    assert score(everything + everything, T0) == 5
    stale = [("task_completed", T0 - 31 * day), ("commented", T0 - 40 * day)]
    assert score([*stale, ("invited", T0 - 31 * day)], T0) == 0
    # A reopened task earns nothing; nor does what is after `now`.
    assert score([("task_reopened", T0 - day), ("commented", T0 + day)], T0) == 0


async def test_engagement_per_contact_on_a_controlled_clock(
    app, client, db, actor, monkeypatch
) -> None:
    deal = await make_deal(client, db, actor)
    ada_share = await make_share(client, deal)
    grace_share = await make_share(client, deal, contactId=str(deal.grace.id), role="viewer")
    day = timedelta(days=1)
    timeline = [  # (share, type, when)
        (ada_share, "viewed", T0 - 40 * day),
        (ada_share, "viewed", T0 - 3 * day),
        (ada_share, "viewed", T0 - day),
        (ada_share, "task_completed", T0 - 2 * day),
        (ada_share, "task_reopened", T0 - 2 * day),
        (ada_share, "commented", T0 - 5 * day),
        (ada_share, "commented", T0 - 45 * day),
        (grace_share, "viewed", T0 - 20 * day),
    ]
    for share, kind, at in timeline:
        db.add(
            PlanActivity(
                organization_id=actor.org.id,
                plan_id=uuid.UUID(deal.plan_id),
                type=kind,
                share_id=uuid.UUID(share["id"]),
                contact_id=uuid.UUID(share["contactId"]),
                task_id=uuid.UUID(deal.ids["buyer_task"]) if "task" in kind else None,
                created_at=at,
            )
        )
    await db.commit()
    Clock(monkeypatch, T0)
    resp = await client.get(f"{PLANS}/{deal.plan_id}/engagement", headers=actor.in_org())
    assert resp.status_code == 200, resp.text
    assert resp.json() == {
        "data": [
            {
                "contactId": str(deal.ada.id),
                "name": "Ada Lovelace",
                "views": 3,
                "lastViewedAt": "2030-03-03T09:00:00Z",
                "tasksCompleted": 1,
                "comments": 2,
                "score": 4,  # two view days in 14, a tick, a comment; no invitation
            },
            {
                "contactId": str(deal.grace.id),
                "name": "Grace Hopper",
                "views": 1,
                "lastViewedAt": "2030-02-12T09:00:00Z",
                "tasksCompleted": 0,
                "comments": 0,
                "score": 0,  # her view is 20 days old
            },
        ]
    }
    # Ten days on, Ada's views of 1 and 3 days ago are 11 and 13 days old: still two points.
    Clock(monkeypatch, T0 + 10 * day)
    resp = await client.get(f"{PLANS}/{deal.plan_id}/engagement", headers=actor.in_org())
    assert resp.json()["data"][0]["score"] == 4
    Clock(monkeypatch, T0 + 12 * day)  # the older view is 15 days old now
    resp = await client.get(f"{PLANS}/{deal.plan_id}/engagement", headers=actor.in_org())
    assert resp.json()["data"][0]["score"] == 3


async def test_another_organizations_plan_is_a_404(client, db, actor) -> None:
    deal = await make_deal(client, db, actor)
    other = await make_actor(db)
    for path in ("activity", "engagement"):
        resp = await client.get(f"{PLANS}/{deal.plan_id}/{path}", headers=other.in_org())
        assert_envelope(resp, 404, "not_found")
        resp = await client.get(f"{PLANS}/{uuid.uuid4()}/{path}", headers=actor.in_org())
        assert_envelope(resp, 404, "not_found")


async def test_a_rolled_back_action_records_no_activity_and_sends_no_event(
    app, client, db, actor, smtp, monkeypatch
) -> None:
    deal = await make_deal(client, db, actor)
    await make_endpoint(client, actor, "https://hooks.example/in")
    share = await make_share(client, deal)
    task_id = deal.ids["buyer_task"]
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.sign_in(app, smtp)
        views = await _count(db, PlanActivity)
        events = await _count(db, WebhookEvent)
        comments = await _count(db, PlanTaskComment)

        # A comment whose request fails after it was written (the page's flash): all undone.
        async def broken(*args: object, **kwargs: object) -> None:
            raise RuntimeError("the database went away")

        monkeypatch.setattr(rooms_repo, "set_flash", broken)
        resp = await buyer.post(f"/tasks/{task_id}/comments", {"body": "Lost words."})
        assert resp.status_code == 500
        monkeypatch.undo()
        assert await _count(db, PlanTaskComment) == comments
        # A tick whose activity cannot be written: the tick is undone with it.
        monkeypatch.setattr(activity_repository, "insert_activity", broken)
        await buyer.get()
        resp = await buyer.post(f"/tasks/{task_id}/completion", {"completed": "true"})
        assert resp.status_code == 500
        monkeypatch.undo()
    assert await _count(db, PlanActivity) == views
    assert await _count(db, WebhookEvent) == events
    task = await client.get(f"{PLANS}/{deal.plan_id}/tasks/{task_id}", headers=actor.in_org())
    assert task.json()["completed"] is False
