"""An operation is declared once (issue 17): the MCP tool of a REST operation is derived from its
route declaration, and a call runs the route (its validation, service and body)."""

from __future__ import annotations

import time
import uuid
from typing import Annotated, Any

import httpx2
from fastapi import APIRouter, Query
from pydantic import BaseModel

from salesplan.auth.dependencies import require
from salesplan.auth.principal import Principal, RequestContext
from salesplan.db_dependencies import SessionDep
from salesplan.kit.list_query import list_params
from salesplan.kit.pagination import ListParams
from salesplan.kit.tools import as_tool, tool_options
from salesplan.mcp.derive import brief, derive, flagged_routes, requirement_of
from salesplan.mcp.registry import TOOLS, input_schema
from salesplan.mcp.server import SESSION_MAX_AGE, McpSessions
from salesplan.mcp.tools import register_api_tools
from salesplan.ratelimit.store import MemoryStore
from salesplan.routers import api_routers
from tests.fixtures.factories import make_actor
from tests.mcp.conftest import body, connect, error
from tests.mcp.test_http import INITIALIZE, MCP_HEADERS, bearer

register_api_tools()


def test_every_derived_tool_takes_its_rules_from_its_route():
    derived = list(flagged_routes(router for _, router, _ in api_routers()))
    assert len(derived) >= 38
    for route, options in derived:
        spec = TOOLS[str(route.operation_id)]
        requirement = requirement_of(route)
        if requirement is None:  # public (getMeta): no scope, no organization
            assert (spec.scope, spec.organization) == (None, False)
            continue
        assert spec.scope == requirement.scope, spec.name
        assert spec.group == requirement.group, spec.name
        assert spec.user_token == requirement.user_token, spec.name
        assert spec.organization == requirement.organization, spec.name
        assert spec.title == route.summary, spec.name
        # The description's first sentence (or the flag's own brief), short for MCP.
        assert route.description and spec.description.startswith(
            options.brief or brief(route.description)
        ), spec.name
        assert spec.run is None  # the route runs, not an adapter


def test_only_set_active_organization_is_a_tool_of_its_own():
    own = {name for name, spec in TOOLS.items() if spec.run is not None}
    assert own <= {"setActiveOrganization", "testOrganizationContext"}
    assert "setActiveOrganization" in own


_Read = Annotated[RequestContext, require("accounts:read", "accounts")]
_Params = Annotated[ListParams, list_params(("createdAt", "name"))]


class _Body(BaseModel):
    name: str
    note: str | None = None


def _router() -> APIRouter:
    router = APIRouter()

    @router.post(
        "/things/{thingId}",
        operation_id="testMakeThing",
        summary="Make a thing",
        description="Makes a thing for the test.",
    )
    @as_tool(docs={"thingId": "The thing.", "name": "Its name.", "note": "A note."})
    async def make_thing(
        thingId: uuid.UUID,
        ctx: _Read,
        session: SessionDep,
        params: _Params,
        payload: _Body,
        flag: Annotated[bool, Query(description="A flag.")] = False,
    ) -> Any:
        return {}

    @router.get("/things", operation_id="testListThings")
    async def list_things(ctx: _Read) -> Any:
        return {}

    return router


def test_exposing_an_operation_is_one_flag_on_its_route():
    router = _router()
    flagged = list(flagged_routes([router]))
    assert [route.operation_id for route, _ in flagged] == ["testMakeThing"]
    route, options = flagged[0]
    assert tool_options(route.endpoint) is options
    spec, parameters = derive(route, options)
    assert (spec.name, spec.scope, spec.group) == ("testMakeThing", "accounts:read", "accounts")
    assert (spec.title, spec.description) == ("Make a thing", "Makes a thing for the test.")
    assert (spec.read_only, spec.destructive) == (False, False)
    schema = input_schema(spec)
    assert schema["required"] == ["thingId", "name"]
    assert list(schema["properties"])[-1] == "headers"
    assert {"page", "pageSize", "limit", "cursor", "sortBy", "order", "search", "flag"} <= set(
        schema["properties"]
    )
    assert schema["properties"]["sortBy"]["enum"] == ["createdAt", "name"]
    # No prose inside schemas (contract §9, 2026-11-27): no argument carries a description.
    assert schema["properties"]["flag"] == {"default": False, "type": "boolean"}
    assert schema["properties"]["note"] == {"type": "string"}
    assert (parameters.path, parameters.body) == (("thingId",), ("name", "note"))
    assert "flag" in parameters.query and "pageSize" in parameters.query


