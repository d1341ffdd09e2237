"""What a buyer may do (contract §16): a viewer reads; a collaborator ticks buyer tasks (the
same change as updatePlanTask), comments on visible tasks, and invites colleagues on the
account's domain where the share allows it. And what the room shows."""

from __future__ import annotations

import json
import re
import uuid

from icalendar import Calendar
from sqlalchemy import func, select

from salesplan.models.plans import Plan
from salesplan.models.rooms import PlanShare
from salesplan.models.webhooks import WebhookEvent
from tests.engage_delivery.conftest import smtp
from tests.plans.helpers import PLANS
from tests.rooms.helpers import (
    DOMAIN,
    Buyer,
    deliver,
    link_in,
    make_deal,
    make_share,
    token_of,
)
from tests.webhooks.conftest import make_endpoint

__all__ = ["smtp"]


async def _task(client, actor, plan_id: str, task_id: str) -> dict:
    resp = await client.get(f"{PLANS}/{plan_id}/tasks/{task_id}", headers=actor.in_org())
    return dict(resp.json())


async def _version(db, plan_id: str) -> int:
    return int(
        (await db.execute(select(Plan.version).where(Plan.id == uuid.UUID(plan_id)))).scalar_one()
    )


async def test_a_tick_is_the_same_change_as_update_plan_task(app, client, db, actor, smtp) -> None:
    deal = await make_deal(client, db, actor)
    await make_endpoint(client, actor, "https://hooks.example/in")
    share = await make_share(client, deal)
    task_id = deal.ids["buyer_task"]
    before = await _task(client, actor, deal.plan_id, task_id)
    etag = (await client.get(f"{PLANS}/{deal.plan_id}", headers=actor.in_org())).headers["etag"]
    version = await _version(db, deal.plan_id)
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.sign_in(app, smtp)
        resp = await buyer.post(f"/tasks/{task_id}/completion", {"completed": "true"})
        assert resp.status_code == 200 and "is done" in resp.text
        after = await _task(client, actor, deal.plan_id, task_id)
        assert after["completed"] is True and after["completedAt"] is not None
        assert after["updatedAt"] > before["updatedAt"]
        assert after["createdById"] == before["createdById"] == str(actor.user.id)
        plan = await client.get(f"{PLANS}/{deal.plan_id}", headers=actor.in_org())
        assert plan.headers["etag"] != etag
        assert await _version(db, deal.plan_id) == version + 1
        types = (await db.execute(select(WebhookEvent.type, WebhookEvent.payload))).all()
        completed = [json.loads(p) for t, p in types if t == "plan_task.completed"]
        assert len(completed) == 1 and completed[0]["data"]["id"] == task_id
        assert completed[0]["data"]["completed"] is True
        assert [t for t, _ in types].count("plan.updated") >= 1
        resp = await buyer.post(f"/tasks/{task_id}/completion", {"completed": "false"})
        assert "open again" in resp.text
        reopened = await _task(client, actor, deal.plan_id, task_id)
        assert reopened["completed"] is False and reopened["completedAt"] is None
        # The unassigned task too.
        resp = await buyer.post(f"/tasks/{deal.ids['open_task']}/completion", {"completed": "true"})
        assert (await _task(client, actor, deal.plan_id, deal.ids["open_task"]))["completed"]


async def test_seller_and_hidden_tasks_cannot_be_ticked(app, client, db, actor, smtp) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.sign_in(app, smtp)
        page = buyer.page
        assert f"/tasks/{deal.ids['buyer_task']}/completion" in page
        assert f"/tasks/{deal.ids['seller_task']}/completion" not in page
        for name, status in (
            ("seller_task", 403), ("hidden_task", 404), ("hidden_milestone_task", 404),
        ):  # fmt: skip
            resp = await buyer.post(f"/tasks/{deal.ids[name]}/completion", {"completed": "true"})
            assert resp.status_code == status, name
            assert (await _task(client, actor, deal.plan_id, deal.ids[name]))["completed"] is False
        resp = await buyer.post(f"/tasks/{uuid.uuid4()}/completion", {"completed": "true"})
        assert resp.status_code == 404


async def test_a_viewer_reads_only(app, client, db, actor, smtp) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal, role="viewer", allowInvites=True)
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.sign_in(app, smtp)
        assert "/completion" not in buyer.page and "/comments" not in buyer.page
        assert "/invitations" not in buyer.page
        for path, data in (
            (f"/tasks/{deal.ids['buyer_task']}/completion", {"completed": "true"}),
            (f"/tasks/{deal.ids['buyer_task']}/comments", {"body": "hi"}),
            ("/invitations", {"email": f"x@{DOMAIN}"}),
        ):
            resp = await buyer.post(path, data)
            assert resp.status_code == 403, path
    assert (await _task(client, actor, deal.plan_id, deal.ids["buyer_task"]))["completed"] is False
    count = (await db.execute(select(func.count()).select_from(PlanShare))).scalar_one()
    assert count == 1


