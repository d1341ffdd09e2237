"""What the OAuth endpoints accept and answer, as OpenAPI fragments (`salesplan.openapi` puts
them on the operations): the endpoints read their requests by hand (RFC 6749 form bodies,
RFC 7591 metadata with unknown members allowed), so no Pydantic model describes them. Each
pattern says what the code in `oauth/` accepts; a well-formed request can still be refused
for what only the server knows (an unregistered client, an unknown code: `invalid_client`,
`invalid_grant`, or the authorize error page)."""

from __future__ import annotations

import re
from typing import Any

from salesplan.auth.scopes import APPROVED_SCOPES, SCOPE_DESCRIPTIONS
from salesplan.kit.schemas import NO_NUL_PATTERN, NOT_BLANK_PATTERN

_PORT = r"(:([0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?"
# No space, control character or DEL (RFC 3986), spelled out rather than `\s`: Python's and
# ECMA 262's (the document's readers') `\s` differ on \x1c-\x1f and \x85.
_REST = r"([/?][^\x00-\x20\x7f#]*)?"
REDIRECT_URI_PATTERN = (
    rf"^(https://[A-Za-z0-9.-]*[A-Za-z0-9-][A-Za-z0-9.-]*{_PORT}"
    rf"|http://(localhost|127\.0\.0\.1|\[::1\]){_PORT}"
    rf"|(vscode|cursor)://[A-Za-z0-9._~-]*){_REST}$"
)
"""https with a host, loopback http on any port, vscode:// and cursor://; no fragment
(`oauth.apps.redirect_uri_problem`)."""

_SCOPE = "(" + "|".join(re.escape(scope) for scope in APPROVED_SCOPES) + ")"
SCOPE_LIST_PATTERN = rf"^[ ,]*({_SCOPE}([ ,]+{_SCOPE})*)?[ ,]*$"
"""Approved scopes separated by spaces or commas (`auth.scopes.parse_scopes`)."""
REQUIRED_SCOPE_LIST_PATTERN = rf"^[ ,]*{_SCOPE}([ ,]+{_SCOPE})*[ ,]*$"
"""The same, at least one scope: `/authorize` requires `scope` (`oauth.authorize`)."""

_HTTPS = {"type": "string", "pattern": r"^https://[^\x00]*$", "maxLength": 2000}

REGISTER_BODY: dict[str, Any] = {
    "type": "object",
    "description": "RFC 7591 client metadata; other members are accepted and ignored.",
    "required": ["redirect_uris"],
    "properties": {
        "redirect_uris": {
            "type": "array",
            "minItems": 1,
            "items": {"type": "string", "maxLength": 2000, "pattern": REDIRECT_URI_PATTERN},
        },
        "grant_types": {
            "type": "array",
            "items": {"enum": ["authorization_code", "refresh_token"]},
            "contains": {"const": "authorization_code"},
            "description": "refresh_token is accepted and ignored (no refresh tokens are issued).",
        },
        "response_types": {"type": "array", "items": {"const": "code"}, "minItems": 1},
        "token_endpoint_auth_method": {
            "enum": ["client_secret_basic", "client_secret_post", "none"]
        },
        "client_name": {"type": "string", "pattern": NOT_BLANK_PATTERN, "maxLength": 2000},
        "scope": {"type": "string", "pattern": SCOPE_LIST_PATTERN},
        "logo_uri": _HTTPS,
        "client_uri": _HTTPS,
    },
}

REGISTERED_CLIENT: dict[str, Any] = {
    "type": "object",
    "required": [
        "client_id",
        "client_id_issued_at",
        "client_name",
        "redirect_uris",
        "grant_types",
        "response_types",
        "token_endpoint_auth_method",
        "scope",
    ],
    "properties": {
        "client_id": {"type": "string"},
        "client_id_issued_at": {"type": "integer"},
        "client_name": {"type": "string"},
        "redirect_uris": {"type": "array", "items": {"type": "string"}},
        "grant_types": {"type": "array", "items": {"type": "string"}},
        "response_types": {"type": "array", "items": {"type": "string"}},
        "token_endpoint_auth_method": {"type": "string"},
        "scope": {"type": "string"},
        "logo_uri": {"type": "string"},
        "client_uri": {"type": "string"},
        "client_secret": {"type": "string"},
        "client_secret_expires_at": {"type": "integer"},
    },
}

_FORM_VALUE = {"type": "string", "minLength": 1, "pattern": NO_NUL_PATTERN}

TOKEN_FORM: dict[str, Any] = {
    "type": "object",
    "description": "RFC 6749 §4.1.3 (authorization_code, PKCE) or §4.4.2 (client_credentials). "
    "The client authenticates with HTTP Basic or client_id/client_secret here, not both.",
    "required": ["grant_type"],
    "properties": {
        "grant_type": {"enum": ["authorization_code", "client_credentials"]},
        "code": _FORM_VALUE,
        "redirect_uri": _FORM_VALUE,
        "code_verifier": _FORM_VALUE,
        "client_id": _FORM_VALUE,
        "client_secret": _FORM_VALUE,
        "scope": {"type": "string", "pattern": SCOPE_LIST_PATTERN},
        "resource": {**_FORM_VALUE, "description": "The MCP endpoint's URL (RFC 8707)."},
    },
    "if": {
        "required": ["grant_type"],
        "properties": {"grant_type": {"const": "authorization_code"}},
    },
    "then": {"required": ["code", "redirect_uri", "code_verifier"]},
    "additionalProperties": False,
}

