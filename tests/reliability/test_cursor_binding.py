"""A cursor is bound to its list operation and organization, not only to its sort
(issue 18, defect 12): a cursor of another list or organization is a 400."""

from __future__ import annotations

from tests.fixtures.crm import make_account, make_contact
from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_actor

ACCOUNTS = "/api/v1/accounts"


async def _next_cursor(client, actor, path: str) -> str:
    resp = await client.get(path, params={"limit": 1}, headers=actor.in_org())
    assert resp.status_code == 200, resp.text
    cursor = resp.json()["pagination"]["nextCursor"]
    assert cursor
    return cursor


async def test_a_cursor_of_another_list_is_a_400(client, db, actor) -> None:
    for _ in range(2):
        account, _ = await make_account(db, actor.org.id)
        await make_contact(db, account)
    await db.commit()
    cursor = await _next_cursor(client, actor, ACCOUNTS)
    resp = await client.get(
        "/api/v1/contacts", params={"limit": 1, "cursor": cursor}, headers=actor.in_org()
    )
    assert_envelope(resp, 400, "validation_error")
    resp = await client.get(ACCOUNTS, params={"limit": 1, "cursor": cursor}, headers=actor.in_org())
    assert resp.status_code == 200


async def test_a_cursor_of_another_organization_is_a_400(client, db, actor) -> None:
    other = await make_actor(db)
    for owner in (actor, other):
        for _ in range(2):
            await make_account(db, owner.org.id)
    await db.commit()
    cursor = await _next_cursor(client, actor, ACCOUNTS)
    resp = await client.get(ACCOUNTS, params={"limit": 1, "cursor": cursor}, headers=other.in_org())
    assert_envelope(resp, 400, "validation_error")
