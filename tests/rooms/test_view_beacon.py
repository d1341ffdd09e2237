"""A room view is counted by the page's script, not by the GET (contract §16): in headless
Chromium with JavaScript on, a signed-in buyer's page load posts the view form under the
page's Content-Security-Policy, once per 30 minutes; the same page fetched without running it
counts nothing."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import httpx

from salesplan.kit import clock
from tests.engage_delivery.conftest import smtp
from tests.plans.helpers import PLANS
from tests.rooms.helpers import code_in, deliver, make_deal, make_share, token_of
from tests.web.test_browser import browser, origin

__all__ = ["browser", "origin", "smtp"]


async def _views(client: Any, deal: Any) -> list[str]:
    resp = await client.get(f"{PLANS}/{deal.plan_id}/activity", headers=deal.actor.in_org())
    assert resp.status_code == 200, resp.text
    return [i["createdAt"] for i in resp.json()["data"] if i["type"] == "viewed"]


async def _until(client: Any, deal: Any, count: int) -> list[str]:
    for _ in range(100):
        views = await _views(client, deal)
        if len(views) >= count:
            return views
        await asyncio.sleep(0.1)
    return await _views(client, deal)


async def test_the_page_counts_its_view_in_a_real_browser(
    browser, origin, app, client, db, actor, smtp, monkeypatch
) -> None:
    deal = await make_deal(client, db, actor)
    share = await make_share(client, deal)
    room = f"{origin}/rooms/{token_of(share['url'])}"
    start = clock.utcnow()
    now = [start]
    monkeypatch.setattr(clock, "utcnow", lambda: now[0])
    context = await browser.new_context(java_script_enabled=True)
    page = await context.new_page()
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text) if m.type == "error" else None)
    try:
        await page.goto(room)
        await page.get_by_role("button", name="E-mail me a code").click()
        await page.get_by_label("Code").wait_for()
        assert await deliver(app, smtp) == 1
        await page.get_by_label("Code").fill(code_in(smtp))
        async with page.expect_request(lambda r: r.url.endswith("/views")) as beacon:
            await page.get_by_role("button", name="Open the plan").click()
        assert (await beacon.value).method == "POST"
        await page.get_by_role("heading", name="Buyer Inc rollout").wait_for()
        assert len(await _until(client, deal, 1)) == 1  # the sign-in's view; the beacon's is in it

        # Half an hour on, a reload: the page's script counts a second view.
        now[0] = start + timedelta(minutes=31)
        async with page.expect_response(lambda r: r.url.endswith("/views")) as answer:
            await page.reload()
        assert (await answer.value).status == 204
        views = await _until(client, deal, 2)
        assert len(views) == 2
        assert refused == [], refused  # no script blocked by the page's policy, no failed beacon

        # The same page fetched with the buyer's cookies but no script run counts nothing.
        now[0] = start + timedelta(minutes=62)
        cookies = {c["name"]: c["value"] for c in await context.cookies()}
        async with httpx.AsyncClient(cookies=cookies) as http:
            fetched = await http.get(room)
        assert fetched.status_code == 200 and 'id="room-view"' in fetched.text
        await asyncio.sleep(0.5)
        assert len(await _views(client, deal)) == 2
    finally:
        await context.close()
