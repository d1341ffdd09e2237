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
from salesplan.auth.scopes import APPROVED_SCOPES
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


WANTED = "organizations:read accounts:read"
READ_SCOPES = sorted(s for s in APPROVED_SCOPES if s.endswith(":read"))


async def sign_in_with_the_sdk(
    chromium: Any,
    site: str,
    shots_dir: Path,
    actor: Actor,
    storage: MemoryStorage,
    keep: set[str] | None = None,
) -> tuple[Any, list[Any]]:
    """The SDK's OAuth client asks for `WANTED`; the person consents in Chromium, unticking
    every scope not in `keep` (None: allows what is asked). Answers listOrganizations' result
    and the tools the token sees."""
    page = await chromium.new_page()
    with callback_server() as callback:

        async def consent(authorization_url: str) -> None:
            await page.goto(authorization_url)
            await page.get_by_label("E-mail").fill(actor.user.email)
            await page.get_by_label("Password").fill(PASSWORD)
            await page.get_by_role("button", name="Sign in").click()
            await page.get_by_role("button", name="Allow").wait_for()
            await page.screenshot(path=str(shots_dir / "mcp-consent.png"), full_page=True)
            if keep is not None:
                for box in await page.locator('input[name="granted_scope"]').all():
                    if await box.get_attribute("value") not in keep:
                        await box.uncheck()
            await page.get_by_role("button", name="Allow").click()
            await page.wait_for_url(callback.url + "?*")

        async def redirected() -> AuthorizationCodeResult:
            await asyncio.to_thread(callback.arrived.wait, 10)
            received = callback.received[-1]
            return AuthorizationCodeResult(
                code=received["code"], state=received.get("state"), iss=received.get("iss")
            )

        provider = OAuthClientProvider(
            server_url=f"{site}/mcp",
            client_metadata=OAuthClientMetadata(
                client_name="SDK agent",
                redirect_uris=[AnyUrl(callback.url)],
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
                scope=WANTED,
            ),
            storage=storage,
            redirect_handler=consent,
            callback_handler=redirected,
        )
        async with (
            httpx2.AsyncClient(auth=provider, timeout=httpx2.Timeout(30, read=60)) as http,
            Client(streamable_http_client(f"{site}/mcp", http_client=http)) as client,  # type: ignore[arg-type]
        ):
            result = await client.call_tool("listOrganizations", {})
            tools = (await client.list_tools()).tools
    return result, tools


def required_scopes(tools: list[Any]) -> set[str]:
    return {(tool.meta or {}).get("salesplan/requiredScope") for tool in tools}


async def test_the_sdk_oauth_client_signs_in_through_the_consent_page(
    browser: Any,  # noqa: F811 - the fixture imported above
    origin: str,  # noqa: F811 - the fixture imported above
    shots: Path,  # noqa: F811 - the fixture imported above
    actor: Actor,
) -> None:
    """Contract §15: the SDK takes the scope the 401 names (every read scope) over its own;
    allowed as asked, its token holds those and no write, delete or send scope."""
    storage = MemoryStorage()
    result, tools = await sign_in_with_the_sdk(browser, origin, shots, actor, storage)
    assert not result.is_error, result.content
    assert [o["id"] for o in result.structured_content["data"]] == [str(actor.org.id)]
    assert storage.client is not None and storage.client.grant_types == ["authorization_code"]
    assert storage.client.scope is not None
    assert sorted(storage.client.scope.split()) == READ_SCOPES
    assert storage.tokens is not None and storage.tokens.refresh_token is None
    assert storage.tokens.scope is not None
    assert sorted(storage.tokens.scope.split()) == READ_SCOPES
    assert required_scopes(tools) <= set(READ_SCOPES) | {None}
    assert not [t.name for t in tools if t.name.startswith(("create", "update", "delete"))]


async def test_unticking_at_consent_leaves_the_sdk_client_exactly_what_it_wanted(
    browser: Any,  # noqa: F811 - the fixture imported above
    origin: str,  # noqa: F811 - the fixture imported above
    shots: Path,  # noqa: F811 - the fixture imported above
    actor: Actor,
) -> None:
    """Contract §15: the person unticks all but organizations:read and accounts:read; the
    token holds exactly those two, and tools/list shows only their tools."""
    storage = MemoryStorage()
    wanted = set(WANTED.split())
    result, tools = await sign_in_with_the_sdk(browser, origin, shots, actor, storage, keep=wanted)
    assert not result.is_error, result.content
    assert storage.tokens is not None and storage.tokens.scope is not None
    assert set(storage.tokens.scope.split()) == wanted
    names = {t.name for t in tools}
    assert {"listOrganizations", "listAccounts"} <= names
    assert required_scopes(tools) <= wanted | {None}
    assert not names & {"listContacts", "listPlans", "createAccount"}
