"""Requests before bodies (contract §12, issue 27 item 8): authentication comes before the body
is read. A malformed JSON body without a valid token is a 401, not a 400; with a valid token it
costs a rate-limit unit like any request, then answers the usual 400 validation_error. Checked
on every authenticated operation of the OpenAPI document that takes a JSON body."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest

from tests.fixtures.envelope import assert_envelope

OPENAPI = "/api/v1/openapi.json"
MALFORMED = [b"{", b'{"name": ', b"\xff\xfe not utf-8"]


def _json_body_operations(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """(method, concrete path) of every authenticated operation with a JSON request body."""
    found = []
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            if operation.get("x-public") or not operation.get("x-scopes"):
                continue
            content = operation.get("requestBody", {}).get("content", {})
            if "application/json" not in content:
                continue
            concrete = re.sub(r"\{[^}]+\}", lambda _: str(uuid.uuid4()), path)
            found.append((method.upper(), concrete))
    return found


async def _operations(client) -> list[tuple[str, str]]:
    resp = await client.get(OPENAPI)
    assert resp.status_code == 200
    operations = _json_body_operations(resp.json())
    # The issue counted ~42; the document must not have lost them (a filter that finds none
    # would make the tests below pass vacuously).
    assert len(operations) >= 40, operations
    return operations


@pytest.mark.parametrize("body", MALFORMED)
async def test_a_malformed_body_without_a_token_is_a_401_on_every_operation(
    client, body: bytes
) -> None:
    for method, path in await _operations(client):
        for headers in (
            {},
            {"Authorization": "Bearer sp_live_not-a-real-key"},
            {"Authorization": "Basic Zm9vOmJhcg=="},
        ):
            resp = await client.request(
                method,
                path,
                content=body,
                headers={"Content-Type": "application/json", **headers},
            )
            assert resp.status_code == 401, f"{method} {path}: {resp.status_code} {resp.text}"
            assert_envelope(resp, 401, "unauthorized")
            assert resp.headers["www-authenticate"].startswith("Bearer")


async def test_a_malformed_body_with_a_token_costs_a_unit_then_is_a_400(client, actor) -> None:
    for method, path in await _operations(client):
        remaining = []
        for _ in range(2):
            resp = await client.request(
                method,
                path,
                content=b"{",
                headers={"Content-Type": "application/json", **actor.in_org()},
            )
            error = assert_envelope(resp, 400, "validation_error")
            assert error["details"]["errors"], f"{method} {path}: {resp.text}"
            assert "x-ratelimit-remaining" in resp.headers, f"{method} {path}: no unit spent"
            remaining.append(int(resp.headers["x-ratelimit-remaining"]))
        assert remaining[1] == remaining[0] - 1, f"{method} {path}: {remaining}"


async def test_scope_is_checked_before_the_body(client, db) -> None:
    """The contract's order: authenticate → rate limit → scope → … → validation."""
    from tests.fixtures.factories import make_actor

    reader = await make_actor(db, scopes=["accounts:read"])
    resp = await client.post(
        "/api/v1/accounts",
        content=b"{",
        headers={"Content-Type": "application/json", **reader.in_org()},
    )
    error = assert_envelope(resp, 403, "forbidden")
    assert error["details"]["requiredScope"] == "accounts:write"
