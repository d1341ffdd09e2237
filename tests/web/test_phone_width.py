"""Developer settings and the map page at phone (390 px) and desktop (1280 px) widths: no
sideways scroll of the page, with screenshots kept for a look (SALESPLAN_SCREENSHOTS)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from tests.fixtures.factories import Actor
from tests.oauth.flow import PASSWORD
from tests.web.test_browser import browser, origin, shots  # noqa: F401 - shared fixtures
from tests.web.test_map_page import make_map

OVERFLOW = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
# The elements that stick out on the right, for the failure message.
WIDE = """[...document.querySelectorAll('body *:not(svg *)')]
  .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
  .slice(0, 8).map(e => e.tagName + '.' + e.getAttribute('class') + ' ' + Math.round(e.getBoundingClientRect().right))"""


async def signed_in_page(chromium: Any, site: str, actor: Actor, width: int, path: str) -> Any:
    page = await chromium.new_page(viewport={"width": width, "height": 900})
    await page.goto(f"{site}{path}")
    await page.get_by_label("E-mail").fill(actor.user.email)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_url(f"{site}{path}*")
    return page


@pytest.mark.parametrize("width", [390, 1280])
async def test_developer_settings_fit_the_screen(
    browser: Any,  # noqa: F811 - the fixture imported above
    origin: str,  # noqa: F811 - the fixture imported above
    shots: Path,  # noqa: F811 - the fixture imported above
    actor: Actor,
    width: int,
) -> None:
    page = await signed_in_page(browser, origin, actor, width, "/settings/developer")
    # A key in the table and an app with its forms: the widest content the page has.
    await page.evaluate("document.querySelectorAll('details.create').forEach(d => d.open = true)")
    await page.locator("#key-name").fill("A reporting sync with a long name")
    await page.get_by_label("organizations:read").first.check()
    await page.get_by_role("button", name="Create key").click()
    await page.locator("#new-secret").wait_for()
    await page.evaluate("document.querySelectorAll('details.create').forEach(d => d.open = true)")
    await page.locator("#app-name").fill("Nightly export")
    await page.locator("#app-redirects").fill("https://very-long-host-name.example.com/oauth/cb")
    await page.get_by_role("button", name="Create app").click()
    await page.locator("#new-client-id").wait_for()
    assert await page.evaluate(OVERFLOW) <= 0, await page.evaluate(WIDE)
    await page.screenshot(path=str(shots / f"developer-settings-{width}.png"), full_page=True)


@pytest.mark.parametrize("width", [390, 1280])
async def test_the_map_page_fits_the_screen(
    browser: Any,  # noqa: F811 - the fixture imported above
    origin: str,  # noqa: F811 - the fixture imported above
    shots: Path,  # noqa: F811 - the fixture imported above
    client: httpx.AsyncClient,
    db: AsyncSession,
    actor: Actor,
    width: int,
) -> None:
    buyer_map, _ = await make_map(
        client,
        db,
        actor,
        [("Dana", "champion"), ("Marcus", "blocker"), ("Priya", "supporter"), ("Wei", None)],
        edges=[(0, 1), (0, 2), (2, 3)],
    )
    page = await signed_in_page(browser, origin, actor, width, f"/maps/{buyer_map['id']}")
    await page.locator("svg.map-svg g.map-card").first.wait_for()
    assert await page.evaluate(OVERFLOW) <= 0, await page.evaluate(WIDE)
    await page.screenshot(path=str(shots / f"relationship-map-{width}.png"), full_page=True)
