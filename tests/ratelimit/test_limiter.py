"""The limiter: buckets, verb classes, headers, 429 details, per-IP limits, failing open."""

from __future__ import annotations

import math
import uuid

import pytest

from salesplan.errors import RateLimited
from salesplan.ratelimit.limiter import RateLimiter, organization_part
from salesplan.ratelimit.policy import build_policy
from salesplan.ratelimit.store import Decision, MemoryStore, StoreUnavailable
from tests.ratelimit.conftest import FakeClock

SMALL = {"organizations": {"read": 3, "write": 0}, "plans": {"read": 2, "write": 1}}


def limiter_on(store, **kwargs) -> RateLimiter:
    return RateLimiter(build_policy(SMALL), store, **kwargs)


async def spend(limiter: RateLimiter, n: int, **bucket) -> list[bool]:
    bucket = {"token_id": "t1", "organization": None, "group": "plans", "write": False} | bucket
    results = []
    for _ in range(n):
        try:
            await limiter.consume(**bucket)
            results.append(True)
        except RateLimited:
            results.append(False)
    return results


async def test_limit_is_enforced_per_bucket_on_both_stores(any_store) -> None:
    limiter = limiter_on(any_store)
    assert await spend(limiter, 3) == [True, True, False]


async def test_bucket_key_holds_the_token_id_never_the_raw_token(memory_store) -> None:
    limiter = limiter_on(memory_store)
    token_id = uuid.uuid4()
    org = uuid.uuid4()
    await limiter.consume(token_id=token_id, organization=str(org), group="plans", write=True)
    assert memory_store.keys() == [f"rl:{token_id}:{org}:plans:w"]


async def test_separate_tokens_never_share_a_bucket(any_store) -> None:
    limiter = limiter_on(any_store)
    assert await spend(limiter, 2, token_id="a") == [True, True]
    assert await spend(limiter, 2, token_id="b") == [True, True]
    assert await spend(limiter, 1, token_id="a") == [False]


async def test_separate_organizations_never_share_a_bucket(any_store) -> None:
    limiter = limiter_on(any_store)
    one, two = str(uuid.uuid4()), str(uuid.uuid4())
    assert await spend(limiter, 2, organization=one) == [True, True]
    assert await spend(limiter, 2, organization=two) == [True, True]
    # No organization named: the `global` bucket, separate from both.
    assert await spend(limiter, 2, organization=None) == [True, True]
    assert await spend(limiter, 1, organization=one) == [False]


async def test_spellings_of_one_organization_share_its_bucket(memory_store) -> None:
    limiter = limiter_on(memory_store)
    org = uuid.uuid4()
    for spelling in (str(org), str(org).upper(), org.hex, f"{{{org}}}"):
        await spend(limiter, 1, organization=spelling)
    assert len(memory_store) == 1
    assert organization_part(f" {str(org).upper()} ") == str(org)


def test_a_non_uuid_organization_value_is_hashed_into_the_key() -> None:
    part = organization_part("evil:value" * 100)
    assert ":" not in part and len(part) == 33
    assert organization_part("") == "global" and organization_part(None) == "global"


async def test_groups_and_verb_classes_are_separate_buckets(memory_store) -> None:
    limiter = limiter_on(memory_store)
    assert await spend(limiter, 2, group="plans", write=False) == [True, True]
    assert await spend(limiter, 1, group="plans", write=True) == [True]
    assert await spend(limiter, 3, group="organizations", write=False) == [True] * 3
    assert await spend(limiter, 1, group="plans", write=True) == [False]


async def test_write_limit_zero_uses_the_read_limit_in_its_own_bucket(memory_store) -> None:
    limiter = limiter_on(memory_store)
    assert await spend(limiter, 4, group="organizations", write=True) == [True] * 3 + [False]
    # The write bucket is still separate from the read bucket.
    assert await spend(limiter, 1, group="organizations", write=False) == [True]


async def test_unlimited_axis_spends_nothing(memory_store) -> None:
    limiter = limiter_on(memory_store)
    assert await limiter.consume(token_id="t", organization=None, group="feed", write=True) is None
    assert (
        await limiter.consume(token_id="t", organization=None, group="engage_send", write=False)
        is None
    )
    assert len(memory_store) == 0


async def test_disabled_limiter_spends_nothing(memory_store) -> None:
    limiter = limiter_on(memory_store, enabled=False)
    assert await spend(limiter, 10) == [True] * 10
    assert await limiter.consume_ip("10.0.0.1", "oauth_token") is None
    assert len(memory_store) == 0


