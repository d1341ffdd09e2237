"""A cursor walk sorted by a key that may be missing (a contact's `lastName`, a lead's `email`, an
opportunity's `closeDate`) visits every row once, in the order of one big page: the rows without
the key sort as the largest value on both engines (last ascending, first descending), whether
the NULL rows start a page, end it or fill it (contract §4: keyset on the sort key and `id`)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.fixtures.factories import Actor
from tests.sync.lists import API, walk

# (list path, sortBy, the field on the wire, how a row is made with and without it)
CASES = [
    ("/contacts", "lastName", "lastName", "contact"),
    ("/contacts", "email", "email", "contact"),
    ("/leads", "lastName", "lastName", "lead"),
    ("/leads", "email", "email", "lead"),
    ("/opportunities", "closeDate", "closeDate", "opportunity"),
]


async def _rows(client: httpx.AsyncClient, actor: Actor, kind: str, field: str) -> None:
    """Seven rows, four without the sort key and three with it (out of insertion order)."""
    account = (
        await client.post(API + "/accounts", json={"name": "Parent"}, headers=actor.headers)
    ).json()["id"]
    values = {
        "lastName": ["Young", "Adams", "Moss"],
        "email": ["z@example.com", "a@example.com", "m@example.com"],
        "closeDate": ["2027-05-01", "2026-12-01", "2027-01-15"],
    }[field]
    for n in range(7):
        body: dict[str, Any] = {}
        if n % 2:
            body[field] = values[n // 2]
        if kind == "contact":
            path = f"/accounts/{account}/contacts"
            body["firstName"] = f"row {n}"
        elif kind == "lead":
            path = "/leads"
            body["firstName"] = f"row {n}"
        else:
            path = "/opportunities"
            body |= {"name": f"row {n}", "accountId": account}
        resp = await client.post(API + path, json=body, headers=actor.headers)
        assert resp.status_code == 201, resp.text


@pytest.mark.parametrize(("path", "sort_by", "field", "kind"), CASES)
async def test_a_cursor_walk_over_missing_sort_keys_visits_every_row_once(
    client: httpx.AsyncClient, actor: Actor, path: str, sort_by: str, field: str, kind: str
) -> None:
    await _rows(client, actor, kind, field)
    for order in ("asc", "desc"):
        whole = await walk(client, actor, path, "page", 200, sortBy=sort_by, order=order)
        keys = [row[field] for row in whole]
        present = [k for k in keys if k is not None]
        # NULL is the largest key: last ascending, first descending; the others in order.
        assert present == sorted(present, reverse=order == "desc"), keys
        nulls_at = [i for i, k in enumerate(keys) if k is None]
        assert nulls_at == ([3, 4, 5, 6] if order == "asc" else [0, 1, 2, 3]), keys
        for size in (1, 2, 3, 4):
            walked = await walk(client, actor, path, "cursor", size, sortBy=sort_by, order=order)
            assert [row["id"] for row in walked] == [row["id"] for row in whole], (order, size)
