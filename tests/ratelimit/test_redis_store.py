"""The Redis store: one Lua script on Redis's clock, a sorted set per bucket, a key prefix."""

from __future__ import annotations

import asyncio
import math

from salesplan.ratelimit.limiter import RateLimiter
from salesplan.ratelimit.policy import build_policy
from salesplan.ratelimit.store import RedisStore
from tests.ratelimit.conftest import app_client, unique_prefix

ORGS = "/api/v1/organizations"


async def _log(store: RedisStore, bucket: str) -> list[tuple[bytes, float]]:
    """The bucket's sliding log: (member, Redis-clock microseconds), oldest first."""
    return list(await store._redis.zrange(store.prefix + bucket, 0, -1, withscores=True))


async def _redis_now_us(store: RedisStore) -> int:
    seconds, micros = await store._redis.time()
    return int(seconds) * 1_000_000 + int(micros)


async def _stamp(store: RedisStore, bucket: str, member: bytes, score: float) -> None:
    """Move one entry of the log to `score`: the entry as if it had been admitted then (time
    passes on Redis's clock without the test waiting)."""
    await store._redis.zadd(store.prefix + bucket, {member: score})


async def test_redis_store_counts_and_reports_like_the_memory_store(redis_store) -> None:
    decisions = [await redis_store.hit("k", 3, 60) for _ in range(4)]
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert [d.remaining for d in decisions] == [2, 1, 0, 0]
    first = (await _log(redis_store, "k"))[0][1] / 1e6  # Redis's clock, seconds
    first_reset = decisions[0].reset_at
    assert first_reset == math.ceil(first + 60)  # the first unit frees a window after it
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
    """Fill a 60-second window, then age its first unit on Redis's clock: one microsecond short
    of a full window it still holds the bucket denied; a full window old it leaves the log and
    the bucket admits again, never earlier."""
    for _ in range(3):
        assert (await redis_store.hit("short", 3, 60)).allowed
    first, _ = (await _log(redis_store, "short"))[0]
    window_us = 60_000_000
    await _stamp(redis_store, "short", first, await _redis_now_us(redis_store) - window_us + 5e6)
    denied = await redis_store.hit("short", 3, 60)
    assert not denied.allowed and 1 <= denied.retry_after <= 5
    assert first in {member for member, _ in await _log(redis_store, "short")}
    await _stamp(redis_store, "short", first, await _redis_now_us(redis_store) - window_us)
    assert (await redis_store.hit("short", 3, 60)).allowed
    log = await _log(redis_store, "short")
    assert first not in {member for member, _ in log} and len(log) == 3


async def test_any_window_span_holds_at_most_the_limit_on_redis_time(redis_store) -> None:
    """The sliding log on Redis's clock: as units age out one by one, each admits exactly one
    more, and the scores Redis stamped never put more than the limit in any window span."""
    window_us = 60_000_000
    stamps: dict[bytes, float] = {}
    for _ in range(5):
        assert (await redis_store.hit("slide", 5, 60)).allowed
    for _ in range(4):
        assert not (await redis_store.hit("slide", 5, 60)).allowed
        oldest, _ = (await _log(redis_store, "slide"))[0]
        stamps[oldest] = await _redis_now_us(redis_store) - window_us
        await _stamp(redis_store, "slide", oldest, stamps[oldest])
        assert (await redis_store.hit("slide", 5, 60)).allowed
        log = await _log(redis_store, "slide")
        assert len(log) == 5 and oldest not in {member for member, _ in log}
        stamps.update(log)
    times = sorted(stamps.values())
    assert len(times) == 9
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
