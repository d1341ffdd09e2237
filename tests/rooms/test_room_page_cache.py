"""The signed-in room page is rendered once per state of the room and kept (web/room_pages.py):
whatever changes what a buyer sees — a plan write, the room's settings, a comment that reaches
the room — shows on the next GET; a kept page never carries another buyer's link or CSRF token;
names read beside the stamped rows show within `NAMES_TTL`."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest

from salesplan.models.crm import Contact
from salesplan.web import room_pages
from salesplan.web.room_pages import NAMES_TTL, RoomPages
from tests.engage_delivery.conftest import smtp
from tests.plans.helpers import PLANS
from tests.rooms.helpers import Buyer, csrf_of, make_deal, make_share, token_of

__all__ = ["smtp"]


class Renders:
    """Counts the renders of room pages; the test's clock for the kept pages' age."""

    def __init__(self, app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        self.now = 0.0
        app.state.room_pages = RoomPages(clock=lambda: self.now)
        render = room_pages._render

        async def counted(*args: Any) -> str:
            self.count += 1
            return await render(*args)

        monkeypatch.setattr(room_pages, "_render", counted)


async def test_a_kept_page_until_the_room_changes(app, client, db, actor, smtp, monkeypatch):
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    renders = Renders(app, monkeypatch)
    task = deal.ids["open_task"]
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.sign_in(app, smtp)
        assert renders.count == 1
        for _ in range(3):
            assert "Agree on success criteria" in (await buyer.get()).text
        assert renders.count == 1  # kept

        # A plan write (the version moves).
        resp = await client.patch(
            f"{PLANS}/{deal.plan_id}/tasks/{task}",
            json={"title": "Agree on the success criteria, in writing"},
            headers=actor.in_org(),
        )
        assert resp.status_code == 200, resp.text
        assert "Agree on the success criteria, in writing" in (await buyer.get()).text
        assert renders.count == 2

        # The room's settings: hide the task, then show it again (the clock may not move).
        url = f"{PLANS}/{deal.plan_id}/room"
        settings = (await client.get(url, headers=actor.in_org())).json()
        hidden = settings | {"hiddenTaskIds": [*settings["hiddenTaskIds"], task]}
        assert (await client.put(url, json=hidden, headers=actor.in_org())).status_code == 200
        assert f'id="task-{task}"' not in (await buyer.get()).text
        assert (await client.put(url, json=settings, headers=actor.in_org())).status_code == 200
        assert f'id="task-{task}"' in (await buyer.get()).text

        # An internal comment changes nothing the buyer sees; a seller's reply does.
        comments = f"{PLANS}/{deal.plan_id}/tasks/{task}/comments"
        before = renders.count
        await client.post(
            comments, json={"body": "Their CFO signs", "internal": True}, headers=actor.in_org()
        )
        assert "Their CFO signs" not in (await buyer.get()).text
        assert renders.count == before
        await client.post(comments, json={"body": "Draft sent"}, headers=actor.in_org())
        assert "Draft sent" in (await buyer.get()).text
        assert renders.count == before + 1

        # The buyer's own actions show at once, with their one-time notice.
        page = await buyer.post(f"/tasks/{task}/completion", {"completed": "true"})
        assert "“Agree on the success criteria, in writing” is done." in page.text
        assert "Mark as not done: Agree on the success criteria, in writing" in page.text
        again = await buyer.get()
        assert "is done." not in again.text  # the notice is shown once


async def test_a_kept_page_carries_only_its_own_buyers_tokens(app, client, db, actor, smtp):
    deal = await make_deal(client, db, actor)
    ada = await make_share(client, deal)
    grace = await make_share(client, deal, contactId=str(deal.grace.id))
    async with (
        Buyer(app, token_of(ada["url"])) as first,
        Buyer(app, token_of(grace["url"])) as second,
    ):
        await first.sign_in(app, smtp)
        await second.sign_in(app, smtp)
        one, two = (await first.get()).text, (await second.get()).text
    assert token_of(ada["url"]) in one and token_of(grace["url"]) not in one
    assert token_of(grace["url"]) in two and token_of(ada["url"]) not in two
    assert csrf_of(one) != csrf_of(two)
    assert set(re.findall(r'name="csrf_token" value="([^"]+)"', one)) == {csrf_of(one)}
    slot = room_pages.TOKEN_SLOT[:24]
    assert slot not in one and slot not in two


async def test_a_renamed_contact_shows_within_the_names_ttl(
    app, client, db, actor, smtp, monkeypatch
):
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    renders = Renders(app, monkeypatch)
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.sign_in(app, smtp)
        contact = await db.get(Contact, uuid.UUID(str(deal.ada.id)))
        assert contact is not None
        contact.first_name = "Augusta Ada"
        await db.commit()
        assert "Augusta Ada Lovelace" not in (await buyer.get()).text  # kept a while
        renders.now += NAMES_TTL + 1
        assert "Augusta Ada Lovelace" in (await buyer.get()).text
    assert renders.count == 2
