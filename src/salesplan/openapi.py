"""Our OpenAPI 3.1 document: every operation carries its operationId, tag, `x-scopes` and
`x-rate-limit-group`, read from the same `Requirement` object that enforces them."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from pydantic import BaseModel, TypeAdapter

from salesplan import __version__
from salesplan.auth.dependencies import Requirement
from salesplan.kit.pagination import DEFAULT_PAGE_SIZE
from salesplan.kit.schemas import NO_NUL_PATTERN
from salesplan.meta.schemas import MetaOut
from salesplan.oauth import schemas as oauth_schemas

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

# The standard error answers, added to every operation from what it declares (so that a new
# route gets them without saying so): see `error_statuses`.
_SERVER_STATUSES = {
    "500": "Unexpected error; details.requestId names it in the server log",
    "503": "A backing service is unavailable; retry after Retry-After seconds",
}
_AUTH_STATUSES = {
    "400": "Validation error or missing organization context (X-Organization-Id)",
    "401": "Missing, expired or revoked token",
    "403": "Missing scope or no access to the organization",
    "404": "Not found in the organization",
    "429": "Rate limit exceeded",
}
_BODY_STATUSES = {
    "400": "The body is not valid",
    "409": "Conflicts with the current state (duplicate crmId, idempotency)",
    "413": "The body is too large",
    "422": "Well-formed but semantically wrong (a reference to a missing entity, …)",
}
_WRITE_METHODS = ("post", "put", "patch", "delete")

# Statuses the seed documents on an operation beyond what it declares (spec: listPlans lists
# 409 and 422 among its ErrorEnvelope responses).
_SEED_STATUSES: dict[str, dict[str, str]] = {
    "listPlans": {
        "409": _BODY_STATUSES["409"],
        "422": "Semantic validation error",
    },
}

# Operations whose route answers a plain dict (shared with its MCP tool), and the model that
# documents its 200 (contract §11 `/meta`).
DOCUMENTED_RESPONSES: dict[str, type[BaseModel]] = {"getMeta": MetaOut}

# The spec's names for the seed objects (its field tables) where our models are named otherwise.
SEED_COMPONENTS = {
    "PlanOut": "Plan",
    "PlanMilestoneOut": "PlanMilestone",
    "PlanGoalOut": "PlanGoal",
    "PlanTaskOut": "PlanTask",
}

# Contract §4 and the spec's Limits: the defaults the server applies to an absent list parameter.
LIST_DEFAULTS = {"limit": DEFAULT_PAGE_SIZE, "page": 1, "pageSize": DEFAULT_PAGE_SIZE}

ORGANIZATION_PARAMETERS: list[dict[str, Any]] = [
    {
        "name": "X-Organization-Id",
        "in": "header",
        "required": False,
        "schema": {"type": "string", "format": "uuid"},
        "description": "The organization of the call (contract §3). Needed when the token "
        "reaches several organizations (else 400 `organization_required`); one the token "
        "cannot reach is a 403. Legacy `X-Subscriber-Id` is also accepted.",
    },
    {
        "name": "organizationId",
        "in": "query",
        "required": False,
        "schema": {"type": "string", "format": "uuid"},
        "description": "Alias of `X-Organization-Id` (legacy `subscriberId` also accepted); "
        "when both are given they must agree (else 400).",
    },
]


def error_statuses(
    operation: dict[str, Any], method: str, requirement: Requirement | None, path: str
) -> dict[str, str]:
    """Which error statuses an operation can answer, from what it declares: every operation
    may fail (500, 503); a guarded one (a scope) is refused without a token (401), without the
    scope or organization (403), over its limit (429), without an organization context (400),
    and for an id of another organization (404, also for references in filters); a body or a
    write may be invalid (400), conflict (409), be too large (413) or unprocessable (422);
    path parameters may name nothing (404); any parameter may be invalid (400)."""
    statuses: dict[str, str] = {}
    parameters = operation.get("parameters", [])
    if parameters:
        statuses["400"] = "A parameter is not valid"
    if any(parameter.get("in") == "path" for parameter in parameters):
        statuses["404"] = _AUTH_STATUSES["404"]
    if requirement is not None:
        statuses |= _AUTH_STATUSES
    if "requestBody" in operation or (requirement is not None and method in _WRITE_METHODS):
        statuses |= _BODY_STATUSES
    if path.startswith("/api/v1/oauth/"):
        statuses["400"] = "RFC 6749 / RFC 7591 error"
        statuses["429"] = "Too many requests from this address"
        if path.endswith("/oauth/token"):
            statuses["401"] = "Client authentication failed (invalid_client)"
        statuses.pop("409", None)
        statuses.pop("422", None)
    statuses.setdefault("400", "The request is not valid")
    return statuses | _SERVER_STATUSES


def _idempotency_key(operation: dict[str, Any]) -> None:
    """Contract §6: where an operation reads `Idempotency-Key`, it is required, 1 to 255
    printable ASCII characters (`idempotency.check_key`), not blank once trimmed."""
    for parameter in operation.get("parameters", []):
        if parameter.get("in") == "header" and parameter.get("name") == "Idempotency-Key":
            parameter["required"] = True
            parameter["schema"] = {
                "type": "string",
                "minLength": 1,
                "maxLength": 255,
                "pattern": r"^[ -~]*[!-~][ -~]*$",
            }


_INTEGER_HEADER = {"schema": {"type": "integer"}, "required": False}
RATE_LIMIT_HEADERS: dict[str, dict[str, Any]] = {
    "X-RateLimit-Limit": {"description": "The bucket's limit per window.", **_INTEGER_HEADER},
    "X-RateLimit-Remaining": {
        "description": "Units left in the window, this request spent.",
        **_INTEGER_HEADER,
    },
    "X-RateLimit-Reset": {
        "description": "Unix seconds when a unit next frees up.",
        **_INTEGER_HEADER,
    },
}
RETRY_AFTER = {"description": "Seconds to wait before retrying.", **_INTEGER_HEADER}
IDEMPOTENCY_REPLAYED = {
    "description": "`true` when the stored result of an earlier request with the same "
    "Idempotency-Key is replayed (nothing was sent again).",
    "schema": {"type": "string", "enum": ["true"]},
    "required": False,
}


def _response_headers(operation: dict[str, Any], requirement: Requirement | None) -> None:
    """Spec Limits: responses of a rate-limited operation carry `X-RateLimit-*` (while limits
    are enabled, so not required); a 429 also `Retry-After` (contract §5; also the per-IP
    limits and a 503); a replayed send `Idempotency-Replayed` (contract §6)."""
    replayable = any(
        p.get("in") == "header" and p.get("name") == "Idempotency-Key"
        for p in operation.get("parameters", [])
    )
    for status, response in operation.get("responses", {}).items():
        headers = response.setdefault("headers", {})
        if requirement is not None and (status.startswith("2") or status == "429"):
            for name, header in RATE_LIMIT_HEADERS.items():
                headers.setdefault(name, copy.deepcopy(header))
        if status in ("429", "503"):
            headers.setdefault("Retry-After", copy.deepcopy(RETRY_AFTER))
        if replayable and status[0] in "24":
            headers.setdefault("Idempotency-Replayed", copy.deepcopy(IDEMPOTENCY_REPLAYED))
        if not headers:
            del response["headers"]


def _organization_parameters(operation: dict[str, Any], requirement: Requirement | None) -> None:
    """Contract §3: every organization-scoped operation (its Requirement resolves an
    organization: `auth.dependencies.authorize`) takes `X-Organization-Id` and the
    `organizationId` alias. Organization-level operations (organizations, meta, OAuth,
    discovery) need no organization context and do not declare them."""
    if requirement is None or not requirement.organization:
        return
    parameters = operation.setdefault("parameters", [])
    present = {(p.get("name"), p.get("in")) for p in parameters}
    for parameter in ORGANIZATION_PARAMETERS:
        if (parameter["name"], parameter["in"]) not in present:
            parameters.append(copy.deepcopy(parameter))


def _list_defaults(operation: dict[str, Any]) -> None:
    """The defaults of `limit`, `page` and `pageSize` (contract §4), which the parameters
    cannot carry in their signature: an absent `limit` is what selects page mode."""
    for parameter in operation.get("parameters", []):
        default = LIST_DEFAULTS.get(parameter.get("name", ""))
        if parameter.get("in") == "query" and default is not None:
            parameter["schema"].setdefault("default", default)


def _qualified_names(schemas: dict[str, Any]) -> dict[str, str]:
    """FastAPI names two models of one name by their module path
    (`salesplan__feed__schemas__AnalyticsOut`) but leaves both titled `AnalyticsOut`, which a
    client generator names its classes by: publish them as `FeedAnalyticsOut`, … instead."""
    names = {}
    for name in schemas:
        parts = name.split("__")
        if len(parts) > 2 and parts[0] == "salesplan":
            names[name] = parts[1].capitalize() + parts[-1]
    return names


def _documented_response(
    operation: dict[str, Any], schemas: dict[str, Any], model: type[BaseModel]
) -> None:
    """Put `model` in the components (with the models it uses) and make it the 200's body."""
    schema = TypeAdapter(model).json_schema(
        mode="serialization", ref_template="#/components/schemas/{model}"
    )
    for name, definition in {**schema.pop("$defs", {}), model.__name__: schema}.items():
        if schemas.setdefault(name, definition) != definition:
            raise ValueError(f"two components named {name}")
    content = operation["responses"]["200"]["content"]["application/json"]
    content["schema"] = {"$ref": f"#/components/schemas/{model.__name__}"}


