"""Errors (contract §17): an ErrorEnvelope raises the exception of its status, carrying `code`,
`message`, `details`, `status_code` and `request_id` (the server's `X-Request-Id`); a 429 also
`retry_after`; no answer at all is an APIConnectionError."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from salesplan_client import (
    APIConnectionError,
    APIStatusError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    Salesplan,
    UnprocessableEntityError,
)
from tests.client.conftest import Flaky, Live
from tests.fixtures.factories import make_key

from salesplan.ratelimit.policy import GroupLimits


def client_at(origin: str, key: str, org: Any, **options: Any) -> Salesplan:
    return Salesplan(origin, api_key=key, organization_id=str(org.id), max_retries=0, **options)


def check(error: APIStatusError, status: int, code: str) -> None:
    assert error.status_code == status and error.code == code, (error.status_code, error.code)
    assert error.message and isinstance(error.details, dict)
    assert error.request_id and error.request_id == error.response.headers["x-request-id"]
    assert str(error).startswith(f"{status} {code}: ")


async def test_each_error_status_raises_its_class(live: Live, actor, db) -> None:
    sp = client_at(live.origin, actor.key, actor.org)
    with pytest.raises(BadRequestError) as bad:
        sp.accounts.create(name="")
    check(bad.value, 400, "validation_error")
    assert bad.value.details["errors"][0]["location"] == ["body", "name"]

    with pytest.raises(AuthenticationError) as unauthorized:
        client_at(live.origin, "sp_live_not-a-key", actor.org).accounts.list()
    check(unauthorized.value, 401, "unauthorized")

    reader = await make_key(db, actor.user, scopes=["accounts:read"])
    with pytest.raises(PermissionDeniedError) as forbidden:
        client_at(live.origin, reader, actor.org).accounts.create(name="Acme")
    check(forbidden.value, 403, "forbidden")
    assert forbidden.value.details["requiredScope"] == "accounts:write"

    with pytest.raises(NotFoundError) as missing:
        sp.accounts.get(uuid.uuid4())
    check(missing.value, 404, "not_found")

    sp.accounts.create(name="Acme", crm_id="A-1")
    with pytest.raises(ConflictError) as conflict:
        sp.accounts.create(name="Acme again", crm_id="A-1")
    check(conflict.value, 409, "conflict")

    with pytest.raises(UnprocessableEntityError) as unprocessable:
        sp.opportunities.create(account_id=uuid.uuid4(), name="Deal")
    check(unprocessable.value, 422, "unprocessable")
    assert unprocessable.value.details["field"] == "accountId"
    sp.close()


async def test_a_429_carries_retry_after(live: Live, actor) -> None:
    limiter = live.app.state.rate_limiter
    before = limiter.policy["accounts"]
    limiter.policy["accounts"] = GroupLimits(read=1, write=60)
    try:
        with client_at(live.origin, actor.key, actor.org) as sp:
            sp.accounts.list()
            with pytest.raises(RateLimitError) as limited:
                sp.accounts.list()
    finally:
        limiter.policy["accounts"] = before
    check(limited.value, 429, "rate_limit_exceeded")
    assert limited.value.retry_after is not None and 0 < limited.value.retry_after <= 60
    assert limited.value.details["endpointGroup"] == "accounts"
    assert limited.value.details["retryAfterSeconds"] == limited.value.retry_after


@pytest.mark.parametrize("status", [500, 503])
async def test_a_5xx_is_an_internal_server_error(flaky: Flaky, actor, status) -> None:
    flaky.fail = lambda *_: status
    with (
        client_at(flaky.origin, actor.key, actor.org) as sp,
        pytest.raises(InternalServerError) as failed,
    ):
        sp.accounts.list()
    assert failed.value.status_code == status and failed.value.code == "service_unavailable"
    assert failed.value.message == "Try again later."


async def test_no_answer_is_a_connection_error(actor) -> None:
    with (
        Salesplan("http://127.0.0.1:9", api_key=actor.key, max_retries=0) as sp,
        pytest.raises(APIConnectionError),
    ):
        sp.meta.get()


async def test_oauth_errors_are_read_too(live: Live) -> None:
    with Salesplan(live.origin, max_retries=0) as sp, pytest.raises(APIStatusError) as failed:
        sp.oauth.issue_token(grant_type="client_credentials", client_id="nobody")
    assert failed.value.status_code in (400, 401)
    assert failed.value.code in ("invalid_client", "invalid_request")
