"""Contract §2: every error is an ErrorEnvelope, the framework's own included."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

import httpx
import pytest
from fastapi import APIRouter, FastAPI

from salesplan.app import create_app
from salesplan.auth.dependencies import require
from salesplan.auth.principal import RequestContext
from salesplan.config import Settings
from salesplan.kit.schemas import StrictBody
from tests.fixtures.envelope import assert_envelope


class Thing(StrictBody):
    name: str
    size: int = 0


probe = APIRouter()


@probe.post("/api/v1/probe/things", operation_id="probeCreateThing", status_code=201)
async def create_thing(
    body: Thing, ctx: Annotated[RequestContext, require("accounts:write", "accounts")]
) -> dict[str, object]:
    return {"name": body.name, "organizationId": str(ctx.organization_id)}


@probe.post("/api/v1/probe/bulk", operation_id="probeBulk")
async def bulk(body: dict[str, object]) -> dict[str, int]:
    return {"keys": len(body)}


@probe.get("/api/v1/probe/boom", operation_id="probeBoom")
async def boom() -> None:
    raise RuntimeError("secret internals: password=hunter2")


@pytest.fixture
async def probe_client(app: FastAPI, settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The real app with a few probe routes, sharing the test database."""
    probed = create_app(settings)
    probed.include_router(probe)
    probed.state.engine = app.state.engine
    probed.state.sessionmaker = app.state.sessionmaker
    probed.state.database = app.state.database
    transport = httpx.ASGITransport(app=probed, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
        yield c


async def test_unknown_route_is_404_not_found(client: httpx.AsyncClient) -> None:
    assert_envelope(await client.get("/api/v1/nothing-here"), 404, "not_found")


async def test_wrong_method_is_405_method_not_allowed(client: httpx.AsyncClient) -> None:
    assert_envelope(await client.delete("/api/v1/meta"), 405, "method_not_allowed")


async def test_malformed_json_is_400_validation_error(probe_client, actor) -> None:
    response = await probe_client.post(
        "/api/v1/probe/things",
        content=b'{"name": ',
        headers=actor.headers | {"content-type": "application/json"},
    )
    error = assert_envelope(response, 400, "validation_error")
    assert error["details"]["errors"][0]["location"][0] == "body"


async def test_wrong_type_is_400_with_location(probe_client, actor) -> None:
    response = await probe_client.post(
        "/api/v1/probe/things", json={"name": "x", "size": "big"}, headers=actor.headers
    )
    error = assert_envelope(response, 400, "validation_error")
    assert {
        "location": ["body", "size"],
        "message": error["details"]["errors"][0]["message"],
    } in error["details"]["errors"]


async def test_unknown_property_on_strict_body_is_400(probe_client, actor) -> None:
    response = await probe_client.post(
        "/api/v1/probe/things", json={"name": "x", "colour": "red"}, headers=actor.headers
    )
    error = assert_envelope(response, 400, "validation_error")
    assert error["details"]["errors"][0]["location"] == ["body", "colour"]


async def test_missing_required_property_is_400(probe_client, actor) -> None:
    response = await probe_client.post("/api/v1/probe/things", json={}, headers=actor.headers)
    error = assert_envelope(response, 400, "validation_error")
    assert error["details"]["errors"][0]["location"] == ["body", "name"]


async def test_body_over_one_mebibyte_is_413(probe_client, actor) -> None:
    big = b'{"name": "' + b"x" * (1024 * 1024 + 10) + b'"}'
    response = await probe_client.post(
        "/api/v1/probe/things",
        content=big,
        headers=actor.headers | {"content-type": "application/json"},
    )
    assert_envelope(response, 413, "payload_too_large")


async def test_chunked_body_over_the_limit_is_413(probe_client, actor) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"name": "'
        for _ in range(17):
            yield b"x" * 65536
        yield b'"}'

    response = await probe_client.post(
        "/api/v1/probe/things",
        content=chunks(),
        headers=actor.headers | {"content-type": "application/json"},
    )
    assert_envelope(response, 413, "payload_too_large")


async def test_bulk_endpoints_accept_up_to_ten_mebibytes(probe_client) -> None:
    body = b'{"a": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    response = await probe_client.post(
        "/api/v1/probe/bulk", content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 200
    too_big = b'{"a": "' + b"x" * (10 * 1024 * 1024) + b'"}'
    response = await probe_client.post(
        "/api/v1/probe/bulk", content=too_big, headers={"content-type": "application/json"}
    )
    assert_envelope(response, 413, "payload_too_large")


async def test_unexpected_error_is_500_without_internals(probe_client) -> None:
    response = await probe_client.get("/api/v1/probe/boom")
    error = assert_envelope(response, 500, "internal_error")
    assert "hunter2" not in response.text and "RuntimeError" not in response.text
    assert error["details"]["requestId"] == response.headers["x-request-id"]


async def test_every_response_carries_x_request_id(client: httpx.AsyncClient) -> None:
    ok = await client.get("/api/v1/meta")
    missing = await client.get("/api/v1/nope")
    assert ok.headers["x-request-id"] and missing.headers["x-request-id"]
    assert ok.headers["x-request-id"] != missing.headers["x-request-id"]


async def test_client_request_id_is_echoed(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v1/meta", headers={"X-Request-Id": "abc-123"})
    assert response.headers["x-request-id"] == "abc-123"


async def test_authentication_comes_before_validation(probe_client) -> None:
    response = await probe_client.post("/api/v1/probe/things", json={"bad": 1})
    assert_envelope(response, 401, "unauthorized")


async def test_head_is_answered_like_get_without_a_body(client, actor) -> None:
    response = await client.head("/api/v1/organizations", headers=actor.headers)
    assert response.status_code == 200 and response.content == b""
    assert response.headers["x-ratelimit-limit"] == "60"  # the organizations read limit
    assert (await client.head("/api/v1/meta")).status_code == 200


@pytest.mark.parametrize(
    ("content_type", "shown"),
    [
        ("text/plain", "text/plain"),
        ("application/x-www-form-urlencoded", "application/x-www-form-urlencoded"),
        (None, "none"),
    ],
)
async def test_a_body_that_is_not_sent_as_json_names_the_expected_content_type(
    client: httpx.AsyncClient, actor: object, content_type: str | None, shown: str
) -> None:
    """Issue 29: a JSON body sent as text/plain answered "Input should be a valid dictionary"
    without saying that the Content-Type was the problem."""
    headers = dict(actor.headers)  # type: ignore[attr-defined]
    if content_type:
        headers["Content-Type"] = content_type
    resp = await client.post("/api/v1/accounts", content=b'{"name": "Acme"}', headers=headers)
    body = assert_envelope(resp, 400, "validation_error")
    assert "application/json" in body["message"] and shown in body["message"]
    assert body["details"]["expectedContentType"] == "application/json"
    assert body["details"]["errors"][0]["location"] == ["body"]
    assert "application/json" in body["details"]["errors"][0]["message"]


async def test_json_media_types_still_parse_and_field_errors_stay_as_they_were(
    client: httpx.AsyncClient, actor: object
) -> None:
    headers = dict(actor.headers)  # type: ignore[attr-defined]
    ok = await client.post(
        "/api/v1/accounts",
        content=b'{"name": "Acme"}',
        headers=headers | {"Content-Type": "application/json; charset=utf-8"},
    )
    assert ok.status_code == 201, ok.text
    wrong = await client.post("/api/v1/accounts", json={"name": 5}, headers=headers)
    body = assert_envelope(wrong, 400, "validation_error")
    assert body["message"] == "The request is not valid."
    assert body["details"]["errors"][0]["location"] == ["body", "name"]
