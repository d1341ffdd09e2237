"""Client ID Metadata Documents (issue 33 item 4; draft-ietf-oauth-client-id-metadata-document):
a client whose client_id is the https URL of its metadata document goes through authorize →
consent → token → an MCP call, the document fetched through the outbound guard from a test HTTPS
server on loopback; the refusals are error pages, never redirects."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import itertools
import json
import ssl
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import uvicorn
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from salesplan.app import create_app
from salesplan.config import Settings
from salesplan.kit import outbound
from salesplan.oauth.client_metadata import MAX_BYTES, cache_seconds, url_problem
from salesplan.oauth.discovery import authorization_server_metadata
from tests.fixtures.factories import make_actor
from tests.mcp.conftest import McpServer, connect, serve
from tests.oauth.flow import (
    REDIRECT,
    hidden_fields,
    pkce_pair,
    redirect_query,
    sign_in,
    ticked_scopes,
)

AUTHORIZE = "/api/v1/oauth/authorize"
_names = itertools.count()
FETCHES = 5  # the live app's per-IP limit (document fetches, sign-in, token: one bucket each)


# --- a test HTTPS server on loopback, its self-signed certificate trusted by the guard --------


@pytest.fixture(scope="session")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "salesplan test documents")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


@dataclass
class Documents:
    """What the HTTPS server answers, by path, and how often each path was fetched."""

    origin: str
    answers: dict[str, tuple[int, dict[str, str], bytes]] = field(default_factory=dict)
    hits: dict[str, int] = field(default_factory=dict)

    def url(self, name: str) -> str:
        return f"{self.origin}/clients/{name}.json"

    def put(self, url: str, body: object, status: int = 200, **headers: str) -> None:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.answers[url.removeprefix(self.origin)] = (status, headers, raw)


@pytest.fixture(scope="session")
async def document_server(certificate: tuple[Path, Path]) -> AsyncIterator[Documents]:
    documents = Documents("")

    async def answer(request: Request) -> Response:
        path = request.url.path
        documents.hits[path] = documents.hits.get(path, 0) + 1
        status, headers, body = documents.answers.get(path, (404, {}, b"{}"))
        return Response(body, status, headers, media_type="application/json")

    app = Starlette(routes=[Route("/{path:path}", answer)])
    cert_file, key_file = certificate
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        lifespan="off",
        log_level="warning",
        ssl_certfile=str(cert_file),
        ssl_keyfile=str(key_file),
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    documents.origin = f"https://127.0.0.1:{port}"
    try:
        yield documents
    finally:
        server.should_exit = True
        await task


@pytest.fixture
def trust_test_certificate(
    certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """The guard's TLS context trusts the test server's self-signed certificate."""
    context = ssl.create_default_context(cafile=str(certificate[0]))
    monkeypatch.setattr(outbound, "_ssl_context", lambda: context)
    yield


@pytest.fixture(scope="session")
async def cimd_server(settings: Settings, schema: None) -> AsyncIterator[McpServer]:
    """The app on a live port, allowed to reach loopback (where the document server is)."""
    app = create_app(
        settings.model_copy(
            update={"outbound_allow": "127.0.0.0/8", "ip_rate_limit_per_minute": FETCHES}
        )
    )
    async with serve(app) as server:
        yield server


@pytest.fixture
async def live(
    cimd_server: McpServer, app: object, document_server: Documents, trust_test_certificate: None
) -> AsyncIterator[tuple[McpServer, httpx.AsyncClient]]:
    """The live app and a browser on it; `app` empties the database after the test."""
    await cimd_server.app.state.rate_limiter.store.reset()
    origin = cimd_server.url.removesuffix("/mcp")
    async with httpx.AsyncClient(base_url=origin) as browser:
        yield cimd_server, browser


def metadata(url: str, **overrides: object) -> dict[str, object]:
    document: dict[str, object] = {
        "client_id": url,
        "client_name": "Test Editor",
        "client_uri": "https://editor.example.com",
        "redirect_uris": [REDIRECT],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    document.update(overrides)
    return {k: v for k, v in document.items() if v is not None}


def request_params(client_id: str, challenge: str, **overrides: str) -> dict[str, str]:
    return {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "scope": "organizations:read accounts:read",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "cimd-state",
        "resource": "http://testserver/mcp",  # the settings' mcp_url
    } | overrides


# --- the whole flow ---------------------------------------------------------------------------


async def test_a_metadata_document_client_goes_from_authorize_to_an_mcp_call(
    live: tuple[McpServer, httpx.AsyncClient], document_server: Documents, db: object
) -> None:
    server, browser = live
    actor = await make_actor(db)
    assert (await sign_in(browser, actor.user.email)).status_code == 303
    url = document_server.url(f"editor-{next(_names)}")
    document_server.put(url, metadata(url), **{"Cache-Control": "max-age=600"})
    verifier, challenge = pkce_pair()
    params = request_params(url, challenge)

    page = await browser.get(AUTHORIZE, params=params)
    assert page.status_code == 200, page.text
    assert "Test Editor wants to access your salesplan data" in page.text
    assert url in page.text  # where the name comes from
    fields: dict[str, str | list[str]] = hidden_fields(page.text) | {"decision": "allow"}
    assert fields["client_id"] == url
    fields["granted_scope"] = ticked_scopes(page.text)
    consented = await browser.post("/oauth/consent", data=fields)
    assert consented.status_code == 303, consented.text
    answer = redirect_query(consented)
    assert answer["state"] == "cimd-state" and answer["iss"] == "http://testserver"

    token = await browser.post(
        "/api/v1/oauth/token",
        data={
            "grant_type": "authorization_code",
            "code": answer["code"],
            "redirect_uri": REDIRECT,
            "code_verifier": verifier,
            "client_id": url,
        },
    )
    assert token.status_code == 200, token.text
    issued = token.json()
    assert issued["scope"] == "organizations:read accounts:read"
    # Fetched once: the consent POST re-validated the request from the cache.
    assert document_server.hits[url.removeprefix(document_server.origin)] == 1

    async with connect(server.url, issued["access_token"]) as client:
        result = await client.call_tool("listOrganizations", {})
    assert not result.is_error, result.content
    assert [o["id"] for o in result.structured_content["data"]] == [str(actor.org.id)]


async def test_a_secret_is_refused_at_the_token_endpoint_for_a_document_client(
    live: tuple[McpServer, httpx.AsyncClient], document_server: Documents, db: object
) -> None:
    _, browser = live
    actor = await make_actor(db)
    await sign_in(browser, actor.user.email)
    url = document_server.url(f"editor-{next(_names)}")
    document_server.put(url, metadata(url))
    verifier, challenge = pkce_pair()
    page = await browser.get(AUTHORIZE, params=request_params(url, challenge))
    assert page.status_code == 200, page.text
    fields: dict[str, str | list[str]] = hidden_fields(page.text) | {"decision": "allow"}
    fields["granted_scope"] = ticked_scopes(page.text)
    code = redirect_query(await browser.post("/oauth/consent", data=fields))["code"]
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "code_verifier": verifier,
        "client_id": url,
    }
    with_secret = await browser.post("/api/v1/oauth/token", data=form | {"client_secret": "x"})
    assert with_secret.status_code == 401 and with_secret.json()["error"] == "invalid_client"
    wrong_verifier = await browser.post(
        "/api/v1/oauth/token", data=form | {"code_verifier": pkce_pair()[0]}
    )
    assert wrong_verifier.json()["error"] == "invalid_grant"


# --- refusals: an error page, never a redirect ------------------------------------------------


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("http", "must use https"),
        ("mismatched_client_id", "does not equal the URL"),
        ("redirect_not_listed", "does not exactly match one registered"),
        ("oversize", f"larger than {MAX_BYTES} bytes"),
        ("oversize_without_length", f"larger than {MAX_BYTES} bytes"),
        ("private_address", "destination not allowed"),
        ("link_local", "destination not allowed"),
        ("secret", "must not contain a client secret"),
        ("secret_auth_method", "token_endpoint_auth_method must be none"),
        ("no_redirect_uris", "must list its redirect_uris"),
        ("bad_redirect_uri", "plain http is allowed only on loopback"),
        ("not_found", "HTTP 404"),
        ("redirects", "redirects are not followed"),
        ("not_json", "is not JSON"),
        ("fragment", "must not contain a fragment"),
        ("no_path", "must have a path"),
    ],
)
async def test_an_unusable_document_is_an_error_page(
    live: tuple[McpServer, httpx.AsyncClient],
    document_server: Documents,
    db: object,
    case: str,
    expected: str,
) -> None:
    _, browser = live
    actor = await make_actor(db)
    await sign_in(browser, actor.user.email)
    url = document_server.url(f"{case}-{next(_names)}")
    document = metadata(url)
    redirect_uri = REDIRECT
    if case == "http":
        url = url.replace("https://", "http://")
    elif case == "mismatched_client_id":
        document_server.put(url, metadata(url + "x"))
    elif case == "redirect_not_listed":
        document_server.put(url, document)
        redirect_uri = "http://127.0.0.1:8765/elsewhere"
    elif case == "oversize":
        document_server.put(url, metadata(url, client_name="x" * MAX_BYTES))
    elif case == "oversize_without_length":
        document_server.put(url, b" " * (MAX_BYTES + 1), **{"Transfer-Encoding": "chunked"})
    elif case == "private_address":
        url = "https://10.0.0.1/clients/editor.json"
    elif case == "link_local":
        url = "https://169.254.169.254/clients/editor.json"
    elif case == "secret":
        document_server.put(url, metadata(url, client_secret="s3cret"))
    elif case == "secret_auth_method":
        document_server.put(url, metadata(url, token_endpoint_auth_method="client_secret_basic"))
    elif case == "no_redirect_uris":
        document_server.put(url, metadata(url, redirect_uris=None))
    elif case == "bad_redirect_uri":
        document_server.put(url, metadata(url, redirect_uris=["http://evil.example.com/cb"]))
    elif case == "not_found":
        pass
    elif case == "redirects":
        document_server.put(url, b"", status=302, Location=document_server.url("other"))
    elif case == "not_json":
        document_server.put(url, b"<html></html>")
    elif case == "fragment":
        url += "#x"
    elif case == "no_path":
        url = document_server.origin + "/"
    params = request_params(url, pkce_pair()[1], redirect_uri=redirect_uri)
    response = await browser.get(AUTHORIZE, params=params)
    assert response.status_code == 400, response.text
    assert "location" not in response.headers
    assert response.headers["content-type"].startswith("text/html")
    assert expected in response.text.replace("&#39;", "'"), response.text


async def test_the_document_client_is_unknown_at_the_token_endpoint_before_authorize(
    live: tuple[McpServer, httpx.AsyncClient], document_server: Documents
) -> None:
    _, browser = live
    url = document_server.url(f"never-{next(_names)}")
    response = await browser.post(
        "/api/v1/oauth/token",
        data={"grant_type": "authorization_code", "code": "x", "redirect_uri": REDIRECT}
        | {"code_verifier": pkce_pair()[0], "client_id": url},
    )
    assert response.status_code == 401 and response.json()["error"] == "invalid_client"


async def test_the_document_is_fetched_again_when_its_cache_life_ends(
    live: tuple[McpServer, httpx.AsyncClient], document_server: Documents, db: object
) -> None:
    _, browser = live
    actor = await make_actor(db)
    await sign_in(browser, actor.user.email)
    url = document_server.url(f"renamed-{next(_names)}")
    document_server.put(
        url, metadata(url, client_name="First Name"), **{"Cache-Control": "no-store"}
    )
    params = request_params(url, pkce_pair()[1])
    assert "First Name" in (await browser.get(AUTHORIZE, params=params)).text
    document_server.put(url, metadata(url, client_name="Second Name"))
    assert "Second Name" in (await browser.get(AUTHORIZE, params=params)).text
    # cached for the default life now: a change is seen only after it
    document_server.put(url, metadata(url, client_name="Third Name"))
    assert "Second Name" in (await browser.get(AUTHORIZE, params=params)).text
    assert document_server.hits[url.removeprefix(document_server.origin)] == 2


async def test_document_fetches_spend_the_callers_per_ip_limit(
    live: tuple[McpServer, httpx.AsyncClient], document_server: Documents
) -> None:
    """Anybody can start an authorization request: each fetch (not a cache hit) costs the
    caller a unit, so that nobody makes the server fetch one URL after another."""
    _, browser = live
    cached = document_server.url(f"cached-{next(_names)}")
    document_server.put(cached, metadata(cached))
    for _ in range(FETCHES + 2):  # one fetch, then cache hits
        page = await browser.get(AUTHORIZE, params=request_params(cached, pkce_pair()[1]))
        assert page.status_code in (200, 302), page.text  # consent, or sign-in first
    for i in range(FETCHES - 1):
        url = document_server.url(f"many-{next(_names)}")
        document_server.put(url, metadata(url))
        page = await browser.get(AUTHORIZE, params=request_params(url, pkce_pair()[1]))
        assert page.status_code in (200, 302), (i, page.text)
    url = document_server.url(f"many-{next(_names)}")
    document_server.put(url, metadata(url))
    refused = await browser.get(AUTHORIZE, params=request_params(url, pkce_pair()[1]))
    assert refused.status_code == 400
    assert "Too many client metadata documents" in refused.text
    assert url.removeprefix(document_server.origin) not in document_server.hits


def test_cache_life_follows_max_age_within_bounds() -> None:
    assert cache_seconds(None) == 300
    assert cache_seconds("public, max-age=600") == 600
    assert cache_seconds("max-age=1") == 60
    assert cache_seconds("max-age=99999999") == 24 * 3600
    assert cache_seconds("no-store") == 0
    assert cache_seconds("no-cache") == 300


def test_client_id_urls() -> None:
    assert url_problem("https://editor.example.com/oauth/client.json") is None
    assert url_problem("https://editor.example.com:8443/c?x=1") is None
    for bad in (
        "http://editor.example.com/client.json",
        "https://editor.example.com",
        "https://user:pw@editor.example.com/client.json",
        "https://editor.example.com/a/../client.json",
        "https://editor.example.com/client.json#f",
        "https://editor.example.com/" + "x" * 2000,
    ):
        assert url_problem(bad) is not None, bad


def test_metadata_advertises_client_id_metadata_documents() -> None:
    document = authorization_server_metadata("https://crm.example.com")
    assert document["client_id_metadata_document_supported"] is True
    assert document["registration_endpoint"]  # dynamic registration stays
