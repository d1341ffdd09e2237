"""The OpenAPI document says what the server accepts and answers (issue 18, defect 11), by
construction rather than per route: every request string excludes NUL, every number is
bounded, PATCH properties the server refuses as null are not nullable, the shared patterns
agree with their validators, and an operation added later gets its error responses."""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Annotated, Any

import jsonschema_rs
import pytest
from fastapi import APIRouter, FastAPI
from pydantic import BaseModel, TypeAdapter, ValidationError

from salesplan.auth.dependencies import require
from salesplan.auth.principal import RequestContext
from salesplan.kit.fields import EMAIL_PATTERN, Money, _email
from salesplan.kit.schemas import (
    INT64_MAX,
    NO_NUL_PATTERN,
    NOT_BLANK_PATTERN,
    FreeForm,
    StrictBody,
    check_json_value,
)
from salesplan.openapi import build_openapi, collect_requirements

OPENAPI = "/api/v1/openapi.json"


def _matches(pattern: str, value: str) -> bool:
    return jsonschema_rs.validator_for({"type": "string", "pattern": pattern}).is_valid(value)


async def _document(client) -> dict[str, Any]:
    resp = await client.get(OPENAPI)
    assert resp.status_code == 200
    return resp.json()


def _request_schemas(doc: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every schema a request is generated from: bodies and parameters, with the component
    schemas they reach, named by where they are."""
    found: list[tuple[str, Any]] = []
    refs: list[str] = []
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            where = f"{method.upper()} {path}"
            for parameter in operation.get("parameters", []):
                found.append((f"{where} {parameter['name']}", parameter["schema"]))
            for media in operation.get("requestBody", {}).get("content", {}).values():
                found.append((f"{where} body", media["schema"]))
    seen: set[str] = set()
    for _, schema in list(found):
        refs.extend(_refs(schema))
    while refs:
        ref = refs.pop()
        if ref in seen:
            continue
        seen.add(ref)
        component: Any = doc
        for part in ref.removeprefix("#/").split("/"):
            component = component[part]
        found.append((ref.removeprefix("#/components/schemas/"), component))
        refs.extend(_refs(component))
    return found


def _refs(schema: Any) -> list[str]:
    if isinstance(schema, dict):
        own = [schema["$ref"]] if "$ref" in schema else []
        return own + [ref for value in schema.values() for ref in _refs(value)]
    if isinstance(schema, list):
        return [ref for value in schema for ref in _refs(value)]
    return []


def _typed(schema: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every sub-schema with a `type` that declares a value (not a conjunct such as an `if`,
    `then` or `allOf` part, which only narrows what the properties declare; not under an
    `enum`, `const` or `pattern` that already constrains it), with where it is."""
    out: list[tuple[str, dict[str, Any]]] = []
    if isinstance(schema, dict):
        if "type" in schema:
            out.append((path, schema))
        if {"enum", "const", "pattern"} & schema.keys():
            return out
        for key, value in schema.items():
            if key not in ("if", "then", "else", "not", "allOf", "oneOf", "default", "examples"):
                out.extend(_typed(value, f"{path}/{key}"))
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            out.extend(_typed(value, f"{path}/{i}"))
    return out


async def test_every_request_string_excludes_nul_and_every_number_is_bounded(client) -> None:
    doc = await _document(client)
    loose = []
    for name, schema in _request_schemas(doc):
        for where, sub in _typed(schema):
            kind = sub["type"]
            if kind == "string" and not {"pattern", "format", "enum", "const"} & sub.keys():
                loose.append(f"{name}{where}: string without pattern")
            nul_ok = "pattern" in sub and _matches(sub["pattern"], "a\x00b")
            if kind == "string" and "format" not in sub and nul_ok:
                loose.append(f"{name}{where}: pattern admits NUL")
            if kind in ("integer", "number") and not {"minimum", "maximum"} <= sub.keys():
                loose.append(f"{name}{where}: unbounded {kind}")
    assert loose == []


def _strict_bodies() -> list[type[StrictBody]]:
    out: list[type[StrictBody]] = []
    stack: list[type[StrictBody]] = [StrictBody]
    while stack:
        cls = stack.pop()
        out.append(cls)
        stack.extend(cls.__subclasses__())
    return out


async def test_properties_never_null_are_not_nullable_in_the_document(client) -> None:
    doc = await _document(client)
    schemas = doc["components"]["schemas"]
    checked = 0
    for cls in _strict_bodies():
        if cls.__name__ not in schemas:  # an MCP tool's arguments
            continue
        for name in cls.not_null:
            alias = cls.model_fields[name].alias or name
            prop = schemas[cls.__name__]["properties"][alias]
            assert {"type": "null"} not in prop.get("anyOf", []), (cls.__name__, alias)
            assert prop.get("type") != "null"
            checked += 1
    assert checked >= 20


async def test_a_patch_null_the_document_forbids_is_a_400(client, actor) -> None:
    created = await client.post("/api/v1/accounts", json={"name": "Acme"}, headers=actor.in_org())
    assert created.status_code == 201
    account = created.json()["id"]
    resp = await client.patch(
        f"/api/v1/accounts/{account}", json={"name": None}, headers=actor.in_org()
    )
    assert resp.status_code == 400
    assert resp.json()["error"]["details"]["errors"][0]["location"] == ["body", "name"]


@pytest.mark.parametrize(
    "value",
    [
        "a@b.co",
        "first.last+tag@example.com",
        "a\x1c@b.co",  # Python's \s, not ECMA's
        "a\ufeff@b.co",  # ECMA's \s, not Python's
        "a@b.co\n",
        " a@b.co",
        "a@b.c.",
        "a@@b.co",
        "a b@c.de",
        "a@b\x00.co",
        "a@b.c\u00a0",
    ],
)
def test_the_email_pattern_is_the_validator(value: str) -> None:
    try:
        accepted = _email(value) is not None
    except ValueError:
        accepted = False
    if _matches(EMAIL_PATTERN, value):
        assert accepted, value  # schema-valid is never refused


@pytest.mark.parametrize(
    ("value", "matches"),
    [
        ("a", True),
        ("  a ", True),
        ("", False),
        ("   ", False),
        ("\u3000\t", False),
        ("a\x00", False),
    ],
)
def test_not_blank_pattern(value: str, matches: bool) -> None:
    assert _matches(NOT_BLANK_PATTERN, value) is matches
    assert _matches(NO_NUL_PATTERN, value) is ("\x00" not in value)


def test_money_takes_a_number_of_cents_with_binary_noise() -> None:
    money = TypeAdapter(Money)
    assert money.validate_python(57 * 0.01) == Decimal("0.57")  # 0.5700000000000001
    assert money.validate_python("12.30") == Decimal("12.30")
    for bad in (0.123, "1.234", -1):
        with pytest.raises(ValidationError):
            money.validate_python(bad)


def test_the_free_form_schema_admits_only_what_is_stored() -> None:
    class Holder(BaseModel):
        value: FreeForm

    schema = Holder.model_json_schema()
    validator = jsonschema_rs.validator_for(schema)
    samples: list[Any] = [
        {"a": [1, 2.5, None, True, {"b": "c"}]},
        {"k\x00": 1},
        {"a": "x\x00"},
        {"a": INT64_MAX + 1},
        {"a": [{"b": -(2**70)}]},
    ]
    for sample in samples:
        if validator.is_valid({"value": sample}):
            check_json_value(sample)  # raises if the server would refuse it


class Widget(StrictBody):
    name: str


def test_an_operation_added_later_gets_the_standard_error_responses() -> None:
    """The central mechanism: statuses follow from the declared scope, path parameters and
    body, for any router."""
    router = APIRouter()

    @router.get("/api/v1/widgets/{widgetId}", operation_id="getWidget")
    async def get_widget(
        widgetId: uuid.UUID,
        ctx: Annotated[RequestContext, require("accounts:read", "accounts")],
    ) -> dict[str, str]:
        return {}

    @router.post("/api/v1/widgets", operation_id="createWidget", status_code=201)
    async def create_widget(
        body: Widget, ctx: Annotated[RequestContext, require("accounts:write", "accounts")]
    ) -> dict[str, str]:
        return {}

    app = FastAPI()
    app.include_router(router)
    app.state.requirements = collect_requirements([router])
    doc = build_openapi(app)
    read = doc["paths"]["/api/v1/widgets/{widgetId}"]["get"]
    write = doc["paths"]["/api/v1/widgets"]["post"]
    assert {"400", "401", "403", "404", "429", "500", "503"} <= set(read["responses"])
    assert {"400", "401", "403", "409", "413", "422", "429", "500", "503"} <= set(
        write["responses"]
    )
    for operation in (read, write):
        error = operation["responses"]["403"]["content"]["application/json"]["schema"]
        assert error == {"$ref": "#/components/schemas/ErrorEnvelope"}
    assert read["x-scopes"] == ["accounts:read"] and write["x-rate-limit-group"] == "accounts"
    assert {"oauth2": ["accounts:write"]} in write["security"]
    widget = doc["components"]["schemas"]["Widget"]["properties"]["name"]
    assert widget["pattern"] == NO_NUL_PATTERN


async def test_oauth_endpoints_document_their_requests(client) -> None:
    doc = await _document(client)
    token = doc["paths"]["/api/v1/oauth/token"]["post"]
    form = token["requestBody"]["content"]["application/x-www-form-urlencoded"]["schema"]
    assert form["properties"]["grant_type"]["enum"] == ["authorization_code", "client_credentials"]
    register = doc["paths"]["/api/v1/oauth/register"]["post"]
    body = register["requestBody"]["content"]["application/json"]["schema"]
    assert body["required"] == ["redirect_uris"]
    pattern = body["properties"]["redirect_uris"]["items"]["pattern"]
    for uri, ok in [
        ("https://client.example/cb", True),
        ("http://127.0.0.1:8765/callback", True),
        ("http://[::1]/cb", True),
        ("vscode://publisher.ext/cb", True),
        ("http://client.example/cb", False),
        ("https://client.example/cb#frag", False),
        ("https://client.example:99999/cb", False),
    ]:
        assert _matches(pattern, uri) is ok, uri
    flows = doc["components"]["securitySchemes"]["oauth2"]["flows"]
    assert flows["authorizationCode"]["tokenUrl"] == "/api/v1/oauth/token"
    names = {p["name"] for p in doc["paths"]["/api/v1/oauth/authorize"]["get"]["parameters"]}
    assert {"client_id", "redirect_uri", "code_challenge", "response_type"} <= names


async def test_registration_accepts_what_its_schema_allows(client) -> None:
    """A few schema-valid registrations, including unknown metadata (RFC 7591 §2)."""
    for body in (
        {"redirect_uris": ["http://localhost:1234/cb"]},
        {
            "redirect_uris": ["https://a.example/cb", "cursor://x/cb"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "client_name": " Tool ",
            "scope": "accounts:read, plans:read",
            "logo_uri": "https://a.example/logo.png",
            "software_id": {"any": "thing"},
        },
    ):
        resp = await client.post("/api/v1/oauth/register", json=body)
        assert resp.status_code == 201, resp.text
