"""Retries (contract §17): a 429 from the real rate limiter and a 503 are tried again after
their `Retry-After`; a POST or PATCH without an Idempotency-Key never is; Engage sends get an
automatic key, the same on every retry of the call; connection errors are retried for
idempotent methods; the backoff grows, jitters and never undercuts the server's wait."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
import pytest
from salesplan_client import InternalServerError, Salesplan, models
from salesplan_client import _retry as retry
from salesplan_client._errors import APIConnectionError
from tests.client.conftest import Flaky, Live

from salesplan.ratelimit.policy import GroupLimits


def client_at(origin: str, actor: Any, **options: Any) -> Salesplan:
    return Salesplan(origin, api_key=actor.key, organization_id=str(actor.org.id), **options)


@pytest.fixture
def tiny_limit(live: Live) -> Any:
    """The accounts group limited to one read per 2-second window (the window shortened so
    that the test waits seconds, not a minute; the limiter and its store are the real ones)."""
    limiter = live.app.state.rate_limiter
    before, window = limiter.policy["accounts"], limiter.window
    limiter.policy["accounts"] = GroupLimits(read=1, write=60)
    limiter.window = 2.0
    yield limiter
    limiter.policy["accounts"], limiter.window = before, window


async def test_a_429_is_retried_after_its_retry_after(live, actor, tiny_limit) -> None:
    answers: list[tuple[float, httpx.Response]] = []

    def record(response: httpx.Response) -> None:
        answers.append((time.monotonic(), response))

    hooks = {"response": [record]}
    with (
        httpx.Client(event_hooks=hooks) as http,
        client_at(live.origin, actor, http_client=http) as sp,
    ):
        sp.accounts.list()
        sent = time.monotonic()
        page = sp.accounts.list()  # the bucket is spent: 429, then the retry passes
        took = time.monotonic() - sent
    assert page.data == []
    statuses = [r.status_code for _, r in answers]
    assert statuses == [200, 429, 200], statuses
    limited = answers[1][1]
    wait = float(limited.headers["retry-after"])
    assert wait >= 1 and limited.json()["error"]["code"] == "rate_limit_exceeded"
    assert answers[2][0] - answers[1][0] >= wait and took >= wait


async def test_a_503_is_retried_after_its_retry_after(flaky: Flaky, actor) -> None:
    with client_at(flaky.upstream, actor) as direct:
        account = direct.accounts.create(name="Acme")
    path = f"/api/v1/accounts/{account.id}"
    flaky.fail = lambda method, p, attempt: 503 if p == path and attempt == 1 else None
    with client_at(flaky.origin, actor) as sp:
        fetched = sp.accounts.get(account.id)
    assert fetched.id == account.id
    first, second = flaky.attempts(path)
    assert (first.status, second.status) == (503, 200)
    assert second.at - first.at >= 1.0  # Retry-After: 1


async def test_a_post_without_an_idempotency_key_is_not_retried(flaky: Flaky, actor) -> None:
    flaky.fail = lambda method, p, attempt: 503 if method == "POST" else None
    with client_at(flaky.origin, actor) as sp, pytest.raises(InternalServerError) as raised:
        sp.accounts.create(name="Acme")
    assert raised.value.status_code == 503 and raised.value.code == "service_unavailable"
    assert len(flaky.attempts("/api/v1/accounts")) == 1


async def test_a_post_with_the_callers_key_is_retried_with_it(flaky: Flaky, actor) -> None:
    flaky.fail = lambda method, p, attempt: 503 if attempt == 1 else None
    key = "create-acme-1"
    with client_at(flaky.origin, actor) as sp:
        account = sp.accounts.create(name="Acme", extra_headers={"Idempotency-Key": key})
    attempts = flaky.attempts("/api/v1/accounts")
    assert [a.status for a in attempts] == [503, 201]
    assert {a.headers["idempotency-key"] for a in attempts} == {key}
    assert account.name == "Acme"


async def test_an_engage_send_gets_one_key_kept_on_every_retry(flaky: Flaky, actor) -> None:
    path = "/api/v1/engage/messages/send"
    flaky.fail = lambda method, p, attempt: 503 if p == path and attempt in (1, 2) else None
    flaky.retry_after = "0"
    with client_at(flaky.origin, actor) as sp:
        sent = sp.engage.messages.send(
            channel="EMAIL", to="ada@example.com", subject="Hi", body="Hello"
        )
        again = sp.engage.messages.send(
            channel="EMAIL", to="grace@example.com", subject="Hi", body="Hello"
        )
        queue = sp.engage.queue.list()
    assert isinstance(sent, models.SendMessage)
    attempts = flaky.attempts(path)
    assert [a.status for a in attempts] == [503, 503, 202, 202]
    keys = [a.headers["idempotency-key"] for a in attempts]
    assert keys[0] == keys[1] == keys[2] != keys[3]
    assert all(uuid.UUID(k).version == 4 for k in keys)
    # Sent once each: the first two attempts never reached the server.
    assert sorted(m.to for m in queue.data) == ["ada@example.com", "grace@example.com"]
    assert again.message.to == "grace@example.com"


def test_a_campaign_start_gets_an_automatic_key_reused_on_retry() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if len(seen) < 3:
            return httpx.Response(503, headers={"Retry-After": "0"})
        return httpx.Response(404, json={"error": {"code": "not_found", "message": "No."}})

    http = httpx.Client(transport=httpx.MockTransport(handler))
    with Salesplan("http://test", api_key="k", http_client=http) as sp:
        with pytest.raises(Exception, match="not_found"):
            sp.engage.campaigns.start(uuid.uuid4())
        with pytest.raises(Exception, match="not_found"):
            sp.engage.campaigns.start(uuid.uuid4(), idempotency_key="mine")
    keys = [r.headers.get("idempotency-key") for r in seen]
    assert len(keys) == 4 and keys[0] == keys[1] == keys[2] and keys[3] == "mine"
    assert uuid.UUID(keys[0]).version == 4


def test_connection_errors_are_retried_for_a_get_and_not_for_a_post() -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.method)
        if len(calls) in (1, 3):
            raise httpx.ConnectError("refused", request=request)
        return httpx.Response(200, json={"data": [], "pagination": {"hasNextPage": False}})

    http = httpx.Client(transport=httpx.MockTransport(handler))
    with Salesplan("http://test", api_key="k", http_client=http) as sp:
        assert sp.organizations.list().data == []
        with pytest.raises(APIConnectionError):
            sp.accounts.create(name="Acme")
    assert calls == ["GET", "GET", "POST"]


def test_max_retries_bounds_the_attempts() -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        return httpx.Response(502, headers={"Retry-After": "0"})

    http = httpx.Client(transport=httpx.MockTransport(handler))
    with (
        Salesplan("http://test", max_retries=2, http_client=http) as sp,
        pytest.raises(InternalServerError) as raised,
    ):
        sp.meta.get()
    assert raised.value.status_code == 502 and len(calls) == 3


def _response(status: int, **headers: str) -> httpx.Response:
    return httpx.Response(status, headers=headers)


def test_the_backoff_grows_jitters_and_never_undercuts_the_server() -> None:
    for attempt, ceiling in ((0, 0.5), (1, 1.0), (2, 2.0), (5, 8.0), (9, 8.0)):
        delays = [retry.delay_after(attempt, None) for _ in range(200)]
        assert all(d is not None and 0.75 * ceiling <= d <= ceiling for d in delays)
        assert len(set(delays)) > 1  # jitter
    for _ in range(100):
        after = retry.delay_after(0, _response(503, **{"Retry-After": "3"}))
        assert after is not None and 3.0 <= after <= 3.25
    reset = str(int(time.time()) + 5)
    after = retry.delay_after(0, _response(429, **{"X-RateLimit-Reset": reset}))
    assert after is not None and 3.5 <= after <= 5.5
    assert retry.delay_after(0, _response(503, **{"Retry-After": "3600"})) is None
    assert retry.delay_after(0, _response(404)) is None
    assert retry.delay_after(0, _response(409)) is None
    for status in (408, 429, 500, 502, 503, 504):
        assert retry.delay_after(0, _response(status)) is not None
