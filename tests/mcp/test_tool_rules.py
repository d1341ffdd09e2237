"""The REST rules on the CRM and plans tools: tools/list and schemas, scopes, the organization
of a call, another organization's ids, rate-limit buckets shared with REST."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from salesplan.app import create_app
from salesplan.config import Settings
from salesplan.mcp.derive import BRIEF_LENGTH
from salesplan.mcp.registry import SHARED_ARGUMENTS, TOOLS
from tests.fixtures.crm import make_account, make_contact, make_opportunity
from tests.fixtures.factories import make_actor
from tests.mcp.conftest import McpServer, body, connect, error, rest, serve
from tests.mcp.test_catalog import _prose
from tests.mcp.test_organization_context import two_orgs

# The tools of this phase with the scope of the spec's MCP table (contract §9 for the extras).
PHASE_TWO = {
    "listAccounts": "accounts:read",
    "getAccount": "accounts:read",
    "createAccount": "accounts:write",
    "updateAccount": "accounts:write",
    "bulkCreateAccounts": "accounts:write",
    "deleteAccount": "accounts:delete",
    "listAccountContacts": "contacts:read",
    "getContact": "contacts:read",
    "createAccountContact": "contacts:write",
    "updateContact": "contacts:write",
    "deleteContact": "contacts:delete",
    "listOpportunities": "opportunities:read",
    "getOpportunity": "opportunities:read",
    "createOpportunity": "opportunities:write",
    "updateOpportunity": "opportunities:write",
    "deleteOpportunity": "opportunities:delete",
    "listPlans": "plans:read",
    "getPlan": "plans:read",
    "createPlan": "plans:write",
    "updatePlan": "plans:write",
    "listMyTasks": "plans:read",
    "createPlanTask": "plans:write",
    "updatePlanTask": "plans:write",
    "listAccountBuyingGroups": "accounts:read",
    "listBuyingGroups": "accounts:read",
    "getRelationshipMap": "relationship_maps:read",
    "listRelationshipMaps": "relationship_maps:read",
    "upsertRelationshipMapContact": "relationship_maps:write",
}
NEVER = {"sendEngageMessage", "startEngageCampaign"}


async def test_tools_list_has_every_tool_with_its_schema(mcp, db):
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(PHASE_TWO) <= set(tools)
    assert not NEVER & set(tools)
    schemas = {name: tools[name].input_schema for name in PHASE_TWO}
    assert schemas["getAccount"]["required"] == ["accountId"]
    assert schemas["createAccount"]["required"] == ["name"]
    assert set(schemas["updateAccount"]["required"]) == {"accountId", "name"}
    assert set(schemas["createOpportunity"]["required"]) == {"accountId", "name"}
    assert set(schemas["updatePlanTask"]["required"]) == {"planId", "taskId"}
    assert set(schemas["upsertRelationshipMapContact"]["required"]) == {"buyerMapId", "contactId"}
    assert "required" not in schemas["listMyTasks"]
    assert schemas["createPlan"]["properties"]["entityType"]["enum"] == [
        "OPPORTUNITY",
        "BUYING_GROUP",
        "USER",
        "ACCOUNT",
    ]
    assert schemas["listAccounts"]["properties"]["sortBy"]["enum"] == [
        "createdAt",
        "updatedAt",
        "name",
    ]
    assert {"includeArchived", "crmId", "ownerId", "cursor"} <= set(
        schemas["listAccounts"]["properties"]
    )
    for name, schema in schemas.items():
        assert schema["additionalProperties"] is False, name
        assert set(schema["properties"]["headers"]["properties"]) == {"xOrganizationId"}, name
    assert tools["getAccount"].annotations.read_only_hint is True
    assert tools["deleteAccount"].annotations.destructive_hint is True


async def test_tools_are_described_briefly_and_their_schemas_carry_no_prose(mcp, db):
    """Contract §9, 2026-11-27 (a catalog an agent can afford): no prose inside schemas; what
    an agent must know is in the tool's short description and, once, in the instructions."""
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        instructions = client.instructions or ""
    for name in PHASE_TWO:
        assert 0 < len(tools[name].description or "") <= BRIEF_LENGTH, name
        schema = tools[name].input_schema
        assert not _prose(schema), (name, _prose(schema))
        for arg in schema["properties"]:
            if arg in SHARED_ARGUMENTS:  # the list arguments: said once, in the instructions
                assert arg in instructions, arg
    create_plan = tools["createPlan"].description or ""
    assert "listAccountBuyingGroups" in create_plan and "BUYING_GROUP" in create_plan
    assert "send all the fields" in (tools["updateAccount"].description or "")


