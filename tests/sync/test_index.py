"""updatedSince pages are index range scans on PostgreSQL: the (organization_id, updated_at, id)
indexes of migration 20261125_sync serve the filter, the order and the cursor's keyset, with no
sort of the matching rows, in page and cursor mode, archived rows included or not."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import select

from salesplan.accounts import repository as accounts
from salesplan.kit.pagination import _page_statements
from salesplan.models.crm import Contact, Lead, Opportunity
from salesplan.plans.repository import _list_query
from tests.conftest import need_service

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
