"""Discovery documents at the origin: RFC 8414 and RFC 9728."""

from __future__ import annotations

import httpx
import pytest
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata

from salesplan.auth.scopes import APPROVED_SCOPES
from salesplan.oauth.discovery import authorization_server_metadata


def test_metadata_for_an_https_origin_is_valid_rfc8414() -> None:
    body = authorization_server_metadata("https://salesplan.example.com")
    AuthorizationServerMetadata(body).validate()
    assert body["issuer"] == "https://salesplan.example.com"


async def test_authorization_server_metadata_is_valid_rfc8414(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    response = await client.get("/.well-known/oauth-authorization-server")
    assert response.status_code == 200
    body = response.json()
    # The test origin is plain http; authlib accepts it only when told it is a test.
    monkeypatch.setenv("AUTHLIB_INSECURE_TRANSPORT", "1")
    AuthorizationServerMetadata(body).validate()
    assert body["issuer"] == "http://testserver"
    assert body["authorization_endpoint"] == "http://testserver/api/v1/oauth/authorize"
    assert body["token_endpoint"] == "http://testserver/api/v1/oauth/token"
    assert body["registration_endpoint"] == "http://testserver/api/v1/oauth/register"
    assert body["grant_types_supported"] == ["authorization_code", "client_credentials"]
    assert body["response_types_supported"] == ["code"]
    assert body["code_challenge_methods_supported"] == ["S256"]
    assert body["scopes_supported"] == list(APPROVED_SCOPES)
    assert "none" in body["registration_endpoint_auth_methods_supported"]
    assert {"client_secret_basic", "client_secret_post", "none"} <= set(
        body["token_endpoint_auth_methods_supported"]
    )
    assert "x-ratelimit-limit" not in response.headers


@pytest.mark.parametrize(
    "path", ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]
)
async def test_protected_resource_metadata_names_the_mcp_resource(
    client: httpx.AsyncClient, path: str
) -> None:
    response = await client.get(path)
    assert response.status_code == 200
    body = response.json()
    assert body["resource"] == "http://testserver/mcp"
    assert body["authorization_servers"] == ["http://testserver"]
    assert body["bearer_methods_supported"] == ["header"]


async def test_discovered_endpoints_exist(client: httpx.AsyncClient) -> None:
    body = (await client.get("/.well-known/oauth-authorization-server")).json()
    for key in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
        path = body[key].removeprefix("http://testserver")
        response = await client.request("GET" if key == "authorization_endpoint" else "POST", path)
        assert response.status_code != 404, key


async def test_oauth_operations_are_public_in_the_openapi_document(
    client: httpx.AsyncClient,
) -> None:
    paths = (await client.get("/api/v1/openapi.json")).json()["paths"]
    assert paths["/api/v1/oauth/token"]["post"]["operationId"] == "issueOAuthToken"
    assert paths["/api/v1/oauth/register"]["post"]["x-scopes"] == []
