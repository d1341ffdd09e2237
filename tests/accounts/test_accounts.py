"""Accounts: shapes, validation, archive, crmId, default buying group."""

from __future__ import annotations

import asyncio
import uuid

import httpx

from salesplan.kit.clock import utcnow
from tests.fixtures.crm import make_account
from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import Actor, make_actor, make_org, make_user

ACCOUNT_KEYS = {
    "id",
    "name",
    "domain",
    "website",
    "industry",
    "description",
    "crmId",
    "ownerId",
    "annualRevenue",
    "employeeCount",
    "archivedAt",
    "createdAt",
    "updatedAt",
}


async def create(client: httpx.AsyncClient, actor: Actor, **body: object) -> httpx.Response:
    body.setdefault("name", "Acme")
    return await client.post("/api/v1/accounts", json=body, headers=actor.headers)


async def test_create_account_answers_201_with_the_account(client, actor) -> None:
    resp = await create(
        client,
        actor,
        name="Acme",
        domain="acme.com",
        website="https://acme.com",
        industry="Tools",
        description="Anvils",
        crmId="SF-1",
        ownerId=str(actor.user.id),
        annualRevenue=1250000.5,
        employeeCount=40,
    )
    assert resp.status_code == 201
    data = resp.json()
    assert set(data) == ACCOUNT_KEYS
    assert data["name"] == "Acme"
    assert data["annualRevenue"] == 1250000.5
    assert data["employeeCount"] == 40
    assert data["ownerId"] == str(actor.user.id)
    assert data["archivedAt"] is None
    assert data["createdAt"].endswith("Z") or data["createdAt"].endswith("+00:00")


async def test_creating_an_account_creates_its_default_buying_group(client, actor) -> None:
    account = (await create(client, actor, name="Globex")).json()
    resp = await client.get(
        f"/api/v1/accounts/{account['id']}/buying-groups", headers=actor.headers
    )
    assert resp.status_code == 200
    groups = resp.json()["data"]
    assert len(groups) == 1
    group = groups[0]
    assert group["isDefault"] is True
    assert group["name"] == "Globex Default Plan"
    assert group["accountId"] == account["id"]
    assert group["memberContactIds"] == []
    listed = await client.get(
        "/api/v1/buying-groups", params={"accountId": account["id"]}, headers=actor.headers
    )
    assert [g["id"] for g in listed.json()["data"]] == [group["id"]]


async def test_account_validation_errors_are_400(client, actor) -> None:
    for body in (
        {},
        {"name": ""},
        {"name": "A", "website": "not a url"},
        {"name": "A", "annualRevenue": -1},
        {"name": "A", "employeeCount": -3},
        {"name": "A", "unknown": 1},
        {"name": "A", "ownerId": "nope"},
    ):
        resp = await client.post("/api/v1/accounts", json=body, headers=actor.headers)
        assert_envelope(resp, 400, "validation_error")


async def test_an_owner_outside_the_organization_is_422(client, actor, db) -> None:
    other = await make_org(db)
    stranger = await make_user(db, other)
    resp = await create(client, actor, ownerId=str(stranger.id))
    assert_envelope(resp, 422, "unprocessable")
    assert resp.json()["error"]["details"]["field"] == "ownerId"


async def test_duplicate_crm_id_is_409(client, actor) -> None:
    assert (await create(client, actor, crmId="X-1")).status_code == 201
    resp = await create(client, actor, name="Other", crmId="X-1")
    assert_envelope(resp, 409, "conflict")


async def test_crm_id_is_unique_per_organization_only(client, actor, db) -> None:
    other = await make_actor(db)
    assert (await create(client, actor, crmId="X-2")).status_code == 201
    assert (await create(client, other, crmId="X-2")).status_code == 201


async def test_crm_id_of_an_archived_account_can_be_reused(client, actor) -> None:
    first = (await create(client, actor, crmId="X-3")).json()
    await client.delete(f"/api/v1/accounts/{first['id']}", headers=actor.headers)
    assert (await create(client, actor, crmId="X-3")).status_code == 201