def test_tool_scopes_and_groups_follow_the_spec_table():
    for name, scope in PHASE_TWO.items():
        assert TOOLS[name].scope == scope, name
        assert TOOLS[name].group == scope.split(":")[0], name
    assert TOOLS["listMyTasks"].user_token is True


async def test_missing_scope_is_forbidden_with_required_scope_for_every_tool(mcp, db):
    actor = await make_actor(db, scopes=["engage:read"])
    async with connect(mcp.url, actor.key) as client:
        for name, scope in PHASE_TWO.items():
            err = error(await client.call_tool(name, {}))
            assert err["code"] == "forbidden", name
            assert err["details"]["requiredScope"] == scope, name


async def test_read_scope_does_not_allow_writes_or_deletes(mcp, db):
    actor = await make_actor(db, scopes=["accounts:read", "accounts:write"])
    account, _ = await make_account(db, actor.org.id, "Acme")
    async with connect(mcp.url, actor.key) as client:
        assert body(await client.call_tool("getAccount", {"accountId": str(account.id)}))
        err = error(await client.call_tool("deleteAccount", {"accountId": str(account.id)}))
    assert (err["code"], err["details"]["requiredScope"]) == ("forbidden", "accounts:delete")


async def test_crm_tool_acts_in_the_organization_of_headers_or_the_active_one(mcp, db):
    orgs = await two_orgs(db)
    await make_account(db, orgs.a.id, "Alpha account")
    await make_account(db, orgs.b.id, "Beta account")
    async with connect(mcp.url, orgs.key) as client:
        none = error(await client.call_tool("listAccounts", {}))
        by_header = body(
            await client.call_tool("listAccounts", {"headers": {"xOrganizationId": str(orgs.b.id)}})
        )
        await client.call_tool("setActiveOrganization", {"organizationId": str(orgs.a.id)})
        active = body(await client.call_tool("listAccounts", {}))
        created = body(await client.call_tool("createAccount", {"name": "Made in Alpha"}))
        header_wins = body(
            await client.call_tool("listAccounts", {"headers": {"xOrganizationId": str(orgs.b.id)}})
        )
    assert none["code"] == "organization_required"
    assert [a["name"] for a in by_header["data"]] == ["Beta account"]
    assert [a["name"] for a in active["data"]] == ["Alpha account"]
    assert [a["name"] for a in header_wins["data"]] == ["Beta account"]
    rest_a = await rest(
        mcp,
        orgs.key,
        "GET",
        f"/accounts/{created['id']}",
        headers={"X-Organization-Id": str(orgs.a.id)},
    )
    assert rest_a.status_code == 200


