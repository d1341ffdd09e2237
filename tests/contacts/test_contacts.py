"""Contacts: shapes, validation, archive, crmId, search."""

from __future__ import annotations

import uuid

from tests.fixtures.crm import make_account
from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_actor

CONTACT_KEYS = {
    "id",
    "accountId",
    "firstName",
    "lastName",
    "fullName",
    "email",
    "title",
    "phone",
    "linkedinUrl",
    "crmId",
    "timeZone",
    "archivedAt",
    "createdAt",
    "updatedAt",
}


async def new_contact(client, actor, account_id, **body):  # type: ignore[no-untyped-def]
    body.setdefault("firstName", "Ada")
    body.setdefault("lastName", "Lovelace")
    return await client.post(
        f"/api/v1/accounts/{account_id}/contacts", json=body, headers=actor.headers
    )


async def test_create_account_contact_answers_201_with_full_name(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    resp = await new_contact(
        client,
        actor,
        account.id,
        email="ada@example.com",
        title="CTO",
        phone="+1 555",
        linkedinUrl="https://linkedin.com/in/ada",
        crmId="C-1",
    )
    assert resp.status_code == 201
    data = resp.json()
    assert set(data) == CONTACT_KEYS
    assert data["fullName"] == "Ada Lovelace"
    assert data["accountId"] == str(account.id)
    assert data["email"] == "ada@example.com"


async def test_contact_validation_errors_are_400(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    for body in (
        {"email": "not-an-email"},
        {"linkedinUrl": "ftp:/x"},
        {"nope": 1},
        {"firstName": 3},
    ):
        assert_envelope(
            await new_contact(client, actor, account.id, **body), 400, "validation_error"
        )


async def test_contact_of_a_missing_account_is_404(client, actor) -> None:
    resp = await new_contact(client, actor, uuid.uuid4())
    assert_envelope(resp, 404, "not_found")


async def test_duplicate_contact_crm_id_is_409(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    assert (await new_contact(client, actor, account.id, crmId="D")).status_code == 201
    assert_envelope(await new_contact(client, actor, account.id, crmId="D"), 409, "conflict")


async def test_put_replaces_and_patch_changes_only_sent_fields(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    contact = (await new_contact(client, actor, account.id, title="CEO")).json()
    url = f"/api/v1/contacts/{contact['id']}"
    patched = await client.patch(url, json={"phone": "123"}, headers=actor.headers)
    assert patched.status_code == 200
    assert patched.json()["title"] == "CEO"
    assert patched.json()["phone"] == "123"
    put = await client.put(url, json={"firstName": "Grace"}, headers=actor.headers)
    assert put.status_code == 200
    assert put.json()["lastName"] is None
    assert put.json()["title"] is None
    assert put.json()["fullName"] == "Grace"
    assert put.json()["accountId"] == str(account.id)


async def test_moving_a_contact_to_a_missing_account_is_422(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    contact = (await new_contact(client, actor, account.id)).json()
    resp = await client.patch(
        f"/api/v1/contacts/{contact['id']}",
        json={"accountId": str(uuid.uuid4())},
        headers=actor.headers,
    )
    assert_envelope(resp, 422, "unprocessable")
    assert resp.json()["error"]["details"]["field"] == "accountId"


async def test_delete_archives_the_contact(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    contact = (await new_contact(client, actor, account.id)).json()
    url = f"/api/v1/contacts/{contact['id']}"
    assert (await client.delete(url, headers=actor.headers)).status_code == 204
    assert (await client.delete(url, headers=actor.headers)).status_code == 204
    assert (await client.get(url, headers=actor.headers)).json()["archivedAt"] is not None
    listed = await client.get(f"/api/v1/accounts/{account.id}/contacts", headers=actor.headers)
    assert listed.json()["data"] == []
    listed = await client.get(
        "/api/v1/contacts", params={"includeArchived": "true"}, headers=actor.headers
    )
    assert len(listed.json()["data"]) == 1


async def test_search_matches_names_and_emails_case_insensitively(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    await new_contact(
        client, actor, account.id, firstName="Grace", lastName="Hopper", email="g@navy.mil"
    )
    await new_contact(
        client, actor, account.id, firstName="Alan", lastName="Turing", email="alan@NAVY.example"
    )
    await new_contact(
        client, actor, account.id, firstName="Edsger", lastName="Dijkstra", email="e@tue.nl"
    )
    resp = await client.get("/api/v1/contacts", params={"search": "navy"}, headers=actor.headers)
    assert sorted(c["lastName"] for c in resp.json()["data"]) == ["Hopper", "Turing"]
    resp = await client.get("/api/v1/contacts", params={"search": "DIJK"}, headers=actor.headers)
    assert [c["lastName"] for c in resp.json()["data"]] == ["Dijkstra"]
    resp = await client.get(
        "/api/v1/contacts", params={"email": "G@navy.mil"}, headers=actor.headers
    )
    assert [c["lastName"] for c in resp.json()["data"]] == ["Hopper"]


async def test_list_contacts_filters_by_account(client, actor, db) -> None:
    a, _ = await make_account(db, actor.org.id)
    b, _ = await make_account(db, actor.org.id)
    await new_contact(client, actor, a.id, lastName="A")
    await new_contact(client, actor, b.id, lastName="B")
    resp = await client.get(
        "/api/v1/contacts", params={"accountId": str(b.id)}, headers=actor.headers
    )
    assert [c["lastName"] for c in resp.json()["data"]] == ["B"]


async def test_another_organizations_contact_is_404(client, actor, db) -> None:
    other = await make_actor(db)
    account, _ = await make_account(db, other.org.id)
    contact = (await new_contact(client, other, account.id)).json()
    resp = await client.get(f"/api/v1/contacts/{contact['id']}", headers=actor.headers)
    assert_envelope(resp, 404, "not_found")


async def test_contact_operations_use_contacts_scopes_and_group(client) -> None:
    doc = (await client.get("/api/v1/openapi.json")).json()
    ops = {
        op["operationId"]: op
        for path in doc["paths"].values()
        for op in path.values()
        if isinstance(op, dict) and "operationId" in op
    }
    for op_id, scope in {
        "listAccountContacts": "contacts:read",
        "createAccountContact": "contacts:write",
        "listContacts": "contacts:read",
        "getContact": "contacts:read",
        "updateContact": "contacts:write",
        "patchContact": "contacts:write",
        "deleteContact": "contacts:delete",
    }.items():
        assert ops[op_id]["x-scopes"] == [scope]
        assert ops[op_id]["x-rate-limit-group"] == "contacts"
