"""Buying groups: create with members, update, the default group cannot be deleted."""

from __future__ import annotations

import uuid

from tests.fixtures.crm import make_account, make_contact, make_opportunity
from tests.fixtures.envelope import assert_envelope

GROUP_KEYS = {
    "id",
    "accountId",
    "name",
    "description",
    "isDefault",
    "opportunityId",
    "memberContactIds",
    "archivedAt",
    "createdAt",
    "updatedAt",
}


async def test_create_buying_group_with_members(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    contact = await make_contact(db, account)
    opp = await make_opportunity(db, account)
    resp = await client.post(
        "/api/v1/buying-groups",
        json={
            "accountId": str(account.id),
            "name": "Champions",
            "opportunityId": str(opp.id),
            "memberContactIds": [str(contact.id)],
        },
        headers=actor.headers,
    )
    assert resp.status_code == 201
    data = resp.json()
    assert set(data) == GROUP_KEYS
    assert data["isDefault"] is False
    assert data["memberContactIds"] == [str(contact.id)]
    got = await client.get(f"/api/v1/buying-groups/{data['id']}", headers=actor.headers)
    assert got.json() == data


async def test_buying_group_references_are_422(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    other, _ = await make_account(db, actor.org.id)
    stranger = await make_contact(db, other)
    cases = [
        ({"accountId": str(uuid.uuid4()), "name": "G"}, "accountId"),
        (
            {"accountId": str(account.id), "name": "G", "memberContactIds": [str(stranger.id)]},
            "memberContactIds",
        ),
        (
            {"accountId": str(account.id), "name": "G", "opportunityId": str(uuid.uuid4())},
            "opportunityId",
        ),
    ]
    for body, field in cases:
        resp = await client.post("/api/v1/buying-groups", json=body, headers=actor.headers)
        assert_envelope(resp, 422, "unprocessable")
        assert resp.json()["error"]["details"]["field"] == field


async def test_update_buying_group_changes_sent_fields_and_members(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    a = await make_contact(db, account)
    b = await make_contact(db, account, first="Bo")
    group = (
        await client.post(
            "/api/v1/buying-groups",
            json={
                "accountId": str(account.id),
                "name": "G",
                "description": "d",
                "memberContactIds": [str(a.id)],
            },
            headers=actor.headers,
        )
    ).json()
    url = f"/api/v1/buying-groups/{group['id']}"
    resp = await client.patch(url, json={"name": "H"}, headers=actor.headers)
    assert resp.json()["description"] == "d"
    assert resp.json()["memberContactIds"] == [str(a.id)]
    resp = await client.patch(url, json={"memberContactIds": [str(b.id)]}, headers=actor.headers)
    assert resp.json()["memberContactIds"] == [str(b.id)]
    assert resp.json()["name"] == "H"


async def test_deleting_the_default_buying_group_is_422(client, actor, db) -> None:
    _, default = await make_account(db, actor.org.id)
    resp = await client.delete(f"/api/v1/buying-groups/{default.id}", headers=actor.headers)
    assert_envelope(resp, 422, "unprocessable")


async def test_deleting_a_buying_group_archives_it(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    group = (
        await client.post(
            "/api/v1/buying-groups",
            json={"accountId": str(account.id), "name": "G"},
            headers=actor.headers,
        )
    ).json()
    url = f"/api/v1/buying-groups/{group['id']}"
    assert (await client.delete(url, headers=actor.headers)).status_code == 204
    assert (await client.delete(url, headers=actor.headers)).status_code == 204
    assert (await client.get(url, headers=actor.headers)).json()["archivedAt"] is not None
    listed = await client.get(
        "/api/v1/buying-groups", params={"accountId": str(account.id)}, headers=actor.headers
    )
    assert [g["isDefault"] for g in listed.json()["data"]] == [True]
