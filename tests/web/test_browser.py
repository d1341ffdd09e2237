"""End to end in headless Chromium (Debian's, driven by Playwright): the authorization-code
flow from registration to an API call, and developer settings creating a key that works."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from salesplan.config import Settings
from tests.conftest import need_service
from tests.fixtures.factories import Actor
from tests.oauth.flow import PASSWORD, basic, pkce_pair
from tests.web.live import CHROMIUM, CHROMIUM_ARGS, callback_server, live_server, screenshot_dir


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    if not os.access(CHROMIUM, os.X_OK):
        need_service("chromium", f"{CHROMIUM} is missing (apt-get install chromium)")
    try:
        from playwright.async_api import async_playwright
    except ImportError:  # pragma: no cover - a dev dependency
        need_service("playwright", "pip install playwright")
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            await browser.close()


@pytest.fixture
async def origin(settings: Settings, app: object) -> AsyncIterator[str]:
    """A live server on the test database (the `app` fixture empties it afterwards)."""
    with live_server(settings) as url:
        yield url


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    return screenshot_dir(tmp_path)


async def test_authorization_code_flow_in_a_real_browser(
    browser: Any, origin: str, actor: Actor, shots: Path
) -> None:
    with callback_server() as callback:
        async with httpx.AsyncClient(base_url=origin) as http:
            registered = await http.post(
                "/api/v1/oauth/register",
                json={
                    "client_name": "Desk Agent",
                    "redirect_uris": [callback.url],
                    "scope": "organizations:read accounts:read plans:read",
                },
            )
            assert registered.status_code == 201, registered.text
            client = registered.json()
            verifier, challenge = pkce_pair()
            query = urlencode(
                {
                    "response_type": "code",
                    "client_id": client["client_id"],
                    "redirect_uri": callback.url,
                    "scope": "organizations:read accounts:read",
                    "code_challenge": challenge,
                    "code_challenge_method": "S256",
                    "state": "browser-state",
                }
            )
            page = await browser.new_page()
            await page.goto(f"{origin}/api/v1/oauth/authorize?{query}")
            assert await page.title() == "Sign in · salesplan"
            await page.screenshot(path=str(shots / "sign-in.png"), full_page=True)
            await page.get_by_label("E-mail").fill(actor.user.email)
            await page.get_by_label("Password").fill(PASSWORD)
            await page.get_by_role("button", name="Sign in").click()
            await page.get_by_role("button", name="Allow").wait_for()
            assert "Desk Agent" in await page.content()
            await page.screenshot(path=str(shots / "consent.png"), full_page=True)
            await page.get_by_role("button", name="Allow").click()
            await page.wait_for_url(callback.url + "?*")
            await asyncio.to_thread(callback.arrived.wait, 10)
            received = callback.received[-1]
            assert received["state"] == "browser-state"

            token = await http.post(
                "/api/v1/oauth/token",
                data={
                    "grant_type": "authorization_code",
                    "code": received["code"],
                    "redirect_uri": callback.url,
                    "code_verifier": verifier,
                },
                headers=basic(client["client_id"], client["client_secret"]),
            )
            assert token.status_code == 200, token.text
            access = token.json()["access_token"]
            orgs = await http.get(
                "/api/v1/organizations", headers={"Authorization": f"Bearer {access}"}
            )
            assert orgs.status_code == 200
            assert [o["id"] for o in orgs.json()["data"]] == [str(actor.org.id)]


async def test_cancel_in_a_real_browser_returns_access_denied(
    browser: Any, origin: str, actor: Actor
) -> None:
    with callback_server() as callback:
        async with httpx.AsyncClient(base_url=origin) as http:
            client = (
                await http.post(
                    "/api/v1/oauth/register",
                    json={"redirect_uris": [callback.url], "token_endpoint_auth_method": "none"},
                )
            ).json()
        _, challenge = pkce_pair()
        query = urlencode(
            {
                "response_type": "code",
                "client_id": client["client_id"],
                "redirect_uri": callback.url,
                "scope": "organizations:read",
                "code_challenge": challenge,
                "code_challenge_method": "S256",
                "state": "s1",
            }
        )
        page = await browser.new_page()
        await page.goto(f"{origin}/api/v1/oauth/authorize?{query}")
        await page.get_by_label("E-mail").fill(actor.user.email)
        await page.get_by_label("Password").fill(PASSWORD)
        await page.get_by_role("button", name="Sign in").click()
        await page.get_by_role("button", name="Cancel").click()
        await page.wait_for_url(callback.url + "?*")
        assert callback.received[-1]["error"] == "access_denied"
        assert callback.received[-1]["state"] == "s1"


async def test_developer_settings_create_a_key_that_works(
    browser: Any, origin: str, actor: Actor, shots: Path
) -> None:
    page = await browser.new_page(viewport={"width": 1200, "height": 900})
    await page.goto(f"{origin}/settings/developer")
    await page.get_by_label("E-mail").fill(actor.user.email)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await page.get_by_role("heading", name="Developer settings").wait_for()
    await page.get_by_text("Create an API key").click()
    await page.locator("#key-name").fill("Browser key")
    # No scope is ticked for the user: the key gets only what they choose.
    await page.get_by_label("organizations:read").first.check()
    await page.get_by_role("button", name="Create key").click()
    key_box = page.get_by_label("API key")
    await key_box.wait_for()
    key = await key_box.input_value()
    assert key.startswith("sp_live_")
    await page.screenshot(path=str(shots / "developer-settings.png"), full_page=True)
    async with httpx.AsyncClient(base_url=origin) as http:
        orgs = await http.get("/api/v1/organizations", headers={"Authorization": f"Bearer {key}"})
    assert orgs.status_code == 200
    assert [o["id"] for o in orgs.json()["data"]] == [str(actor.org.id)]
    # Shown once: a reload no longer carries it.
    await page.reload()
    assert key not in await page.content()


async def test_developer_settings_create_an_oauth_app_whose_credentials_work(
    browser: Any, origin: str, actor: Actor, shots: Path
) -> None:
    page = await browser.new_page(viewport={"width": 1200, "height": 900})
    await page.goto(f"{origin}/login")
    await page.get_by_label("E-mail").fill(actor.user.email)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Sign in").click()
    await page.locator("#app-name").fill("Warehouse sync")
    await page.locator("#app-description").fill("Copies accounts to the data warehouse nightly.")
    await page.locator("#app-redirects").fill("https://warehouse.example.com/oauth/callback")
    new_app = page.locator("details.create", has_text="Create an OAuth app")
    await new_app.get_by_label("organizations:read").check()
    await new_app.get_by_label("accounts:read").check()
    await page.get_by_role("button", name="Create app").click()
    secret_box = page.get_by_label("Client secret")
    await secret_box.wait_for()
    client_id = await page.get_by_label("Client ID").input_value()
    secret = await secret_box.input_value()
    await page.screenshot(path=str(shots / "developer-settings-app.png"), full_page=True)
    async with httpx.AsyncClient(base_url=origin) as http:
        token = await http.post(
            "/api/v1/oauth/token",
            data={"grant_type": "client_credentials", "scope": "organizations:read"},
            headers=basic(client_id, secret),
        )
        assert token.status_code == 200, token.text
        # Regenerating the secret in the page stops the old one at once.
        await page.get_by_role("button", name="Regenerate client secret").click()
        await page.get_by_label("Client secret").wait_for()
        assert await page.get_by_label("Client secret").input_value() != secret
        old = await http.post(
            "/api/v1/oauth/token",
            data={"grant_type": "client_credentials"},
            headers=basic(client_id, secret),
        )
        assert old.status_code == 401


async def test_authorize_with_an_unregistered_redirect_uri_shows_an_error_page(
    browser: Any, origin: str, shots: Path
) -> None:
    page = await browser.new_page()
    response = await page.goto(
        f"{origin}/api/v1/oauth/authorize?client_id=sp_client_nope&redirect_uri=https://evil.example.com/"
    )
    assert response is not None and response.status == 400
    assert page.url.startswith(origin)
    await page.get_by_role("heading", name="Unknown application").wait_for()
    await page.screenshot(path=str(shots / "authorize-error.png"), full_page=True)
