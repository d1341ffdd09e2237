"""Redis failing at run time: fail open, one error log a minute, /healthz degraded, and limiting
resumes when Redis returns. The test runs a redis-server of its own and stops it."""

from __future__ import annotations

import asyncio
import logging

import pytest

from salesplan.ratelimit.store import RedisStore, StoreUnavailable
from tests.ratelimit.conftest import RedisServer, app_client, unique_prefix

ORGS = "/api/v1/organizations"


async def test_redis_outage_fails_open_and_recovers(
    make_settings, own_redis: RedisServer, actor, caplog: pytest.LogCaptureFixture
) -> None:
    settings = make_settings(
        redis_url=own_redis.url,
        redis_prefix=unique_prefix(),
        rate_limits={"organizations": {"read": 2}},
    )
    async with app_client(settings) as (app, client):
        store = app.state.rate_limiter.store
        assert isinstance(store, RedisStore)
        statuses = [(await client.get(ORGS, headers=actor.headers)).status_code for _ in range(3)]
        assert statuses == [200, 200, 429]

        own_redis.stop()
        caplog.clear()
        with caplog.at_level(logging.ERROR, logger="salesplan.ratelimit"):
            for _ in range(10):
                response = await client.get(ORGS, headers=actor.headers)
                assert response.status_code == 200  # served, unlimited
                assert "x-ratelimit-limit" not in response.headers
                await asyncio.sleep(0.05)
            health = await client.get("/healthz")
            assert health.status_code == 200
            assert health.json() == {
                "status": "degraded",
                "checks": {
                    "database": "ok",
                    "rateLimitStore": "unavailable",
                    "apiRateLimits": "off",
                    "ipRateLimits": "in-process",
                },
            }
            meta = await client.get("/api/v1/meta")
            assert meta.status_code == 200 and meta.json()["rateLimiting"]["store"] == "shared"
        errors = [r for r in caplog.records if r.name == "salesplan.ratelimit"]
        assert len(errors) == 1  # at most one error line a minute
        assert store.errors > 1
        assert own_redis.url not in errors[0].getMessage()

        own_redis.start()  # an empty server: its counts start over
        for _ in range(100):
            if (await client.get("/healthz")).json() == {"status": "ok"}:
                break
            await asyncio.sleep(0.05)
        else:
            pytest.fail("healthz did not recover")
        statuses = []
        for _ in range(3):
            response = await client.get(ORGS, headers=actor.headers)
            statuses.append(response.status_code)
        assert statuses == [200, 200, 429]
        assert response.headers["retry-after"]


async def test_key_values_answer_nothing_and_refuse_writes_while_redis_is_down(
    own_redis: RedisServer,
) -> None:
    store = RedisStore(own_redis.url, prefix=unique_prefix(), pause=0)
    try:
        await store.kv_set("s", "v", 60)
        assert await store.kv_get("s") == "v"
        own_redis.stop()
        assert await store.kv_get("s") is None
        with pytest.raises(StoreUnavailable):  # a value not kept is not a success
            await store.kv_set("s", "w", 60)
        assert await store.ping() is False
    finally:
        await store.close()


async def test_per_ip_limits_hold_in_process_while_redis_is_down(
    make_settings, own_redis: RedisServer
) -> None:
    """Issue 18, defect 8: wrong passwords and registrations stay limited during an outage."""
    from fastapi import APIRouter

    from salesplan.auth.dependencies import limit_by_ip

    probe = APIRouter()

    @probe.post("/probe/sign-in", dependencies=[limit_by_ip("sign_in")])
    async def sign_in() -> dict[str, bool]:
        return {"ok": True}

    settings = make_settings(
        redis_url=own_redis.url, redis_prefix=unique_prefix(), ip_rate_limit_per_minute=3
    )
    async with app_client(settings) as (app, client):
        app.include_router(probe)
        own_redis.stop()
        statuses = [(await client.post("/probe/sign-in")).status_code for _ in range(5)]
        assert statuses == [200, 200, 200, 429, 429]
        assert app.state.rate_limiter.ip_fallback_in_use
