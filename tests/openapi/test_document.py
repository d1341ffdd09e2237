"""The published OpenAPI document (issue 33): valid OpenAPI 3.1, and saying exactly what the
seed says — its object tables field by field, the organization context on every
organization-scoped operation, list defaults, error bodies, discovery documents."""

from __future__ import annotations

import re
from typing import Any

import pytest
from openapi_spec_validator import validate

from salesplan.kit.pagination import DEFAULT_PAGE_SIZE
from tests.openapi.seed import VENDORED, SeedType, parse_seed, section, seed_text, spec_path

OPENAPI = "/api/v1/openapi.json"
# Where the component a seed object is published as is not named as in the spec.
PUBLISHED_AS = {"BuyerMap": "BuyerMapOut"}


@pytest.fixture
async def document(client) -> dict[str, Any]:
    response = await client.get(OPENAPI)
    assert response.status_code == 200
    return response.json()


def _operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, op)
        for path, item in doc["paths"].items()
        for method, op in item.items()
        if isinstance(op, dict) and "operationId" in op
    ]


async def test_the_document_is_valid_openapi_3_1(document) -> None:
    assert document["openapi"].startswith("3.1")
    validate(document)  # raises on the first error


def test_the_vendored_seed_is_the_specs_section() -> None:
    path = spec_path()
    if path is None:
        pytest.skip("the shared spec is not beside this checkout; the vendored copy is used")
    assert VENDORED.read_text() == section(path.read_text())


# --- the seed's object tables, field by field ------------------------------------------------


def _component(doc: dict[str, Any], ref: str) -> tuple[str, dict[str, Any]]:
    name = ref.rsplit("/", 1)[1]
    return name, doc["components"]["schemas"][name]


