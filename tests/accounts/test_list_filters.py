"""listAccounts: every filter alone and together, in both pagination modes, on statements built
once per combination of filters and reused with other values (accounts/repository.py)."""

from __future__ import annotations

import httpx

from tests.fixtures.factories import Actor, make_actor, make_user

URL = "/api/v1/accounts"


async def names(client: httpx.AsyncClient, actor: Actor, **params: object) -> list[str]:
    resp = await client.get(URL, params=params, headers=actor.headers)
    assert resp.status_code == 200, resp.text
    return [a["name"] for a in resp.json()["data"]]


async def add(client: httpx.AsyncClient, actor: Actor, **body: object) -> dict:
    resp = await client.post(URL, json=body, headers=actor.headers)
    assert resp.status_code == 201, resp.text
    return resp.json()


async def test_filters_alone_and_together_with_changing_values(client, actor, db) -> None:
    owner = await make_user(db, actor.org)
    other = await make_actor(db)
    await add(client, actor, name="Alpha 100%", domain="alpha.io", crmId="C-1")
    await add(client, actor, name="Beta", domain="beta_x.io", crmId="C-2", ownerId=str(owner.id))
    gone = await add(client, actor, name="Gamma", domain="gamma.io", crmId="C-3")
    await add(client, actor, name="Delta", domain="alpha-delta.io", ownerId=str(owner.id))
    await add(client, other, name="Alpha elsewhere", domain="alpha.io", crmId="C-1")
    assert (await client.delete(f"{URL}/{gone['id']}", headers=actor.headers)).status_code == 204

    assert await names(client, actor, sortBy="name") == ["Alpha 100%", "Beta", "Delta"]
    assert await names(client, actor, sortBy="name", includeArchived="true") == [
        "Alpha 100%",
        "Beta",
        "Delta",
        "Gamma",
    ]
    # The same statement shapes again, other values: nothing of the first values sticks.
    assert await names(client, actor, crmId="C-1") == ["Alpha 100%"]
    assert await names(client, actor, crmId="C-2") == ["Beta"]
    assert await names(client, actor, crmId="C-3") == []
    assert await names(client, actor, crmId="C-3", includeArchived="true") == ["Gamma"]
    assert await names(client, actor, ownerId=str(owner.id), sortBy="name") == ["Beta", "Delta"]
    # Created without ownerId by a user's key: the caller's (issue 29, REST and MCP alike).
    assert await names(client, actor, ownerId=str(actor.user.id)) == ["Alpha 100%"]
    # search: name or domain, case-insensitive; LIKE wildcards are literal characters.
    assert await names(client, actor, search="ALPHA", sortBy="name") == ["Alpha 100%", "Delta"]
    assert await names(client, actor, search="beta") == ["Beta"]
    assert await names(client, actor, search="%") == ["Alpha 100%"]
    assert await names(client, actor, search="_") == ["Beta"]
    assert await names(client, actor, search="alpha", ownerId=str(owner.id)) == ["Delta"]
    assert await names(client, actor, search="alpha", crmId="C-1") == ["Alpha 100%"]
    # Another organization sees only its own, through the same statements.
    assert await names(client, other, crmId="C-1") == ["Alpha elsewhere"]
    assert await names(client, other, search="alpha") == ["Alpha elsewhere"]


async def test_both_modes_walk_every_account_once(client, actor) -> None:
    for i in range(7):
        await add(client, actor, name=f"Account {i}", crmId=f"W-{i}")
    for order in ("asc", "desc"):
        seen: list[str] = []
        params: dict[str, object] = {"limit": 3, "sortBy": "name", "order": order}
        while True:
            body = (await client.get(URL, params=params, headers=actor.headers)).json()
            seen += [a["name"] for a in body["data"]]
            cursor = body["pagination"].get("nextCursor")
            if not cursor:
                break
            params = {**params, "cursor": cursor}
        expected = sorted(f"Account {i}" for i in range(7))
        assert seen == (expected if order == "asc" else expected[::-1])
        pages = []
        for page in (1, 2, 3, 4):
            resp = await client.get(
                URL,
                params={"pageSize": 3, "page": page, "sortBy": "name", "order": order},
                headers=actor.headers,
            )
            body = resp.json()
            assert body["pagination"]["totalCount"] == 7
            pages.append([a["name"] for a in body["data"]])
        assert [len(p) for p in pages] == [3, 3, 1, 0]
        assert [name for p in pages for name in p] == seen


async def test_pages_run_straight_on_the_driver(client, actor, app) -> None:
    """A list page's statements (the count and the rows) go to the driver directly
    (kit/driver.py: asyncpg on PostgreSQL, aiosqlite on SQLite), not through SQLAlchemy's
    execution, and answer what SQLAlchemy would: ids, date-times and the cursor."""
    from sqlalchemy import event

    made = [await add(client, actor, name=f"Driver {i}", annualRevenue=1.5) for i in range(3)]
    statements: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany) -> None:
        statements.append(statement)

    engine = app.state.engine.sync_engine
    event.listen(engine, "before_cursor_execute", record)
    try:
        params = {"sortBy": "name"}
        page = await client.get(URL, params={**params, "pageSize": 2}, headers=actor.headers)
        first = await client.get(URL, params={**params, "limit": 2}, headers=actor.headers)
        cursor = first.json()["pagination"]["nextCursor"]
        rest = await client.get(URL, params={**params, "cursor": cursor}, headers=actor.headers)
        one = await client.get(f"{URL}/{made[1]['id']}", headers=actor.headers)
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert page.json()["pagination"]["totalCount"] == 3
    assert page.json()["data"] == made[:2]
    assert first.json()["data"] == made[:2]
    assert rest.json()["data"] == made[2:]
    assert one.json() == made[1]
    assert [s for s in statements if "FROM accounts" in s] == []
