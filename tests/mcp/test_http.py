"""/mcp over HTTP: authentication, session ownership, rate limits."""

from __future__ import annotations

from typing import Any

import httpx2

from salesplan.auth.scopes import APPROVED_SCOPES
from salesplan.ratelimit.limiter import RateLimiter
from tests.fixtures.factories import make_actor, make_key
from tests.mcp.conftest import META_WRITE_LIMIT, body, connect, error

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def post(url: str, payload: dict[str, Any], headers: dict[str, str]) -> httpx2.Response:
    async with httpx2.AsyncClient() as http:
        return await http.post(url, json=payload, headers=MCP_HEADERS | headers)


def expected_challenge(mcp) -> str:
    public = mcp.app.state.settings.public_url
    return (
        f'Bearer resource_metadata="{public}/.well-known/oauth-protected-resource", '
        f'scope="{" ".join(s for s in APPROVED_SCOPES if s.endswith(":read"))}"'
    )


async def test_no_token_is_401_with_resource_metadata(mcp):
    resp = await post(mcp.url, INITIALIZE, {})
    assert resp.status_code == 401
    assert resp.headers["www-authenticate"] == expected_challenge(mcp)
    assert resp.json()["error"]["code"] == "unauthorized"
    assert set(resp.json()["error"]) == {"code", "message", "details"}


async def test_the_401_asks_for_every_read_scope_and_no_other(mcp):
    """Contract §15: a client without a scope of its own asks for what the 401 names."""
    import re

    resp = await post(mcp.url, INITIALIZE, {})
    match = re.search(r'scope="([^"]*)"', resp.headers["www-authenticate"])
    assert match, resp.headers["www-authenticate"]
    asked = match.group(1).split(" ")
    assert sorted(asked) == sorted(s for s in APPROVED_SCOPES if s.endswith(":read"))
    assert "organizations:read" in asked and len(asked) == 10  # §3's 9 and §13's webhooks:read
    assert not [s for s in asked if not s.endswith(":read")]


async def test_an_expired_key_is_refused_saying_so(mcp, db):
    """Contract §15: an expired key answers 401 "expired", with the metadata and the scope."""
    from datetime import timedelta

    from salesplan.auth.tokens import create_api_key
    from salesplan.kit.clock import utcnow

    actor = await make_actor(db)
    _, raw = await create_api_key(
        db, user_id=actor.user.id, name="old", expires_at=utcnow() - timedelta(minutes=1)
    )
    await db.commit()
    resp = await post(mcp.url, INITIALIZE, bearer(raw))
    assert resp.status_code == 401
    assert "expired" in resp.json()["error"]["message"]
    challenge = resp.headers["www-authenticate"]
    assert challenge.startswith(expected_challenge(mcp) + ', error="invalid_token"')
    assert "expired" in challenge


async def test_unknown_token_is_401(mcp):
    resp = await post(mcp.url, INITIALIZE, bearer("sp_live_not-a-key"))
    assert resp.status_code == 401
    assert resp.headers["www-authenticate"] == expected_challenge(mcp)


async def test_get_without_token_is_401_not_a_redirect(mcp):
    async with httpx2.AsyncClient() as http:
        resp = await http.get(mcp.url, headers={"Accept": "text/event-stream"})
    assert resp.status_code == 401
    assert resp.json()["error"]["code"] == "unauthorized"


async def test_api_key_initializes_a_session(mcp, db):
    actor = await make_actor(db)
    resp = await post(mcp.url, INITIALIZE, bearer(actor.key))
    assert resp.status_code == 200
    assert resp.headers.get("mcp-session-id")


async def test_another_principal_presenting_the_session_id_is_refused(mcp, db):
    actor = await make_actor(db)
    intruder = await make_key(db, actor.user)  # even a second key of the same user
    resp = await post(mcp.url, INITIALIZE, bearer(actor.key))
    session = {
        "Mcp-Session-Id": resp.headers["mcp-session-id"],
        "MCP-Protocol-Version": "2025-06-18",
    }
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    refused = await post(mcp.url, listing, bearer(intruder) | session)
    assert refused.status_code == 404
    await post(
        mcp.url,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        bearer(actor.key) | session,
    )
    owner = await post(mcp.url, listing, bearer(actor.key) | session)
    assert owner.status_code == 200


async def test_rate_limited_tool_call_is_429_with_tool_name(mcp, db):
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        for _ in range(META_WRITE_LIMIT):
            body(await client.call_tool("getMeta", {}))
        err = error(await client.call_tool("getMeta", {}))
    assert err["code"] == "rate_limit_exceeded"
    details = err["details"]
    assert details["toolName"] == "getMeta"
    assert details["endpointGroup"] == "foundation"
    assert details["write"] is True
    assert details["limit"] == META_WRITE_LIMIT
    assert details["retryAfterSeconds"] >= 1


