"""Feed visibility (contract §12 "Feed visibility and attribution"): a calendar thread in an inbox
is shown only to those who may read its event by id — the owner, admins and consultants; not
other members, not app tokens. E-mail and Slack threads stay visible to every reader."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx

from tests.feed.helpers import T0, meeting, meeting_changed, sent_email
from tests.fixtures.crm import make_account, make_contact
from tests.fixtures.factories import Actor, make_key, make_user
from tests.oauth.conftest import make_oauth_app

API = "/api/v1/accounts"


async def teammate(db: Any, actor: Actor, role: str) -> Actor:
    user = await make_user(db, actor.org, role=role)
    return Actor(actor.org, user, await make_key(db, user))


async def app_headers(client: httpx.AsyncClient, db: Any, actor: Actor) -> dict[str, str]:
    machine = await make_oauth_app(
        db,
        actor,
        grant_types=["client_credentials"],
        scopes=["feed:read"],
        organization_ids=[actor.org.id],
    )
    token = await client.post(
        "/api/v1/oauth/token",
        data={"grant_type": "client_credentials", "scope": "feed:read"},
        auth=(machine.app.client_id, machine.secret),
    )
    assert token.status_code == 200, token.text
    return {
        "Authorization": f"Bearer {token.json()['access_token']}",
        "X-Organization-Id": str(actor.org.id),
    }


async def types_in_inbox(
    client: httpx.AsyncClient, headers: dict[str, str], account_id: Any, **query: str
) -> list[str]:
    r = await client.get(f"{API}/{account_id}/inbox", headers=headers, params=query)
    assert r.status_code == 200, r.text
    return [i["type"] for i in r.json()["data"]]


async def test_a_teammates_meeting_only_to_owner_admins_and_consultants(client, db, actor) -> None:
    account, _ = await make_account(db, actor.org.id, "Acme", domain="acme.test")
    await make_contact(db, account, "Jane", "Doe", email="jane@acme.test")
    owner = await teammate(db, actor, "member")
    event = await meeting(db, actor.org.id, owner.user.id, ["jane@acme.test"], T0, title="Private")
    event.description = "Secret pricing notes"
    await meeting_changed(db, event)
    await sent_email(db, actor.org.id, "jane@acme.test", T0 - timedelta(days=1), subject="Mail")

    # The owner, an admin and a consultant see the meeting and read its thread.
    readers = [owner, actor, await teammate(db, actor, "consultant")]
    thread_id = None
    for reader in readers:
        assert await types_in_inbox(client, reader.in_org(), account.id) == ["calendar", "email"]
        items = (
            await client.get(
                f"{API}/{account.id}/inbox", headers=reader.in_org(), params={"type": "calendar"}
            )
        ).json()["data"]
        thread_id = items[0]["id"]
        r = await client.get(
            f"{API}/{account.id}/inbox/threads/{thread_id}/messages", headers=reader.in_org()
        )
        assert r.status_code == 200 and r.json()["data"][0]["text"] == "Secret pricing notes"

    # Another member and an app token: the e-mail only; the meeting's thread is a 404.
    member = await teammate(db, actor, "member")
    app = await app_headers(client, db, actor)
    for headers in (member.in_org(), app):
        assert await types_in_inbox(client, headers, account.id) == ["email"]
        assert await types_in_inbox(client, headers, account.id, type="calendar") == []
        r = await client.get(
            f"{API}/{account.id}/inbox/threads/{thread_id}/messages", headers=headers
        )
        assert r.status_code == 404, r.text
        assert "Secret" not in r.text
        # page mode counts only what the caller may see
        r = await client.get(f"{API}/{account.id}/inbox", headers=headers, params={"page": "1"})
        assert r.json()["pagination"]["totalCount"] == 1