async def test_rest_validation_applies_and_is_located_on_the_arguments(mcp, db):
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        bad_url = error(await client.call_tool("createAccount", {"name": "A", "website": "x"}))
        bad_size = error(await client.call_tool("listAccounts", {"pageSize": 5000}))
        bad_id = error(await client.call_tool("getAccount", {"accountId": "nope"}))
        missing = error(await client.call_tool("createAccount", {}))
        unknown = error(
            await client.call_tool("getAccount", {"accountId": str(uuid.uuid4()), "x": 1})
        )
    for err in (bad_url, bad_size, bad_id, missing, unknown):
        assert err["code"] == "validation_error", err
    assert bad_url["details"]["errors"][0]["location"] == ["arguments", "website"]
    assert bad_size["details"]["errors"][0]["location"] == ["arguments", "pageSize"]
    assert bad_id["details"]["errors"][0]["location"] == ["arguments", "accountId"]
    assert missing["details"]["errors"][0]["location"] == ["arguments", "name"]
    assert unknown["details"]["errors"][0]["location"] == ["arguments", "x"]


async def test_a_derived_tool_answers_the_rest_body_and_its_adapter(mcp, db):
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        created = body(await client.call_tool("createAccount", {"name": "Acme"}))
        async with httpx2.AsyncClient() as http:
            rest = await http.get(
                mcp.url.removesuffix("/mcp") + f"/api/v1/accounts/{created['id']}",
                headers=bearer(actor.key),
            )
        assert body(await client.call_tool("getAccount", {"accountId": created["id"]})) == (
            rest.json()
        )
        gone = body(await client.call_tool("deleteAccount", {"accountId": created["id"]}))
    assert gone == {"deleted": True, "id": created["id"]}


def _principal() -> Principal:
    return Principal(
        token_id=uuid.uuid4(),
        token_kind="api_key",
        scopes=frozenset(),
        organization_ids=frozenset(),
    )


def test_session_ids_are_bound_to_the_token_that_opened_them():
    sessions = McpSessions(b"key", MemoryStore())
    owner, other = _principal(), _principal()
    session_id = sessions.open(owner)
    assert sessions.owned(session_id, owner)
    assert not sessions.owned(session_id, other)
    assert not McpSessions(b"another key", MemoryStore()).owned(session_id, owner)
    nonce, issued, mac = session_id.split(".")
    assert not sessions.owned(f"{nonce}.{issued}.{'0' * len(mac)}", owner)
    # The issue time is under the mac: an old id cannot be made young again.
    assert not sessions.owned(f"{nonce}.{int(issued) + 1}.{mac}", owner)
    assert not sessions.owned(f"{nonce}.{mac}", owner)
    assert not sessions.owned(nonce, owner)
    assert not sessions.owned(f"{nonce}.\u0661.{mac}", owner)
    assert sessions.open(owner) != session_id


def test_session_ids_expire(monkeypatch):
    sessions = McpSessions(b"key", MemoryStore())
    owner = _principal()
    session_id = sessions.open(owner)
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now + SESSION_MAX_AGE + 1)
    assert not sessions.owned(session_id, owner)


async def test_an_unknown_session_id_is_404(mcp, db):
    actor = await make_actor(db)
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    async with httpx2.AsyncClient() as http:
        resp = await http.post(
            mcp.url,
            json=listing,
            headers=MCP_HEADERS | bearer(actor.key) | {"Mcp-Session-Id": "made-up"},
        )
        init = await http.post(mcp.url, json=INITIALIZE, headers=MCP_HEADERS | bearer(actor.key))
    assert resp.status_code == 404
    assert init.status_code == 200 and init.headers["mcp-session-id"]


def test_a_tool_description_is_the_first_sentence_without_the_answers_shape():
    text = """List the accounts as `{"data": [account], "pagination"}`; an account is
    `{id, name}`. Use it to find an id."""
    assert brief(text) == "List the accounts."
    assert brief("Read one account by id: `{id, name}`. More.") == "Read one account by id."
    long = brief("Describe " + "this service and " * 30 + "the rest.")
    assert len(long) <= 200 and long.endswith("…") and not long.endswith(" …")
