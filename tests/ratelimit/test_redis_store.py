"""The Redis store: one Lua script on Redis's clock, a sorted set per bucket, a key prefix."""

from __future__ import annotations

import asyncio
import time

from salesplan.ratelimit.limiter import RateLimiter
from salesplan.ratelimit.policy import build_policy
from salesplan.ratelimit.store import RedisStore
from tests.ratelimit.conftest import app_client, unique_prefix

ORGS = "/api/v1/organizations"


async def test_redis_store_counts_and_reports_like_the_memory_store(redis_store) -> None:
    decisions = [await redis_store.hit("k", 3, 60) for _ in range(4)]
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert [d.remaining for d in decisions] == [2, 1, 0, 0]
    first_reset = decisions[0].reset_at
    assert abs(first_reset - (time.time() + 60)) < 5  # Redis's clock is this machine's here
    assert decisions[3].reset_at == first_reset
    assert 1 <= decisions[3].retry_after <= 60


async def test_every_key_lives_under_the_prefix_with_a_window_ttl(redis_store) -> None:
    await redis_store.hit("rl:t:global:plans:r", 5, 60)
    raw = redis_store._redis
    keys = [k.decode() async for k in raw.scan_iter(match=redis_store.prefix + "*")]
    assert keys == [redis_store.prefix + "rl:t:global:plans:r"]
    ttl = await raw.pttl(keys[0])
    assert 0 < ttl <= 60_000


async def test_two_prefixes_never_share_a_bucket(redis_url: str, redis_store) -> None:
    other = RedisStore(redis_url, prefix=unique_prefix())
    try:
        assert (await redis_store.hit("k", 1, 60)).allowed
        assert (await other.hit("k", 1, 60)).allowed
        assert not (await redis_store.hit("k", 1, 60)).allowed
    finally:
        await other.reset()
        await other.close()


async def test_concurrent_hits_never_exceed_the_limit(redis_url: str, redis_store) -> None:
    """Several clients (as several workers would) racing on one bucket: the script is atomic."""
    clients = [RedisStore(redis_url, prefix=redis_store.prefix) for _ in range(4)]
    try:
        results = await asyncio.gather(*(clients[i % 4].hit("race", 25, 60) for i in range(100)))
        assert sum(d.allowed for d in results) == 25
    finally:
        for c in clients:
            await c.close()


async def test_denial_persists_until_the_oldest_entry_expires(redis_store) -> None:
    """A 1-second window: fill it, then denied until (on Redis's clock) the first unit is a
    full window old, never earlier."""
    key = redis_store.prefix + "short"
    for _ in range(3):
        assert (await redis_store.hit("short", 3, 1.0)).allowed
    stamped = await redis_store._redis.zrange(key, 0, -1, withscores=True)
    first = min(score for _, score in stamped)  # microseconds, Redis's clock
    denied = 0
    while not (decision := await redis_store.hit("short", 3, 1.0)).allowed:
        denied += 1
        assert decision.retry_after == 1
        await asyncio.sleep(0.02)
    stamped = await redis_store._redis.zrange(key, 0, -1, withscores=True)
    admitted = max(score for _, score in stamped)
    # Admitted again only once the first unit was a full window old, and it left the log.
    assert admitted - first >= 1_000_000
    assert first not in {score for _, score in stamped}
    assert denied > 0


async def test_any_window_span_holds_at_most_the_limit_on_redis_time(redis_store) -> None:
    """The sliding log on Redis's clock: hammer a 0.5 s window for 3 windows; the scores that
    Redis stamped on the allowed units never put more than the limit in any window span."""
    window_us = 500_000
    key = redis_store.prefix + "slide"
    stamps: dict[bytes, float] = {}
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline:
        if (await redis_store.hit("slide", 5, 0.5)).allowed:
            for member, score in await redis_store._redis.zrange(key, 0, -1, withscores=True):
                stamps[member] = score
        await asyncio.sleep(0.005)
    times = sorted(stamps.values())
    assert len(times) >= 10  # it kept serving as units freed up
    for i, t in enumerate(times):
        assert sum(1 for u in times[: i + 1] if u > t - window_us) <= 5


async def test_evalsha_falls_back_to_eval_when_the_script_is_unknown(redis_store) -> None:
    redis_store._sha = "0" * 40  # as after SCRIPT FLUSH or on a fresh server
    assert (await redis_store.hit("k", 2, 60)).allowed
    assert (await redis_store.hit("k", 2, 60)).remaining == 0


async def test_key_values_live_beside_the_counters(redis_store) -> None:
    await redis_store.kv_set("mcp:session:abc", "org-1", 5)
    assert await redis_store.kv_get("mcp:session:abc") == "org-1"
    assert await redis_store.kv_get("missing") is None
    ttl = await redis_store._redis.ttl(redis_store.prefix + "kv:mcp:session:abc")
    assert 0 < ttl <= 5


async def test_ping_answers_true(redis_store) -> None:
    assert await redis_store.ping() is True


async def test_limiter_on_redis_uses_the_same_buckets(redis_store) -> None:
    limiter = RateLimiter(build_policy({"plans": {"read": 1}}), redis_store)
    bucket = {"token_id": "t", "organization": None, "group": "plans", "write": False}
    assert await limiter.consume(**bucket) is not None
    keys = [k.decode() async for k in redis_store._redis.scan_iter(match=redis_store.prefix + "*")]
    assert keys == [redis_store.prefix + "rl:t:global:plans:r"]


async def test_redis_url_selects_the_shared_store(make_settings, redis_url: str, actor) -> None:
    settings = make_settings(
        redis_url=redis_url,
        redis_prefix=unique_prefix(),
        rate_limits={"organizations": {"read": 2}},
    )
    async with app_client(settings) as (app, client):
        store = app.state.rate_limiter.store
        try:
            assert isinstance(store, RedisStore) and store.prefix == settings.redis_prefix
            assert (await client.get("/api/v1/meta")).json()["rateLimiting"]["store"] == "shared"
            statuses = []
            for _ in range(3):
                response = await client.get(ORGS, headers=actor.headers)
                statuses.append(response.status_code)
            assert statuses == [200, 200, 429]
            assert response.headers["x-ratelimit-limit"] == "2"
            assert response.json()["error"]["details"]["endpointGroup"] == "organizations"
            health = await client.get("/healthz")
            assert health.status_code == 200 and health.json() == {"status": "ok"}
        finally:
            await store.reset()
