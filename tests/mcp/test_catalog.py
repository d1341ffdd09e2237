"""A catalog an agent can afford (contract §9, 2026-11-27), through the official MCP client:
`tools/list` with every scope costs at most 100 KB of JSON, `core` at most 40 KB; toolsets
(`?toolsets=` on the MCP URL or `X-MCP-Toolsets`) and the read-only mode (`readonly=1` or
`X-MCP-Readonly: 1`) narrow it, and a call to a tool outside the choice is an unknown tool;
a tool's toolset follows its route's domain; listContacts and listLeads are tools."""

from __future__ import annotations

import json
from typing import Any

import httpx2
from fastapi import APIRouter
from jsonschema import Draft202012Validator

from salesplan.auth.dependencies import require
from salesplan.kit.tools import as_tool
from salesplan.mcp.compact import compact_output
from salesplan.mcp.derive import derive, flagged_routes
from salesplan.mcp.registry import TOOLS
from salesplan.mcp.toolsets import TOOLSETS
from tests.fixtures.crm import make_account
from tests.fixtures.factories import make_actor
from tests.mcp.conftest import body, connect, rest_body

ALL_BUDGET = 100_000
CORE_BUDGET = 40_000
ROOM_FOR_ROOMS = 10_000


def _bytes(listing: Any) -> int:
    """The JSON bytes of a tools/list result, as the server sends it."""
    return len(listing.model_dump_json(by_alias=True, exclude_none=True).encode())


def _tool_bytes(tool: Any) -> int:
    return len(tool.model_dump_json(by_alias=True, exclude_none=True).encode())


async def _listing(url: str, key: str, headers: dict[str, str] | None = None) -> Any:
    async with connect(url, key, headers=headers) as client:
        return await client.list_tools()


async def test_tools_list_bytes_per_toolset_within_the_budgets(mcp, db):
    actor = await make_actor(db)
    every = await _listing(mcp.url, actor.key)
    sizes = {
        name: _bytes(await _listing(f"{mcp.url}?toolsets={name}", actor.key)) for name in TOOLSETS
    }
    total = _bytes(every)
    print(f"tools/list bytes: all={total} " + " ".join(f"{n}={b}" for n, b in sizes.items()))
    # Contract §9, 2026-11-27: at most 100 KB for every tool, with room left (10 KB) for more
    # rooms tools (from 223,223 bytes before the compaction, 116,660 before the briefs).
    assert total <= ALL_BUDGET - ROOM_FOR_ROOMS, total
    assert sizes["core"] <= CORE_BUDGET, sizes["core"]  # 75,020 before the briefs
    # Every tool is in exactly one toolset: the toolsets' tools add up to the whole list, byte
    # for byte (each listing also has its own `{"tools": […]}` around them).
    per_toolset = [
        (await _listing(f"{mcp.url}?toolsets={name}", actor.key)).tools for name in TOOLSETS
    ]
    assert sorted(t.name for tools in per_toolset for t in tools) == sorted(
        t.name for t in every.tools
    )
    assert sum(_tool_bytes(t) for tools in per_toolset for t in tools) == sum(
        _tool_bytes(t) for t in every.tools
    )


async def test_toolsets_by_query_parameter_or_header_and_readonly(mcp, db):
    actor = await make_actor(db)
    by_query = await _listing(f"{mcp.url}?toolsets=core,engage", actor.key)
    by_header = await _listing(mcp.url, actor.key, {"X-MCP-Toolsets": "engage, core"})
    names = {t.name for t in by_query.tools}
    assert names == {t.name for t in by_header.tools}
    assert names == {n for n, s in TOOLS.items() if s.toolset in ("core", "engage")}
    assert {"listAccounts", "listEngageCampaigns"} <= names
    assert not {"listCalendarEvents", "getAccountInbox"} & names
    readonly = await _listing(f"{mcp.url}?readonly=1", actor.key)
    readonly_header = await _listing(mcp.url, actor.key, {"X-MCP-Readonly": "1"})
    reads = {n for n, s in TOOLS.items() if s.read_only}
    assert {t.name for t in readonly.tools} == reads == {t.name for t in readonly_header.tools}
    assert "createAccount" not in reads and "listAccounts" in reads
    both = await _listing(f"{mcp.url}?toolsets=calendar&readonly=1", actor.key)
    assert {t.name for t in both.tools} == {
        n for n, s in TOOLS.items() if s.toolset == "calendar" and s.read_only
    }
    assert "updateCalendarEvent" not in {t.name for t in both.tools}


