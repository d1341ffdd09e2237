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
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    components["securitySchemes"] = {
        "bearer": {"type": "http", "scheme": "bearer", "description": "API key or OAuth token"}
    }
    by_operation: dict[str, Requirement | None] = app.state.requirements
    for path_item in schema.get("paths", {}).values():
        for operation in path_item.values():
            if not isinstance(operation, dict) or "operationId" not in operation:
                continue
            requirement = by_operation.get(operation["operationId"])
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)
            ref = {
                "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}
                }
            }
            if requirement is not None:
                operation["x-scopes"] = [requirement.scope] if requirement.scope else []
                operation["x-rate-limit-group"] = requirement.group
                operation["security"] = [{"bearer": []}]
                statuses = _ERROR_STATUSES
            else:
                operation.setdefault("x-scopes", [])
                operation.setdefault("x-rate-limit-group", "foundation")
                statuses = {"400": _ERROR_STATUSES["400"]}
            for status, description in statuses.items():
                responses.setdefault(status, {"description": description, **ref})
    app.openapi_schema = schema
    return schema
