"""Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document; the MCP
authorization revisions of 2025-11-25 and 2026-07-28 prefer them to dynamic registration).

A client may name itself by an https URL as its `client_id`: the authorization server fetches
the JSON document at that URL and takes the client's metadata from it. Here:

- The URL: https only, with a host and a path, no fragment, no user or password, no `.`/`..`
  segments, at most 2000 characters.
- The fetch goes through the outbound guard (contract §12: public addresses only, on the
  address actually connected to), redirects are not followed, the answer must be 200 within
  `FETCH_SECONDS` and at most `MAX_BYTES`.
- The document: a JSON object whose `client_id` equals the URL exactly; `redirect_uris` a
  non-empty list of redirect URIs we accept (contract §8); a public client — no
  `client_secret`, `token_endpoint_auth_method` absent or `none` (PKCE is required of every
  client anyway); `grant_types`/`response_types`, when given, allowing the code flow;
  `client_name` shown on the consent page (else the URL's host); `scope` narrows the scopes
  it may ask for.
- Each fetch (not a cache hit) spends a unit of the caller's per-IP limit.
- A document is cached per process for its `Cache-Control: max-age`, within
  [`MIN_CACHE_SECONDS`, `MAX_CACHE_SECONDS`] (`DEFAULT_CACHE_SECONDS` without one; not at all
  with `no-store`).

What the document says is kept as an OAuth app row (no owner, no secret, reaching the
organizations its users consent to, like a dynamically registered client), under an internal
client id derived from the URL (`stored_client_id`): the codes and tokens issued to it refer to
that row, and the token endpoint finds it by the URL. The row follows the document each time an
authorization request fetches it anew."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.applications import Starlette
from starlette.requests import Request

from salesplan.auth.scopes import APPROVED_SCOPES, parse_scopes
from salesplan.config import Settings
from salesplan.errors import RateLimited
from salesplan.kit import outbound
from salesplan.models.oauth import OAuthApp
from salesplan.oauth import repository
from salesplan.oauth.apps import redirect_uri_problem, stored_client_id

MAX_BYTES = 5 * 1024
FETCH_SECONDS = 5.0
MIN_CACHE_SECONDS = 60
DEFAULT_CACHE_SECONDS = 300
MAX_CACHE_SECONDS = 24 * 3600
CACHE_ENTRIES = 256
FETCH_LIMIT_ENDPOINT = "oauth_client_metadata"
MAX_URL_LENGTH = 2000
SECRET_METHODS = ("client_secret_basic", "client_secret_post", "client_secret_jwt")
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?(\d+)\"?\s*(?:,|$)", re.IGNORECASE)


class ClientMetadataError(Exception):
    """The client id URL or its document cannot be used; the text says why (shown to the
    person on the authorization error page, never a provider's body or an internal detail)."""


def url_problem(url: str) -> str | None:
    if len(url) > MAX_URL_LENGTH:
        return "The client_id URL is too long."
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return "The client_id is not a valid URL."
    if parts.scheme != "https":
        return "A client_id URL must use https."
    if not parts.hostname:
        return "The client_id URL has no host."
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        return "The client_id URL must not contain a user name or password."
    if parts.fragment or "#" in url:
        return "The client_id URL must not contain a fragment."
    if parts.path in ("", "/"):
        return "The client_id URL must have a path."
    if any(segment in (".", "..") for segment in parts.path.split("/")):
        return "The client_id URL must not contain . or .. path segments."
    return None


@dataclass(frozen=True)
class ClientMetadata:
    url: str
    name: str
    redirect_uris: list[str]
    scopes: list[str]
    logo_uri: str | None
    client_uri: str | None


def _https(document: Mapping[str, object], name: str) -> str | None:
    value = document.get(name)
    if isinstance(value, str) and value.startswith("https://") and len(value) <= 2000:
        return value
    return None


def parse_document(url: str, raw: bytes) -> ClientMetadata:
    """The document's metadata, checked (see the module's text)."""
    try:
        document = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise ClientMetadataError("The client metadata document is not JSON.") from None
    if not isinstance(document, dict):
        raise ClientMetadataError("The client metadata document is not a JSON object.")
    if document.get("client_id") != url:
        raise ClientMetadataError(
            "The client metadata document's client_id does not equal the URL it was fetched from."
        )
    if "client_secret" in document or "client_secret_expires_at" in document:
        raise ClientMetadataError("A client metadata document must not contain a client secret.")
    method = document.get("token_endpoint_auth_method", "none")
    if method != "none":
        raise ClientMetadataError(
            "A client identified by a metadata document is a public client: "
            "token_endpoint_auth_method must be none."
        )
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
        raise ClientMetadataError(
            "The client metadata document must list its redirect_uris (a non-empty array)."
        )
    for uri in uris:
        problem = redirect_uri_problem(uri)
        if problem:
            raise ClientMetadataError(f"The client metadata document's redirect URI {problem}.")
    grant_types = document.get("grant_types", ["authorization_code"])
    if not isinstance(grant_types, list) or "authorization_code" not in grant_types:
        raise ClientMetadataError(
            "The client metadata document's grant_types must include authorization_code."
        )
    response_types = document.get("response_types", ["code"])
    if not isinstance(response_types, list) or "code" not in response_types:
        raise ClientMetadataError(
            "The client metadata document's response_types must include code."
        )
    scope = document.get("scope")
    scopes = list(APPROVED_SCOPES)
    if scope is not None:
        if not isinstance(scope, str):
            raise ClientMetadataError("The client metadata document's scope must be a string.")
        scopes = [s for s in parse_scopes(scope) if s in APPROVED_SCOPES]
        if not scopes:
            raise ClientMetadataError("The client metadata document names no scope offered here.")
    name = document.get("client_name")
    if not isinstance(name, str) or not name.strip():
        name = urlsplit(url).hostname or url
    return ClientMetadata(
        url=url,
        name=name.strip()[:200],
        redirect_uris=list(dict.fromkeys(uris)),
        scopes=scopes,
        logo_uri=_https(document, "logo_uri"),
        client_uri=_https(document, "client_uri"),
    )


def cache_seconds(cache_control: str | None) -> int:
    """How long to keep a document: its max-age within the bounds; not at all on no-store."""
    if not cache_control:
        return DEFAULT_CACHE_SECONDS
    if "no-store" in cache_control.lower():
        return 0
    match = _MAX_AGE.search(cache_control)
    if match is None:
        return DEFAULT_CACHE_SECONDS
    return max(MIN_CACHE_SECONDS, min(MAX_CACHE_SECONDS, int(match.group(1))))


class ClientDocuments:
    """Fetches and caches the metadata documents (one per app: `documents(app)`)."""

    def __init__(self, settings: Settings) -> None:
        self.policy = outbound.policy(settings)
        self._cache: OrderedDict[str, tuple[float, ClientMetadata]] = OrderedDict()

    async def metadata(
        self, url: str, before_fetch: Callable[[], Awaitable[None]] | None = None
    ) -> ClientMetadata:
        """The document's metadata, from the cache or fetched now (`before_fetch` first: the
        per-IP limit on fetches, which may refuse with ClientMetadataError)."""
        problem = url_problem(url)
        if problem:
            raise ClientMetadataError(problem)
        now = time.monotonic()
        cached = self._cache.get(url)
        if cached is not None and cached[0] > now:
            return cached[1]
        if before_fetch is not None:
            await before_fetch()
        metadata, ttl = await self._fetch(url)
        self._cache.pop(url, None)
        if ttl > 0:
            self._cache[url] = (now + ttl, metadata)
            while len(self._cache) > CACHE_ENTRIES:
                self._cache.popitem(last=False)
        return metadata

    async def _fetch(self, url: str) -> tuple[ClientMetadata, int]:
        failed = "The client metadata document could not be fetched"
        try:
            async with (
                asyncio.timeout(FETCH_SECONDS),
                outbound.async_client(self.policy, timeout=FETCH_SECONDS) as http,
                http.stream("GET", url, headers={"Accept": "application/json"}) as response,
            ):
                if response.is_redirect:
                    raise ClientMetadataError(
                        f"{failed}: it redirects (redirects are not followed)."
                    )
                if response.status_code != 200:
                    raise ClientMetadataError(f"{failed}: HTTP {response.status_code}.")
                length = response.headers.get("content-length", "")
                if length.isdigit() and int(length) > MAX_BYTES:
                    raise ClientMetadataError(f"{failed}: larger than {MAX_BYTES} bytes.")
                chunks: list[bytes] = []
                size = 0
                async for chunk in response.aiter_raw():
                    size += len(chunk)
                    if size > MAX_BYTES:
                        raise ClientMetadataError(f"{failed}: larger than {MAX_BYTES} bytes.")
                    chunks.append(chunk)
                cache_control = response.headers.get("cache-control")
        except outbound.DestinationNotAllowed:
            raise ClientMetadataError(f"{failed}: {outbound.REFUSED}.") from None
        except (TimeoutError, httpx.HTTPError, outbound.OutboundError, OSError):
            raise ClientMetadataError(f"{failed}: {outbound.UNREACHABLE}.") from None
        return parse_document(url, b"".join(chunks)), cache_seconds(cache_control)


def documents(app: Starlette) -> ClientDocuments:
    """The app's document cache (created on first use)."""
    found = getattr(app.state, "client_documents", None)
    if found is None:
        found = ClientDocuments(app.state.settings)
        app.state.client_documents = found
    return found


MetadataSource = Callable[[str], Awaitable[ClientMetadata]]


def request_metadata(request: Request) -> MetadataSource:
    """The metadata of a client id URL for this request: from the app's cache, else fetched,
    each fetch spending a unit of the caller's per-IP limit (`FETCH_LIMIT_ENDPOINT`, the
    deployment's `ip_rate_limit_per_minute`), so that nobody makes the server fetch one URL
    after another on their behalf."""
    app = request.app

    async def spend() -> None:
        ip = request.client.host if request.client else "unknown"
        try:
            await app.state.rate_limiter.consume_ip(ip, FETCH_LIMIT_ENDPOINT)
        except RateLimited as exc:
            raise ClientMetadataError(
                "Too many client metadata documents were requested from your address; "
                f"retry in {exc.details.get('retryAfterSeconds', 60)} seconds."
            ) from None

    async def metadata(url: str) -> ClientMetadata:
        return await documents(app).metadata(url, spend)

    return metadata


async def app_for_document(session: AsyncSession, metadata: ClientMetadata) -> OAuthApp:
    """The app row of the document's client, created or brought up to date."""
    client_id = stored_client_id(metadata.url)
    app = await repository.app_by_client_id(session, client_id)
    if app is None:
        app = OAuthApp(
            owner_user_id=None,
            client_id=client_id,
            client_secret_hash=None,
            name=metadata.name,
            description="",
            organization_ids=None,
            grant_types=["authorization_code"],
            token_endpoint_auth_method="none",
            dynamic=True,
            redirect_uris=metadata.redirect_uris,
            scopes=metadata.scopes,
            icon_url=metadata.logo_uri,
            client_uri=metadata.client_uri,
        )
        try:
            async with session.begin_nested():
                session.add(app)
        except IntegrityError:  # another request stored it meanwhile
            app = await repository.app_by_client_id(session, client_id)
            if app is None:  # pragma: no cover - the row that collided is there
                raise
        else:
            return app
    if (
        app.name != metadata.name
        or app.redirect_uris != metadata.redirect_uris
        or app.scopes != metadata.scopes
        or app.icon_url != metadata.logo_uri
        or app.client_uri != metadata.client_uri
    ):
        app.name = metadata.name
        app.redirect_uris = metadata.redirect_uris
        app.scopes = metadata.scopes
        app.icon_url = metadata.logo_uri
        app.client_uri = metadata.client_uri
        await session.flush()
    return app
