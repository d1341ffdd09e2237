"""Real MCP clients sign in with OAuth: the official SDK's OAuth client provider registers
(asking for `refresh_token` too, as real clients do), sends the user through our consent page in
Chromium, and calls tools with the token it gets; `mcp-remote` through npx where Node is present."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl

from mcp import Client
from tests.fixtures.factories import Actor
from tests.oauth.flow import PASSWORD
from tests.web.live import callback_server
from tests.web.test_browser import browser, origin, shots  # noqa: F401 - shared fixtures


class MemoryStorage:
    """The SDK's TokenStorage, in memory; remembers what registration answered."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def test_the_sdk_oauth_client_signs_in_through_the_consent_page(
    browser: Any,  # noqa: F811 - the fixture imported above
    origin: str,  # noqa: F811 - the fixture imported above
    shots: Path,  # noqa: F811 - the fixture imported above
    actor: Actor,
) -> None:
    storage = MemoryStorage()
    page = await browser.new_page()
    with callback_server() as callback:

        async def consent(authorization_url: str) -> None:
            await page.goto(authorization_url)
            await page.get_by_label("E-mail").fill(actor.user.email)
            await page.get_by_label("Password").fill(PASSWORD)
            await page.get_by_role("button", name="Sign in").click()
            await page.get_by_role("button", name="Allow").wait_for()
            await page.screenshot(path=str(shots / "mcp-consent.png"), full_page=True)
            await page.get_by_role("button", name="Allow").click()
            await page.wait_for_url(callback.url + "?*")

        async def redirected() -> AuthorizationCodeResult:
            await asyncio.to_thread(callback.arrived.wait, 10)
            received = callback.received[-1]
            return AuthorizationCodeResult(
                code=received["code"], state=received.get("state"), iss=received.get("iss")
            )

        provider = OAuthClientProvider(
            server_url=f"{origin}/mcp",
            client_metadata=OAuthClientMetadata(
                client_name="SDK agent",
                redirect_uris=[AnyUrl(callback.url)],
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
                scope="organizations:read accounts:read",
            ),
            storage=storage,
            redirect_handler=consent,
            callback_handler=redirected,
        )
        async with (
            httpx2.AsyncClient(auth=provider, timeout=httpx2.Timeout(30, read=60)) as http,
            Client(streamable_http_client(f"{origin}/mcp", http_client=http)) as client,  # type: ignore[arg-type]
        ):
            result = await client.call_tool("listOrganizations", {})

    assert not result.is_error, result.content
    assert [o["id"] for o in result.structured_content["data"]] == [str(actor.org.id)]
    assert storage.client is not None and storage.client.grant_types == ["authorization_code"]
    assert storage.tokens is not None and storage.tokens.refresh_token is None
