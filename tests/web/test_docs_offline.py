"""`/docs` works behind a firewall: Swagger UI's assets come from the server itself."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx

from tests.web.test_browser import browser, origin, shots  # noqa: F401 - shared fixtures


async def test_docs_page_loads_nothing_from_other_origins(client: httpx.AsyncClient) -> None:
    page = await client.get("/docs")
    assert page.status_code == 200
    urls = re.findall(r"""(?:src|href|url)\s*[=:]\s*['"]([^'"]+)['"]""", page.text)
    assert urls and all(u.startswith("/") for u in urls), urls
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
        response = await client.get(f"/docs/assets/{asset}")
        assert response.status_code == 200 and len(response.content) > 10_000


async def test_docs_show_the_operations_with_the_network_blocked(
    browser: Any,  # noqa: F811 - the fixture imported above
    origin: str,  # noqa: F811 - the fixture imported above
    shots: Path,  # noqa: F811 - the fixture imported above
) -> None:
    blocked: list[str] = []

    async def only_our_origin(route: Any) -> None:
        if route.request.url.startswith(origin):
            await route.continue_()
        else:
            blocked.append(route.request.url)
            await route.abort("internetdisconnected")

    page = await browser.new_page()
    await page.route("**/*", only_our_origin)
    await page.goto(f"{origin}/docs")
    await page.locator(".opblock").first.wait_for(timeout=30_000)
    paths = await page.locator(".opblock-summary-path").all_inner_texts()
    assert any(p.replace("\u200b", "") == "/api/v1/accounts" for p in paths), paths[:5]
    assert len(paths) > 50
    await page.screenshot(path=str(shots / "docs-offline.png"))
    assert blocked == []