async def test_a_tool_outside_the_choice_is_an_unknown_tool(mcp, db):
    actor = await make_actor(db)
    async with connect(f"{mcp.url}?toolsets=calendar", actor.key) as client:
        outside = await client.call_tool("listAccounts", {})
        missing = await client.call_tool("noSuchTool", {})
    async with connect(mcp.url, actor.key, headers={"X-MCP-Readonly": "1"}) as client:
        write = await client.call_tool("createAccount", {"name": "Acme"})
        read = await client.call_tool("listAccounts", {})
    assert outside.is_error and outside.content[0].text == "Unknown tool: listAccounts"
    assert missing.is_error and missing.content[0].text == "Unknown tool: noSuchTool"
    assert write.is_error and write.content[0].text == "Unknown tool: createAccount"
    assert not read.is_error
    assert (await rest_body(mcp, actor.key, "/accounts"))["data"] == []  # nothing was created


async def test_an_unknown_toolset_or_readonly_value_is_a_400(mcp, db):
    actor = await make_actor(db)
    headers = {
        "Authorization": f"Bearer {actor.key}",
        "Accept": "application/json, text/event-stream",
    }
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    async with httpx2.AsyncClient(headers=headers) as http:
        bad_set = await http.post(f"{mcp.url}?toolsets=core,crm", json=message)
        bad_header = await http.post(mcp.url, json=message, headers={"X-MCP-Toolsets": "nope"})
        bad_flag = await http.post(f"{mcp.url}?readonly=yes", json=message)
    for resp in (bad_set, bad_header, bad_flag):
        assert resp.status_code == 400, resp.text
        assert resp.json()["error"]["code"] == "validation_error"
    assert "crm" in bad_set.json()["error"]["message"]
    assert bad_header.json()["error"]["details"]["errors"][0]["location"] == [
        "header",
        "X-MCP-Toolsets",
    ]


def test_a_tool_is_in_the_toolset_of_its_routes_domain():
    expected = {
        "listAccounts": "core",
        "listContacts": "core",
        "listLeads": "core",
        "getPlan": "core",
        "listBuyingGroups": "core",
        "getRelationshipMap": "core",
        "getMeta": "core",
        "setActiveOrganization": "core",
        "listEngageSuppressions": "engage",
        "listEngageTemplates": "engage",
        "listCalendarEvents": "calendar",
        "getAccountInbox": "feed",
    }
    for name, toolset in expected.items():
        assert TOOLS[name].toolset == toolset, name
    assert {s.toolset for s in TOOLS.values()} <= set(TOOLSETS)


def test_a_tool_added_to_a_rooms_route_is_in_rooms():
    """No word more than `@as_tool()` on a route of the rooms domain."""
    router = APIRouter()

    async def list_room_things(ctx: Any = require("plans:read", "plans")) -> dict[str, Any]:
        return {}

    list_room_things.__module__ = "salesplan.rooms.router"
    router.get("/rooms/things", operation_id="testListRoomThings", summary="List")(
        as_tool()(list_room_things)
    )
    [(route, options)] = list(flagged_routes([router]))
    spec, _ = derive(route, options)
    assert spec.toolset == "rooms"