async def test_two_concurrent_creates_with_one_crm_id_give_one_201_and_one_409(
    client, actor
) -> None:
    responses = await asyncio.gather(
        create(client, actor, name="Race A", crmId="RACE"),
        create(client, actor, name="Race B", crmId="RACE"),
    )
    assert sorted(r.status_code for r in responses) == [201, 409]
    listed = await client.get("/api/v1/accounts", params={"crmId": "RACE"}, headers=actor.headers)
    assert listed.json()["pagination"]["totalCount"] == 1


async def test_put_replaces_the_account(client, actor) -> None:
    account = (await create(client, actor, name="A", domain="a.com", industry="X")).json()
    resp = await client.put(
        f"/api/v1/accounts/{account['id']}", json={"name": "B"}, headers=actor.headers
    )
    assert resp.status_code == 200
    data = resp.json()
    assert data["name"] == "B"
    assert data["domain"] is None
    assert data["industry"] is None


async def test_patch_changes_only_the_fields_sent(client, actor) -> None:
    account = (await create(client, actor, name="A", domain="a.com")).json()
    resp = await client.patch(
        f"/api/v1/accounts/{account['id']}", json={"industry": "Y"}, headers=actor.headers
    )
    assert resp.status_code == 200
    assert resp.json()["domain"] == "a.com"
    assert resp.json()["industry"] == "Y"
    assert resp.json()["name"] == "A"
    nulled = await client.patch(
        f"/api/v1/accounts/{account['id']}", json={"name": None}, headers=actor.headers
    )
    assert_envelope(nulled, 400, "validation_error")


async def test_delete_archives_and_is_idempotent(client, actor) -> None:
    account = (await create(client, actor)).json()
    url = f"/api/v1/accounts/{account['id']}"
    first = await client.delete(url, headers=actor.headers)
    assert first.status_code == 204
    assert first.content == b""
    assert (await client.delete(url, headers=actor.headers)).status_code == 204
    got = await client.get(url, headers=actor.headers)
    assert got.status_code == 200
    assert got.json()["archivedAt"] is not None
    listed = await client.get("/api/v1/accounts", headers=actor.headers)
    assert listed.json()["data"] == []
    with_archived = await client.get(
        "/api/v1/accounts", params={"includeArchived": "true"}, headers=actor.headers
    )
    assert [a["id"] for a in with_archived.json()["data"]] == [account["id"]]


async def test_another_organizations_account_is_404(client, actor, db) -> None:
    other = await make_actor(db)
    account = (await create(client, other)).json()
    resp = await client.get(f"/api/v1/accounts/{account['id']}", headers=actor.headers)
    assert_envelope(resp, 404, "not_found")
    resp = await client.get(f"/api/v1/accounts/{uuid.uuid4()}", headers=actor.headers)
    assert_envelope(resp, 404, "not_found")


async def test_search_is_a_case_insensitive_substring_of_name_or_domain(client, actor) -> None:
    await create(client, actor, name="Initech Labs")
    await create(client, actor, name="Other", domain="INITECH.example")
    await create(client, actor, name="Nothing")
    resp = await client.get("/api/v1/accounts", params={"search": "initech"}, headers=actor.headers)
    assert sorted(a["name"] for a in resp.json()["data"]) == ["Initech Labs", "Other"]
    resp = await client.get("/api/v1/accounts", params={"search": "100%"}, headers=actor.headers)
    assert resp.json()["data"] == []


async def test_list_filters_by_owner(client, actor) -> None:
    await create(client, actor, name="Mine", ownerId=str(actor.user.id))
    await create(client, actor, name="Nobody's", ownerId=None)  # left out: the caller's
    resp = await client.get(
        "/api/v1/accounts", params={"ownerId": str(actor.user.id)}, headers=actor.headers
    )
    assert [a["name"] for a in resp.json()["data"]] == ["Mine"]


async def test_scopes_are_enforced(client, db) -> None:
    reader = await make_actor(db, scopes=["accounts:read"])
    resp = await create(client, reader)
    assert_envelope(resp, 403, "forbidden")
    assert resp.json()["error"]["details"]["requiredScope"] == "accounts:write"
    writer = await make_actor(db, scopes=["accounts:read", "accounts:write"])
    account = (await create(client, writer)).json()
    resp = await client.delete(f"/api/v1/accounts/{account['id']}", headers=writer.headers)
    assert resp.json()["error"]["details"]["requiredScope"] == "accounts:delete"


