"""Accounts, buying groups, contacts and opportunities tools: each answers the body of the REST
operation of the same name, over real HTTP with the SDK's client."""

from __future__ import annotations

from tests.fixtures.crm import make_account, make_buying_group, make_contact, make_opportunity
from tests.fixtures.factories import make_actor
from tests.mcp.conftest import body, connect, error, rest, rest_body

# --- accounts ----------------------------------------------------------------------------------


async def test_list_accounts_answers_the_rest_body(mcp, db):
    actor = await make_actor(db)
    for name in ("Globex", "Acme", "Initech"):
        await make_account(db, actor.org.id, name)
    async with connect(mcp.url, actor.key) as client:
        result = body(
            await client.call_tool("listAccounts", {"sortBy": "name", "pageSize": 2, "page": 1})
        )
        searched = body(await client.call_tool("listAccounts", {"search": "glob"}))
    assert result == await rest_body(mcp, actor.key, "/accounts?sortBy=name&pageSize=2&page=1")
    assert [a["name"] for a in result["data"]] == ["Acme", "Globex"]
    assert [a["name"] for a in searched["data"]] == ["Globex"]


async def test_get_account_answers_the_rest_body(mcp, db):
    actor = await make_actor(db)
    account, _ = await make_account(db, actor.org.id, "Acme", domain="acme.com")
    async with connect(mcp.url, actor.key) as client:
        result = body(await client.call_tool("getAccount", {"accountId": str(account.id)}))
    assert result == await rest_body(mcp, actor.key, f"/accounts/{account.id}")
    assert result["domain"] == "acme.com"


async def test_create_account_creates_it_with_its_default_buying_group(mcp, db):
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        created = body(
            await client.call_tool(
                "createAccount", {"name": "Acme", "domain": "acme.com", "annualRevenue": 1250.5}
            )
        )
        groups = body(
            await client.call_tool("listAccountBuyingGroups", {"accountId": created["id"]})
        )
    stored = await rest_body(mcp, actor.key, f"/accounts/{created['id']}")
    assert {k: v for k, v in created.items() if k not in ("createdAt", "updatedAt")} == {
        k: v for k, v in stored.items() if k not in ("createdAt", "updatedAt")
    }
    assert stored["annualRevenue"] == 1250.5
    assert [(g["name"], g["isDefault"]) for g in groups["data"]] == [("Acme Default Plan", True)]


async def test_create_account_invalid_body_is_a_validation_error_on_the_arguments(mcp, db):
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        missing = error(await client.call_tool("createAccount", {"domain": "acme.com"}))
        bad_url = error(await client.call_tool("createAccount", {"name": "A", "website": "nope"}))
    assert missing["code"] == "validation_error"
    assert missing["details"]["errors"][0]["location"] == ["arguments", "name"]
    assert bad_url["details"]["errors"][0]["location"] == ["arguments", "website"]


async def test_create_account_duplicate_crm_id_is_a_conflict(mcp, db):
    actor = await make_actor(db)
    await make_account(db, actor.org.id, "Acme", crm_id="SF-1")
    async with connect(mcp.url, actor.key) as client:
        err = error(await client.call_tool("createAccount", {"name": "Other", "crmId": "SF-1"}))
    assert err["code"] == "conflict"


async def test_update_account_replaces_like_put(mcp, db):
    actor = await make_actor(db)
    account, _ = await make_account(db, actor.org.id, "Acme", domain="acme.com", industry="Soft")
    async with connect(mcp.url, actor.key) as client:
        result = body(
            await client.call_tool(
                "updateAccount",
                {"accountId": str(account.id), "name": "Acme Corp", "industry": "Software"},
            )
        )
    assert result == await rest_body(mcp, actor.key, f"/accounts/{account.id}")
    assert result["name"] == "Acme Corp" and result["industry"] == "Software"
    assert result["domain"] is None  # not sent: replaced by null, as PUT /accounts/{id} does