async def test_another_organizations_ids_are_not_found(mcp, db):
    actor = await make_actor(db)
    stranger = await make_actor(db)
    account, _ = await make_account(db, stranger.org.id, "Theirs")
    contact = await make_contact(db, account)
    opp = await make_opportunity(db, account)
    async with connect(mcp.url, stranger.key) as theirs:
        plan = body(
            await theirs.call_tool(
                "createPlan", {"name": "P", "entityType": "ACCOUNT", "entityId": str(account.id)}
            )
        )
    made = await rest(
        mcp,
        stranger.key,
        "POST",
        "/relationship-maps",
        json={"entityType": "Account", "entityId": str(account.id)},
    )
    map_id = made.json()["buyerMap"]["id"]
    task_id = str(uuid.uuid4())
    calls = [
        ("getAccount", {"accountId": str(account.id)}),
        ("updateAccount", {"accountId": str(account.id), "name": "Mine now"}),
        ("deleteAccount", {"accountId": str(account.id)}),
        ("listAccountBuyingGroups", {"accountId": str(account.id)}),
        ("listAccountContacts", {"accountId": str(account.id)}),
        ("createAccountContact", {"accountId": str(account.id), "firstName": "X"}),
        ("getContact", {"contactId": str(contact.id)}),
        ("updateContact", {"contactId": str(contact.id)}),
        ("deleteContact", {"contactId": str(contact.id)}),
        ("getOpportunity", {"opportunityId": str(opp.id)}),
        ("deleteOpportunity", {"opportunityId": str(opp.id)}),
        ("getPlan", {"planId": plan["id"]}),
        ("updatePlan", {"planId": plan["id"], "name": "Mine"}),
        ("createPlanTask", {"planId": plan["id"], "title": "T"}),
        ("updatePlanTask", {"planId": plan["id"], "taskId": task_id, "title": "T"}),
        ("getRelationshipMap", {"buyerMapId": map_id}),
        ("upsertRelationshipMapContact", {"buyerMapId": map_id, "contactId": str(contact.id)}),
    ]
    async with connect(mcp.url, actor.key) as client:
        for name, args in calls:
            assert error(await client.call_tool(name, args))["code"] == "not_found", name
        listed = body(await client.call_tool("listBuyingGroups", {"accountId": str(account.id)}))
    assert listed["data"] == []
    account_now = await rest(mcp, stranger.key, "GET", f"/accounts/{account.id}")
    assert account_now.json()["name"] == "Theirs" and account_now.json()["archivedAt"] is None


# --- rate limits shared with REST --------------------------------------------------------------

ACCOUNTS_WRITE_LIMIT = 3


@pytest.fixture
async def tight(settings: Settings, schema: None, app: object) -> AsyncIterator[McpServer]:
    """A server whose accounts write limit is 3 a minute (read stays generous)."""
    limits = {"accounts": {"read": 100, "write": ACCOUNTS_WRITE_LIMIT}}
    async with serve(create_app(settings.model_copy(update={"rate_limits": limits}))) as server:
        yield server


async def test_mcp_reads_spend_the_write_bucket_shared_with_rest_writes(tight, db):
    actor = await make_actor(db)
    created = await rest(tight, actor.key, "POST", "/accounts", json={"name": "Acme"})
    assert created.status_code == 201
    account_id = created.json()["id"]
    async with connect(tight.url, actor.key) as client:
        body(await client.call_tool("listAccounts", {}))
        body(await client.call_tool("getAccount", {"accountId": account_id}))
        err = error(await client.call_tool("listAccounts", {}))
    assert err["code"] == "rate_limit_exceeded"
    assert err["details"]["toolName"] == "listAccounts"
    assert err["details"]["endpointGroup"] == "accounts"
    assert err["details"]["write"] is True
    assert err["details"]["limit"] == ACCOUNTS_WRITE_LIMIT
    refused = await rest(tight, actor.key, "POST", "/accounts", json={"name": "Globex"})
    assert refused.status_code == 429
    assert "toolName" not in refused.json()["error"]["details"]
    # REST reads have their own bucket; other groups are untouched.
    assert (await rest(tight, actor.key, "GET", "/accounts")).status_code == 200
    async with connect(tight.url, actor.key) as client:
        assert body(await client.call_tool("listOpportunities", {}))["data"] == []


async def test_mcp_bucket_is_per_effective_organization(tight, db):
    orgs = await two_orgs(db)
    headers_a = {"headers": {"xOrganizationId": str(orgs.a.id)}}
    async with connect(tight.url, orgs.key) as client:
        for _ in range(ACCOUNTS_WRITE_LIMIT):
            body(await client.call_tool("listAccounts", headers_a))
        assert error(await client.call_tool("listAccounts", headers_a))["code"] == (
            "rate_limit_exceeded"
        )
        await client.call_tool("setActiveOrganization", {"organizationId": str(orgs.b.id)})
        body(await client.call_tool("listAccounts", {}))
        await client.call_tool("setActiveOrganization", {"organizationId": str(orgs.a.id)})
        err = error(await client.call_tool("listAccounts", {}))
    assert err["code"] == "rate_limit_exceeded"  # the remembered organization's bucket
    # REST with X-Organization-Id of A shares that bucket.
    resp = await rest(
        tight,
        orgs.key,
        "POST",
        "/accounts",
        json={"name": "X"},
        headers={"X-Organization-Id": str(orgs.a.id)},
    )
    assert resp.status_code == 429
