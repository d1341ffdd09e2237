"""Small helpers for plans tests."""

from __future__ import annotations

from typing import Any

import httpx

from tests.fixtures.crm import make_account
from tests.fixtures.factories import Actor

PLANS = "/api/v1/plans"


async def new_plan(client: httpx.AsyncClient, db: Any, actor: Actor, **body: Any) -> dict[str, Any]:
    """A plan on a fresh account (through the API)."""
    if "entityType" not in body:
        _, group = await make_account(db, actor.org.id)
        body = {"entityType": "BUYING_GROUP", "entityId": str(group.id), **body}
    body.setdefault("name", "Mutual plan")
    resp = await client.post(PLANS, json=body, headers=actor.in_org())
    assert resp.status_code == 201, resp.text
    return resp.json()


async def post(client: httpx.AsyncClient, actor: Actor, path: str, body: Any) -> httpx.Response:
    return await client.post(PLANS + path, json=body, headers=actor.in_org())


async def patch(client: httpx.AsyncClient, actor: Actor, path: str, body: Any) -> httpx.Response:
    return await client.patch(PLANS + path, json=body, headers=actor.in_org())


async def get(client: httpx.AsyncClient, actor: Actor, path: str, **params: Any) -> httpx.Response:
    return await client.get(PLANS + path, params=params, headers=actor.in_org())


async def delete(client: httpx.AsyncClient, actor: Actor, path: str) -> httpx.Response:
    return await client.delete(PLANS + path, headers=actor.in_org())