TOKEN_RESPONSE: dict[str, Any] = {
    "type": "object",
    "required": ["access_token", "token_type", "expires_in", "scope"],
    "properties": {
        "access_token": {"type": "string"},
        "token_type": {"const": "Bearer"},
        "expires_in": {"type": "integer"},
        "scope": {"type": "string"},
    },
}


def _query(name: str, schema: dict[str, Any], required: bool, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": required,
        "schema": schema,
        "description": description,
    }


AUTHORIZE_PARAMETERS: list[dict[str, Any]] = [
    _query("response_type", {"const": "code"}, True, "Only the code flow."),
    _query("client_id", _FORM_VALUE, True, "A registered client."),
    _query(
        "redirect_uri",
        {"type": "string", "pattern": REDIRECT_URI_PATTERN},
        True,
        "Exactly one of the client's registered redirect URIs.",
    ),
    _query(
        "code_challenge",
        {"type": "string", "pattern": r"^[A-Za-z0-9._~-]{43,128}$"},
        True,
        "PKCE (RFC 7636).",
    ),
    _query("code_challenge_method", {"const": "S256"}, True, "PKCE: only S256."),
    _query(
        "scope",
        {"type": "string", "pattern": REQUIRED_SCOPE_LIST_PATTERN},
        True,
        "Space- or comma-separated; each allowed on the client.",
    ),
    _query("state", {"type": "string", "pattern": NO_NUL_PATTERN}, False, "Echoed back."),
    _query("resource", _FORM_VALUE, False, "The MCP endpoint's URL (RFC 8707)."),
]

OAUTH2_SCHEME: dict[str, Any] = {
    "type": "oauth2",
    "description": "OAuth 2.1 for MCP clients and partner apps (access tokens are bearer "
    "tokens like API keys).",
    "flows": {
        "authorizationCode": {
            "authorizationUrl": "/api/v1/oauth/authorize",
            "tokenUrl": "/api/v1/oauth/token",
            "scopes": dict(SCOPE_DESCRIPTIONS),
        },
        "clientCredentials": {
            "tokenUrl": "/api/v1/oauth/token",
            "scopes": dict(SCOPE_DESCRIPTIONS),
        },
    },
}


_URL = {"type": "string", "format": "uri"}
_STRINGS = {"type": "array", "items": {"type": "string"}}

AUTHORIZATION_SERVER_METADATA: dict[str, Any] = {
    "type": "object",
    "description": "RFC 8414 authorization server metadata (`oauth.discovery`).",
    "required": [
        "issuer",
        "authorization_endpoint",
        "token_endpoint",
        "registration_endpoint",
        "scopes_supported",
        "response_types_supported",
        "grant_types_supported",
        "token_endpoint_auth_methods_supported",
        "registration_endpoint_auth_methods_supported",
        "code_challenge_methods_supported",
    ],
    "properties": {
        "issuer": _URL,
        "authorization_endpoint": _URL,
        "token_endpoint": _URL,
        "registration_endpoint": _URL,
        "scopes_supported": _STRINGS,
        "response_types_supported": _STRINGS,
        "response_modes_supported": _STRINGS,
        "grant_types_supported": _STRINGS,
        "token_endpoint_auth_methods_supported": _STRINGS,
        "registration_endpoint_auth_methods_supported": {
            "type": "array",
            "items": {"type": "string"},
            "contains": {"const": "none"},
        },
        "code_challenge_methods_supported": _STRINGS,
        "authorization_response_iss_parameter_supported": {"type": "boolean"},
        "client_id_metadata_document_supported": {"type": "boolean"},
        "service_documentation": _URL,
    },
}

PROTECTED_RESOURCE_METADATA: dict[str, Any] = {
    "type": "object",
    "description": "RFC 9728 protected resource metadata of the MCP endpoint.",
    "required": ["resource", "authorization_servers"],
    "properties": {
        "resource": _URL,
        "authorization_servers": {"type": "array", "items": _URL},
        "scopes_supported": _STRINGS,
        "bearer_methods_supported": _STRINGS,
        "resource_name": {"type": "string"},
        "resource_documentation": _URL,
    },
}


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"content": {"application/json": {"schema": schema}}}


DOCUMENTS: dict[str, dict[str, Any]] = {
    "registerOAuthClient": {
        "requestBody": {"required": True, **_json(REGISTER_BODY)},
        "responses": {"201": {"description": "The registered client", **_json(REGISTERED_CLIENT)}},
    },
    "issueOAuthToken": {
        "requestBody": {
            "required": True,
            "content": {"application/x-www-form-urlencoded": {"schema": TOKEN_FORM}},
        },
        "responses": {"200": {"description": "An access token", **_json(TOKEN_RESPONSE)}},
    },
    "getOAuthAuthorizationServerMetadata": {
        "responses": {
            "200": {"description": "The metadata", **_json(AUTHORIZATION_SERVER_METADATA)}
        },
    },
    "getOAuthProtectedResourceMetadata": {
        "responses": {"200": {"description": "The metadata", **_json(PROTECTED_RESOURCE_METADATA)}},
    },
    "getMcpProtectedResourceMetadata": {
        "responses": {"200": {"description": "The metadata", **_json(PROTECTED_RESOURCE_METADATA)}},
    },
    "authorizeOAuthClient": {
        "parameters": AUTHORIZE_PARAMETERS,
        "responses": {
            "200": {
                "description": "The sign-in or consent page",
                "content": {"text/html": {"schema": {"type": "string"}}},
            },
            "302": {
                "description": "To the sign-in page, or back to the client with a code or an "
                "RFC 6749 §4.1.2.1 error",
                "headers": {"Location": {"schema": {"type": "string"}}},
            },
        },
    },
}
"""operationId → the fragments the generated operation gets (merged over it)."""