def _split_null(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """A published property as (its non-null schema, nullable)."""
    options = schema.get("anyOf")
    if options is None:
        types = schema.get("type")
        if isinstance(types, list) and "null" in types:
            rest = [t for t in types if t != "null"]
            return {**schema, "type": rest[0] if len(rest) == 1 else rest}, True
        return schema, False
    rest = [o for o in options if o.get("type") != "null"]
    assert len(rest) == 1, f"a union beyond X-or-null: {schema}"
    return rest[0], len(rest) < len(options)


def _check_type(doc: dict[str, Any], where: str, seed: SeedType, published: dict[str, Any]):
    schema, nullable = _split_null(published)
    problems = []
    if nullable != seed.nullable:
        problems.append(f"{where}: nullable {nullable}, the seed says {seed.nullable}")
    if seed.ref is not None:
        if schema.get("$ref", "").rsplit("/", 1)[-1] != seed.ref:
            problems.append(f"{where}: {schema} is not {seed.ref}")
        return problems
    if schema.get("type") != seed.type:
        problems.append(f"{where}: type {schema.get('type')}, the seed says {seed.type}")
    if schema.get("format") != seed.format:
        problems.append(f"{where}: format {schema.get('format')}, the seed says {seed.format}")
    if seed.enum is not None and sorted(schema.get("enum", [])) != sorted(seed.enum):
        problems.append(f"{where}: enum {schema.get('enum')}, the seed says {seed.enum}")
    if seed.minimum is not None and schema.get("minimum") != seed.minimum:
        problems.append(f"{where}: minimum {schema.get('minimum')}, the seed says {seed.minimum}")
    if seed.type == "object" and seed.free_form and schema.get("additionalProperties") is False:
        problems.append(f"{where}: free-form in the seed, closed in the document")
    if seed.type == "array":
        items = schema.get("items", {})
        if isinstance(seed.items, str):
            if seed.items == "map contact":
                return problems
            name = items.get("$ref", "").rsplit("/", 1)[-1]
            if name != seed.items:
                problems.append(f"{where}: items {items}, the seed says {seed.items}")
        elif seed.items is not None:
            problems += _check_type(doc, f"{where}[]", seed.items, items)
    return problems


async def test_every_seed_object_is_published_exactly_as_its_table_says(document) -> None:
    """Names, types, formats, enums, bounds, nullability, `required` and (for the strict ones)
    `additionalProperties: false`, read from the spec's markdown tables: a drift on either
    side fails here."""
    seed = parse_seed(seed_text())
    assert {"Plan", "PlanMilestone", "PlanGoal", "PlanTask", "PaginationMeta"} <= set(seed)
    assert "PlanListResponse" in seed and "BuyerMap" in seed
    schemas = document["components"]["schemas"]
    problems: list[str] = []
    for name, obj in seed.items():
        component = schemas.get(PUBLISHED_AS.get(name, name))
        if component is None:
            problems.append(f"{name}: not published")
            continue
        published = component.get("properties", {})
        if set(published) != set(obj.fields):
            problems.append(f"{name}: properties {sorted(set(published) ^ set(obj.fields))} differ")
        if obj.strict and component.get("additionalProperties") is not False:
            problems.append(f"{name}: not additionalProperties false")
        if all(f.required is not None for f in obj.fields.values()):
            required = {f.name for f in obj.fields.values() if f.required}
            if set(component.get("required", [])) != required:
                problems.append(
                    f"{name}: required {sorted(component.get('required', []))}, "
                    f"the seed says {sorted(required)}"
                )
        for field in obj.fields.values():
            if field.name not in published:
                continue
            seed_type = field.type
            if field.required is None:
                # Not strict, no Required column: nullability is ours (contract §11).
                schema, _ = _split_null(published[field.name])
                seed_type = SeedType(**{**seed_type.__dict__, "nullable": False})
                problems += _check_type(document, f"{name}.{field.name}", seed_type, schema)
            else:
                problems += _check_type(
                    document, f"{name}.{field.name}", seed_type, published[field.name]
                )
    assert problems == []


async def test_the_error_envelope_is_the_seeds(document) -> None:
    text = seed_text()
    prose = re.search(r"^### ErrorEnvelope \(strict\)\n\n(.*)$", text, re.M)
    assert prose is not None
    envelope = document["components"]["schemas"]["ErrorEnvelope"]
    assert envelope["additionalProperties"] is False
    assert envelope["required"] == ["error"]
    error = envelope["properties"]["error"]
    assert error["additionalProperties"] is False  # "required object, strict"
    named = re.findall(r"`(\w+)` \(", prose.group(1))
    assert named == ["error", "code", "message", "details"]
    assert set(error["required"]) == set(error["properties"]) == {"code", "message", "details"}
    assert error["properties"]["code"]["type"] == "string"
    assert error["properties"]["message"]["type"] == "string"
    assert error["properties"]["details"] == {"type": "object", "additionalProperties": True}


# --- operations -----------------------------------------------------------------------------


async def test_organization_scoped_operations_declare_the_organization_context(
    document, app
) -> None:
    """Contract §3: every operation whose requirement resolves an organization takes
    `X-Organization-Id` and the `organizationId` alias; organization-level ones, meta, OAuth
    and discovery do not declare them."""
    requirements = app.state.requirements
    scoped = 0
    for method, path, op in _operations(document):
        params = {(p["name"], p["in"]): p for p in op.get("parameters", [])}
        requirement = requirements.get(op["operationId"])
        where = f"{method.upper()} {path}"
        if requirement is not None and requirement.organization:
            scoped += 1
            header = params.get(("X-Organization-Id", "header"))
            alias = params.get(("organizationId", "query"))
            assert header is not None and alias is not None, where
            for parameter in (header, alias):
                assert parameter["required"] is False, where
                assert parameter["schema"] == {"type": "string", "format": "uuid"}, where
        else:
            assert ("X-Organization-Id", "header") not in params, where
    assert scoped > 100
    for operation_id in ("getMeta", "listOrganizations", "issueOAuthToken"):
        op = next(op for _, _, op in _operations(document) if op["operationId"] == operation_id)
        assert all(p["name"] != "X-Organization-Id" for p in op.get("parameters", []))


async def test_list_parameters_declare_their_defaults(document) -> None:
    """Contract §4 / spec Limits: limit 50, page 1, pageSize 50, order asc, on every list."""
    expected = {"limit": DEFAULT_PAGE_SIZE, "page": 1, "pageSize": DEFAULT_PAGE_SIZE}
    seen = 0
    for method, path, op in _operations(document):
        for parameter in op.get("parameters", []):
            if parameter["in"] == "query" and parameter["name"] in expected:
                seen += 1
                assert parameter["schema"]["default"] == expected[parameter["name"]], (
                    f"{method} {path} {parameter['name']}"
                )
    assert seen > 30
    plans = document["paths"]["/api/v1/plans"]["get"]
    defaults = {p["name"]: p["schema"].get("default") for p in plans["parameters"]}
    assert defaults["limit"] == 50 and defaults["page"] == 1 and defaults["pageSize"] == 50
    assert defaults["order"] == "asc" and defaults["includeArchived"] is False


async def test_list_plans_documents_the_seeds_error_statuses(document) -> None:
    op = document["paths"]["/api/v1/plans"]["get"]
    ref = {"$ref": "#/components/schemas/ErrorEnvelope"}
    for status in ("400", "401", "403", "404", "409", "422", "429", "500"):
        assert op["responses"][status]["content"]["application/json"]["schema"] == ref, status
    assert op["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/PlanListResponse"
    }


async def test_every_error_response_has_a_body_schema(document) -> None:
    """Contract §2: every error answers a body (ErrorEnvelope, RFC 6749 on OAuth, the page
    on /authorize); the sends' and starts' 409 among them."""
    for method, path, op in _operations(document):
        for status, response in op["responses"].items():
            if status[0] in "45":
                content = response.get("content") or {}
                assert content, f"{method} {path} {status}"
                assert all("schema" in media for media in content.values())
    ref = {"$ref": "#/components/schemas/ErrorEnvelope"}
    for path in ("/api/v1/engage/messages/send", "/api/v1/engage/campaigns/{campaignId}/start"):
        conflict = document["paths"][path]["post"]["responses"]["409"]
        assert conflict["content"]["application/json"]["schema"] == ref


async def test_discovery_documents_and_authorize_scope(document, client) -> None:
    """Both RFC 8414 / RFC 9728 documents are operations of the document, and their answers
    match what it says; /authorize's `scope` is required, as the server requires it."""
    import jsonschema

    for path in (
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-protected-resource",
    ):
        op = document["paths"][path]["get"]
        assert op["x-scopes"] == [] and "security" not in op
        schema = op["responses"]["200"]["content"]["application/json"]["schema"]
        answer = await client.get(path)
        assert answer.status_code == 200
        jsonschema.validate(answer.json(), schema)
    authorize = document["paths"]["/api/v1/oauth/authorize"]["get"]
    scope = next(p for p in authorize["parameters"] if p["name"] == "scope")
    assert scope["required"] is True
    assert not re.fullmatch(scope["schema"]["pattern"].replace("\\Z", "$"), "")


def _validator(doc: dict[str, Any], ref: str):
    from jsonschema import Draft202012Validator, FormatChecker

    schema = {"components": doc["components"], "$ref": ref}
    return Draft202012Validator(schema, format_checker=FormatChecker())


async def test_meta_is_documented_as_it_answers(document, client) -> None:
    """Spec: /meta returns the scopes, pagination defaults and rate-limit configuration
    (`rateLimiting` with `enabled` and `store`); contract §11 gives its whole shape."""
    op = document["paths"]["/api/v1/meta"]["get"]
    ref = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    meta = (await client.get("/api/v1/meta")).json()
    errors = list(_validator(document, ref).iter_errors(meta))
    assert errors == []
    component = document["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert set(component["required"]) == set(meta) >= {"scopes", "pagination", "rateLimiting"}
    limiting = document["components"]["schemas"]["RateLimiting"]
    assert limiting["properties"]["store"]["enum"] == ["memory", "shared"]


async def test_rate_limit_and_idempotency_headers_are_documented(document) -> None:
    """Spec Limits: X-RateLimit-Limit/Remaining/Reset on limited responses, Retry-After on
    429, Idempotency-Replayed on the sends."""
    plans = document["paths"]["/api/v1/plans"]["get"]["responses"]
    assert set(plans["200"]["headers"]) == {
        "X-RateLimit-Limit",
        "X-RateLimit-Remaining",
        "X-RateLimit-Reset",
    }
    assert "Retry-After" in plans["429"]["headers"]
    assert "headers" not in document["paths"]["/api/v1/meta"]["get"]["responses"]["200"]
    send = document["paths"]["/api/v1/engage/messages/send"]["post"]["responses"]
    success = next(status for status in send if status.startswith("2"))
    assert "Idempotency-Replayed" in send[success]["headers"]


# --- generator-clean shapes (issue 40) -------------------------------------------------------


def _free_form_holders(doc: dict[str, Any]) -> list[str]:
    """Where a free-form object is: every `$ref` to JsonObject, named by its component."""
    found = []
    for name, component in doc["components"]["schemas"].items():
        if name != "JsonObject" and '"#/components/schemas/JsonObject"' in repr(component).replace(
            "'", '"'
        ):
            found.append(name)
    return sorted(found)


async def test_free_form_objects_are_one_plain_object_type(document) -> None:
    """Every free-form object is a `JsonObject`: `type: object`, `additionalProperties: true`
    (what any generator reads as a map), not a recursive union in `components/schemas`."""
    schemas = document["components"]["schemas"]
    assert "JsonValue" not in schemas
    json_object = schemas["JsonObject"]
    assert json_object["type"] == "object" and json_object["additionalProperties"] is True
    assert {
        "MilestoneSeed",
        "MilestoneCreate",
        "MilestoneUpdate",
        "GoalSeed",
        "GoalCreate",
        "GoalUpdate",
        "MapGraph",
        "BulkAccountsIn",
        "BulkCampaignsIn",
    } <= set(_free_form_holders(document))
    milestone = schemas["MilestoneSeed"]["properties"]["milestone"]
    assert milestone["$ref"] == "#/components/schemas/JsonObject"
    assert "description" in milestone


async def test_a_free_form_object_still_refuses_what_the_server_refuses(document) -> None:
    """Validators still see the exact rule (no NUL anywhere, numbers within 64 bits), in
    `patternProperties` over the recursive value in JsonObject's `$defs`."""
    from jsonschema import Draft202012Validator

    def valid(component: str, value: Any) -> bool:
        schema = {"$ref": f"#/components/schemas/{component}", **document}
        return Draft202012Validator(schema).is_valid(value)

    assert valid("MilestoneSeed", {"milestone": {"name": "Discovery", "n": [1, {"a": None}]}})
    assert not valid("MilestoneSeed", {"milestone": {"name": {"deep": ["x\x00"]}}})
    assert not valid("MilestoneSeed", {"milestone": {"k\x00": 1}})
    assert not valid("MilestoneSeed", {"milestone": {"n": [[2**70]]}})
    assert not valid("MilestoneSeed", {"milestone": {"name": "x"}, "unknown": 1})


async def test_strict_objects_stay_strict(document) -> None:
    schemas = document["components"]["schemas"]
    for name in ("Plan", "PlanMilestone", "PlanGoal", "PlanTask", "PaginationMeta"):
        assert schemas[name]["additionalProperties"] is False, name
    for name in ("PlanListResponse", "ErrorEnvelope"):
        assert schemas[name]["additionalProperties"] is False, name


async def test_money_is_documented_as_a_decimal(document) -> None:
    """Contract §17: money is a decimal. The wire keeps its JSON number (answers) and number
    or string (bodies); `format: decimal` tells a client to read it exactly."""
    schemas = document["components"]["schemas"]
    for name, prop in (("AccountOut", "annualRevenue"), ("OpportunityOut", "amount")):
        options = schemas[name]["properties"][prop]["anyOf"]
        assert {"type": "number", "format": "decimal"} in options, (name, options)
    for name, prop in (("AccountIn", "annualRevenue"), ("OpportunityIn", "amount")):
        text = repr(schemas[name]["properties"][prop])
        assert "'format': 'decimal'" in text and "'type': 'string'" in text, (name, text)


async def test_conditional_reads_document_if_none_match_and_304(document) -> None:
    """The reads that answer an ETag (getPlan, getAccount, listAccounts) say so: an
    If-None-Match header, the ETag header on the 200 and a 304, so that a client knows which
    reads can answer "not modified"."""
    conditional = set()
    for _method, _path, op in _operations(document):
        headers = {p["name"] for p in op.get("parameters", []) if p["in"] == "header"}
        if "If-None-Match" in headers:
            assert "304" in op["responses"] and "ETag" in op["responses"]["200"]["headers"]
            conditional.add(op["operationId"])
    assert conditional == {"getPlan", "getAccount", "listAccounts"}
