"""Defects the long schemathesis pass (`make fuzz`) found, each pinned by a plain test."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "query", ["to=0001-01-05", "to=9999-12-31", "from=9999-12-30&to=9999-12-31"]
)
async def test_analytics_dates_at_the_ends_of_the_calendar_are_a_400_not_a_500(
    client, actor, query: str
) -> None:
    resp = await client.get(f"/api/v1/engage/analytics?{query}", headers=actor.in_org())
    assert resp.status_code == 400, resp.text
    assert resp.json()["error"]["code"] == "validation_error"


async def _document(client) -> dict:
    resp = await client.get("/api/v1/openapi.json")
    assert resp.status_code == 200
    return resp.json()


async def test_an_empty_cursor_with_page_is_no_cursor_on_every_list(client, actor, db) -> None:
    """Issue 27 item 9: `cursor=` (empty) with `page` was refused on 29 lists; an empty cursor
    is no cursor, so page mode (contract §4)."""
    doc = await _document(client)
    lists = [
        path
        for path, item in doc["paths"].items()
        if "{" not in path
        and {"cursor", "page"} <= {p["name"] for p in item.get("get", {}).get("parameters", [])}
        and not any(p.get("required") for p in item["get"].get("parameters", []))
    ]
    assert len(lists) >= 15, lists
    for path in lists:
        resp = await client.get(f"{path}?cursor=&page=1&pageSize=5", headers=actor.in_org())
        assert resp.status_code == 200, f"{path}: {resp.text}"
        pagination = resp.json()["pagination"]
        assert pagination["page"] == 1 and pagination["pageSize"] == 5, path
    # The inbox has a parser of its own (cursor mode by default, contract §11).
    from tests.fixtures.crm import make_account

    account, _ = await make_account(db, actor.org.id)
    resp = await client.get(
        f"/api/v1/accounts/{account.id}/inbox?cursor=&page=1", headers=actor.in_org()
    )
    assert resp.status_code == 200, resp.text
    assert resp.json()["pagination"]["page"] == 1
    # A real cursor with page is still the contract's 400.
    resp = await client.get("/api/v1/accounts?cursor=abc&page=1", headers=actor.in_org())
    assert resp.status_code == 400


@pytest.mark.parametrize(
    "query",
    [
        "to=0",
        "from=0",
        "to=1700000000",
        "to=2026-01-05T00:00:00",
        "to=%D9%A2%D9%A0%D9%A2%D9%A6-01-05",  # Arabic-Indic digits
        "to=2026-02-30",
    ],
)
async def test_analytics_dates_must_be_real_dates(client, actor, query: str) -> None:
    """Issue 27 item 9: `to=0` was taken as 1970-01-01 (pydantic reads a number as Unix
    seconds); contract §1: dates are `YYYY-MM-DD`."""
    resp = await client.get(f"/api/v1/engage/analytics?{query}", headers=actor.in_org())
    assert resp.status_code == 400, resp.text
    error = resp.json()["error"]
    assert error["code"] == "validation_error"
    assert error["details"]["errors"][0]["location"][0] == "query"


async def test_dates_are_real_dates_in_every_query_and_body(client, actor) -> None:
    """The same date type everywhere: plans' `dueBefore`, bodies' `closeDate`/`targetDate`."""
    resp = await client.get("/api/v1/tasks?dueBefore=0", headers=actor.in_org())
    assert resp.status_code == 400, resp.text
    assert resp.json()["error"]["details"]["errors"][0]["location"] == ["query", "dueBefore"]
    resp = await client.post(
        "/api/v1/opportunities",
        json={"name": "Deal", "closeDate": 0},
        headers=actor.in_org(),
    )
    assert resp.status_code == 400, resp.text
    locations = [e["location"] for e in resp.json()["error"]["details"]["errors"]]
    assert ["body", "closeDate"] in locations
    ok = await client.get(
        "/api/v1/engage/analytics?from=2026-01-01&to=2026-01-31", headers=actor.in_org()
    )
    assert ok.status_code == 200, ok.text


@pytest.mark.parametrize(
    ("path", "key"),
    [("/api/v1/accounts/bulk", "accounts"), ("/api/v1/engage/campaigns/bulk", "campaigns")],
)
@pytest.mark.parametrize("item", [5, "x", None, [], True])
async def test_a_bulk_item_that_is_not_an_object_is_a_400_for_the_call(
    client, actor, path: str, key: str, item
) -> None:
    """Issue 27 item 9: bulk endpoints answered 207 to non-object items. A row is an object
    (the document says so); an item that is not one makes the request invalid, and nothing is
    created (a valid object row beside it included)."""
    rows = [{"name": "Valid row"}, item]
    resp = await client.post(path, json={key: rows}, headers=actor.in_org())
    assert resp.status_code == 400, resp.text
    error = resp.json()["error"]
    assert error["code"] == "validation_error"
    assert ["body", key, 1] in [e["location"][:3] for e in error["details"]["errors"]]
    listed = await client.get(path.rsplit("/", 1)[0], headers=actor.in_org())
    assert listed.json()["data"] == []


async def test_an_invalid_object_row_is_still_that_rows_400_in_the_207(client, actor) -> None:
    resp = await client.post(
        "/api/v1/accounts/bulk",
        json={"accounts": [{"name": "Valid row"}, {"name": 5}]},
        headers=actor.in_org(),
    )
    assert resp.status_code == 207, resp.text
    body = resp.json()
    assert [r["status"] for r in body["results"]] == [201, 400]
    assert body["created"] == 1 and body["failed"] == 1


@pytest.mark.parametrize("url", ["http://[::1/cal/", "http://[not-an-address]/cal/", "https://[/"])
async def test_a_calendar_url_with_a_broken_ipv6_bracket_is_refused_not_a_500(
    client, actor, url: str
) -> None:
    """The stateful pass sent a connection URL that `urlsplit` cannot read ("Invalid IPv6
    URL"): the CalDAV client raised a ValueError past the provider's error mapping (500)."""
    resp = await client.post(
        "/api/v1/calendar/connections",
        headers=actor.in_org(),
        json={"url": url, "username": "alice", "password": "alice-pass"},
    )
    assert resp.status_code in (400, 422), resp.text
    assert resp.json()["error"]["code"] in ("validation_error", "unprocessable")


@pytest.mark.parametrize("bound", ["from", "to"])
@pytest.mark.parametrize("value", ["0", "1700000000", "1.5", "-3"])
async def test_calendar_date_times_are_never_unix_seconds(client, actor, bound, value) -> None:
    """Issue 27 item 9's `to=0` was taken as 1970-01-01 for dates; the calendar's date-times
    (contract §11) had the same hole: a number is a 400, an ISO 8601 date-time is read."""
    resp = await client.get(f"/api/v1/calendar/events?{bound}={value}", headers=actor.in_org())
    assert resp.status_code == 400, resp.text
    assert resp.json()["error"]["code"] == "validation_error"
    ok = await client.get(
        f"/api/v1/calendar/events?{bound}=2026-11-25T09:00:00Z", headers=actor.in_org()
    )
    assert ok.status_code == 200, ok.text
