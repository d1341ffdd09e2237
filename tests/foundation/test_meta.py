"""GET /meta, /openapi.json, /docs, /healthz."""

from __future__ import annotations

from openapi_spec_validator import validate

from salesplan.auth.scopes import APPROVED_SCOPES
from salesplan.ratelimit.policy import DEFAULT_LIMITS


async def test_meta_is_public_and_complete(client) -> None:
    response = await client.get("/api/v1/meta")
    assert response.status_code == 200
    body = response.json()
    assert body["version"] == "1.0.0" and body["basePath"] == "/api/v1"
    assert body["scopes"] == list(APPROVED_SCOPES)
    assert (
        "relationship_maps:read" in body["scopes"] and "relationship_maps:write" in body["scopes"]
    )
    assert body["pagination"] == {
        "defaultLimit": 50,
        "maxLimit": 200,
        "defaultPage": 1,
        "defaultPageSize": 50,
        "maxPageSize": 200,
        "defaultOrder": "asc",
    }
    rl = body["rateLimiting"]
    assert rl["enabled"] is True and rl["store"] == "memory" and rl["windowSeconds"] == 60
    assert rl["groups"]["plans"] == {"read": 90, "write": 45}
    assert rl["groups"]["feed"] == {"read": 30, "write": None}
    assert rl["groups"]["engage_send"] == {"read": None, "write": 20}
    assert set(rl["groups"]) == set(DEFAULT_LIMITS)
    assert body["mcp"] == {"url": "http://testserver/mcp"}


async def test_meta_consumes_no_rate_limit(client, app, actor) -> None:
    for _ in range(150):
        response = await client.get("/api/v1/meta", headers=actor.headers)
        assert response.status_code == 200
        assert "x-ratelimit-limit" not in response.headers
    assert len(app.state.rate_limiter.store) == 0


async def test_openapi_document_is_valid_and_annotated(client) -> None:
    response = await client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    doc = response.json()
    validate(doc)
    operations = [
        op for item in doc["paths"].values() for op in item.values() if isinstance(op, dict)
    ]
    assert operations
    for op in operations:
        assert op["operationId"] and op["tags"]
        assert isinstance(op["x-scopes"], list)
        assert isinstance(op["x-rate-limit-group"], str)
    by_id = {op["operationId"]: op for op in operations}
    assert by_id["listOrganizations"]["x-scopes"] == ["organizations:read"]
    assert by_id["listOrganizations"]["x-rate-limit-group"] == "organizations"
    assert by_id["getMeta"]["x-scopes"] == []
    assert len(by_id) == len(operations), "operationIds must be unique"


async def test_docs_page_is_served(client) -> None:
    response = await client.get("/docs")
    assert response.status_code == 200 and "openapi.json" in response.text


async def test_healthz_reports_ok(client) -> None:
    response = await client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}