def _rename_components(schema: dict[str, Any], names: dict[str, str]) -> None:
    """Publish components under the spec's names, every `$ref` to them following."""
    components = schema.get("components", {}).get("schemas", {})
    for old, new in names.items():
        if old in components:
            component = components.pop(old)
            component["title"] = new
            components[new] = component
    refs = {
        f"#/components/schemas/{old}": f"#/components/schemas/{new}" for old, new in names.items()
    }

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref in refs:
                node["$ref"] = refs[ref]
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)


JSON_VALUE_REF = "#/components/schemas/JsonValue"
JSON_OBJECT = "JsonObject"
_JSON_VALUE_DEF = f"#/components/schemas/{JSON_OBJECT}/$defs/JsonValue"


def _free_form_objects(schema: dict[str, Any]) -> None:
    """Every free-form object (milestone `milestone`/`objective`, goal `allocations`, map
    graphs, bulk rows) becomes a `$ref` to one `JsonObject`: `type: object`,
    `additionalProperties: true`, which every client generator reads as a map of anything.
    The exact rule (what `kit.schemas.check_json_value` enforces: no NUL, numbers within
    64 bits) stays in the document for validators, in `patternProperties` over the recursive
    `JsonValue`, moved into `JsonObject`'s own `$defs`: generators skip both keywords, and a
    recursive union in `components/schemas` made openapi-python-client drop every operation
    whose body held one. Validators (schemathesis, jsonschema) still refuse a NUL nested in
    one, so a schema-valid value is still never refused."""
    components = schema.get("components", {}).get("schemas", {})
    value = components.pop("JsonValue", None)
    if value is None:
        return

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        if node.get("$ref") == JSON_VALUE_REF:
            return {**node, "$ref": _JSON_VALUE_DEF}
        if node.get("type") == "object" and node.get("additionalProperties") == {
            "$ref": JSON_VALUE_REF
        }:
            kept = {k: node[k] for k in ("description", "title") if k in node}
            return {"$ref": f"#/components/schemas/{JSON_OBJECT}", **kept}
        return {key: walk(item) for key, item in node.items()}

    definition = walk(value)
    schema.update(walk(schema))
    schema["components"]["schemas"][JSON_OBJECT] = {
        "type": "object",
        "title": JSON_OBJECT,
        "description": "A free-form JSON object: any properties, keys without NUL; values "
        "hold no NUL character and numbers within 64 bits.",
        "additionalProperties": True,
        "propertyNames": {"pattern": NO_NUL_PATTERN},
        "patternProperties": {"": {"$ref": _JSON_VALUE_DEF}},
        "$defs": {"JsonValue": definition},
    }