async def test_headers_count_the_current_request_as_spent(clock: FakeClock, memory_store) -> None:
    limiter = limiter_on(memory_store)
    first = await limiter.consume(token_id="t", organization=None, group="plans", write=False)
    assert first is not None
    assert first.headers() == {
        "X-RateLimit-Limit": "2",
        "X-RateLimit-Remaining": "1",
        "X-RateLimit-Reset": str(math.ceil(clock.now + 60)),
    }
    clock.advance(10.5)
    second = await limiter.consume(token_id="t", organization=None, group="plans", write=False)
    assert second is not None
    # Reset = when a unit next frees up: the first one, 60 s after it was spent.
    assert second.headers()["X-RateLimit-Remaining"] == "0"
    assert second.headers()["X-RateLimit-Reset"] == str(math.ceil(clock.now - 10.5 + 60))


async def test_exhausted_bucket_raises_429_with_details_and_retry_after(
    clock: FakeClock, memory_store
) -> None:
    limiter = limiter_on(memory_store)
    await spend(limiter, 1, write=True)
    clock.advance(20.2)
    with pytest.raises(RateLimited) as caught:
        await limiter.consume(token_id="t1", organization=None, group="plans", write=True)
    exc = caught.value
    assert exc.status == 429 and exc.code == "rate_limit_exceeded"
    assert exc.details == {
        "limit": 1,
        "retryAfterSeconds": 40,
        "endpointGroup": "plans",
        "write": True,
    }
    assert exc.headers["Retry-After"] == "40"
    assert exc.headers["X-RateLimit-Limit"] == "1"
    assert exc.headers["X-RateLimit-Remaining"] == "0"
    assert int(exc.headers["X-RateLimit-Reset"]) == math.ceil(clock.now - 20.2 + 60)


async def test_mcp_tool_name_appears_in_the_429_details(memory_store) -> None:
    limiter = limiter_on(memory_store)
    bucket = {"token_id": "t", "organization": None, "group": "plans", "write": True}
    await limiter.consume(**bucket, tool_name="createPlan")
    with pytest.raises(RateLimited) as caught:
        await limiter.consume(**bucket, tool_name="createPlan")
    assert caught.value.details["toolName"] == "createPlan"
    assert caught.value.details["write"] is True


async def test_per_ip_limit_counts_per_address_and_endpoint(clock: FakeClock, memory_store) -> None:
    limiter = limiter_on(memory_store, ip_limit=2)
    assert await limiter.consume_ip("10.0.0.1", "oauth_token") is not None
    usage = await limiter.consume_ip("10.0.0.1", "oauth_token")
    assert usage is not None and usage.headers()["X-RateLimit-Remaining"] == "0"
    with pytest.raises(RateLimited) as caught:
        await limiter.consume_ip("10.0.0.1", "oauth_token")
    assert caught.value.details["limit"] == 2 and caught.value.headers["Retry-After"] == "60"
    # Another address, another endpoint: their own buckets.
    assert await limiter.consume_ip("10.0.0.2", "oauth_token") is not None
    assert await limiter.consume_ip("10.0.0.1", "oauth_register") is not None
    clock.advance(60)
    assert await limiter.consume_ip("10.0.0.1", "oauth_token") is not None


async def test_per_ip_limit_defaults_to_30_and_zero_turns_it_off(memory_store) -> None:
    default = limiter_on(memory_store)
    assert default.ip_limit == 30
    for _ in range(30):
        await default.consume_ip("10.0.0.9", "sign_in")
    with pytest.raises(RateLimited):
        await default.consume_ip("10.0.0.9", "sign_in")
    off = limiter_on(MemoryStore(), ip_limit=0)
    assert await off.consume_ip("10.0.0.9", "sign_in") is None


class BrokenStore:
    name = "shared"

    async def hit(self, key: str, limit: int, window: float) -> Decision:
        raise StoreUnavailable("down")


async def test_unavailable_store_fails_open_for_api_buckets_not_per_ip_limits() -> None:
    limiter = limiter_on(BrokenStore(), ip_limit=2)
    assert await spend(limiter, 5) == [True] * 5
    # Issue 18, defect 8: the per-IP abuse limits count in-process instead.
    assert await limiter.consume_ip("10.0.0.1", "oauth_token") is not None
    await limiter.consume_ip("10.0.0.1", "oauth_token")
    with pytest.raises(RateLimited):
        await limiter.consume_ip("10.0.0.1", "oauth_token")
