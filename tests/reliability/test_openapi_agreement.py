"""The OpenAPI document agrees with the server (issue 18, defect 11): the OAuth endpoints' error
shape, `Allow` on OPTIONS and 405, the statuses each operation can answer."""

from __future__ import annotations

import re
import uuid

from tests.fixtures.envelope import assert_envelope

OPENAPI = "/api/v1/openapi.json"
WRITES = {"post", "put", "patch", "delete"}


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", str(uuid.uuid4()), path)


def _allow(response) -> set[str]:
    return {m.strip() for m in response.headers["allow"].split(",")}


async def test_oauth_errors_are_documented_in_the_rfc6749_shape(client) -> None:
    doc = (await client.get(OPENAPI)).json()
    ref = {"$ref": "#/components/schemas/OAuthError"}
    token = doc["paths"]["/api/v1/oauth/token"]["post"]["responses"]
    assert token["400"]["content"]["application/json"]["schema"] == ref
    assert token["429"]["content"]["application/json"]["schema"] == ref
    assert doc["components"]["schemas"]["OAuthError"]["required"] == ["error"]
    answered = await client.post("/api/v1/oauth/token", data={"grant_type": "nope"})
    assert answered.status_code == 400
    assert isinstance(answered.json()["error"], str)


async def test_options_answers_every_method_of_the_path(client) -> None:
    doc = (await client.get(OPENAPI)).json()
    for path, item in doc["paths"].items():
        documented = {m.upper() for m in item if m in WRITES | {"get"}}
        response = await client.options(_concrete(path))
        assert response.status_code == 204, (path, response.text)
        assert documented <= _allow(response), (path, response.headers["allow"])


async def test_a_405_allow_lists_every_method_of_the_path(client, actor) -> None:
    response = await client.put("/api/v1/accounts", headers=actor.in_org())
    assert_envelope(response, 405, "method_not_allowed")
    assert {"GET", "POST"} <= _allow(response)


async def test_a_wrong_method_on_a_fixed_path_is_405_not_a_parameter_route(client, actor) -> None:
    response = await client.put("/api/v1/accounts/bulk", headers=actor.in_org(), json={})
    assert_envelope(response, 405, "method_not_allowed")
    assert "POST" in _allow(response) and "PUT" not in _allow(response)


async def test_every_operation_documents_500_and_503_and_writes_409_and_422(client) -> None:
    doc = (await client.get(OPENAPI)).json()
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            statuses = set(operation["responses"])
            assert {"500", "503"} <= statuses, (method, path)
            if method in WRITES and operation.get("security"):
                assert {"409", "422"} <= statuses, (method, path)


def _query_parameter(operation: dict, name: str) -> dict | None:
    for parameter in operation.get("parameters", []):
        if parameter["in"] == "query" and parameter["name"] == name:
            return parameter
    return None


async def test_sort_by_is_documented_as_the_values_the_list_accepts(client, actor) -> None:
    doc = (await client.get(OPENAPI)).json()
    lists = 0
    for path, item in doc["paths"].items():
        parameter = _query_parameter(item.get("get", {}), "sortBy")
        if parameter is None or "{" in path:
            continue
        lists += 1
        values = parameter["schema"]["enum"]
        for value in values:
            response = await client.get(path, params={"sortBy": value}, headers=actor.in_org())
            assert response.status_code == 200, (path, value, response.text)
        refused = await client.get(path, params={"sortBy": "nope"}, headers=actor.in_org())
        assert_envelope(refused, 400, "validation_error")
    assert lists >= 5


async def test_plan_include_is_documented_as_the_lists_it_accepts(client, actor) -> None:
    doc = (await client.get(OPENAPI)).json()
    parameter = _query_parameter(doc["paths"]["/api/v1/plans"]["get"], "include")
    assert parameter is not None
    pattern = re.compile(parameter["schema"]["pattern"])
    for value in ("milestones", "goals,tasks", "milestones,goals,tasks"):
        assert pattern.search(value)
        ok = await client.get("/api/v1/plans", params={"include": value}, headers=actor.in_org())
        assert ok.status_code == 200, ok.text
    for value in ("nope", "goals,,x", "0"):
        assert not pattern.search(value)
        refused = await client.get(
            "/api/v1/plans", params={"include": value}, headers=actor.in_org()
        )
        assert_envelope(refused, 400, "validation_error")


async def test_email_and_url_fields_are_documented_as_the_server_checks_them(client, actor) -> None:
    doc = (await client.get(OPENAPI)).json()
    body = doc["components"]["schemas"]
    create = next(s for name, s in body.items() if name == "AccountIn")
    url = create["properties"]["website"]["anyOf"][0]
    contact = next(s for name, s in body.items() if name == "ContactIn")
    email = contact["properties"]["email"]["anyOf"][0]
    cases = [
        (url, "website", "https://example.com/a?b#c", True),
        (url, "website", "ftp://example.com", False),
        (url, "website", "http://", False),
        (email, "email", "ada@example.com", True),
        (email, "email", "ada@example", False),
        (email, "email", "a b@example.com", False),
    ]
    for schema, field, value, valid in cases:
        assert bool(re.search(schema["pattern"], value)) is valid, (field, value)
    for value, valid in [(v, ok) for s, f, v, ok in cases if f == "website"]:
        response = await client.post(
            "/api/v1/accounts", json={"name": "A", "website": value}, headers=actor.in_org()
        )
        assert (response.status_code == 201) is valid, (value, response.text)