async def test_a_buyer_comment_is_plain_text_shown_escaped(app, client, db, actor, smtp) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    task_id = deal.ids["seller_task"]  # any visible task may be commented on
    body = '<script>alert("x")</script> & <b>not bold</b>'
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.sign_in(app, smtp)
        resp = await buyer.post(f"/tasks/{task_id}/comments", {"body": body})
        assert resp.status_code == 200 and "Your comment is posted" in resp.text
        assert "<script>alert" not in resp.text and "&lt;script&gt;" in resp.text
        assert "&lt;b&gt;not bold&lt;/b&gt;" in resp.text
        resp = await buyer.post(f"/tasks/{task_id}/comments", {"body": "x" * 4001})
        assert resp.status_code == 200 and "at most 4,000" in resp.text
        resp = await buyer.post(f"/tasks/{task_id}/comments", {"body": "   "})
        assert "Write something" in resp.text
        resp = await buyer.post(f"/tasks/{deal.ids['hidden_task']}/comments", {"body": "x"})
        assert resp.status_code == 404
    listed = await client.get(
        f"{PLANS}/{deal.plan_id}/tasks/{task_id}/comments", headers=actor.in_org()
    )
    data = listed.json()["data"]
    assert [c["body"] for c in data] == [body]
    assert data[0]["author"] == {"type": "contact", "id": str(deal.ada.id), "name": "Ada Lovelace"}
    assert data[0]["internal"] is False


async def test_inviting_a_colleague_on_the_domain(app, client, db, actor, smtp) -> None:
    deal = await make_deal(client, db, actor)
    closed = await make_share(client, deal, contactId=str(deal.grace.id))
    share = await make_share(client, deal, allowInvites=True)
    async with Buyer(app, token_of(closed["url"])) as buyer:
        await buyer.sign_in(app, smtp)
        assert "/invitations" not in buyer.page
        assert (await buyer.post("/invitations", {"email": f"x@{DOMAIN}"})).status_code == 403
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.sign_in(app, smtp)
        resp = await buyer.post("/invitations", {"email": "eve@evil.example"})
        assert "address at buyer.example" in resp.text
        resp = await buyer.post("/invitations", {"email": "not an address"})
        assert "e-mail address" in resp.text
        resp = await buyer.post("/invitations", {"email": f"Linus@{DOMAIN}"})
        assert resp.status_code == 200 and f"linus@{DOMAIN}" in resp.text
    shares = await client.get(f"{PLANS}/{deal.plan_id}/shares", headers=actor.in_org())
    invited = [s for s in shares.json()["data"] if s["invitedByShareId"]]
    assert len(invited) == 1
    assert invited[0]["invitedByShareId"] == share["id"]
    assert invited[0]["role"] == "viewer" and invited[0]["email"] == f"linus@{DOMAIN}"
    await deliver(app, smtp)
    mail = smtp.received[-1]
    assert mail["To"] == f"linus@{DOMAIN}" and "Ada Lovelace invited you" in mail["Subject"]
    async with Buyer(app, token_of(link_in(mail))) as colleague:
        await colleague.sign_in(app, smtp)
        assert "Buyer Inc rollout" in colleague.page and "/completion" not in colleague.page


async def test_the_room_shows_the_plan_as_the_buyer_may_see_it(
    app, client, db, actor, smtp
) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.sign_in(app, smtp)
        page = buyer.page
        assert "Buyer Inc rollout" in page and "What we do together" in page
        assert "Buyer Inc" in page and "Welcome, Ada!" in page
        assert "Technical validation" in page and "Ada Lovelace" in page  # prospect owner
        assert "Sam Seller" in page  # the seller's task, by name
        assert "Overdue" in page  # the buyer task due in 2020
        assert "Questionnaire attached to the kickoff notes." in page
        # completed / visible tasks of the milestone: 3 visible (the hidden one left out)
        assert "0 of 3 tasks done" in page
        assert "Go live by March" in page and "40%" in page
        order = [page.index(t) for t in ("Send the security questionnaire", "Run the pilot")]
        assert order == sorted(order)
        resp = await buyer.get("/plan.ics")
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("text/calendar")
        calendar = Calendar.from_ical(resp.content)
        summaries = sorted(str(e["summary"]) for e in calendar.walk("VEVENT"))
        assert summaries == [
            "Milestone: Technical validation",
            "Task: Run the pilot",
            "Task: Send the security questionnaire",
        ]
        last_viewed = (await db.execute(select(PlanShare.last_viewed_at))).scalar_one()
        assert last_viewed is not None
        assert re.search(r"Hidden|Redline|Margin|Competitive", page) is None


async def test_invitations_are_capped_at_ten_a_day_per_share(app, client, db, actor, smtp) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal, allowInvites=True)
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.sign_in(app, smtp)
        for i in range(10):
            resp = await buyer.post("/invitations", {"email": f"colleague{i}@{DOMAIN}"})
            assert "We e-mailed" in resp.text
        resp = await buyer.post("/invitations", {"email": f"one.more@{DOMAIN}"})
        assert "most invitations a day" in resp.text
    invited = (
        await db.execute(
            select(func.count())
            .select_from(PlanShare)
            .where(PlanShare.invited_by_share_id.is_not(None))
        )
    ).scalar_one()
    assert invited == 10