async def test_bulk_create_accounts_answers_the_rest_shape(mcp, db):
    actor = await make_actor(db)
    rows = [
        {"name": "One"},
        {"name": ""},
        {"name": "Two", "crmId": "X"},
        {"name": "T", "crmId": "X"},
    ]
    async with connect(mcp.url, actor.key) as client:
        result = body(await client.call_tool("bulkCreateAccounts", {"accounts": rows}))
    assert result["created"] == 2 and result["failed"] == 2
    assert [r["status"] for r in result["results"]] == [201, 400, 201, 409]
    assert result["results"][0]["data"]["name"] == "One"
    same = {"accounts": [{"name": "Three"}, rows[1]]}
    rest_rows = await rest(mcp, actor.key, "POST", "/accounts/bulk", json=same)
    assert rest_rows.status_code == 207
    assert rest_rows.json()["results"][1] == result["results"][1]


async def test_delete_account_archives_and_answers_deleted(mcp, db):
    actor = await make_actor(db)
    account, _ = await make_account(db, actor.org.id, "Acme")
    async with connect(mcp.url, actor.key) as client:
        result = body(await client.call_tool("deleteAccount", {"accountId": str(account.id)}))
        listed = body(await client.call_tool("listAccounts", {}))
    assert result == {"deleted": True, "id": str(account.id)}
    assert listed["data"] == []
    assert (await rest_body(mcp, actor.key, f"/accounts/{account.id}"))["archivedAt"] is not None


# --- buying groups -----------------------------------------------------------------------------


async def test_list_account_buying_groups_answers_the_rest_body(mcp, db):
    actor = await make_actor(db)
    account, _ = await make_account(db, actor.org.id, "Acme")
    await make_buying_group(db, account, "Champions")
    async with connect(mcp.url, actor.key) as client:
        result = body(
            await client.call_tool(
                "listAccountBuyingGroups", {"accountId": str(account.id), "sortBy": "name"}
            )
        )
    rest_path = f"/accounts/{account.id}/buying-groups?sortBy=name"
    assert result == await rest_body(mcp, actor.key, rest_path)
    assert [g["name"] for g in result["data"]] == ["Acme Default Plan", "Champions"]


async def test_list_buying_groups_filters_by_account_like_rest(mcp, db):
    actor = await make_actor(db)
    account, _ = await make_account(db, actor.org.id, "Acme")
    await make_account(db, actor.org.id, "Globex")
    async with connect(mcp.url, actor.key) as client:
        result = body(await client.call_tool("listBuyingGroups", {"accountId": str(account.id)}))
        everything = body(await client.call_tool("listBuyingGroups", {}))
    assert result == await rest_body(mcp, actor.key, f"/buying-groups?accountId={account.id}")
    assert len(result["data"]) == 1 and len(everything["data"]) == 2


# --- contacts ----------------------------------------------------------------------------------


async def test_list_account_contacts_answers_the_rest_body(mcp, db):
    actor = await make_actor(db)
    account, _ = await make_account(db, actor.org.id, "Acme")
    await make_contact(db, account, "Ada", "Lovelace")
    await make_contact(db, account, "Grace", "Hopper")
    async with connect(mcp.url, actor.key) as client:
        result = body(
            await client.call_tool(
                "listAccountContacts", {"accountId": str(account.id), "sortBy": "lastName"}
            )
        )
    rest_path = f"/accounts/{account.id}/contacts?sortBy=lastName"
    assert result == await rest_body(mcp, actor.key, rest_path)
    assert [c["lastName"] for c in result["data"]] == ["Hopper", "Lovelace"]


async def test_contact_tools_create_read_replace_delete(mcp, db):
    actor = await make_actor(db)
    account, _ = await make_account(db, actor.org.id, "Acme")
    async with connect(mcp.url, actor.key) as client:
        created = body(
            await client.call_tool(
                "createAccountContact",
                {
                    "accountId": str(account.id),
                    "firstName": "Ada",
                    "lastName": "Lovelace",
                    "email": "ada@acme.com",
                    "title": "CTO",
                },
            )
        )
        contact_id = created["id"]
        read = body(await client.call_tool("getContact", {"contactId": contact_id}))
        assert read == await rest_body(mcp, actor.key, f"/contacts/{contact_id}")
        assert read["fullName"] == "Ada Lovelace" and read["accountId"] == str(account.id)
        replaced = body(
            await client.call_tool(
                "updateContact", {"contactId": contact_id, "firstName": "Ada", "lastName": "King"}
            )
        )
        assert replaced == await rest_body(mcp, actor.key, f"/contacts/{contact_id}")
        assert replaced["email"] is None and replaced["title"] is None  # PUT: not sent → null
        assert replaced["accountId"] == str(account.id)  # kept when left out
        gone = body(await client.call_tool("deleteContact", {"contactId": contact_id}))
    assert gone == {"deleted": True, "id": contact_id}
    assert (await rest_body(mcp, actor.key, f"/contacts/{contact_id}"))["archivedAt"] is not None


