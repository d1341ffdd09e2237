"""Issue 38: every write to a resource that answers an ETag honours `If-Match`. getAccount
answers the tag of its body; updateAccount, patchAccount and deleteAccount with a tag that is
no longer current are a 412 `precondition_failed` and change nothing."""

from __future__ import annotations

from tests.fixtures.envelope import assert_envelope

ACCOUNTS = "/api/v1/accounts"


async def _tag(client, actor, aid: str) -> tuple[str, dict]:
    resp = await client.get(f"{ACCOUNTS}/{aid}", headers=actor.in_org())
    assert resp.status_code == 200, resp.text
    return resp.headers["etag"], resp.json()


async def test_stale_if_match_on_account_writes_is_412_and_changes_nothing(client, actor) -> None:
    created = await client.post(ACCOUNTS, json={"name": "Acme"}, headers=actor.in_org())
    assert created.status_code == 201, created.text
    aid = created.json()["id"]
    stale, _ = await _tag(client, actor, aid)
    moved = await client.patch(f"{ACCOUNTS}/{aid}", json={"name": "Theirs"}, headers=actor.in_org())
    assert moved.status_code == 200, moved.text
    current, before = await _tag(client, actor, aid)
    headers = actor.in_org() | {"If-Match": stale}
    for resp in (
        await client.patch(f"{ACCOUNTS}/{aid}", json={"name": "Mine"}, headers=headers),
        await client.put(f"{ACCOUNTS}/{aid}", json={"name": "Mine"}, headers=headers),
        await client.delete(f"{ACCOUNTS}/{aid}", headers=headers),
    ):
        body = assert_envelope(resp, 412, "precondition_failed")
        assert body["details"] == {"reason": "etag_mismatch"}
    assert await _tag(client, actor, aid) == (current, before)
    ok = await client.patch(
        f"{ACCOUNTS}/{aid}", json={"name": "Mine"}, headers=actor.in_org() | {"If-Match": current}
    )
    assert ok.status_code == 200 and ok.json()["name"] == "Mine"
    latest, _ = await _tag(client, actor, aid)
    gone = await client.delete(f"{ACCOUNTS}/{aid}", headers=actor.in_org() | {"If-Match": latest})
    assert gone.status_code == 204
