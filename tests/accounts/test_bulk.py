"""bulkCreateAccounts: 207 with a result per row, valid rows created, bounded queries."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event

from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_org, make_user


async def bulk(client, actor, rows: list[Any]):  # type: ignore[no-untyped-def]
    return await client.post(
        "/api/v1/accounts/bulk", json={"accounts": rows}, headers=actor.headers
    )


@contextmanager
def count_queries(app: Any) -> Iterator[list[str]]:
    statements: list[str] = []

    def before(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
        statements.append(statement)

    engine = app.state.engine.sync_engine
    event.listen(engine, "before_cursor_execute", before)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", before)


async def test_bulk_create_answers_207_with_one_result_per_row(client, actor) -> None:
    resp = await bulk(client, actor, [{"name": "One", "crmId": "B-1"}, {"name": "Two"}])
    assert resp.status_code == 207
    body = resp.json()
    assert set(body) == {"results", "created", "failed"}
    assert body["created"] == 2
    assert body["failed"] == 0
    assert [r["index"] for r in body["results"]] == [0, 1]
    assert all(
        r["status"] == 201 and set(r) == {"index", "status", "data"} for r in body["results"]
    )
    first = body["results"][0]["data"]
    got = await client.get(f"/api/v1/accounts/{first['id']}", headers=actor.headers)
    assert got.json() == first


async def test_bulk_rows_get_their_default_buying_groups(client, actor) -> None:
    body = (await bulk(client, actor, [{"name": "Bulk Co"}])).json()
    account_id = body["results"][0]["data"]["id"]
    groups = await client.get(f"/api/v1/accounts/{account_id}/buying-groups", headers=actor.headers)
    assert [(g["name"], g["isDefault"]) for g in groups.json()["data"]] == [
        ("Bulk Co Default Plan", True)
    ]


async def test_bulk_valid_rows_are_created_when_others_fail(client, actor, db) -> None:
    stranger = await make_user(db, await make_org(db))
    await client.post(
        "/api/v1/accounts", json={"name": "Existing", "crmId": "DB-DUP"}, headers=actor.headers
    )
    rows = [
        {"name": "Good"},
        {"name": ""},
        {"name": "Dup in DB", "crmId": "DB-DUP"},
        {"name": "First", "crmId": "BATCH-DUP"},
        {"name": "Second", "crmId": "BATCH-DUP"},
        {"name": "Bad owner", "ownerId": str(stranger.id)},
        {"name": ["not", "a", "name"]},  # a non-object item is a 400 for the call (issue 27)
        {"name": "Unknown", "extra": True},
    ]
    body = (await bulk(client, actor, rows)).json()
    statuses = [r["status"] for r in body["results"]]
    assert statuses == [201, 400, 409, 201, 409, 422, 400, 400]
    assert body["created"] == 2
    assert body["failed"] == 6
    assert body["results"][1]["error"]["code"] == "validation_error"
    assert body["results"][1]["error"]["details"]["errors"][0]["location"][:3] == [
        "body",
        "accounts",
        1,
    ]
    assert body["results"][2]["error"]["code"] == "conflict"
    assert body["results"][5]["error"]["code"] == "unprocessable"
    assert body["results"][5]["error"]["details"]["field"] == "ownerId"
    assert set(body["results"][2]) == {"index", "status", "error"}
    listed = await client.get("/api/v1/accounts", headers=actor.headers)
    assert sorted(a["name"] for a in listed.json()["data"]) == ["Existing", "First", "Good"]


async def test_bulk_needs_1_to_1000_rows(client, actor) -> None:
    assert_envelope(await bulk(client, actor, []), 400, "validation_error")
    too_many = [{"name": f"A{i}"} for i in range(1001)]
    assert_envelope(await bulk(client, actor, too_many), 400, "validation_error")
    resp = await client.post("/api/v1/accounts/bulk", json={}, headers=actor.headers)
    assert_envelope(resp, 400, "validation_error")


async def test_bulk_accepts_1000_rows(client, actor) -> None:
    rows = [{"name": f"Row {i}", "crmId": f"K-{i}"} for i in range(1000)]
    body = (await bulk(client, actor, rows)).json()
    assert body["created"] == 1000


async def test_bulk_does_a_bounded_number_of_queries(app, client, actor) -> None:
    def rows(prefix: str, n: int) -> list[dict[str, Any]]:
        return [
            {"name": f"{prefix} {i}", "crmId": f"{prefix}-{i}", "ownerId": str(actor.user.id)}
            for i in range(n)
        ]

    # The key's first use records last_used_at once: spend it before counting.
    await client.get("/api/v1/accounts", headers=actor.headers)
    with count_queries(app) as small:
        assert (await bulk(client, actor, rows("S", 10))).json()["created"] == 10
    with count_queries(app) as large:
        assert (await bulk(client, actor, rows("L", 200))).json()["created"] == 200
    assert len(small) == len(large)
    assert len(large) < 20
