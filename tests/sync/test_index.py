"""updatedSince pages are index range scans on PostgreSQL: the (organization_id, updated_at, id)
indexes of migration 20261125_sync serve the filter, the order and the cursor's keyset, with no
sort of the matching rows, in page and cursor mode, archived rows included or not.

Every organization-wide list, for every `sortBy` and both orders, pages by cursor on an index
range in page order, on both engines: the statements the list actually runs (captured on their
way to the driver) are planned as a scan of an index of (organization[, user], sort key, id) with
no sort of the matching rows, so that a cursor page costs the same at 1,000 rows as at 50,000
(issue 44; `bench/lists.py` measures it). Checked for the list's first page, a page after a
cursor with a value, and, for a key that may be missing, a page after a cursor without one and
the page that crosses from one section to the other (kit.pagination).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from typing import Any

import httpx
import pytest
from fastapi.routing import APIRoute
from sqlalchemy import event, select

from salesplan.accounts import repository as accounts
from salesplan.kit.driver import DriverStatement
from salesplan.kit.pagination import _page_statements
from salesplan.models.crm import Contact, Lead, Opportunity
from salesplan.plans.repository import _list_query
from tests.conftest import need_service
from tests.fixtures.factories import Actor

SINCE = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)


def _generic(model: Any, include_archived: bool) -> tuple[Any, Any, Any]:
    stmt = select(model).where(model.organization_id == uuid.uuid4())
    if not include_archived:
        stmt = stmt.where(model.archived_at.is_(None))
    return stmt.where(model.updated_at >= SINCE), model.updated_at, model.id


def _statements(include_archived: bool) -> dict[str, tuple[Any, Any, Any]]:
    plans = _list_query(
        archived_only=False,
        include_archived=include_archived,
        search=False,
        entity_type=False,
        on_account=False,
        entity_id=False,
        account_id=False,
        updated_since=True,
    )
    return {
        "accounts": (
            accounts._query(include_archived, False, False, False, True),
            accounts.A.updated_at,
            accounts.A.id,
        ),
        "plans": (plans, plans.selected_columns.updated_at, plans.selected_columns.id),
        "contacts": _generic(Contact, include_archived),
        "opportunities": _generic(Opportunity, include_archived),
        "leads": _generic(Lead, include_archived),
    }


@pytest.mark.parametrize("include_archived", [False, True])
@pytest.mark.parametrize("mode", ["cursor", "page"])
async def test_updated_since_pages_are_index_range_scans(db, is_postgres, include_archived, mode):
    if not is_postgres:
        need_service("PostgreSQL", "the plan checked is PostgreSQL's")
    conn = await db.connection()
    await conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
    # The planner's choice on a test table of a few rows follows its statistics of the moment
    # (an autovacuum ANALYZE mid-suite made it sort the plans of another index): with sorts
    # priced out too, the plan below is the index's if the index can serve the filter, the
    # order and the keyset, and still shows a Sort if it cannot.
    await conn.exec_driver_sql("SET LOCAL enable_sort = off")
    raw = (await conn.get_raw_connection()).driver_connection
    for table, (stmt, sort_col, id_col) in _statements(include_archived).items():
        for desc in (False, True):
            rows, _ = _page_statements(stmt, sort_col, id_col, desc, mode, mode == "cursor")
            compiled = rows.compile(dialect=conn.dialect)
            values = {
                **compiled.params,
                "organization_id": uuid.uuid4(),
                "updated_since": SINCE,
                "_after_value": SINCE,
                "_after_id": uuid.uuid4(),
                "_limit": 51,
                "_offset": 50,
            }
            args = [values[name] for name in compiled.positiontup or ()]
            plan = "\n".join(r[0] for r in await raw.fetch("EXPLAIN " + str(compiled), *args))
            assert f"ix_{table}_org_updated" in plan, (table, plan)
            # The page's rows come in index order: no Sort node.
            assert "Sort" not in plan, (table, plan)


# Lists that are not an organization's rows: the caller's own organizations (memberships), and
# needs-attention (a union of the feed's sources, each part on its own index: feed/repository).
NOT_ORGANIZATION_ROWS = {"listOrganizations", "listNeedsAttention"}

SAMPLE: dict[str, Any] = {
    "createdAt": datetime(2026, 6, 1, tzinfo=UTC),
    "updatedAt": datetime(2026, 6, 1, tzinfo=UTC),
    "start": datetime(2026, 6, 1, tzinfo=UTC),
    "receivedAt": datetime(2026, 6, 1, tzinfo=UTC),
    "closeDate": date(2026, 6, 1),
}


def organization_lists(app: Any) -> Iterator[tuple[str, str, tuple[str, ...]]]:
    """(operationId, path, sortBy values) of every GET list route without path parameters."""
    seen = set()
    for route in app.routes:
        if not isinstance(route, APIRoute) or "GET" not in route.methods or "{" in route.path:
            continue
        stack = [route.dependant]
        while stack:
            dep = stack.pop()
            stack += dep.dependencies
            sortable = getattr(dep.call, "sortable", None)
            name = route.operation_id
            if sortable and name not in NOT_ORGANIZATION_ROWS and name not in seen:
                seen.add(name)
                yield str(name), route.path, tuple(sortable)


@contextmanager
def captured(app: Any) -> Iterator[list[tuple[str, Any]]]:
    """The (SQL, parameters) of every list page statement run meanwhile (those selecting the
    sort key), through SQLAlchemy or straight on the driver (kit.driver)."""
    found: list[tuple[str, Any]] = []
    engine = app.state.engine.sync_engine

    def on_execute(conn: Any, cursor: Any, sql: str, params: Any, *_: Any) -> None:
        if "_sort_key" in sql:
            found.append((sql, params))

    original = DriverStatement._compiled

    def compiled(self: DriverStatement, conn: Any) -> Any:
        out = original(self, conn)
        if "_sort_key" in out.sql:
            found.append((out.sql, self))
        return out

    event.listen(engine, "before_cursor_execute", on_execute)
    DriverStatement._compiled = compiled  # type: ignore[method-assign]
    try:
        yield found
    finally:
        DriverStatement._compiled = original  # type: ignore[method-assign]
        event.remove(engine, "before_cursor_execute", on_execute)


async def plan_of(db: Any, is_postgres: bool, sql: str) -> str:
    """The plan of `sql` as the list runs it: on PostgreSQL the generic plan of the prepared
    statement (the one a statement the driver keeps prepared ends up with), with sequential
    scans and sorts priced out, so that the plan is an index's if an index can serve the
    filter, the order and the keyset (a test table of a few rows plans anything otherwise)."""
    conn = await db.connection()
    raw = (await conn.get_raw_connection()).driver_connection
    if not is_postgres:
        rows = await raw.execute_fetchall("EXPLAIN QUERY PLAN " + sql, [None] * sql.count("?"))
        return "\n".join(str(r[-1]) for r in rows)
    if "%s" in sql:  # SQLAlchemy's format paramstyle, numbered by its asyncpg adapter
        parts = sql.split("%s")
        sql = "".join(f"{p}${i + 1}" for i, p in enumerate(parts[:-1])) + parts[-1]
    # In the session's transaction (SET LOCAL), which SQLAlchemy begins on its first statement.
    for setting in (
        "plan_cache_mode = force_generic_plan",
        "enable_seqscan = off",
        "enable_sort = off",
    ):
        await conn.exec_driver_sql(f"SET LOCAL {setting}")
    types = [param.name for param in (await raw.prepare(sql)).get_parameters()]
    await raw.execute("PREPARE list_page_plan AS " + sql)
    try:
        nulls = ", ".join(f"NULL::{t}" for t in types)
        rows = await raw.fetch(f"EXPLAIN EXECUTE list_page_plan({nulls})")
    finally:
        await raw.execute("DEALLOCATE list_page_plan")
    return "\n".join(r[0] for r in rows)


def problems(plan: str, is_postgres: bool) -> list[str]:
    """What keeps the plan from being one index range in page order."""
    found = []
    if is_postgres:
        if "Sort" in plan:
            found.append("sorts the rows")
        if "Seq Scan" in plan or "Index" not in plan:
            found.append("reads the table, not an index")
        for line in plan.splitlines():
            # The organization, the user, the sort key and the keyset belong to the index's
            # range (Index Cond); a parameter left to a Filter means rows read and dropped.
            if "Filter:" in line and "$" in line:
                found.append(f"filters by a parameter: {line.strip()}")
    else:
        if "TEMP B-TREE" in plan:
            found.append("sorts the rows")
        if any(line.startswith("SCAN") for line in plan.splitlines()):
            found.append("scans a whole table or index")
    return found


def cursor(app: Any, path: str, org: uuid.UUID, sort: str, order: str, value: Any) -> str:
    codec = app.state.cursor_codec._bound(lambda: f"{path}\n{org}")
    return str(codec.encode(sort, order, value, uuid.uuid4()))


async def test_every_list_pages_by_cursor_on_an_index_range(
    app: Any, client: httpx.AsyncClient, actor: Actor, db: Any, is_postgres: bool
) -> None:
    lists = list(organization_lists(app))
    assert len(lists) >= 16, lists
    failures = []
    for name, path, sorts in lists:
        for sort in sorts:
            for order in ("asc", "desc"):
                queries: list[dict[str, Any]] = [{}]
                for value in (SAMPLE.get(sort, "m"), None):
                    queries.append({"cursor": cursor(app, path, actor.org.id, sort, order, value)})
                await app.state.rate_limiter.store.reset()  # ~8 requests a sort, 60 a minute
                with captured(app) as statements:
                    for extra in queries:
                        resp = await client.get(
                            path,
                            params={"limit": 50, "sortBy": sort, "order": order} | extra,
                            headers=actor.headers,
                        )
                        assert resp.status_code == 200, (name, sort, resp.text)
                assert statements, (name, sort, "no list statement ran")
                for sql in dict.fromkeys(sql for sql, _ in statements):
                    plan = await plan_of(db, is_postgres, sql)
                    if wrong := problems(plan, is_postgres):
                        failures.append(f"{name} sortBy={sort} {order} {wrong}:\n{sql}\n{plan}")
    assert not failures, "\n\n".join(failures)
