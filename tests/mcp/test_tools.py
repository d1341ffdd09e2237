"""tools/list and the calls of each tool, over real HTTP with the SDK's client."""

from __future__ import annotations

import httpx2

from salesplan.mcp.derive import BRIEF_LENGTH
from salesplan.mcp.registry import TOOLS
from tests.fixtures.factories import make_actor, make_key, make_org, make_user
from tests.mcp.conftest import McpServer, body, connect, error

PHASE_ONE = {
    "getMeta",
    "listOrganizations",
    "getOrganization",
    "listOrganizationUsers",
    "setActiveOrganization",
}


def origin(mcp: McpServer) -> str:
    return mcp.url.removesuffix("/mcp")


async def rest_get(mcp: McpServer, key: str, path: str) -> dict:
    async with httpx2.AsyncClient() as http:
        resp = await http.get(
            origin(mcp) + "/api/v1" + path, headers={"Authorization": f"Bearer {key}"}
        )
    assert resp.status_code == 200, resp.text
    data: dict = resp.json()
    return data


async def test_tools_list_names_every_registered_tool(mcp, db):
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) >= PHASE_ONE
    assert set(tools) == set(TOOLS)


async def test_tool_descriptions_are_written_for_an_agent(mcp, db):
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    # Short (contract §9, 2026-11-27: a catalog an agent can afford), never empty.
    for name in PHASE_ONE:
        assert 0 < len(tools[name].description or "") <= BRIEF_LENGTH, name
    assert "setActiveOrganization" in (tools["listOrganizations"].description or "")


async def test_input_schema_is_the_rest_parameters_plus_headers(mcp, db):
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    users = tools["listOrganizationUsers"].input_schema
    assert users["required"] == ["organizationId"]
    assert users["properties"]["organizationId"]["format"] == "uuid"
    assert {"page", "pageSize", "limit", "cursor", "sortBy", "order", "search"} <= set(
        users["properties"]
    )
    assert users["properties"]["sortBy"]["enum"] == ["createdAt", "email", "fullName"]
    assert users["additionalProperties"] is False
    for name in PHASE_ONE:
        headers = tools[name].input_schema["properties"]["headers"]
        assert set(headers["properties"]) == {"xOrganizationId"}
        assert "headers" not in tools[name].input_schema.get("required", [])


async def test_get_meta_answers_the_rest_body_without_a_scope(mcp, db):
    actor = await make_actor(db, scopes=["accounts:read"])
    async with connect(mcp.url, actor.key) as client:
        result = await client.call_tool("getMeta", {})
    assert body(result) == await rest_get(mcp, actor.key, "/meta")
    assert body(result)["mcp"] == {"url": mcp.app.state.settings.mcp_url}


async def test_result_is_structured_content_and_json_text(mcp, db):
    import json

    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        result = await client.call_tool("listOrganizations", {})
    assert json.loads(result.content[0].text) == body(result)


async def test_list_organizations_answers_the_rest_body(mcp, db):
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        result = await client.call_tool("listOrganizations", {"sortBy": "name"})
    assert body(result) == await rest_get(mcp, actor.key, "/organizations?sortBy=name")
    assert [o["id"] for o in body(result)["data"]] == [str(actor.org.id)]


async def test_list_organizations_cursor_mode(mcp, db):
    org = await make_org(db)
    user = await make_user(db, org)
    for _ in range(2):
        from salesplan.organizations.service import add_user

        other = await make_org(db)
        await add_user(db, organization_id=other.id, email=user.email, role="member")
        await db.commit()
    key = await make_key(db, user)
    async with connect(mcp.url, key) as client:
        first = body(await client.call_tool("listOrganizations", {"limit": 2}))
        second = body(
            await client.call_tool(
                "listOrganizations", {"limit": 2, "cursor": first["pagination"]["nextCursor"]}
            )
        )
    assert len(first["data"]) == 2 and first["pagination"]["hasNextPage"] is True
    assert len(second["data"]) == 1 and second["pagination"]["hasNextPage"] is False


async def test_get_organization_answers_the_rest_body(mcp, db):
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        result = await client.call_tool("getOrganization", {"organizationId": str(actor.org.id)})
    assert body(result) == await rest_get(mcp, actor.key, f"/organizations/{actor.org.id}")


async def test_get_organization_out_of_reach_is_not_found(mcp, db):
    actor = await make_actor(db)
    stranger = await make_org(db)
    async with connect(mcp.url, actor.key) as client:
        result = await client.call_tool("getOrganization", {"organizationId": str(stranger.id)})
    assert error(result)["code"] == "not_found"


async def test_list_organization_users_answers_the_rest_body(mcp, db):
    actor = await make_actor(db)
    await make_user(db, actor.org, email="zed@example.com", role="consultant")
    async with connect(mcp.url, actor.key) as client:
        result = await client.call_tool(
            "listOrganizationUsers", {"organizationId": str(actor.org.id), "sortBy": "email"}
        )
    rest = await rest_get(mcp, actor.key, f"/organizations/{actor.org.id}/users?sortBy=email")
    assert body(result) == rest
    assert body(result)["data"][-1] == {
        "id": body(result)["data"][-1]["id"],
        "email": "zed@example.com",
        "fullName": "zed",
        "role": "consultant",
    }


async def test_invalid_argument_is_a_validation_error(mcp, db):
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        bad_id = error(await client.call_tool("getOrganization", {"organizationId": "nope"}))
        missing = error(await client.call_tool("getOrganization", {}))
        unknown = error(await client.call_tool("listOrganizations", {"colour": "red"}))
        too_big = error(await client.call_tool("listOrganizations", {"pageSize": 500}))
        bad_sort = error(await client.call_tool("listOrganizations", {"sortBy": "slug"}))
    for err in (bad_id, missing, unknown, too_big, bad_sort):
        assert err["code"] == "validation_error", err
    assert bad_id["details"]["errors"][0]["location"] == ["arguments", "organizationId"]
    assert unknown["details"]["errors"][0]["location"] == ["arguments", "colour"]


async def test_missing_scope_is_forbidden_with_required_scope(mcp, db):
    actor = await make_actor(db, scopes=["accounts:read"])
    async with connect(mcp.url, actor.key) as client:
        for name, args in (
            ("listOrganizations", {}),
            ("getOrganization", {"organizationId": str(actor.org.id)}),
            ("listOrganizationUsers", {"organizationId": str(actor.org.id)}),
            ("setActiveOrganization", {"organizationId": str(actor.org.id)}),
        ):
            err = error(await client.call_tool(name, args))
            assert err["code"] == "forbidden", name
            assert err["details"]["requiredScope"] == "organizations:read"


async def test_scope_is_checked_before_arguments(mcp, db):
    actor = await make_actor(db, scopes=["accounts:read"])
    async with connect(mcp.url, actor.key) as client:
        err = error(await client.call_tool("getOrganization", {"organizationId": "nope"}))
    assert err["code"] == "forbidden"


async def test_headers_organization_out_of_reach_is_forbidden(mcp, db):
    actor = await make_actor(db)
    stranger = await make_org(db)
    async with connect(mcp.url, actor.key) as client:
        err = error(
            await client.call_tool(
                "listOrganizations", {"headers": {"xOrganizationId": str(stranger.id)}}
            )
        )
        malformed = error(
            await client.call_tool("listOrganizations", {"headers": {"xOrganizationId": "x"}})
        )
    assert err["code"] == "forbidden"
    assert malformed["code"] == "validation_error"
    assert malformed["details"]["errors"][0]["location"] == [
        "arguments",
        "headers",
        "xOrganizationId",
    ]