async def test_operations_carry_their_ids_scopes_and_group(client) -> None:
    doc = (await client.get("/api/v1/openapi.json")).json()
    ops = {
        op["operationId"]: op
        for path in doc["paths"].values()
        for op in path.values()
        if isinstance(op, dict) and "operationId" in op
    }
    expected = {
        "listAccounts": "accounts:read",
        "createAccount": "accounts:write",
        "bulkCreateAccounts": "accounts:write",
        "getAccount": "accounts:read",
        "updateAccount": "accounts:write",
        "patchAccount": "accounts:write",
        "deleteAccount": "accounts:delete",
        "listAccountBuyingGroups": "accounts:read",
        "listBuyingGroups": "accounts:read",
        "createBuyingGroup": "accounts:write",
        "getBuyingGroup": "accounts:read",
        "updateBuyingGroup": "accounts:write",
        "deleteBuyingGroup": "accounts:delete",
        "listLeads": "accounts:read",
        "createLead": "accounts:write",
        "getLead": "accounts:read",
        "updateLead": "accounts:write",
        "deleteLead": "accounts:delete",
    }
    for op_id, scope in expected.items():
        assert ops[op_id]["x-scopes"] == [scope], op_id
        assert ops[op_id]["x-rate-limit-group"] == "accounts", op_id


async def test_a_create_racing_an_uncommitted_one_waits_and_gets_409(app, actor) -> None:
    """Two transactions, interleaved by hand: the partial unique index makes the second insert
    wait for the first and then fail, so a race cannot produce two live rows."""
    import pytest

    from salesplan.accounts.schemas import AccountIn
    from salesplan.accounts.service import create_account
    from salesplan.auth.principal import Principal, RequestContext
    from salesplan.errors import Conflict

    principal = Principal(
        token_id=uuid.uuid4(),
        token_kind="api_key",
        scopes=frozenset(),
        organization_ids=frozenset({actor.org.id}),
    )
    ctx = RequestContext(principal, actor.org.id)
    body = AccountIn.model_validate({"name": "Racer", "crmId": "HELD"})
    async with app.state.sessionmaker() as first, app.state.sessionmaker() as second:
        await create_account(first, ctx, body)  # inserted, not committed

        async def late() -> None:
            await create_account(second, ctx, body)

        task = asyncio.create_task(late())
        await asyncio.sleep(0.3)
        assert not task.done()  # blocked behind the first transaction
        await first.commit()
        with pytest.raises(Conflict):
            await task
        await second.rollback()


async def test_page_totals_on_every_page_past_the_end_and_filtered(client, actor, db) -> None:
    """The total comes with the page's rows (one statement) or, for a page without rows,
    on its own: the same count either way, of this organization's live accounts only."""
    for i in range(5):
        await make_account(db, actor.org.id, name=f"Totals {i}")
    await make_account(db, actor.org.id, name="Totals archived", archived_at=utcnow())
    await make_account(db, (await make_org(db)).id, name="Totals elsewhere")
    await db.commit()

    async def page(**params):  # type: ignore[no-untyped-def]
        resp = await client.get("/api/v1/accounts", params=params, headers=actor.headers)
        assert resp.status_code == 200, resp.text
        return resp.json()

    for number, size, count in ((1, 2, 2), (3, 2, 1), (4, 2, 0), (99, 2, 0), (1, 50, 5)):
        body = await page(page=number, pageSize=size)
        assert len(body["data"]) == count
        assert body["pagination"]["totalCount"] == 5, (number, size)
        assert body["pagination"]["totalPages"] == (3 if size == 2 else 1)
        assert body["pagination"]["hasNextPage"] is (number < 3 and size == 2)
    body = await page(search="totals 3")
    assert [a["name"] for a in body["data"]] == ["Totals 3"]
    assert body["pagination"]["totalCount"] == 1
    archived = await page(includeArchived="true", pageSize=4, page=2)
    assert len(archived["data"]) == 2 and archived["pagination"]["totalCount"] == 6
