"""Engage reads as MCP tools and every tool's annotations (contract §9, issue 33 items 1 and 3),
through the official MCP client."""

from __future__ import annotations

import re

from salesplan.engage.delivery.inbound import suppress
from tests.fixtures.factories import make_actor
from tests.mcp.conftest import body, connect, rest, rest_body

ENGAGE_READS = {
    "listEngageTemplates",
    "getEngageTemplate",
    "listEngageDrafts",
    "getEngageDraft",
    "listEngageLists",
    "getEngageList",
    "listEngageListMembers",
    "listEngageCampaigns",
    "getEngageCampaign",
    "getEngageCampaignStatus",
    "getEngageEnrollmentJob",
    "listEngageQueue",
    "getEngageQueueItem",
    "listEngageReplies",
    "getEngageReply",
    "getEngageAnalytics",
    "listEngageSuppressions",
}


async def _tools(mcp, key: str) -> dict:
    async with connect(mcp.url, key) as client:
        return {t.name: t for t in (await client.list_tools()).tools}


async def _methods(mcp, key: str) -> dict[str, str]:
    """operationId → HTTP method, from the server's own OpenAPI document."""
    doc = await rest_body(mcp, key, "/openapi.json")
    return {
        op["operationId"]: method.upper()
        for item in doc["paths"].values()
        for method, op in item.items()
        if isinstance(op, dict) and "operationId" in op
    }


async def test_engage_reads_are_tools_and_sends_never(mcp, db):
    actor = await make_actor(db)
    tools = await _tools(mcp, actor.key)
    assert set(tools) >= ENGAGE_READS, ENGAGE_READS - set(tools)
    # (getPlanEngagement is a plan's room, not Engage)
    engage = {name for name in tools if re.search(r"Engage(?!ment)", name)}
    assert engage == ENGAGE_READS, engage ^ ENGAGE_READS  # no send, start, write or delete
    for name in ENGAGE_READS:
        assert tools[name].meta["salesplan/requiredScope"] == "engage:read", name
        assert tools[name].annotations.read_only_hint is True, name


async def test_a_token_without_engage_read_sees_no_engage_tool(mcp, db):
    actor = await make_actor(db, scopes=["organizations:read", "accounts:read"])
    tools = await _tools(mcp, actor.key)
    assert not {name for name in tools if re.search(r"Engage(?!ment)", name)}
    assert "listAccounts" in tools


async def test_an_engage_read_tool_answers_the_rest_body(mcp, db):
    actor = await make_actor(db)
    created = await rest(
        mcp,
        actor.key,
        "POST",
        "/engage/templates",
        json={"name": "Intro", "channel": "EMAIL", "subject": "Hello", "body": "Hi {{ x }}"},
    )
    assert created.status_code == 201, created.text
    template_id = created.json()["id"]
    async with connect(mcp.url, actor.key) as client:
        listed = body(await client.call_tool("listEngageTemplates", {}))
        one = body(await client.call_tool("getEngageTemplate", {"templateId": template_id}))
        analytics = body(await client.call_tool("getEngageAnalytics", {}))
    assert [t["id"] for t in listed["data"]] == [template_id]
    assert one == await rest_body(mcp, actor.key, f"/engage/templates/{template_id}")
    assert analytics == await rest_body(mcp, actor.key, "/engage/analytics")
    assert analytics["totals"]["sent"] == 0


async def test_annotations_follow_each_operations_kind(mcp, db):
    """readOnlyHint for reads; destructiveHint for deletes and PUT replacements, not for
    creates and PATCH; idempotentHint for reads and PUT; openWorldHint false everywhere."""
    actor = await make_actor(db)
    tools = await _tools(mcp, actor.key)
    methods = await _methods(mcp, actor.key)
    kinds = {"GET": 0, "POST": 0, "PUT": 0, "PATCH": 0, "DELETE": 0}
    for name, tool in tools.items():
        hints = tool.annotations
        assert hints.open_world_hint is False, name
        method = methods.get(name)
        if method is None:  # setActiveOrganization: no REST operation
            continue
        kinds[method] += 1
        assert hints.read_only_hint is (method == "GET"), name
        assert hints.idempotent_hint is (method in ("GET", "PUT")), name
        if method in ("GET", "POST", "PATCH"):
            assert hints.destructive_hint is False, name
        elif method == "DELETE":
            assert hints.destructive_hint is True, name
    assert all(kinds.values()), kinds  # every kind is exercised
    assert tools["updateAccount"].annotations.destructive_hint is True  # PUT: left out → null
    assert tools["updatePlan"].annotations.destructive_hint is False  # PATCH
    assert tools["createAccount"].annotations.idempotent_hint is False
    assert tools["setActiveOrganization"].annotations.idempotent_hint is True


async def test_the_list_is_an_mcp_read_tool_and_the_delete_is_not(mcp, db):
    actor = await make_actor(db)
    await suppress(db, actor.org.id, "ada@example.com", "unsubscribed")
    await db.commit()
    async with connect(mcp.url, actor.key) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        listed_tool = body(await client.call_tool("listEngageSuppressions", {}))
    assert "deleteEngageSuppression" not in tools
    assert tools["listEngageSuppressions"].annotations.read_only_hint is True
    assert listed_tool == await rest_body(mcp, actor.key, "/engage/suppressions")
    assert [r["address"] for r in listed_tool["data"]] == ["ada@example.com"]
