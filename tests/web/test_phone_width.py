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


@pytest.mark.parametrize("width", [390, 1280])
async def test_a_new_key_is_on_screen_and_the_keys_table_fits(
    browser: Any,  # noqa: F811 - the fixture imported above
    origin: str,  # noqa: F811 - the fixture imported above
    shots: Path,  # noqa: F811 - the fixture imported above
    actor: Actor,
    width: int,
) -> None:
    """Issue 29 item 8: after creating a key, its one-time banner is in the viewport; on a
    phone the keys table needs no sideways scroll, Revoke is in sight, and the Key column is
    one line, not a character per line."""
    page = await signed_in_page(browser, origin, actor, width, "/settings/developer")
    for name in ("Nightly reporting sync", "Second key"):
        await page.evaluate(
            "document.querySelectorAll('details.create').forEach(d => d.open = true)"
        )
        await page.locator("#key-name").fill(name)
        await page.get_by_label("organizations:read").first.check()
        await page.get_by_role("button", name="Create key").click()
        await page.locator("#new-secret").wait_for()
        banner = await page.locator(".alert.secret").bounding_box()
        viewport = page.viewport_size
        assert banner is not None and viewport is not None
        assert banner["y"] >= 0 and banner["y"] + banner["height"] <= viewport["height"], banner
        secret = await page.locator("#new-secret").bounding_box()
        assert secret is not None and 0 <= secret["y"] <= viewport["height"] - secret["height"]

    # Where Revoke is without scrolling the table sideways (x does not depend on the page's
    # vertical scroll).
    box = await page.get_by_role("button", name="Revoke Second key").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, box
    cell = page.locator("td.key-prefix code").first
    cell_box = await cell.bounding_box()
    line = await cell.evaluate("e => parseFloat(getComputedStyle(e).lineHeight) || 20")
    assert cell_box is not None and cell_box["height"] <= line * 1.5, (cell_box, line)
    assert cell_box["width"] > cell_box["height"]
    assert await page.evaluate(OVERFLOW) <= 0, await page.evaluate(WIDE)
    scroller = "document.querySelector('.table-scroll')"
    assert await page.evaluate(f"{scroller}.scrollWidth - {scroller}.clientWidth") <= 0
    await page.screenshot(path=str(shots / f"developer-keys-{width}.png"), full_page=True)


LINES_OF_URL = """(() => {
  const code = document.querySelector('#webhooks table code');
  const style = getComputedStyle(code);
  const line = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.2;
  return Math.round(code.getBoundingClientRect().height / line);
})()"""


async def test_the_webhook_endpoints_table_keeps_a_url_readable_at_390_px(
    browser: Any,  # noqa: F811 - the fixture imported above
    origin: str,  # noqa: F811 - the fixture imported above
    shots: Path,  # noqa: F811 - the fixture imported above
    client: httpx.AsyncClient,
    actor: Actor,
) -> None:
    """Issue 38: unstyled, the endpoints table squeezed a URL into a column that broke it over 6
    lines at 390 px; laid out like the keys table (a name/value block per endpoint) it takes at
    most two."""
    url = "https://hooks.partner-example.com/salesplan/events/v1"
    created = await client.post(
        "/api/v1/webhooks/endpoints", json={"url": url}, headers=actor.headers
    )
    assert created.status_code == 201, created.text
    page = await signed_in_page(browser, origin, actor, 390, "/settings/developer")
    await page.locator("#webhooks table code").wait_for()
    await page.screenshot(path=str(shots / "webhook-endpoints-390.png"), full_page=True)
    assert await page.evaluate(OVERFLOW) <= 0, await page.evaluate(WIDE)
    assert await page.evaluate(LINES_OF_URL) <= 2
    label = await page.evaluate(
        "getComputedStyle(document.querySelector('#webhooks table td'), '::before').content"
    )
    assert label == '"URL"'


async def test_the_map_pages_contacts_show_every_column_at_390_px(
    browser: Any,  # noqa: F811 - the fixture imported above
    origin: str,  # noqa: F811 - the fixture imported above
    shots: Path,  # noqa: F811 - the fixture imported above
    client: httpx.AsyncClient,
    db: AsyncSession,
    actor: Actor,
) -> None:
    """Issue 38: at 390 px the contacts table showed 3 of its 8 columns, the rest off screen
    with no cue. Each contact is now a block of labelled values, all of them in sight."""
    buyer_map, _ = await make_map(client, db, actor, [("Dana", "champion"), ("Marcus", None)])
    page = await signed_in_page(browser, origin, actor, 390, f"/maps/{buyer_map['id']}")
    await page.locator("table.people td").first.wait_for()
    await page.screenshot(path=str(shots / "map-contacts-390.png"), full_page=True)
    off_screen = await page.evaluate(
        """[...document.querySelectorAll('table.people td')]
          .filter(td => td.getBoundingClientRect().right > document.documentElement.clientWidth)
          .map(td => td.dataset.label)"""
    )
    assert off_screen == []
    labels = await page.evaluate(
        """[...document.querySelectorAll('table.people tr:first-child td')]
          .map(td => getComputedStyle(td, '::before').content)"""
    )
    assert labels == [
        '"Name"', '"Title"', '"E-mail"', '"Support"', '"Decision"', '"Role"', '"Status"',
        '"Executive"',
    ]  # fmt: skip