def requirement_of(route: APIRoute) -> Requirement | None:
    stack = list(route.dependant.dependencies)
    while stack:
        dep = stack.pop()
        if isinstance(dep.call, Requirement):
            return dep.call
        stack.extend(dep.dependencies)
    return None


def summary_of(route: APIRoute) -> str | None:
    """The operation's summary: declared, else its description's first line (the OpenAPI
    summary and the MCP tool's title alike)."""
    if route.summary is None and route.description:
        return route.description.strip().splitlines()[0].rstrip(".")
    return route.summary


def collect_requirements(routers: list[APIRouter]) -> dict[str, Requirement | None]:
    """operationId → the Requirement that guards it, from the routers as declared."""
    found: dict[str, Requirement | None] = {}
    for router in routers:
        for route in router.routes:
            if isinstance(route, APIRoute) and route.operation_id:
                found[route.operation_id] = requirement_of(route)
                route.summary = summary_of(route)
    return found


def build_openapi(
    app: FastAPI, extend: Callable[[dict[str, Any]], None] | None = None
) -> dict[str, Any]:
    """The document; `extend` adds to it (the `webhooks` section) before the components get
    their published names, so that its `$ref`s follow them."""
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
        "bearer": {"type": "http", "scheme": "bearer", "description": "API key or OAuth token"},
        "oauth2": oauth_schemas.OAUTH2_SCHEME,
    }
    by_operation: dict[str, Requirement | None] = app.state.requirements
    for path, path_item in schema.get("paths", {}).items():
        for method, operation in path_item.items():
            if not isinstance(operation, dict) or "operationId" not in operation:
                continue
            requirement = by_operation.get(operation["operationId"])
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)
            document = oauth_schemas.DOCUMENTS.get(operation["operationId"], {})
            for key in ("requestBody", "parameters"):
                if key in document:
                    operation[key] = document[key]
            responses.update(document.get("responses", {}))
            if operation["operationId"] in DOCUMENTED_RESPONSES:
                _documented_response(
                    operation, schemas, DOCUMENTED_RESPONSES[operation["operationId"]]
                )
            _idempotency_key(operation)
            _organization_parameters(operation, requirement)
            _list_defaults(operation)
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
                scopes = [requirement.scope] if requirement.scope else []
                operation["security"] = [{"bearer": []}, {"oauth2": scopes}]
            else:
                operation.setdefault("x-scopes", [])
                operation.setdefault("x-rate-limit-group", "foundation")
            statuses = error_statuses(operation, method, requirement, path)
            statuses |= _SEED_STATUSES.get(operation["operationId"], {})
            for status, description in statuses.items():
                responses.setdefault(status, {"description": description, **ref})
            # An error a route declares itself (a 409, 412, 502 with its own description)
            # still has the error body.
            for status, response in responses.items():
                if status[:1] in ("4", "5") and "content" not in response:
                    response.update(ref)
            _response_headers(operation, requirement)
    if extend is not None:
        extend(schema)
    _rename_components(schema, SEED_COMPONENTS | _qualified_names(schemas))
    _free_form_objects(schema)
    app.openapi_schema = schema
    return schema
