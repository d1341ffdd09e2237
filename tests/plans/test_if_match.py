"""Issue 38: every write to a plan (which answers an ETag on getPlan) honours `If-Match`: a tag
that is no longer current is a 412 `precondition_failed` and nothing changes (RFC 9110
§13.1.1); the current tag, `*` or no If-Match at all write as before."""

from __future__ import annotations

from tests.fixtures.envelope import assert_envelope
from tests.plans.helpers import PLANS, new_plan


async def _tag(client, actor, pid: str) -> tuple[str, dict]:
    resp = await client.get(f"{PLANS}/{pid}", headers=actor.in_org())
    assert resp.status_code == 200, resp.text
    return resp.headers["etag"], resp.json()


async def test_a_stale_if_match_on_update_plan_is_412_and_changes_nothing(
    client, actor, db
) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    stale, _ = await _tag(client, actor, pid)
    # Someone else changes the plan: the tag the first client holds is now stale.
    first = await client.patch(f"{PLANS}/{pid}", json={"name": "Theirs"}, headers=actor.in_org())
    assert first.status_code == 200, first.text
    current, before = await _tag(client, actor, pid)
    lost = await client.patch(
        f"{PLANS}/{pid}",
        json={"name": "Mine"},
        headers=actor.in_org() | {"If-Match": stale},
    )
    body = assert_envelope(lost, 412, "precondition_failed")
    assert body["details"] == {"reason": "etag_mismatch"}
    after_tag, after = await _tag(client, actor, pid)
    assert (after_tag, after) == (current, before)
    assert after["name"] == "Theirs"


async def test_the_current_tag_or_a_star_writes(client, actor, db) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    for name, spelling in (("One", "{}"), ("Two", "*"), ("Three", '"x", {}')):
        current, _ = await _tag(client, actor, pid)
        if_match = spelling.format(current)
        resp = await client.patch(
            f"{PLANS}/{pid}", json={"name": name}, headers=actor.in_org() | {"If-Match": if_match}
        )
        assert resp.status_code == 200, (if_match, resp.text)
        assert resp.json()["name"] == name


async def test_archive_and_restore_honour_if_match(client, actor, db) -> None:
    pid = (await new_plan(client, db, actor))["id"]
    stale, _ = await _tag(client, actor, pid)
    await client.patch(f"{PLANS}/{pid}", json={"name": "Moved"}, headers=actor.in_org())
    current, before = await _tag(client, actor, pid)
    refused = await client.delete(f"{PLANS}/{pid}", headers=actor.in_org() | {"If-Match": stale})
    assert_envelope(refused, 412, "precondition_failed")
    assert await _tag(client, actor, pid) == (current, before)  # not archived
    archived = await client.delete(f"{PLANS}/{pid}", headers=actor.in_org() | {"If-Match": current})
    assert archived.status_code == 204
    # Archiving moved the version on: the tag read before it is stale for the restore too.
    restored = await client.post(
        f"{PLANS}/{pid}/restore", headers=actor.in_org() | {"If-Match": current}
    )
    assert_envelope(restored, 412, "precondition_failed")
    restored = await client.post(
        f"{PLANS}/{pid}/restore", headers=actor.in_org() | {"If-Match": "*"}
    )
    assert restored.status_code == 200, restored.text
