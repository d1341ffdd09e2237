"""Rate limits over HTTP, on the `organizations` group (GET /api/v1/organizations)."""

from __future__ import annotations

import math
import time

import pytest

from salesplan.config import Settings
from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_key
from tests.ratelimit.conftest import app_client

ORGS = "/api/v1/organizations"
SMALL = {"organizations": {"read": 3, "write": 0}}


@pytest.fixture
def small(make_settings) -> Settings:
    return make_settings(rate_limits=SMALL)


async def test_limited_responses_carry_the_three_headers(small, actor) -> None:
    async with app_client(small) as (_, client):
        remaining = []
        for _ in range(3):
            before = time.time()
            response = await client.get(ORGS, headers=actor.headers)
            assert response.status_code == 200
            assert response.headers["x-ratelimit-limit"] == "3"
            remaining.append(int(response.headers["x-ratelimit-remaining"]))
            reset = int(response.headers["x-ratelimit-reset"])
            assert math.floor(before) + 60 <= reset <= math.ceil(time.time()) + 60
        # The current request counts as spent.
        assert remaining == [2, 1, 0]


async def test_exhausted_bucket_answers_429_with_retry_after_and_details(small, actor) -> None:
    async with app_client(small) as (_, client):
        for _ in range(3):
            assert (await client.get(ORGS, headers=actor.headers)).status_code == 200
        response = await client.get(ORGS, headers=actor.headers)
        error = assert_envelope(response, 429, "rate_limit_exceeded")
        details = error["details"]
        assert set(details) == {"limit", "retryAfterSeconds", "endpointGroup", "write"}
        assert details["limit"] == 3
        assert details["endpointGroup"] == "organizations"
        assert details["write"] is False
        assert isinstance(details["retryAfterSeconds"], int)
        assert 1 <= details["retryAfterSeconds"] <= 60
        assert response.headers["retry-after"] == str(details["retryAfterSeconds"])
        assert response.headers["x-ratelimit-limit"] == "3"
        assert response.headers["x-ratelimit-remaining"] == "0"
        assert int(response.headers["x-ratelimit-reset"]) >= int(time.time())


async def test_error_responses_after_the_unit_is_spent_carry_the_headers(small, db, actor) -> None:
    """Order: authenticate → rate limit → scope. A scope failure still spent its unit."""
    no_scope = await make_key(db, actor.user, scopes=["plans:read"])
    headers = {"Authorization": f"Bearer {no_scope}"}
    async with app_client(small) as (_, client):
        response = await client.get(ORGS, headers=headers)
        assert_envelope(response, 403, "forbidden")
        assert response.headers["x-ratelimit-remaining"] == "2"


async def test_unauthenticated_requests_consume_nothing(small) -> None:
    async with app_client(small) as (app, client):
        for _ in range(5):
            response = await client.get(ORGS, headers={"Authorization": "Bearer sp_live_nope"})
            assert response.status_code == 401
            assert "x-ratelimit-limit" not in response.headers
        assert len(app.state.rate_limiter.store) == 0


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/meta",
        "/api/v1/openapi.json",
        "/docs",
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/healthz",
    ],
)
async def test_public_paths_consume_nothing(small, actor, path: str) -> None:
    async with app_client(small) as (app, client):
        for _ in range(5):
            response = await client.get(path, headers=actor.in_org())
            assert "x-ratelimit-limit" not in response.headers
        assert len(app.state.rate_limiter.store) == 0
        # The organizations bucket is still full.
        response = await client.get(ORGS, headers=actor.headers)
        assert response.headers["x-ratelimit-remaining"] == "2"


async def test_the_organization_header_selects_its_own_bucket(small, actor) -> None:
    async with app_client(small) as (_, client):
        for _ in range(3):
            assert (await client.get(ORGS, headers=actor.headers)).status_code == 200
        assert (await client.get(ORGS, headers=actor.headers)).status_code == 429
        # Naming the organization is another bucket (spec: header value, else `global`).
        response = await client.get(ORGS, headers=actor.in_org())
        assert response.status_code == 200
        assert response.headers["x-ratelimit-remaining"] == "2"
        # The alias header and another spelling of the same id share that bucket.
        alias = actor.headers | {"X-Subscriber-Id": str(actor.org.id).upper()}
        response = await client.get(ORGS, headers=alias)
        assert response.headers["x-ratelimit-remaining"] == "1"
        response = await client.get(
            ORGS, headers=actor.headers, params={"organizationId": actor.org.id.hex}
        )
        assert response.headers["x-ratelimit-remaining"] == "0"