async def test_create_account_contact_invalid_email_is_a_validation_error(mcp, db):
    actor = await make_actor(db)
    account, _ = await make_account(db, actor.org.id, "Acme")
    async with connect(mcp.url, actor.key) as client:
        err = error(
            await client.call_tool(
                "createAccountContact", {"accountId": str(account.id), "email": "not-an-email"}
            )
        )
    assert err["code"] == "validation_error"
    assert err["details"]["errors"][0]["location"] == ["arguments", "email"]


# --- opportunities -----------------------------------------------------------------------------


async def test_list_opportunities_answers_the_rest_body(mcp, db):
    actor = await make_actor(db)
    account, _ = await make_account(db, actor.org.id, "Acme")
    other, _ = await make_account(db, actor.org.id, "Globex")
    await make_opportunity(db, account, "Expansion")
    await make_opportunity(db, other, "Renewal")
    async with connect(mcp.url, actor.key) as client:
        result = body(await client.call_tool("listOpportunities", {"accountId": str(account.id)}))
    assert result == await rest_body(mcp, actor.key, f"/opportunities?accountId={account.id}")
    assert [o["name"] for o in result["data"]] == ["Expansion"]


async def test_opportunity_tools_create_read_replace_delete(mcp, db):
    actor = await make_actor(db)
    account, _ = await make_account(db, actor.org.id, "Acme")
    async with connect(mcp.url, actor.key) as client:
        created = body(
            await client.call_tool(
                "createOpportunity",
                {
                    "accountId": str(account.id),
                    "name": "Expansion",
                    "stage": "Discovery",
                    "amount": 50000,
                    "currency": "USD",
                    "closeDate": "2027-03-31",
                },
            )
        )
        opp_id = created["id"]
        assert created["status"] == "open"
        read = body(await client.call_tool("getOpportunity", {"opportunityId": opp_id}))
        assert read == await rest_body(mcp, actor.key, f"/opportunities/{opp_id}")
        replaced = body(
            await client.call_tool(
                "updateOpportunity",
                {
                    "opportunityId": opp_id,
                    "accountId": str(account.id),
                    "name": "Expansion",
                    "stage": "Won",
                    "status": "won",
                },
            )
        )
        assert replaced == await rest_body(mcp, actor.key, f"/opportunities/{opp_id}")
        assert replaced["status"] == "won" and replaced["amount"] is None
        gone = body(await client.call_tool("deleteOpportunity", {"opportunityId": opp_id}))
    assert gone == {"deleted": True, "id": opp_id}


async def test_create_opportunity_on_an_unknown_account_is_unprocessable(mcp, db):
    actor = await make_actor(db)
    stranger = await make_actor(db)
    account, _ = await make_account(db, stranger.org.id, "Theirs")
    async with connect(mcp.url, actor.key) as client:
        err = error(
            await client.call_tool(
                "createOpportunity", {"accountId": str(account.id), "name": "Steal"}
            )
        )
    assert err["code"] == "unprocessable"


async def test_create_account_without_an_owner_is_the_callers_on_mcp_and_rest(mcp, db):
    """Issue 29: createAccount through MCP with a user's key left ownerId null; both surfaces
    run the same service, which makes the calling user the owner when none is sent."""
    actor = await make_actor(db)
    async with connect(mcp.url, actor.key) as client:
        by_tool = body(await client.call_tool("createAccount", {"name": "Via MCP"}))
        unowned = body(
            await client.call_tool("createAccount", {"name": "Nobody's", "ownerId": None})
        )
    by_rest = await rest(mcp, actor.key, "POST", "/accounts", json={"name": "Via REST"})
    assert by_rest.status_code == 201, by_rest.text
    assert by_tool["ownerId"] == by_rest.json()["ownerId"] == str(actor.user.id)
    assert unowned["ownerId"] is None  # sent as null: no owner
