"""The organization of a tool call: headers.xOrganizationId, else the one remembered by
setActiveOrganization (per session; per token on session-less revisions), else the single
reachable one, else organization_required."""

from __future__ import annotations

from dataclasses import dataclass

from salesplan.models.identity import Organization, User
from salesplan.organizations.service import add_user
from tests.fixtures.factories import make_actor, make_key, make_org, make_user
from tests.mcp.conftest import TEST_TOOL, body, connect, error


@dataclass
class TwoOrgs:
    a: Organization
    b: Organization
    user: User
    key: str


async def two_orgs(db) -> TwoOrgs:
    a, b = await make_org(db, "Alpha"), await make_org(db, "Beta")
    user = await make_user(db, a)
    await add_user(db, organization_id=b.id, email=user.email, role="member")
    await db.commit()
    return TwoOrgs(a, b, user, await make_key(db, user))


async def current(client) -> str:
    return body(await client.call_tool(TEST_TOOL, {}))["organizationId"]


async def test_single_reachable_organization_is_used(mcp, db):
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        assert await current(client) == str(actor.org.id)


async def test_several_organizations_and_none_named_is_organization_required(mcp, db):
    orgs = await two_orgs(db)
    async with connect(mcp.url, orgs.key) as client:
        err = error(await client.call_tool(TEST_TOOL, {}))
    assert err["code"] == "organization_required"


async def test_headers_organization_is_used(mcp, db):
    orgs = await two_orgs(db)
    async with connect(mcp.url, orgs.key) as client:
        result = await client.call_tool(TEST_TOOL, {"headers": {"xOrganizationId": str(orgs.b.id)}})
    assert body(result)["organizationId"] == str(orgs.b.id)


async def test_set_active_organization_is_remembered_and_can_switch(mcp, db):
    orgs = await two_orgs(db)
    async with connect(mcp.url, orgs.key) as client:
        chosen = body(
            await client.call_tool("setActiveOrganization", {"organizationId": str(orgs.a.id)})
        )
        assert chosen["id"] == str(orgs.a.id) and chosen["name"] == "Alpha"
        assert await current(client) == str(orgs.a.id)
        await client.call_tool("setActiveOrganization", {"organizationId": str(orgs.b.id)})
        assert await current(client) == str(orgs.b.id)


async def test_headers_organization_wins_over_the_active_one(mcp, db):
    orgs = await two_orgs(db)
    async with connect(mcp.url, orgs.key) as client:
        await client.call_tool("setActiveOrganization", {"organizationId": str(orgs.a.id)})
        result = await client.call_tool(TEST_TOOL, {"headers": {"xOrganizationId": str(orgs.b.id)}})
        assert body(result)["organizationId"] == str(orgs.b.id)
        assert await current(client) == str(orgs.a.id)


async def test_active_organization_is_per_session(mcp, db):
    orgs = await two_orgs(db)
    async with connect(mcp.url, orgs.key) as one, connect(mcp.url, orgs.key) as two:
        await one.call_tool("setActiveOrganization", {"organizationId": str(orgs.a.id)})
        assert error(await two.call_tool(TEST_TOOL, {}))["code"] == "organization_required"
        await two.call_tool("setActiveOrganization", {"organizationId": str(orgs.b.id)})
        assert await current(one) == str(orgs.a.id)
        assert await current(two) == str(orgs.b.id)


async def test_set_active_organization_out_of_reach_is_forbidden(mcp, db):
    """Contract §3: an organization the principal cannot reach is a 403 (issue 18, defect 10)."""
    orgs = await two_orgs(db)
    stranger = await make_org(db)
    async with connect(mcp.url, orgs.key) as client:
        err = error(
            await client.call_tool("setActiveOrganization", {"organizationId": str(stranger.id)})
        )
        assert err["code"] == "forbidden"
        assert err["details"]["reason"] == "organization_not_accessible"
        assert error(await client.call_tool(TEST_TOOL, {}))["code"] == "organization_required"


async def test_session_less_revision_remembers_per_token(mcp, db):
    orgs = await two_orgs(db)
    async with connect(mcp.url, orgs.key, mode="2026-07-28") as one:
        await one.call_tool("setActiveOrganization", {"organizationId": str(orgs.b.id)})
    async with connect(mcp.url, orgs.key, mode="2026-07-28") as two:
        assert await current(two) == str(orgs.b.id)


async def test_session_less_memory_is_not_shared_between_tokens(mcp, db):
    orgs = await two_orgs(db)
    async with connect(mcp.url, orgs.key, mode="2026-07-28") as one:
        await one.call_tool("setActiveOrganization", {"organizationId": str(orgs.b.id)})
    other_key = await make_key(db, orgs.user)
    async with connect(mcp.url, other_key, mode="2026-07-28") as two:
        assert error(await two.call_tool(TEST_TOOL, {}))["code"] == "organization_required"


async def test_set_active_organization_fails_when_it_cannot_be_remembered(mcp, db, monkeypatch):
    """Issue 18, defect 10: a store that cannot keep the choice is an error, not a success that
    the next call contradicts."""
    from salesplan.ratelimit.store import StoreUnavailable

    async def down(*_args: object) -> None:
        raise StoreUnavailable("down")

    orgs = await two_orgs(db)
    monkeypatch.setattr(mcp.app.state.rate_limiter.store, "kv_set", down)
    async with connect(mcp.url, orgs.key) as client:
        err = error(
            await client.call_tool("setActiveOrganization", {"organizationId": str(orgs.a.id)})
        )
        assert err["code"] == "service_unavailable"
