"""The buyer's whole path in headless Chromium (Debian's, driven by Playwright) at phone
(390 px) and desktop (1280 px) widths, with JavaScript off: open the link, ask for a code,
sign in with the e-mailed code (real SMTP), tick a task, comment, invite a colleague, take the
dates to a calendar. No page scrolls sideways; screenshots are kept for a look
(SALESPLAN_SCREENSHOTS)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from icalendar import Calendar

from tests.engage_delivery.conftest import smtp
from tests.plans.helpers import PLANS
from tests.rooms.helpers import DOMAIN, SECRETS, code_in, deliver, make_deal, make_share, token_of
from tests.web.test_browser import browser, origin, shots
from tests.web.test_phone_width import OVERFLOW, WIDE

__all__ = ["browser", "origin", "shots", "smtp"]


async def _fits(page: Any) -> None:
    assert await page.evaluate(OVERFLOW) <= 0, await page.evaluate(WIDE)


@pytest.mark.parametrize("width", [390, 1280])
async def test_the_buyer_path_in_a_real_browser(
    browser: Any,
    origin: str,
    shots: Path,
    app: Any,
    client: Any,
    db: Any,
    actor: Any,
    smtp: Any,
    width: int,
) -> None:
    deal = await make_deal(client, db, actor)
    # A long word and a long welcome: the widest content a buyer's room may hold.
    long = {"title": "Countersign the data processing addendum (DPA-2031-EXTENDED-EDITION)"}
    await client.post(f"{PLANS}/{deal.plan_id}/tasks", json=long, headers=actor.in_org())
    share = await make_share(client, deal, allowInvites=True)
    room = f"{origin}/rooms/{token_of(share['url'])}"
    context = await browser.new_context(
        viewport={"width": width, "height": 900}, java_script_enabled=False, accept_downloads=True
    )
    page = await context.new_page()
    try:
        await page.goto(room)
        assert await page.title() == "Buyer Inc rollout · " + actor.org.name
        await _fits(page)
        await page.screenshot(path=str(shots / f"room-landing-{width}.png"), full_page=True)
        await page.get_by_role("button", name="E-mail me a code").click()
        await page.get_by_label("Code").wait_for()
        assert await deliver(app, smtp) == 1
        await page.get_by_label("Code").fill(code_in(smtp))
        await _fits(page)
        await page.screenshot(path=str(shots / f"room-code-{width}.png"), full_page=True)
        await page.get_by_role("button", name="Open the plan").click()
        await page.get_by_role("heading", name="Buyer Inc rollout").wait_for()
        await _fits(page)
        await page.screenshot(path=str(shots / f"room-{width}.png"), full_page=True)
        html = await page.content()
        for secret in SECRETS:
            assert secret not in html

        # Tick the buyer's task.
        await page.get_by_role(
            "button", name="Mark as done: Send the security questionnaire"
        ).click()
        await page.get_by_text("“Send the security questionnaire” is done.").wait_for()
        assert (
            await page.get_by_role(
                "button", name="Mark as not done: Send the security questionnaire"
            ).count()
            == 1
        )
        task = await client.get(
            f"{PLANS}/{deal.plan_id}/tasks/{deal.ids['buyer_task']}", headers=actor.in_org()
        )
        assert task.json()["completed"] is True
        # Comment on it (the comments are open: it has one already).
        box = page.get_by_label("Comment on Send the security questionnaire")
        await box.fill("Sent — <b>see</b> the attachment.")
        await page.locator(f"#task-{deal.ids['buyer_task']} button", has_text="Comment").click()
        await page.get_by_text("Your comment is posted.").wait_for()
        assert await page.get_by_text("Sent — <b>see</b> the attachment.").count() == 1
        # Invite a colleague.
        await page.get_by_label("Colleague's e-mail").fill(f"linus@{DOMAIN}")
        await page.get_by_role("button", name="Send invitation").click()
        await page.get_by_text(f"We e-mailed linus@{DOMAIN} a link to this plan.").wait_for()
        await _fits(page)
        await page.screenshot(path=str(shots / f"room-after-actions-{width}.png"), full_page=True)
        # The calendar file.
        async with page.expect_download() as download:
            await page.get_by_role("link", name="Add the dates to my calendar").click()
        saved = await (await download.value).path()
        calendar = Calendar.from_ical(await asyncio.to_thread(Path(saved).read_bytes))
        assert {str(e["summary"]) for e in calendar.walk("VEVENT")} == {
            "Milestone: Technical validation",
            "Task: Run the pilot",
            "Task: Send the security questionnaire (done)",
        }
        # Signing out ends it.
        await page.get_by_role("button", name="Sign out").click()
        await page.get_by_role("button", name="E-mail me a code").wait_for()
    finally:
        await context.close()
