"""Incremental sync (issue 31): `updatedSince` on listAccounts, listAccountContacts, listContacts,
listOpportunities, listLeads and listPlans: rows with `updatedAt >= updatedSince`, sorted by
`updatedAt` then `id` unless `sortBy` is given, archived rows with `includeArchived=true`,
paging that neither skips nor repeats a row when many share one `updatedAt`."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from sqlalchemy import update

import salesplan.models as models
from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_actor
from tests.sync.lists import API, LISTS, Synced, after, instant, walk, wire

pytestmark = pytest.mark.parametrize("synced", LISTS, ids=[s.name for s in LISTS])


async def test_updated_since_keeps_rows_changed_at_or_after_it(client, actor, db, synced: Synced):
    path = await synced.list_path(client, actor)
    a = await synced.create(client, actor, "a")
    b = await synced.create(client, actor, "b")
    c = await synced.create(client, actor, "c")
    other = await make_actor(db)
    await synced.create(client, other, "foreign")

    async def ids(**params: object) -> list[str]:
        resp = await client.get(API + path, params=params, headers=actor.in_org())
        assert resp.status_code == 200, resp.text
        return [row["id"] for row in resp.json()["data"]]

    # >= : the row stamped exactly at updatedSince is in; one microsecond later it is not.
    assert await ids(updatedSince=b["updatedAt"]) == [b["id"], c["id"]]
    assert await ids(updatedSince=after(b["updatedAt"])) == [c["id"]]
    assert await ids(updatedSince=after(c["updatedAt"])) == []
    # Another offset names the same instant.
    since = instant(b["updatedAt"]).astimezone(datetime.now().astimezone().tzinfo)
    assert await ids(updatedSince=since.isoformat()) == [b["id"], c["id"]]

    # A change moves the row to the end of the updatedAt order (the default with updatedSince).
    a = await synced.change(client, actor, a["id"], "a2")
    assert await ids(updatedSince=after(c["updatedAt"])) == [a["id"]]
    assert await ids(updatedSince=b["updatedAt"]) == [b["id"], c["id"], a["id"]]
    # An explicit sort is kept; so is an explicit order.
    assert await ids(updatedSince=b["updatedAt"], sortBy="createdAt") == [a["id"], b["id"], c["id"]]
    assert await ids(updatedSince=b["updatedAt"], order="desc") == [a["id"], c["id"], b["id"]]

    # Archived rows: gone from the default list, back (with archivedAt) with includeArchived.
    await synced.archive(client, actor, b["id"])
    assert await ids(updatedSince=b["updatedAt"]) == [c["id"], a["id"]]
    resp = await client.get(
        API + path,
        params={"updatedSince": after(a["updatedAt"]), "includeArchived": "true"},
        headers=actor.in_org(),
    )
    archived = resp.json()["data"]
    assert [row["id"] for row in archived] == [b["id"]]
    assert archived[0]["updatedAt"] > a["updatedAt"]
    if "archivedAt" in archived[0]:
        assert archived[0]["archivedAt"] is not None
    # Without updatedSince the list is as before (createdAt order), foreign rows never in it.
    assert await ids() == [a["id"], c["id"]]
    assert await ids(includeArchived="true") == [a["id"], b["id"], c["id"]]


@pytest.mark.parametrize("mode", ["cursor", "page"])
async def test_paging_through_rows_sharing_one_updated_at_skips_and_repeats_none(
    client, actor, db, synced: Synced, mode: str
):
    path = await synced.list_path(client, actor)
    before = await synced.create(client, actor, "before")
    rows = [await synced.create(client, actor, f"tied {i}") for i in range(11)]
    later = await synced.create(client, actor, "later")
    # Eleven rows stamped with one instant (as a bulk create stamps its rows), between two others.
    tied = datetime(2030, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    model = getattr(models, synced.model)
    ids = [r["id"] for r in rows]
    await db.execute(
        update(model).where(model.id.in_([uuid.UUID(i) for i in ids])).values(updated_at=tied)
    )
    await db.execute(
        update(model)
        .where(model.id == uuid.UUID(later["id"]))
        .values(updated_at=datetime(2030, 1, 2, 3, 4, 6, tzinfo=UTC))
    )
    await db.commit()

    for order in ("asc", "desc"):
        seen = await walk(client, actor, path, mode, 4, updatedSince=wire(tied), order=order)
        expected = [*sorted(ids), later["id"]]  # updatedAt, then id
        if order == "desc":
            expected = expected[::-1]
        assert [r["id"] for r in seen] == expected
        assert all(r["updatedAt"] == wire(tied) for r in seen if r["id"] in ids)
    # The poller's loop: the last row's updatedAt as the next updatedSince sees that row again
    # and nothing new; the tied rows are not missed by starting at their instant.
    last = max(r["updatedAt"] for r in seen)
    again = await walk(client, actor, path, mode, 4, updatedSince=last)
    assert [r["id"] for r in again] == [later["id"]]
    assert before["id"] not in {r["id"] for r in seen}


@pytest.mark.parametrize(
    "value",
    [
        "yesterday",
        "0",
        "1700000000",
        "2026-11-25",  # a date alone
        "2026-11-25T09:00:00",  # no offset: not RFC 3339
        "2026-13-01T00:00:00Z",
        "9999-12-31T23:59:59-23:59",  # past year 9999 in UTC
        "0001-01-01T00:00:00+01:00",  # before year 1 in UTC
        "",
    ],
)
async def test_a_bad_updated_since_is_a_400(client, actor, synced: Synced, value: str):
    path = await synced.list_path(client, actor)
    resp = await client.get(API + path, params={"updatedSince": value}, headers=actor.in_org())
    assert_envelope(resp, 400, "validation_error")
    locations = [e["location"] for e in resp.json()["error"]["details"]["errors"]]
    assert ["query", "updatedSince"] in locations


async def test_a_cursor_of_the_updated_at_order_needs_that_order(client, actor, synced: Synced):
    path = await synced.list_path(client, actor)
    first = await synced.create(client, actor, "one")
    await synced.create(client, actor, "two")
    since = first["updatedAt"]
    resp = await client.get(
        API + path, params={"updatedSince": since, "limit": 1}, headers=actor.in_org()
    )
    cursor = resp.json()["pagination"]["nextCursor"]
    # The same cursor with the same query continues; without updatedSince the list is in
    # createdAt order, which the cursor was not made for.
    ok = await client.get(
        API + path,
        params={"updatedSince": since, "limit": 1, "cursor": cursor},
        headers=actor.in_org(),
    )
    assert ok.status_code == 200 and len(ok.json()["data"]) == 1
    other = await client.get(
        API + path, params={"limit": 1, "cursor": cursor}, headers=actor.in_org()
    )
    assert_envelope(other, 400, "validation_error")


@pytest.mark.parametrize(
    "value",
    [
        "0001-01-01T00:00:00Z",
        "9999-12-31T23:59:59.999999Z",
        "0001-01-01T00:00:00-01:00",
        "9999-12-31T00:00:00+23:59",
        "2026-11-25t09:00:00z",  # RFC 3339 allows lower-case T and Z
        "2026-11-25T10:00:00.5+01:00",
    ],
)
async def test_every_rfc_3339_instant_in_range_is_read(client, actor, synced: Synced, value: str):
    path = await synced.list_path(client, actor)
    row = await synced.create(client, actor, "row")
    resp = await client.get(API + path, params={"updatedSince": value}, headers=actor.in_org())
    assert resp.status_code == 200, resp.text
    found = [r["id"] for r in resp.json()["data"]]
    assert found == ([row["id"]] if value.startswith(("0001", "2026")) else [])


async def test_a_row_changed_while_paging_by_cursor_costs_no_other_row(
    client, actor, synced: Synced
):
    """A change during the walk moves its row to the end of the updatedAt order: the keyset
    cursor then meets it again, and every other row still exactly once."""
    path = await synced.list_path(client, actor)
    rows = [await synced.create(client, actor, f"r{i}") for i in range(9)]
    since = rows[0]["updatedAt"]
    query: dict[str, object] = {"updatedSince": since, "limit": 3}
    seen: list[str] = []
    for step in range(10):
        body = (await client.get(API + path, params=query, headers=actor.in_org())).json()
        seen += [r["id"] for r in body["data"]]
        if step == 0:  # a row already read and one not yet read change
            await synced.change(client, actor, rows[1]["id"], "changed 1")
            await synced.change(client, actor, rows[5]["id"], "changed 5")
        if not body["pagination"]["hasNextPage"]:
            break
        query["cursor"] = body["pagination"]["nextCursor"]
    expected = [r["id"] for r in rows]
    assert set(seen) == set(expected)
    rest = [i for i in expected[3:] if i != expected[5]]
    assert seen == [*expected[:3], *rest, expected[1], expected[5]]
