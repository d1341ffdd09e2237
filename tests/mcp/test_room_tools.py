"""Buyer-room tools (contract §16 "MCP"): listPlanShares, listPlanActivity, getPlanEngagement,
listPlanTaskComments (plans:read) and createPlanTaskComment (plans:write), derived from their
routes: each answers the body of the REST operation of the same name."""

from __future__ import annotations

from salesplan.mcp.registry import TOOLS
from salesplan.mcp.tools import register_api_tools
from tests.engage_delivery.conftest import smtp
from tests.mcp.conftest import body, connect, error, rest_body
from tests.plans.helpers import PLANS
from tests.rooms.helpers import Buyer, make_deal, make_share, token_of

__all__ = ["smtp"]

READS = ("listPlanShares", "listPlanActivity", "getPlanEngagement", "listPlanTaskComments")


def test_the_room_tools_take_the_scopes_of_their_routes() -> None:
    register_api_tools()
    for name in READS:
        assert TOOLS[name].scope == "plans:read", name
    assert TOOLS["createPlanTaskComment"].scope == "plans:write"
    # Never the writes that reach a buyer or change who may see the plan.
    # A comment's `body` is an argument like any other: required, a string.
    schema = TOOLS["createPlanTaskComment"].args.model_json_schema(by_alias=True)
    assert "body" in schema["required"] and schema["properties"]["body"]["type"] == "string"
    for name in ("createPlanShare", "revokePlanShare", "sendPlanShare", "updatePlanRoom"):
        assert name not in TOOLS


async def test_the_room_tools_answer_what_rest_answers(mcp, app, client, db, actor, smtp) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    task_id = deal.ids["buyer_task"]
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.sign_in(app, smtp)
        await buyer.post(f"/tasks/{task_id}/comments", {"body": "Sent it over."})
    plan = {"planId": deal.plan_id}
    task = plan | {"taskId": task_id}
    async with connect(mcp.url, actor.key) as mcp_client:
        created = body(
            await mcp_client.call_tool(
                "createPlanTaskComment", task | {"body": "Thanks, Ada!", "internal": False}
            )
        )
        assert created["author"]["type"] == "user" and created["body"] == "Thanks, Ada!"
        results = {
            "listPlanShares": (plan, f"{PLANS}/{deal.plan_id}/shares"),
            "listPlanActivity": (plan, f"{PLANS}/{deal.plan_id}/activity"),
            "getPlanEngagement": (plan, f"{PLANS}/{deal.plan_id}/engagement"),
            "listPlanTaskComments": (task, f"{PLANS}/{deal.plan_id}/tasks/{task_id}/comments"),
        }
        for name, (args, path) in results.items():
            got = body(await mcp_client.call_tool(name, args))
            assert got == await rest_body(mcp, actor.key, path.removeprefix("/api/v1")), name
        activity = body(await mcp_client.call_tool("listPlanActivity", plan))
        assert [i["type"] for i in activity["data"]] == ["viewed", "commented"]
        engagement = body(await mcp_client.call_tool("getPlanEngagement", plan))
        assert engagement["data"][0]["comments"] == 1 and engagement["data"][0]["score"] == 2
        comments = body(await mcp_client.call_tool("listPlanTaskComments", task))
        assert comments["data"][-1]["id"] == created["id"]
        missing = error(
            await mcp_client.call_tool(
                "getPlanEngagement", {"planId": "00000000-0000-0000-0000-000000000000"}
            )
        )
        assert missing["code"] == "not_found"