async def test_two_keys_of_one_user_have_separate_buckets(small, db, actor) -> None:
    second = await make_key(db, actor.user)
    async with app_client(small) as (app, client):
        for _ in range(3):
            await client.get(ORGS, headers=actor.headers)
        assert (await client.get(ORGS, headers=actor.headers)).status_code == 429
        response = await client.get(ORGS, headers={"Authorization": f"Bearer {second}"})
        assert response.status_code == 200
        keys = app.state.rate_limiter.store.keys()
        assert len(keys) == 2
        assert not any(actor.key in k or second in k for k in keys)


async def test_disabled_limiting_sends_no_headers_and_never_429(make_settings, actor) -> None:
    settings = make_settings(rate_limits=SMALL, rate_limits_enabled=False)
    async with app_client(settings) as (_, client):
        for _ in range(6):
            response = await client.get(ORGS, headers=actor.headers)
            assert response.status_code == 200
            assert "x-ratelimit-limit" not in response.headers
        meta = (await client.get("/api/v1/meta")).json()["rateLimiting"]
        assert meta["enabled"] is False


async def test_environment_override_works_end_to_end(
    monkeypatch: pytest.MonkeyPatch, settings: Settings, actor
) -> None:
    monkeypatch.setenv("SALESPLAN_DATABASE_URL", settings.database_url)
    monkeypatch.setenv("SALESPLAN_SECRET_KEY", "env-test-secret")
    monkeypatch.delenv("SALESPLAN_REDIS_URL", raising=False)
    monkeypatch.setenv(
        "SALESPLAN_RATE_LIMITS", '{"organizations": {"read": 2}, "feed": {"write": 4}}'
    )
    env_settings = Settings(_env_file=None)  # type: ignore[call-arg]
    async with app_client(env_settings) as (_, client):
        groups = (await client.get("/api/v1/meta")).json()["rateLimiting"]["groups"]
        assert groups["organizations"] == {"read": 2, "write": 60}
        assert groups["feed"] == {"read": 30, "write": 4}
        statuses = [(await client.get(ORGS, headers=actor.headers)).status_code for _ in range(3)]
        assert statuses == [200, 200, 429]


async def test_meta_reports_the_memory_store_by_default(small) -> None:
    async with app_client(small) as (_, client):
        rl = (await client.get("/api/v1/meta")).json()["rateLimiting"]
        assert rl["store"] == "memory" and rl["windowSeconds"] == 60
        # The write limit of 0 is shown as the read limit it falls back to.
        assert rl["groups"]["organizations"] == {"read": 3, "write": 3}


async def test_per_ip_limit_applies_to_unauthenticated_endpoints(make_settings) -> None:
    from fastapi import APIRouter

    from salesplan.auth.dependencies import limit_by_ip

    probe = APIRouter()

    @probe.post("/probe/sign-in", dependencies=[limit_by_ip("sign_in")])
    async def sign_in() -> dict[str, bool]:
        return {"ok": True}

    settings = make_settings(ip_rate_limit_per_minute=2)
    async with app_client(settings) as (app, client):
        app.include_router(probe)
        first = await client.post("/probe/sign-in")
        assert first.status_code == 200
        assert first.headers["x-ratelimit-limit"] == "2"
        assert first.headers["x-ratelimit-remaining"] == "1"
        assert (await client.post("/probe/sign-in")).status_code == 200
        response = await client.post("/probe/sign-in")
        error = assert_envelope(response, 429, "rate_limit_exceeded")
        assert error["details"]["limit"] == 2
        assert response.headers["retry-after"] == str(error["details"]["retryAfterSeconds"])
        assert app.state.rate_limiter.store.keys() == ["rl:ip:127.0.0.1:sign_in"]
