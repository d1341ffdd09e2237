"""The seller's page of a plan's room (contract §16): GET /plan-rooms/{planId}, read-only, the
plan's shares, each buyer's engagement and the latest activity, for a signed-in member of the
plan's organization; a 404 page for anyone else."""

from __future__ import annotations

import uuid

import httpx

from tests.engage_delivery.conftest import smtp
from tests.fixtures.factories import make_actor
from tests.oauth.flow import sign_in
from tests.rooms.helpers import SELLER_EMAIL, Buyer, make_deal, make_share, token_of

__all__ = ["smtp"]


async def test_the_seller_sees_shares_engagement_and_activity(app, client, db, actor, smtp):
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    await make_share(client, deal, contactId=str(deal.grace.id), role="viewer")
    async with Buyer(app, token_of(share["url"])) as buyer:
        await buyer.sign_in(app, smtp)
        await buyer.post(f"/tasks/{deal.ids['buyer_task']}/comments", {"body": "Done soon."})
    path = f"/plan-rooms/{deal.plan_id}"
    signed_out = await client.get(path)
    assert signed_out.status_code == 303 and signed_out.headers["location"].startswith("/login")
    assert (await sign_in(client, SELLER_EMAIL)).status_code == 303
    page = await client.get(path)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text
    assert "Buyer Inc rollout" in html
    assert f'data-contact-id="{deal.ada.id}"' in html and "Grace Hopper" in html
    assert "ada@buyer.example" in html and "collaborator" in html and "viewer" in html
    assert "<td>2</td>" in html  # Ada's score: a view and a comment
    assert "commented" in html and "viewed" in html
    assert "<form" not in html.split("<main", 1)[-1]  # read-only


async def test_anyone_else_gets_the_404_page(app, db, actor, client):
    deal = await make_deal(client, db, actor)
    other = await make_actor(db)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as stranger:
        assert (await sign_in(stranger, other.user.email)).status_code == 303
        for plan_id in (deal.plan_id, str(uuid.uuid4()), "not-an-id"):
            resp = await stranger.get(f"/plan-rooms/{plan_id}")
            assert resp.status_code == 404 and "Plan not found" in resp.text
            assert "Buyer Inc rollout" not in resp.text
