"""Dashboard reads (user-backed): communication analytics computed in SQL, and needs-attention."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from salesplan.kit.clock import utcnow
from salesplan.models.plans import Plan, PlanTask
from tests.feed.helpers import (
    T0,
    enable_slack,
    meeting,
    post_slack,
    reply_to,
    sent_email,
    slack_event,
)
from tests.fixtures.factories import make_user
from tests.oauth.conftest import make_oauth_app

API = "/api/v1/feed"
H = timedelta(hours=1)
D = timedelta(days=1)


async def arrange_analytics(client: Any, db: Any, app: Any, actor: Any) -> None:
    org = actor.org.id
    m1 = await sent_email(db, org, "a@x.test", T0, replied_at=T0 + H)
    m2 = await sent_email(db, org, "b@x.test", T0 + H, replied_at=T0 + 6 * H)
    await sent_email(db, org, "c@x.test", T0 + D)
    m4 = await sent_email(db, org, "d@x.test", T0 + 3 * D, replied_at=T0 + 3 * D + 2 * H)
    old = await sent_email(db, org, "e@x.test", T0 - 20 * D, replied_at=T0 - 20 * D + H)
    await reply_to(db, m1, org, "a@x.test", T0 + H)
    await reply_to(db, m2, org, "b@x.test", T0 + 6 * H)
    await reply_to(db, m4, org, "d@x.test", T0 + 3 * D + 2 * H)
    await reply_to(db, old, org, "e@x.test", T0 - 20 * D + H)
    await reply_to(db, None, org, "stranger@y.test", T0 + 2 * D)  # received, not a reply
    await meeting(db, org, actor.user.id, ["a@x.test"], T0 + D)
    teammate = await make_user(db, actor.org)
    await meeting(db, org, teammate.id, ["a@x.test"], T0 + D)  # not the caller's
    await enable_slack(db, app, org)
    for i in range(2):
        ts = f"{(T0 + 4 * D + i * H).timestamp():.6f}"
        r = await post_slack(client, org, slack_event(f"s{i}", email="a@x.test", ts=ts))
        assert r.status_code == 200


async def analytics(client: Any, actor: Any, **query: str) -> dict[str, Any]:
    r = await client.get(f"{API}/analytics", headers=actor.in_org(), params=query)
    assert r.status_code == 200, r.text
    return dict(r.json())


def row(start: str, s: int = 0, rc: int = 0, rp: int = 0, mt: int = 0, sl: int = 0) -> dict:
    return {
        "start": start,
        "sent": s,
        "received": rc,
        "replies": rp,
        "meetings": mt,
        "slackMessages": sl,
    }


async def test_analytics_by_day_and_week(client, db, app, actor) -> None:
    await arrange_analytics(client, db, app, actor)
    body = await analytics(client, actor, **{"from": "2026-11-02", "to": "2026-11-08"})
    assert body["granularity"] == "day"
    assert body["buckets"] == [
        row("2026-11-02", s=2, rc=2, rp=2),
        row("2026-11-03", s=1, mt=1),
        row("2026-11-04", rc=1),
        row("2026-11-05", s=1, rc=1, rp=1),
        row("2026-11-06", sl=2),
        row("2026-11-07"),
        row("2026-11-08"),
    ]
    assert body["totals"] == {
        "sent": 4,
        "received": 4,
        "replies": 3,
        "meetings": 1,
        "slackMessages": 2,
        "replyRate": 0.75,
        "medianFirstResponseSeconds": 7200.0,
    }
    one_day = await analytics(client, actor, **{"from": "2026-11-02", "to": "2026-11-02"})
    # an even count: the mean of the two middle values (1 h and 5 h)
    assert one_day["totals"]["medianFirstResponseSeconds"] == 10800.0
    assert one_day["totals"]["replyRate"] == 1.0

    week = await analytics(
        client, actor, **{"from": "2026-11-04", "to": "2026-11-12", "granularity": "week"}
    )
    assert week["granularity"] == "week"
    assert week["buckets"] == [
        row("2026-11-02", s=1, rc=2, rp=1, sl=2),  # Monday of the week of 4 November
        row("2026-11-09"),
    ]
    assert week["totals"]["sent"] == 1 and week["totals"]["replyRate"] == 1.0


async def test_analytics_defaults_and_validation(client, db, actor) -> None:
    body = await analytics(client, actor)
    assert len(body["buckets"]) == 30
    today = utcnow().date()
    assert body["buckets"][-1]["start"] == today.isoformat()
    assert body["buckets"][0]["start"] == (today - timedelta(days=29)).isoformat()
    assert body["totals"]["replyRate"] is None
    assert body["totals"]["medianFirstResponseSeconds"] is None
    for query in (
        {"from": "2026-11-10", "to": "2026-11-01"},
        {"from": "2026-11-01T00:00:00Z"},
        {"granularity": "month"},
        {"from": "2020-01-01", "to": "2026-01-01"},
    ):
        r = await client.get(f"{API}/analytics", headers=actor.in_org(), params=query)
        assert r.status_code == 400, query
        assert r.json()["error"]["code"] == "validation_error"


async def test_dashboard_reads_need_a_user_backed_token(client, db, actor) -> None:
    machine = await make_oauth_app(
        db,
        actor,
        grant_types=["client_credentials"],
        scopes=["feed:read"],
        organization_ids=[actor.org.id],
    )
    token = await client.post(
        "/api/v1/oauth/token",
        data={"grant_type": "client_credentials", "scope": "feed:read"},
        auth=(machine.app.client_id, machine.secret),
    )
    headers = {"Authorization": f"Bearer {token.json()['access_token']}"}
    for path in ("/analytics", "/needs-attention"):
        r = await client.get(API + path, headers=headers)
        assert r.status_code == 403, path
        assert r.json()["error"]["details"]["reason"] == "user_token_required"


async def test_needs_attention(client, db, app, actor) -> None:
    org = actor.org.id
    now = utcnow()
    # e-mail answered by the customer 30 h ago, nobody wrote back: needs attention
    m = await sent_email(db, org, "jane@acme.test", now - 40 * H, subject="Pricing")
    await reply_to(db, m, org, "jane@acme.test", now - 30 * H)
    # a reply 2 h ago: not yet
    m2 = await sent_email(db, org, "joe@acme.test", now - 5 * H, subject="Fresh")
    await reply_to(db, m2, org, "joe@acme.test", now - 2 * H)
    # Slack: customer asked 30 h ago, a rep answered 25 h ago: answered
    await enable_slack(db, app, org)
    root = f"{(now - 30 * H).timestamp():.6f}"
    await post_slack(client, org, slack_event("Q?", email="jane@acme.test", ts=root))
    await post_slack(
        client,
        org,
        slack_event(
            "A.", email=actor.user.email, ts=f"{(now - 25 * H).timestamp():.6f}", thread_ts=root
        ),
    )
    # tasks
    plan = Plan(organization_id=org, name="P", entity_type="USER", entity_id=actor.user.id)
    db.add(plan)
    await db.flush()
    teammate = await make_user(db, actor.org)
    today = now.date()

    def task(title: str, due: date | None, **kw: Any) -> PlanTask:
        t = PlanTask(
            organization_id=org,
            plan_id=plan.id,
            title=title,
            target_date=due,
            assigned_to_id=kw.pop("assignee", actor.user.id),
            **kw,
        )
        db.add(t)
        return t

    overdue = task("Send proposal", today - timedelta(days=2))
    task("Done already", today - timedelta(days=2), completed=True, completed_at=now)
    task("Someone else's", today - timedelta(days=2), assignee=teammate.id)
    task("Due today", today)
    task("Later", today + timedelta(days=3))
    await db.commit()
    # meetings
    past = await meeting(
        db, org, actor.user.id, ["jane@acme.test"], now - 3 * D, title="Kickoff", open_items=2
    )
    await meeting(db, org, actor.user.id, ["jane@acme.test"], now - 2 * D, title="Clean")
    await meeting(db, org, actor.user.id, ["jane@acme.test"], now + D, title="Soon", open_items=1)
    await meeting(
        db, org, teammate.id, ["jane@acme.test"], now - 3 * D, title="Theirs", open_items=1
    )

    r = await client.get(f"{API}/needs-attention", headers=actor.in_org())
    assert r.status_code == 200, r.text
    data = r.json()["data"]
    got = {(d["kind"], d["entityType"]) for d in data}
    assert got == {
        ("unanswered_message", "emailThread"),
        ("overdue_task", "planTask"),
        ("open_action_items", "calendarEvent"),
    }
    assert len(data) == 3
    by_kind = {d["kind"]: d for d in data}
    assert by_kind["overdue_task"]["entityId"] == str(overdue.id)
    assert by_kind["open_action_items"]["entityId"] == str(past.id)
    for d in data:
        assert set(d) == {"kind", "reason", "entityType", "entityId", "since"}
        assert d["reason"]
        datetime.fromisoformat(d["since"])
    assert "Pricing" in by_kind["unanswered_message"]["reason"]
    # oldest first
    sinces = [datetime.fromisoformat(d["since"]) for d in data]
    assert sinces == sorted(sinces)
    assert r.json()["pagination"]["totalCount"] == 3
    # cursor mode pages too
    r = await client.get(f"{API}/needs-attention", headers=actor.in_org(), params={"limit": 2})
    page = r.json()
    assert len(page["data"]) == 2 and page["pagination"]["hasNextPage"] is True
    r = await client.get(
        f"{API}/needs-attention",
        headers=actor.in_org(),
        params={"limit": 2, "cursor": page["pagination"]["nextCursor"]},
    )
    assert [d["entityId"] for d in r.json()["data"]] == [data[2]["entityId"]]
