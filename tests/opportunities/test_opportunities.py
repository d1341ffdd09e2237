"""Opportunities: shapes, validation, references, archive."""

from __future__ import annotations

import uuid

from tests.fixtures.crm import make_account
from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_org, make_user

OPP_KEYS = {
    "id",
    "accountId",
    "name",
    "stage",
    "amount",
    "currency",
    "closeDate",
    "probability",
    "status",
    "ownerId",
    "crmId",
    "archivedAt",
    "createdAt",
    "updatedAt",
}


async def test_create_opportunity_answers_201(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    resp = await client.post(
        "/api/v1/opportunities",
        json={
            "accountId": str(account.id),
            "name": "Renewal",
            "stage": "Negotiation",
            "amount": 5000,
            "currency": "usd",
            "closeDate": "2026-12-31",
            "probability": 60,
            "ownerId": str(actor.user.id),
            "crmId": "O-1",
        },
        headers=actor.headers,
    )
    assert resp.status_code == 201
    data = resp.json()
    assert set(data) == OPP_KEYS
    assert data["status"] == "open"
    assert data["currency"] == "USD"
    assert data["amount"] == 5000
    assert data["closeDate"] == "2026-12-31"


async def test_opportunity_validation_errors_are_400(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    base = {"accountId": str(account.id), "name": "X"}
    for extra in (
        {"amount": -1},
        {"probability": 101},
        {"probability": -1},
        {"currency": "US"},
        {"status": "pending"},
        {"closeDate": "31/12/2026"},
        {"name": None},
        {"bogus": 1},
    ):
        resp = await client.post("/api/v1/opportunities", json=base | extra, headers=actor.headers)
        assert_envelope(resp, 400, "validation_error")
    resp = await client.post("/api/v1/opportunities", json={"name": "X"}, headers=actor.headers)
    assert_envelope(resp, 400, "validation_error")


async def test_missing_account_or_foreign_owner_is_422(client, actor, db) -> None:
    resp = await client.post(
        "/api/v1/opportunities",
        json={"accountId": str(uuid.uuid4()), "name": "X"},
        headers=actor.headers,
    )
    assert_envelope(resp, 422, "unprocessable")
    assert resp.json()["error"]["details"]["field"] == "accountId"
    account, _ = await make_account(db, actor.org.id)
    stranger = await make_user(db, await make_org(db))
    resp = await client.post(
        "/api/v1/opportunities",
        json={"accountId": str(account.id), "name": "X", "ownerId": str(stranger.id)},
        headers=actor.headers,
    )
    assert_envelope(resp, 422, "unprocessable")
    assert resp.json()["error"]["details"]["field"] == "ownerId"


async def test_put_replaces_patch_changes_and_delete_archives(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    opp = (
        await client.post(
            "/api/v1/opportunities",
            json={"accountId": str(account.id), "name": "X", "stage": "Discovery", "amount": 10},
            headers=actor.headers,
        )
    ).json()
    url = f"/api/v1/opportunities/{opp['id']}"
    patched = (await client.patch(url, json={"status": "won"}, headers=actor.headers)).json()
    assert patched["status"] == "won"
    assert patched["stage"] == "Discovery"
    put = (
        await client.put(
            url, json={"accountId": str(account.id), "name": "Y"}, headers=actor.headers
        )
    ).json()
    assert put["stage"] is None
    assert put["amount"] is None
    assert put["status"] == "open"
    assert (await client.delete(url, headers=actor.headers)).status_code == 204
    assert (await client.delete(url, headers=actor.headers)).status_code == 204
    assert (await client.get(url, headers=actor.headers)).json()["archivedAt"] is not None
    assert (await client.get("/api/v1/opportunities", headers=actor.headers)).json()["data"] == []


async def test_list_filters_by_account_stage_and_search(client, actor, db) -> None:
    a, _ = await make_account(db, actor.org.id)
    b, _ = await make_account(db, actor.org.id)
    for account, name, stage in (
        (a, "Big Deal", "won"),
        (a, "Small", "lost"),
        (b, "Other Deal", "won"),
    ):
        await client.post(
            "/api/v1/opportunities",
            json={"accountId": str(account.id), "name": name, "stage": stage},
            headers=actor.headers,
        )

    async def names(**params: str) -> list[str]:
        resp = await client.get("/api/v1/opportunities", params=params, headers=actor.headers)
        return sorted(o["name"] for o in resp.json()["data"])

    assert await names(accountId=str(a.id)) == ["Big Deal", "Small"]
    assert await names(stage="won") == ["Big Deal", "Other Deal"]
    assert await names(search="deal") == ["Big Deal", "Other Deal"]


async def test_duplicate_opportunity_crm_id_is_409(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    body = {"accountId": str(account.id), "name": "X", "crmId": "OPP"}
    assert (
        await client.post("/api/v1/opportunities", json=body, headers=actor.headers)
    ).status_code == 201
    resp = await client.post("/api/v1/opportunities", json=body, headers=actor.headers)
    assert_envelope(resp, 409, "conflict")


async def test_opportunity_operations_use_their_scopes_and_group(client) -> None:
    doc = (await client.get("/api/v1/openapi.json")).json()
    ops = {
        op["operationId"]: op
        for path in doc["paths"].values()
        for op in path.values()
        if isinstance(op, dict) and "operationId" in op
    }
    for op_id, scope in {
        "listOpportunities": "opportunities:read",
        "createOpportunity": "opportunities:write",
        "getOpportunity": "opportunities:read",
        "updateOpportunity": "opportunities:write",
        "patchOpportunity": "opportunities:write",
        "deleteOpportunity": "opportunities:delete",
    }.items():
        assert ops[op_id]["x-scopes"] == [scope]
        assert ops[op_id]["x-rate-limit-group"] == "opportunities"
