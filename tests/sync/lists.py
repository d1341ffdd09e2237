"""The lists a client syncs from (issue 31, "Incremental sync"), each with how a test makes, changes
and archives one of its rows through the API."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx

from tests.fixtures.factories import Actor

API = "/api/v1"


@dataclass(frozen=True)
class Synced:
    name: str  # the operationId of the list
    model: str  # the table's ORM model in salesplan.models
    item: str  # the path of one row, "{id}" for its id

    async def list_path(self, client: httpx.AsyncClient, actor: Actor) -> str:
        if self.name == "listAccountContacts":
            return f"/accounts/{await _account_of(client, actor)}/contacts"
        return {
            "listAccounts": "/accounts",
            "listContacts": "/contacts",
            "listOpportunities": "/opportunities",
            "listLeads": "/leads",
            "listPlans": "/plans",
        }[self.name]

    async def create(self, client: httpx.AsyncClient, actor: Actor, label: str) -> dict[str, Any]:
        if self.name in ("listAccountContacts", "listContacts"):
            path, body = (
                f"/accounts/{await _account_of(client, actor)}/contacts",
                {"firstName": label},
            )
        elif self.name == "listOpportunities":
            path = "/opportunities"
            body = {"accountId": await _account_of(client, actor), "name": label}
        elif self.name == "listLeads":
            path, body = "/leads", {"firstName": label}
        elif self.name == "listPlans":
            path, body = "/plans", {"name": label, "entityType": "USER"}
        else:
            path, body = "/accounts", {"name": label}
        resp = await client.post(API + path, json=body, headers=actor.in_org())
        assert resp.status_code == 201, resp.text
        return resp.json()  # type: ignore[no-any-return]

    async def change(
        self, client: httpx.AsyncClient, actor: Actor, row_id: str, label: str
    ) -> dict[str, Any]:
        field = (
            "name"
            if self.name in ("listAccounts", "listOpportunities", "listPlans")
            else "firstName"
        )
        path = API + self.item.format(id=row_id)
        resp = await client.patch(path, json={field: label}, headers=actor.in_org())
        assert resp.status_code == 200, resp.text
        return resp.json()  # type: ignore[no-any-return]

    async def archive(self, client: httpx.AsyncClient, actor: Actor, row_id: str) -> None:
        resp = await client.delete(API + self.item.format(id=row_id), headers=actor.in_org())
        assert resp.status_code == 204, resp.text


async def _account_of(client: httpx.AsyncClient, actor: Actor) -> str:
    """The actor's one account named "Sync parent" (made on first use)."""
    found = await client.get(
        API + "/accounts", params={"crmId": "sync-parent"}, headers=actor.in_org()
    )
    if found.json()["data"]:
        return str(found.json()["data"][0]["id"])
    resp = await client.post(
        API + "/accounts",
        json={"name": "Sync parent", "crmId": "sync-parent"},
        headers=actor.in_org(),
    )
    assert resp.status_code == 201, resp.text
    return str(resp.json()["id"])


LISTS = [
    Synced("listAccounts", "Account", "/accounts/{id}"),
    Synced("listAccountContacts", "Contact", "/contacts/{id}"),
    Synced("listContacts", "Contact", "/contacts/{id}"),
    Synced("listOpportunities", "Opportunity", "/opportunities/{id}"),
    Synced("listLeads", "Lead", "/leads/{id}"),
    Synced("listPlans", "Plan", "/plans/{id}"),
]


def instant(wire: str) -> datetime:
    return datetime.fromisoformat(wire.replace("Z", "+00:00"))


def wire(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def after(wire_value: str) -> str:
    """The instant one microsecond after a wire `updatedAt` (the smallest step both engines
    store)."""
    return wire(instant(wire_value) + timedelta(microseconds=1))


async def walk(
    client: httpx.AsyncClient, actor: Actor, path: str, mode: str, size: int, **params: Any
) -> list[dict[str, Any]]:
    """Every row of the list, page after page: by cursor (`limit`, `nextCursor`) or by page
    (`page`, `pageSize`)."""
    rows: list[dict[str, Any]] = []
    query: dict[str, Any] = dict(params)
    if mode == "cursor":
        query["limit"] = size
    else:
        query.update(page=1, pageSize=size)
    for _ in range(1000):
        resp = await client.get(API + path, params=query, headers=actor.in_org())
        assert resp.status_code == 200, resp.text
        body = resp.json()
        rows += body["data"]
        if not body["pagination"]["hasNextPage"]:
            return rows
        if mode == "cursor":
            query["cursor"] = body["pagination"]["nextCursor"]
        else:
            query["page"] += 1
    raise AssertionError("the list never ended")
