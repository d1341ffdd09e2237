"""MANUAL and DYNAMIC lists (contract §7 engage, §11 "Engage shapes", "Other answers")."""

from __future__ import annotations

from tests.engage.helpers import API, bulk_contacts
from tests.fixtures.crm import make_account, make_contact
from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_actor


async def manual_list(client, actor) -> dict:
    resp = await client.post(
        f"{API}/lists", json={"name": "Hot", "type": "MANUAL"}, headers=actor.headers
    )
    assert resp.status_code == 201, resp.text
    return resp.json()


async def dynamic_list(client, actor, criteria: dict) -> dict:
    resp = await client.post(
        f"{API}/lists",
        json={"name": "Dyn", "type": "DYNAMIC", "criteria": criteria},
        headers=actor.headers,
    )
    assert resp.status_code == 201, resp.text
    return resp.json()


async def test_manual_list_add_members_ignores_duplicates(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    a = await make_contact(db, account, "A", "One")
    b = await make_contact(db, account, "B", "Two")
    lst = await manual_list(client, actor)
    url = f"{API}/lists/{lst['id']}/members"
    body = {"contactIds": [str(a.id), str(b.id), str(a.id)]}
    resp = await client.post(url, json=body, headers=actor.headers)
    assert resp.status_code == 200
    assert resp.json() == {"added": 2, "skipped": 1}
    resp = await client.post(url, json={"contactIds": [str(a.id)]}, headers=actor.headers)
    assert resp.json() == {"added": 0, "skipped": 1}
    members = (await client.get(url, headers=actor.headers)).json()
    assert sorted(m["contactId"] for m in members["data"]) == sorted([str(a.id), str(b.id)])
    first = members["data"][0]
    assert set(first) == {"contactId", "contact", "addedAt"}
    assert first["contact"]["id"] == first["contactId"] and first["addedAt"] is not None


async def test_manual_list_remove_one_member(client, actor, db) -> None:
    account, _ = await make_account(db, actor.org.id)
    a = await make_contact(db, account, "A", "One")
    b = await make_contact(db, account, "B", "Two")
    lst = await manual_list(client, actor)
    url = f"{API}/lists/{lst['id']}/members"
    await client.post(url, json={"contactIds": [str(a.id), str(b.id)]}, headers=actor.headers)
    assert (await client.delete(f"{url}/{a.id}", headers=actor.headers)).status_code == 204
    members = (await client.get(url, headers=actor.headers)).json()["data"]
    assert [m["contactId"] for m in members] == [str(b.id)]


async def test_adding_contacts_of_another_organization_is_422(client, actor, db) -> None:
    other = await make_actor(db)
    theirs, _ = await make_account(db, other.org.id)
    foreign = await make_contact(db, theirs)
    lst = await manual_list(client, actor)
    resp = await client.post(
        f"{API}/lists/{lst['id']}/members",
        json={"contactIds": [str(foreign.id)]},
        headers=actor.headers,
    )
    error = assert_envelope(resp, 422, "unprocessable")
    assert error["details"]["field"] == "contactIds"
    members = await client.get(f"{API}/lists/{lst['id']}/members", headers=actor.headers)
    assert members.json()["data"] == []


async def test_dynamic_list_members_come_from_criteria_at_read_time(client, actor, db) -> None:
    acme, _ = await make_account(db, actor.org.id, "Acme")
    other, _ = await make_account(db, actor.org.id, "Other")
    cto = await make_contact(db, acme, "Ada", "L", title="Chief Technology Officer",
                             email="ada@acme.io")  # fmt: skip
    await make_contact(db, acme, "Bob", "M", title="Sales", email="bob@acme.io")
    await make_contact(db, other, "Cy", "N", title="Technology lead", email="cy@other.io")
    lst = await dynamic_list(
        client, actor, {"accountIds": [str(acme.id)], "titleContains": "technology"}
    )
    url = f"{API}/lists/{lst['id']}/members"
    data = (await client.get(url, headers=actor.headers)).json()["data"]
    assert [m["contactId"] for m in data] == [str(cto.id)]
    assert data[0]["addedAt"] is None
    later = await make_contact(db, acme, "Dee", "O", title="VP Technology", email="d@acme.io")
    data = (await client.get(url, headers=actor.headers)).json()["data"]
    assert {m["contactId"] for m in data} == {str(cto.id), str(later.id)}


async def test_dynamic_list_email_domain_and_has_email(client, actor, db) -> None:
    acme, _ = await make_account(db, actor.org.id)
    a = await make_contact(db, acme, "A", "A", email="a@Acme.io")
    await make_contact(db, acme, "B", "B", email="b@notacme.io.evil")
    none = await make_contact(db, acme, "C", "C", email=None)
    by_domain = await dynamic_list(client, actor, {"emailDomain": "acme.io"})
    resp = await client.get(f"{API}/lists/{by_domain['id']}/members", headers=actor.headers)
    assert [m["contactId"] for m in resp.json()["data"]] == [str(a.id)]
    no_email = await dynamic_list(client, actor, {"hasEmail": False})
    resp = await client.get(f"{API}/lists/{no_email['id']}/members", headers=actor.headers)
    assert [m["contactId"] for m in resp.json()["data"]] == [str(none.id)]


async def test_dynamic_list_rejects_member_mutations(client, actor, db) -> None:
    acme, _ = await make_account(db, actor.org.id)
    c = await make_contact(db, acme)
    lst = await dynamic_list(client, actor, {"hasEmail": True})
    url = f"{API}/lists/{lst['id']}/members"
    resp = await client.post(url, json={"contactIds": [str(c.id)]}, headers=actor.headers)
    assert_envelope(resp, 422, "unprocessable")
    assert_envelope(await client.delete(f"{url}/{c.id}", headers=actor.headers), 422,
                    "unprocessable")  # fmt: skip


async def test_criteria_are_validated_and_empty_criteria_refused(client, actor) -> None:
    for criteria in (
        {},
        {"hasEmail": None},
        {"unknown": 1},
        {"emailDomain": "not a domain"},
        {"updatedSince": "yesterday"},
        {"accountIds": []},
    ):
        resp = await client.post(
            f"{API}/lists",
            json={"name": "D", "type": "DYNAMIC", "criteria": criteria},
            headers=actor.headers,
        )
        assert_envelope(resp, 400, "validation_error")
    resp = await client.post(
        f"{API}/lists", json={"name": "D", "type": "DYNAMIC"}, headers=actor.headers
    )
    assert_envelope(resp, 400, "validation_error")


async def test_criteria_accounts_of_another_organization_are_422(client, actor, db) -> None:
    other = await make_actor(db)
    theirs, _ = await make_account(db, other.org.id)
    resp = await client.post(
        f"{API}/lists",
        json={"name": "D", "type": "DYNAMIC", "criteria": {"accountIds": [str(theirs.id)]}},
        headers=actor.headers,
    )
    assert assert_envelope(resp, 422, "unprocessable")["details"]["field"] == "criteria.accountIds"


async def test_update_and_archive_list(client, actor) -> None:
    lst = await dynamic_list(client, actor, {"hasEmail": True})
    url = f"{API}/lists/{lst['id']}"
    resp = await client.patch(
        url, json={"name": "Renamed", "criteria": {"titleContains": "VP"}}, headers=actor.headers
    )
    assert resp.json()["name"] == "Renamed"
    assert resp.json()["criteria"] == {"titleContains": "VP"}
    assert (await client.delete(url, headers=actor.headers)).status_code == 204
    assert (await client.get(url, headers=actor.headers)).json()["archivedAt"] is not None
    assert (await client.get(f"{API}/lists", headers=actor.headers)).json()["data"] == []


async def test_large_list_pages_with_keyset_cursors(client, actor, db) -> None:
    acme, _ = await make_account(db, actor.org.id)
    ids = await bulk_contacts(db, actor.org.id, acme.id, 450)
    lst = await dynamic_list(client, actor, {"accountIds": [str(acme.id)]})
    seen: list[str] = []
    url = f"{API}/lists/{lst['id']}/members?limit=200"
    while True:
        page = (await client.get(url, headers=actor.headers)).json()
        seen += [m["contactId"] for m in page["data"]]
        assert "totalCount" not in page["pagination"]
        if not page["pagination"]["hasNextPage"]:
            break
        url = f"{API}/lists/{lst['id']}/members?limit=200&cursor={page['pagination']['nextCursor']}"
    assert seen == [str(i) for i in sorted(ids)]


async def test_dynamic_list_updated_since(client, actor, db) -> None:
    from datetime import timedelta

    from salesplan.kit.clock import utcnow

    acme, _ = await make_account(db, actor.org.id)
    old = await make_contact(db, acme, "Old", "One")
    old.updated_at = utcnow() - timedelta(days=30)
    await db.commit()
    fresh = await make_contact(db, acme, "New", "Two")
    since = (utcnow() - timedelta(days=1)).isoformat().replace("+00:00", "Z")
    lst = await dynamic_list(client, actor, {"updatedSince": since})
    resp = await client.get(f"{API}/lists/{lst['id']}/members", headers=actor.headers)
    assert [m["contactId"] for m in resp.json()["data"]] == [str(fresh.id)]