async def test_list_contacts_and_list_leads_are_tools_answering_the_rest_body(mcp, db):
    actor = await make_actor(db)
    account, _ = await make_account(db, actor.org.id, "Acme")
    created = await rest_body_post(
        mcp,
        actor.key,
        f"/accounts/{account.id}/contacts",
        {"firstName": "Ada", "email": "ada@acme.example"},
    )
    lead = await rest_body_post(
        mcp, actor.key, "/leads", {"firstName": "Lin", "email": "lin@x.example"}
    )
    async with connect(f"{mcp.url}?toolsets=core&readonly=1", actor.key) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        contacts = body(await client.call_tool("listContacts", {"email": "ADA@acme.example"}))
        leads = body(await client.call_tool("listLeads", {"limit": 10}))
    for name in ("listContacts", "listLeads"):
        assert tools[name].annotations.read_only_hint is True
        assert "updatedSince" in tools[name].input_schema["properties"]
    assert contacts == await rest_body(mcp, actor.key, "/contacts?email=ada%40acme.example")
    assert [c["id"] for c in contacts["data"]] == [created["id"]]
    assert [x["id"] for x in leads["data"]] == [lead["id"]]
    for name, result in (("listContacts", contacts), ("listLeads", leads)):
        Draft202012Validator(tools[name].output_schema).validate(result)


async def rest_body_post(mcp: Any, key: str, path: str, payload: dict[str, Any]) -> dict[str, Any]:
    from tests.mcp.conftest import rest

    resp = await rest(mcp, key, "POST", path, json=payload)
    assert resp.status_code == 201, resp.text
    data: dict[str, Any] = resp.json()
    return data


def _prose(node: Any) -> list[str]:
    """The titles and descriptions of a schema (not the properties that happen to be named so)."""
    if isinstance(node, list):
        return [p for item in node for p in _prose(item)]
    if not isinstance(node, dict):
        return []
    found = [
        str(node[k]) for k in ("title", "description", "examples") if isinstance(node.get(k), str)
    ]
    for key, value in node.items():
        if key in ("properties", "$defs"):
            found += [p for sub in value.values() for p in _prose(sub)]
        elif isinstance(value, dict | list):
            found += _prose(value)
    return found


async def test_output_schemas_are_compact_and_share_parts_in_defs(mcp, db):
    actor = await make_actor(db)
    listing = await _listing(mcp.url, actor.key)
    tools = {t.name: t for t in listing.tools}
    for tool in listing.tools:
        if tool.output_schema is None:
            continue
        assert not _prose(tool.output_schema), (tool.name, _prose(tool.output_schema))
        Draft202012Validator.check_schema(tool.output_schema)
    plan = tools["getPlan"].output_schema
    # The plan's own fields; the objects within it (milestones, goals, tasks) read as objects.
    assert plan["properties"]["goals"] == {"items": {"type": "object"}, "type": "array"}
    assert '"goalType"' not in json.dumps(plan)
    plans = tools["listPlans"].output_schema["properties"]["data"]["items"]
    assert set(plans["properties"]) >= {"id", "name", "entityType", "milestones"}
    wrapped = tools["getRelationshipMap"].output_schema["properties"]["buyerMap"]
    assert {"id", "entityId", "mapUrl"} <= set(wrapped["properties"])


def test_a_shared_part_is_once_in_defs_and_deeper_objects_read_as_objects():
    components = {
        "Status": {"type": "string", "enum": ["open", "won"], "title": "Status"},
        "Owner": {"type": "object", "properties": {"id": {"type": "string"}}},
        "Deal": {
            "type": "object",
            "description": "A deal.",
            "properties": {
                "status": {"$ref": "#/components/schemas/Status"},
                "previousStatus": {
                    "anyOf": [{"$ref": "#/components/schemas/Status"}, {"type": "null"}]
                },
                "owner": {"$ref": "#/components/schemas/Owner"},
            },
        },
    }
    schema = compact_output({"$ref": "#/components/schemas/Deal"}, components)
    assert schema["$defs"] == {"Status": {"type": "string", "enum": ["open", "won"]}}
    assert schema["properties"]["status"] == {"$ref": "#/$defs/Status"}
    assert schema["properties"]["owner"] == {"type": "object"}
    assert not _prose(schema)
    Draft202012Validator(schema).validate({"status": "won", "previousStatus": None, "owner": {}})
