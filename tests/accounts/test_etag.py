"""getAccount and listAccounts revalidation (issue 15): a strong ETag of the body's bytes;
If-None-Match naming it is a 304 without a body, any change of the row gives a new tag (and the
old one the new body); another organization's id stays a 404 whatever tag is sent."""

from __future__ import annotations

import uuid

from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_actor

ACCOUNTS = "/api/v1/accounts"


async def _account(client, actor, **body: object) -> str:
    resp = await client.post(ACCOUNTS, json={"name": "Acme", **body}, headers=actor.headers)
    assert resp.status_code == 201, resp.text
    return str(resp.json()["id"])


async def test_get_account_answers_a_tag_and_304_when_it_is_current(client, actor) -> None:
    account_id = await _account(client, actor, domain="acme.com", annualRevenue=12.5)
    first = await client.get(f"{ACCOUNTS}/{account_id}", headers=actor.headers)
    assert first.status_code == 200
    tag = first.headers["etag"]
    assert tag.startswith('"') and tag.endswith('"')
    again = await client.get(f"{ACCOUNTS}/{account_id}", headers=actor.headers)
    assert again.headers["etag"] == tag and again.content == first.content

    for sent in (tag, f"W/{tag}", f'"other", {tag}', "*"):
        resp = await client.get(
            f"{ACCOUNTS}/{account_id}", headers=actor.headers | {"If-None-Match": sent}
        )
        assert resp.status_code == 304, sent
        assert resp.content == b""
        assert resp.headers["etag"] == tag

    stale = await client.get(
        f"{ACCOUNTS}/{account_id}", headers=actor.headers | {"If-None-Match": '"other"'}
    )
    assert stale.status_code == 200 and stale.json() == first.json()


async def test_a_changed_account_gets_a_new_tag(client, actor) -> None:
    account_id = await _account(client, actor)
    before = await client.get(f"{ACCOUNTS}/{account_id}", headers=actor.headers)
    tag = before.headers["etag"]
    patched = await client.patch(
        f"{ACCOUNTS}/{account_id}", json={"industry": "Software"}, headers=actor.headers
    )
    assert patched.status_code == 200, patched.text
    after = await client.get(
        f"{ACCOUNTS}/{account_id}", headers=actor.headers | {"If-None-Match": tag}
    )
    assert after.status_code == 200
    assert after.json()["industry"] == "Software"
    assert after.headers["etag"] != tag
    assert after.json() == patched.json()

    # Archiving changes it too (the archived account is still readable).
    deleted = await client.delete(f"{ACCOUNTS}/{account_id}", headers=actor.headers)
    assert deleted.status_code == 204
    archived = await client.get(
        f"{ACCOUNTS}/{account_id}", headers=actor.headers | {"If-None-Match": after.headers["etag"]}
    )
    assert archived.status_code == 200 and archived.json()["archivedAt"] is not None


async def test_another_organizations_account_is_404_whatever_the_tag(client, db, actor) -> None:
    other = await make_actor(db)
    await db.commit()
    account_id = await _account(client, other)
    theirs = await client.get(f"{ACCOUNTS}/{account_id}", headers=other.headers)
    tag = theirs.headers["etag"]
    for sent in (tag, "*"):
        resp = await client.get(
            f"{ACCOUNTS}/{account_id}", headers=actor.headers | {"If-None-Match": sent}
        )
        assert_envelope(resp, 404, "not_found")
    missing = await client.get(
        f"{ACCOUNTS}/{uuid.uuid4()}", headers=actor.headers | {"If-None-Match": "*"}
    )
    assert_envelope(missing, 404, "not_found")


async def test_list_pages_are_tagged_and_revalidated(client, actor) -> None:
    await _account(client, actor, name="One")
    for query in ("?pageSize=10", "?limit=10"):
        first = await client.get(ACCOUNTS + query, headers=actor.headers)
        assert first.status_code == 200
        tag = first.headers["etag"]
        same = await client.get(ACCOUNTS + query, headers=actor.headers | {"If-None-Match": tag})
        assert same.status_code == 304 and same.content == b""
        assert same.headers["etag"] == tag

    page = await client.get(ACCOUNTS + "?pageSize=10", headers=actor.headers)
    tag = page.headers["etag"]
    await _account(client, actor, name="Two")
    changed = await client.get(
        ACCOUNTS + "?pageSize=10", headers=actor.headers | {"If-None-Match": tag}
    )
    assert changed.status_code == 200
    assert changed.headers["etag"] != tag
    assert [a["name"] for a in changed.json()["data"]] == ["One", "Two"]
    assert changed.json()["pagination"]["totalCount"] == 2
