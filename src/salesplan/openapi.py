"""Our OpenAPI 3.1 document: every operation carries its operationId, tag, `x-scopes` and
`x-rate-limit-group`, read from the same `Requirement` object that enforces them."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute

from salesplan import __version__
from salesplan.auth.dependencies import Requirement

ERROR_ENVELOPE = {
    "type": "object",
    "additionalProperties": False,
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "additionalProperties": False,
            "required": ["code", "message", "details"],
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "details": {"type": "object", "additionalProperties": True},
            },
        }
    },
}

OAUTH_ERROR = {
    "type": "object",
    "description": "RFC 6749 §5.2 error (OAuth endpoints answer these, not ErrorEnvelope).",
    "required": ["error"],
    "properties": {
        "error": {"type": "string"},
        "error_description": {"type": "string"},
    },
}

_WRITE_STATUSES = {
    "409": "Conflicts with the current state (duplicate crmId, idempotency)",
    "422": "Well-formed but semantically wrong (a reference to a missing entity, …)",
}
_SERVER_STATUSES = {
    "500": "Unexpected error; details.requestId names it in the server log",
    "503": "A backing service is unavailable; retry after Retry-After seconds",
}

_ERROR_STATUSES = {
    "400": "Validation error or missing organization context",
    "401": "Missing, expired or revoked token",
    "403": "Missing scope or no access to the organization",
    "404": "Not found in the organization",
    "429": "Rate limit exceeded",
}


def requirement_of(route: APIRoute) -> Requirement | None:
    stack = list(route.dependant.dependencies)
    while stack:
        dep = stack.pop()
        if isinstance(dep.call, Requirement):
            return dep.call
        stack.extend(dep.dependencies)
    return None


def collect_requirements(routers: list[APIRouter]) -> dict[str, Requirement | None]:
    """operationId → the Requirement that guards it, from the routers as declared."""
    found: dict[str, Requirement | None] = {}
    for router in routers:
        for route in router.routes:
            if isinstance(route, APIRoute) and route.operation_id:
                found[route.operation_id] = requirement_of(route)
                if route.summary is None and route.description:
                    route.summary = route.description.strip().splitlines()[0].rstrip(".")
    return found


def build_openapi(app: FastAPI) -> dict[str, Any]:
    if app.openapi_schema:
        return app.openapi_schema
    schema = get_openapi(
        title="salesplan Integration API",
        version=__version__,
        summary="Accounts, contacts, opportunities, plans, relationship maps, Engage, calendar "
        "and feed for partner integrations and AI agents.",
        routes=app.routes,
    )
    components = schema.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    schemas["ErrorEnvelope"] = ERROR_ENVELOPE
    schemas["OAuthError"] = OAUTH_ERROR
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    components["securitySchemes"] = {
        "bearer": {"type": "http", "scheme": "bearer", "description": "API key or OAuth token"}
    }
    by_operation: dict[str, Requirement | None] = app.state.requirements
    for path, path_item in schema.get("paths", {}).items():
        for method, operation in path_item.items():
            if not isinstance(operation, dict) or "operationId" not in operation:
                continue
            requirement = by_operation.get(operation["operationId"])
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)
            # Contract §2: OAuth endpoints answer RFC 6749 errors instead of ErrorEnvelope.
            oauth = path.startswith("/api/v1/oauth/")
            shape = "OAuthError" if oauth else "ErrorEnvelope"
            ref: dict[str, Any] = {
                "content": {
                    "application/json": {"schema": {"$ref": f"#/components/schemas/{shape}"}}
                }
            }
            if path.endswith("/oauth/authorize"):
                # Before the redirect URI is trusted, errors are a page; after, a redirect.
                ref = {"content": {"text/html": {"schema": {"type": "string"}}}}
            if requirement is not None:
                operation["x-scopes"] = [requirement.scope] if requirement.scope else []
                operation["x-rate-limit-group"] = requirement.group
                operation["security"] = [{"bearer": []}]
                statuses = dict(_ERROR_STATUSES)
                if method in ("post", "put", "patch", "delete"):
                    statuses |= _WRITE_STATUSES
            else:
                operation.setdefault("x-scopes", [])
                operation.setdefault("x-rate-limit-group", "foundation")
                statuses = {"400": _ERROR_STATUSES["400"]}
                if oauth:
                    statuses["429"] = "Too many requests from this address"
                if path.endswith("/oauth/token"):
                    statuses["401"] = "Client authentication failed (invalid_client)"
            for status, description in (statuses | _SERVER_STATUSES).items():
                responses.setdefault(status, {"description": description, **ref})
    app.openapi_schema = schema
    return schema
