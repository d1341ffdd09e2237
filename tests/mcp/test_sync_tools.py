"""Incremental sync over MCP (issue 31): the list tools derived from the synced routes take
`updatedSince` (explained once, in the server's instructions), and answer what the REST list answers."""

from __future__ import annotations

from urllib.parse import quote

from tests.fixtures.crm import make_account
from tests.fixtures.factories import make_actor
from tests.mcp.conftest import body, connect, error, rest_body

SYNCED_TOOLS = ("listAccounts", "listAccountContacts", "listOpportunities", "listPlans")


async def test_synced_list_tools_take_updated_since(mcp, db):
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        instructions = client.instructions or ""
    assert "updatedSince" in instructions and "updatedAt" in instructions
    for name in SYNCED_TOOLS:
        prop = tools[name].input_schema["properties"]["updatedSince"]
        # No prose inside schemas (contract §9, 2026-11-27): the instructions say it once.
        assert prop == {"type": "string", "format": "date-time"}, name
        assert "includeArchived" in tools[name].input_schema["properties"], name


async def test_list_accounts_tool_with_updated_since_answers_the_rest_body(mcp, db):
    actor = await make_actor(db)
    for name in ("Old", "Mid", "New"):
        await make_account(db, actor.org.id, name)
    every = await rest_body(mcp, actor.key, "/accounts")
    since = next(a for a in every["data"] if a["name"] == "Mid")["updatedAt"]
    async with connect(mcp.url, actor.key) as client:
        result = body(await client.call_tool("listAccounts", {"updatedSince": since}))
        bad = error(await client.call_tool("listAccounts", {"updatedSince": "2026-11-25"}))
    assert result == await rest_body(mcp, actor.key, f"/accounts?updatedSince={quote(since)}")
    assert [a["name"] for a in result["data"]] == ["Mid", "New"]
    assert bad["code"] == "validation_error"
