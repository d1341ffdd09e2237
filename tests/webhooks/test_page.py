"""Developer settings, webhooks: an admin adds an endpoint (its secret shown once), rotates its
secret and deletes it; a private destination is explained, not saved."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.fixtures.factories import Actor
from tests.oauth.flow import csrf_of, sign_in
from tests.webhooks.conftest import API

DEV = "/settings/developer"


@pytest.fixture
async def dev(client: httpx.AsyncClient, actor: Actor) -> httpx.AsyncClient:
    assert (await sign_in(client, actor.user.email)).status_code == 303
    return client


async def _post(client: httpx.AsyncClient, path: str, data: dict[str, object]) -> httpx.Response:
    token = csrf_of((await client.get(DEV)).text)
    return await client.post(path, data={"csrf_token": token, **data})


async def test_an_admin_adds_rotates_and_deletes_an_endpoint(dev, actor, receiver) -> None:
    base = f"{DEV}/webhooks/{actor.org.id}"
    resp = await _post(dev, base, {"url": receiver.url, "event_types": ["account.created"]})
    assert resp.status_code == 303
    page = (await dev.get(DEV)).text
    secret = re.search(r'value="(whsec_[^"]+)"', page)
    assert secret and "will not be shown again" in page
    assert secret.group(1) not in (await dev.get(DEV)).text  # once
    [endpoint] = (await dev.get(API, headers=actor.headers)).json()["data"]
    assert endpoint["url"] == receiver.url and endpoint["eventTypes"] == ["account.created"]

    await _post(dev, f"{base}/{endpoint['id']}/rotate", {})
    rotated = re.search(r'value="(whsec_[^"]+)"', (await dev.get(DEV)).text)
    assert rotated and rotated.group(1) != secret.group(1)

    await _post(dev, f"{base}/{endpoint['id']}/delete", {})
    assert (await dev.get(API, headers=actor.headers)).json()["data"] == []


async def test_a_private_destination_is_explained_and_not_saved(dev, actor) -> None:
    resp = await _post(dev, f"{DEV}/webhooks/{actor.org.id}", {"url": "https://10.0.0.1/x"})
    assert resp.status_code == 303
    assert "not allowed" in (await dev.get(DEV)).text
    assert (await dev.get(API, headers=actor.headers)).json()["data"] == []
