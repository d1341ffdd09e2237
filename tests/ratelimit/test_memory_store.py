"""The memory store: a sliding log, accurate at the window edge, bounded in memory."""

from __future__ import annotations

import math

from salesplan.ratelimit.store import MemoryStore
from tests.ratelimit.conftest import FakeClock


async def test_no_double_burst_across_a_minute_edge(clock: FakeClock) -> None:
    store = MemoryStore(clock=clock)
    clock.now = 1_800_000_000.0 + 59.9  # just before a minute boundary (1_800_000_000 % 60 == 0)
    assert 1_800_000_000 % 60 == 0
    for _ in range(10):
        assert (await store.hit("k", 10, 60)).allowed
    clock.advance(0.2)  # a new calendar minute: a fixed window would hand out 10 more here
    denied = await store.hit("k", 10, 60)
    assert not denied.allowed
    assert denied.retry_after == 60  # ceil(59.8)
    clock.advance(59.7)  # 59.9 s after the burst: still inside the rolling window
    assert not (await store.hit("k", 10, 60)).allowed
    clock.advance(0.1)  # exactly 60 s later, every unit frees up
    assert all([(await store.hit("k", 10, 60)).allowed for _ in range(10)])
    assert not (await store.hit("k", 10, 60)).allowed


async def test_units_free_up_one_by_one_as_each_leaves_the_window(clock: FakeClock) -> None:
    store = MemoryStore(clock=clock)
    start = clock.now
    for i in range(3):
        clock.now = start + i * 10
        assert (await store.hit("k", 3, 60)).allowed
    clock.now = start + 30
    denied = await store.hit("k", 3, 60)
    assert not denied.allowed and denied.reset_at == math.ceil(start + 60)
    clock.now = start + 60  # the first unit frees up, only it
    assert (await store.hit("k", 3, 60)).allowed
    assert not (await store.hit("k", 3, 60)).allowed
    clock.now = start + 70
    assert (await store.hit("k", 3, 60)).allowed


async def test_any_60_second_span_holds_at_most_the_limit(clock: FakeClock) -> None:
    """Hammer the bucket every 0.7 s for 5 minutes; check every rolling window afterwards."""
    store = MemoryStore(clock=clock)
    allowed: list[float] = []
    for _ in range(430):
        if (await store.hit("k", 20, 60)).allowed:
            allowed.append(clock.now)
        clock.advance(0.7)
    assert len(allowed) > 20 * 4  # it kept serving
    for i, t in enumerate(allowed):
        assert sum(1 for u in allowed[: i + 1] if u > t - 60) <= 20


async def test_memory_stays_bounded_after_100000_distinct_tokens(clock: FakeClock) -> None:
    store = MemoryStore(clock=clock)
    for i in range(100_000):
        store.hit_sync(f"rl:token-{i}:global:plans:r", 90, 60)
    assert len(store) == 100_000
    clock.advance(61)
    store.hit_sync("rl:late:global:plans:r", 90, 60)
    assert len(store) == 1


async def test_sweep_keeps_buckets_still_inside_their_window(clock: FakeClock) -> None:
    store = MemoryStore(clock=clock)
    store.hit_sync("old", 5, 60)
    clock.advance(30)
    store.hit_sync("recent", 5, 60)
    clock.advance(31)
    store.hit_sync("new", 5, 60)
    assert sorted(store.keys()) == ["new", "recent"]
    assert store.hit_sync("recent", 5, 60).remaining == 3  # its entry survived the sweep


async def test_key_values_expire(clock: FakeClock) -> None:
    store = MemoryStore(clock=clock)
    await store.kv_set("session", "org-1", 10)
    assert await store.kv_get("session") == "org-1"
    clock.advance(10)
    assert await store.kv_get("session") is None


async def test_reset_empties_the_store(clock: FakeClock) -> None:
    store = MemoryStore(clock=clock)
    store.hit_sync("k", 1, 60)
    await store.kv_set("a", "b", 10)
    await store.reset()
    assert len(store) == 0 and await store.kv_get("a") is None
