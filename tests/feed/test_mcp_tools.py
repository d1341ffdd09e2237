"""The feed MCP tools answer what the REST operations of the same name answer, over the same
services (real HTTP with the SDK's client)."""

from __future__ import annotations

from datetime import timedelta

from salesplan.kit.clock import utcnow
from tests.feed.helpers import T0, meeting, reply_to, sent_email
from tests.fixtures.crm import make_account, make_contact
from tests.fixtures.factories import make_actor
from tests.mcp.conftest import body, error, rest_body
from tests.mcp.conftest import connect as mcp_connect


async def test_feed_tools_answer_the_rest_bodies(mcp, db) -> None:
    actor = await make_actor(db)
    org = actor.org.id
    account, _ = await make_account(db, org, "Acme", domain="acme.test")
    await make_contact(db, account, "Jane", "Doe", email="jane@acme.test")
    m = await sent_email(db, org, "jane@acme.test", T0, subject="Pricing", replied_at=T0)
    await reply_to(db, m, org, "jane@acme.test", utcnow() - timedelta(days=2))
    await meeting(db, org, actor.user.id, ["jane@acme.test"], T0 + timedelta(days=1))
    base = f"/accounts/{account.id}/inbox"
    async with mcp_connect(mcp.url, actor.key) as c:
        inbox = body(await c.call_tool("getAccountInbox", {"accountId": str(account.id)}))
        page = body(
            await c.call_tool("getAccountInbox", {"accountId": str(account.id), "limit": 1})
        )
        email = next(i for i in inbox["data"] if i["type"] == "email")
        thread = body(
            await c.call_tool(
                "getAccountInboxThreadMessages",
                {"accountId": str(account.id), "threadId": email["id"]},
            )
        )
        not_slack = error(
            await c.call_tool(
                "getAccountInboxSlackThread",
                {"accountId": str(account.id), "threadId": email["id"]},
            )
        )
        stats = body(
            await c.call_tool(
                "getCommunicationAnalytics",
                {"from": "2026-11-01", "to": "2026-11-07", "granularity": "week"},
            )
        )
        bad_date = error(
            await c.call_tool("getCommunicationAnalytics", {"from": "2026-11-01T00:00:00Z"})
        )
        attention = body(await c.call_tool("listNeedsAttention", {}))
    assert inbox == await rest_body(mcp, actor.key, base)
    assert [i["type"] for i in inbox["data"]] == ["email", "calendar"]  # the reply is newer
    assert len(page["data"]) == 1 and page["pagination"]["hasNextPage"] is True
    assert thread == await rest_body(mcp, actor.key, f"{base}/threads/{email['id']}/messages")
    assert len(thread["data"]) == 2
    assert not_slack["code"] == "not_found"
    assert stats == await rest_body(
        mcp, actor.key, "/feed/analytics?from=2026-11-01&to=2026-11-07&granularity=week"
    )
    assert stats["totals"]["sent"] == 1 and stats["totals"]["meetings"] == 1
    assert bad_date["code"] == "validation_error"
    assert attention == await rest_body(mcp, actor.key, "/feed/needs-attention")
    assert [d["kind"] for d in attention["data"]] == ["unanswered_message"]
