"""Issue 38: an empty `X-Organization-Id` (or `X-Subscriber-Id`) is not taken as absent: it is
a malformed organization value, a 400 `validation_error` (contract §11) naming the header."""

from __future__ import annotations

import pytest

from tests.fixtures.envelope import assert_envelope
from tests.foundation.test_errors import probe_client as probe_client

THINGS = "/api/v1/probe/things"


@pytest.mark.parametrize("header", ["X-Organization-Id", "X-Subscriber-Id"])
@pytest.mark.parametrize("value", ["", "   "])
async def test_an_empty_organization_header_is_a_400(probe_client, actor, header, value) -> None:
    response = await probe_client.post(
        THINGS, json={"name": "a"}, headers=actor.headers | {header: value}
    )
    body = assert_envelope(response, 400, "validation_error")
    locations = [e["location"] for e in body["details"]["errors"]]
    assert ["header", header.lower()] in locations


async def test_an_empty_organization_header_is_a_400_on_a_real_route(client, actor) -> None:
    response = await client.get(
        "/api/v1/accounts", headers=actor.headers | {"X-Organization-Id": ""}
    )
    assert_envelope(response, 400, "validation_error")
    # Without the header the key's one organization is still the default.
    assert (await client.get("/api/v1/accounts", headers=actor.headers)).status_code == 200