async def test_rate_limit_is_spent_before_the_scope_check(mcp, db):
    actor = await make_actor(db, scopes=["accounts:read"])
    limiter: RateLimiter = mcp.app.state.rate_limiter
    async with connect(mcp.url, actor.key) as client:
        assert error(await client.call_tool("listOrganizations", {}))["code"] == "forbidden"
    key = RateLimiter.bucket_key(await token_id(db, actor.key), "global", "organizations", True)
    assert (await limiter.store.hit(key, 60, 60)).remaining == 58


async def token_id(db: Any, key: str) -> str:
    from sqlalchemy import select

    from salesplan.auth.tokens import token_hash
    from salesplan.models.identity import ApiKey

    found = await db.execute(select(ApiKey.id).where(ApiKey.key_hash == token_hash(key)))
    return str(found.scalar_one())


async def test_tool_call_spends_the_organizations_write_bucket_of_its_organization(mcp, db):
    actor = await make_actor(db)
    limiter: RateLimiter = mcp.app.state.rate_limiter
    async with connect(mcp.url, actor.key) as client:
        await client.call_tool(
            "listOrganizations", {"headers": {"xOrganizationId": str(actor.org.id)}}
        )
        await client.call_tool("setActiveOrganization", {"organizationId": str(actor.org.id)})
        await client.call_tool("listOrganizations", {})
    token = await token_id(db, actor.key)
    in_org = RateLimiter.bucket_key(token, str(actor.org.id), "organizations", True)
    global_ = RateLimiter.bucket_key(token, "global", "organizations", True)
    # in_org: the named organization, then the remembered one; global: setActiveOrganization
    # (nothing remembered yet). Each check below spends one more unit.
    assert (await limiter.store.hit(in_org, 60, 60)).remaining == 60 - 3
    assert (await limiter.store.hit(global_, 60, 60)).remaining == 60 - 2


async def test_tokens_are_resolved_for_the_mcp_audience(mcp, db):
    """OAuth tokens must carry resource={mcp_url}: the resolver is asked with audience `mcp`
    (an OAuth resolver refuses a token issued for another resource)."""
    import uuid

    from salesplan.auth.principal import Principal
    from salesplan.auth.tokens import _resolvers, register_token_kind

    audiences: list[str] = []
    actor = await make_actor(db)
    prefix = f"sp_test_{uuid.uuid4().hex[:8]}_"
    token_id = uuid.uuid4()

    async def resolver(session: Any, raw: str, audience: str) -> tuple[Principal, None] | None:
        audiences.append(audience)
        if raw != prefix + "mcp-bound" or audience != "mcp":
            return None
        return (
            Principal(
                token_id=token_id,
                token_kind="oauth",
                scopes=frozenset({"organizations:read"}),
                organization_ids=frozenset({actor.org.id}),
                user_id=actor.user.id,
                roles={actor.org.id: "admin"},
                resource=mcp.app.state.settings.mcp_url,
            ),
            None,
        )

    register_token_kind(prefix, resolver)
    try:
        async with connect(mcp.url, prefix + "mcp-bound") as client:
            orgs = body(await client.call_tool("listOrganizations", {}))
        assert [o["id"] for o in orgs["data"]] == [str(actor.org.id)]
        refused = await post(mcp.url, INITIALIZE, bearer(prefix + "api-bound"))
        assert refused.status_code == 401
        assert set(audiences) == {"mcp"}
    finally:
        _resolvers.pop(prefix, None)


async def test_delete_ends_the_session(mcp, db):
    """Contract §12: after `DELETE /mcp` the session id is refused (404 "Session not found",
    as for an unknown id), whatever the method; the token itself keeps working."""
    actor = await make_actor(db)
    resp = await post(mcp.url, INITIALIZE, bearer(actor.key))
    session = {
        "Mcp-Session-Id": resp.headers["mcp-session-id"],
        "MCP-Protocol-Version": "2025-06-18",
    }
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    assert (await post(mcp.url, listing, bearer(actor.key) | session)).status_code == 200
    async with httpx2.AsyncClient() as http:
        ended = await http.delete(mcp.url, headers=MCP_HEADERS | bearer(actor.key) | session)
        assert ended.status_code == 200
        again = await http.delete(mcp.url, headers=MCP_HEADERS | bearer(actor.key) | session)
    assert again.status_code == 404
    refused = await post(mcp.url, listing, bearer(actor.key) | session)
    assert refused.status_code == 404
    assert refused.json()["error"]["message"] == "Session not found"
    fresh = await post(mcp.url, INITIALIZE, bearer(actor.key))
    assert fresh.status_code == 200
    assert fresh.headers["mcp-session-id"] != session["Mcp-Session-Id"]
