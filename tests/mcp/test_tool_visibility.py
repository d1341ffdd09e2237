"""What an MCP client is shown: only the tools its token may call, MCP words for naming an
organization, and no prompts or resources capabilities while there are none."""

from __future__ import annotations

from salesplan.mcp.registry import TOOLS
from tests.fixtures.factories import make_actor
from tests.mcp.conftest import TEST_TOOL, connect, error
from tests.mcp.test_organization_context import two_orgs


async def test_tools_list_shows_only_the_tools_the_token_scopes_allow(mcp, db):
    actor = await make_actor(db, scopes=["plans:read"])
    async with connect(mcp.url, actor.key) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert {"listPlans", "getPlan"} <= names
    assert not {"createPlan", "updatePlan", "listOrganizations"} & names
    assert names == {n for n, spec in TOOLS.items() if spec.scope in (None, "plans:read")}


async def test_tools_list_shows_every_tool_to_a_token_with_every_scope(mcp, db):
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert names == set(TOOLS)


async def test_several_organizations_error_names_the_mcp_ways_to_choose_one(mcp, db):
    orgs = await two_orgs(db)
    async with connect(mcp.url, orgs.key) as client:
        err = error(await client.call_tool(TEST_TOOL, {}))
    assert err["code"] == "organization_required"
    assert "setActiveOrganization" in err["message"]
    assert "headers.xOrganizationId" in err["message"]
    assert "X-Organization-Id" not in err["message"]


async def test_prompts_and_resources_are_not_advertised(mcp, db):
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        capabilities = client.server_capabilities
    assert capabilities.tools is not None
    assert capabilities.prompts is None and capabilities.resources is None
