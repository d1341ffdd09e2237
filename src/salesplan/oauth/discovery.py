"""Discovery at the origin: RFC 8414 authorization-server metadata and RFC 9728
protected-resource metadata (bare and `/mcp` path forms). Public, no rate limit."""

from __future__ import annotations

from fastapi import APIRouter, Request

from salesplan.auth.dependencies import public
from salesplan.auth.scopes import APPROVED_SCOPES
from salesplan.oauth.apps import AUTH_METHODS, GRANT_TYPES

# In the OpenAPI document (issue 33), their response shapes from `oauth.schemas.DOCUMENTS`.
router = APIRouter(tags=["oauth"])


def authorization_server_metadata(public_url: str) -> dict[str, object]:
    api = f"{public_url}/api/v1"
    return {
        "issuer": public_url,
        "authorization_endpoint": f"{api}/oauth/authorize",
        "token_endpoint": f"{api}/oauth/token",
        "registration_endpoint": f"{api}/oauth/register",
        "scopes_supported": list(APPROVED_SCOPES),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": list(GRANT_TYPES),
        "token_endpoint_auth_methods_supported": list(AUTH_METHODS),
        "registration_endpoint_auth_methods_supported": ["none"],
        "code_challenge_methods_supported": ["S256"],
        # RFC 9207: every authorization response (code or error) carries `iss`.
        "authorization_response_iss_parameter_supported": True,
        # A client may use the https URL of its metadata document as its client_id
        # (draft-ietf-oauth-client-id-metadata-document; salesplan.oauth.client_metadata).
        "client_id_metadata_document_supported": True,
        "service_documentation": f"{public_url}/docs",
    }


def protected_resource_metadata(public_url: str) -> dict[str, object]:
    return {
        "resource": f"{public_url}/mcp",
        "authorization_servers": [public_url],
        "scopes_supported": list(APPROVED_SCOPES),
        "bearer_methods_supported": ["header"],
        "resource_name": "salesplan MCP server",
        "resource_documentation": f"{public_url}/docs",
    }


@router.get(
    "/.well-known/oauth-authorization-server",
    operation_id="getOAuthAuthorizationServerMetadata",
    summary="OAuth 2.0 authorization server metadata (RFC 8414)",
    openapi_extra=public(),
)
async def oauth_authorization_server(request: Request) -> dict[str, object]:
    return authorization_server_metadata(request.app.state.settings.public_url)


@router.get(
    "/.well-known/oauth-protected-resource",
    operation_id="getOAuthProtectedResourceMetadata",
    summary="OAuth 2.0 protected resource metadata of the MCP endpoint (RFC 9728)",
    openapi_extra=public(),
)
@router.get(
    "/.well-known/oauth-protected-resource/mcp",
    operation_id="getMcpProtectedResourceMetadata",
    summary="The same metadata at the path form of the MCP resource (RFC 9728 §3.1)",
    openapi_extra=public(),
)
async def oauth_protected_resource(request: Request) -> dict[str, object]:
    return protected_resource_metadata(request.app.state.settings.public_url)
