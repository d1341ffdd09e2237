"""Tracking links (contract §12): a malformed or non-ASCII signature is a 404 (not a 500 with a
traceback), and `/t/` is limited per client IP with the usual 429."""

from __future__ import annotations

import uuid

import pytest

from tests.fixtures.envelope import assert_envelope
from tests.ratelimit.conftest import app_client

SIGNATURES = ["%C3%A9t%C3%A9", "%E2%98%83" * 8, "%00", "a", "A" * 500, "..%2F..%2F", "%F0%9F%92%A5"]


def _links(signature: str) -> list[tuple[str, str]]:
    message = uuid.uuid4()
    return [
        ("GET", f"/t/o/{message}/{signature}.gif"),
        ("GET", f"/t/c/{message}/{signature}?u=https%3A%2F%2Fexample.com%2F"),
        ("GET", f"/t/u/{message}/{signature}"),
        ("POST", f"/t/u/{message}/{signature}"),
    ]


@pytest.mark.parametrize("signature", SIGNATURES)
async def test_a_malformed_or_non_ascii_signature_is_a_404(client, signature: str) -> None:
    for method, path in _links(signature):
        response = await client.request(method, path, data={"List-Unsubscribe": "One-Click"})
        assert_envelope(response, 404, "not_found")


async def test_tracking_links_are_limited_per_ip(settings) -> None:
    limited = settings.model_copy(update={"tracking_rate_limit_per_minute": 3})
    async with app_client(limited) as (_, client):
        statuses = []
        for method, path in _links("AAAAAAAAAAAAAAAAAAAAAAAA"):
            statuses.append((await client.request(method, path)).status_code)
        response = await client.get(f"/t/o/{uuid.uuid4()}/x.gif")
        assert statuses[:3] == [404, 404, 404]
        assert statuses[3] == 429
        error = assert_envelope(response, 429, "rate_limit_exceeded")
        assert error["details"]["limit"] == 3
        assert int(response.headers["retry-after"]) >= 1
        assert response.headers["x-ratelimit-limit"] == "3"
        assert response.headers["x-ratelimit-remaining"] == "0"
        # Another address has its own bucket (the limit is per IP, not global).
        transport = client._transport  # same app, another client address
        transport.client = ("198.51.100.7", 1234)  # type: ignore[attr-defined]
        other = await client.get(f"/t/o/{uuid.uuid4()}/x.gif")
        assert other.status_code == 404


async def test_the_tracking_limit_is_off_with_rate_limits(settings) -> None:
    off = settings.model_copy(
        update={"tracking_rate_limit_per_minute": 1, "rate_limits_enabled": False}
    )
    async with app_client(off) as (_, client):
        for _ in range(3):
            assert (await client.get(f"/t/o/{uuid.uuid4()}/x.gif")).status_code == 404
