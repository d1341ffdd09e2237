"""The one bulk-create algorithm (accounts, contacts): every row gets a result, in a fixed
number of queries whatever the row count.

A domain validates its rows and checks what they reference (one query per kind of reference),
recording each refused row with `fail`; it hands the rows left to `insert`, which refuses a
`crmId` already live in the organization or repeated earlier in the batch (one query), inserts
the rest in one statement (ON CONFLICT DO NOTHING, so that a `crmId` racing in from another
transaction becomes that row's 409 instead of failing the batch) and renders each created row.
`summary` is the 207 body: `{"results": [...], "created": n, "failed": m}`."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any, cast

from sqlalchemy import Table, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.kit.clock import utcnow
from salesplan.kit.events import RowEvent, emit
from salesplan.kit.ids import uuid7
from salesplan.kit.scoping import TenantScope, scoped


class BulkCreate:
    def __init__(
        self, session: AsyncSession, ctx: TenantScope, model: Any, what: str, count: int
    ) -> None:
        self.session = session
        self.ctx = ctx
        self.model = model
        self.what = what  # "account": the 409 names the record
        self.results: list[dict[str, object] | None] = [None] * count

    def fail(
        self, index: int, status: int, code: str, message: str, details: Mapping[str, object]
    ) -> None:
        self.results[index] = {
            "index": index,
            "status": status,
            "error": {"code": code, "message": message, "details": details},
        }

    def invalid(self, index: int, message: str, errors: list[dict[str, object]]) -> None:
        """A row that is not a valid body: 400 with the validation errors."""
        self.fail(index, 400, "validation_error", message, {"errors": errors})

    def _conflict(self, index: int, crm_id: object) -> None:
        article = "An" if self.what[:1] in "aeiou" else "A"
        self.fail(
            index,
            409,
            "conflict",
            f"{article} {self.what} with this crmId already exists in the organization.",
            {"field": "crmId", "crmId": crm_id},
        )

    async def insert(
        self,
        rows: list[tuple[int, dict[str, Any]]],
        render: Callable[[dict[str, Any]], dict[str, Any]],
    ) -> list[dict[str, Any]]:
        """Insert the rows (index, column values) that passed the domain's checks; a created
        row's result is 201 with `render(values)`. Returns the values of the rows created."""
        model = self.model
        crm_ids = {v["crm_id"] for _, v in rows if v.get("crm_id")}
        taken: set[str] = set()
        if crm_ids:
            stmt = scoped(
                select(model.crm_id).where(model.crm_id.in_(crm_ids), model.archived_at.is_(None)),
                self.ctx,
                model,
            )
            taken = {c for c in (await self.session.execute(stmt)).scalars() if c}
        now = utcnow()
        to_insert: list[tuple[int, dict[str, Any]]] = []
        for index, values in rows:
            crm_id = values.get("crm_id")
            if crm_id:
                if crm_id in taken:
                    self._conflict(index, crm_id)
                    continue
                taken.add(crm_id)  # a later duplicate within the batch is a 409 too
            values.update(
                id=uuid7(),
                organization_id=self.ctx.organization_id,
                created_at=now,
                updated_at=now,
                archived_at=None,
            )
            to_insert.append((index, values))
        inserted = await self._insert([v for _, v in to_insert]) if to_insert else set()
        created: list[dict[str, Any]] = []
        for index, values in to_insert:
            if values["id"] in inserted:
                self.results[index] = {"index": index, "status": 201, "data": render(values)}
                created.append(values)
            else:
                self._conflict(index, values["crm_id"])
        return created

    async def _insert(self, values: list[dict[str, object]]) -> set[uuid.UUID]:
        table = cast(Table, self.model.__table__)
        dialect = self.session.get_bind().dialect.name
        insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
        where = table.c.crm_id.isnot(None) & table.c.archived_at.is_(None)
        stmt = (
            insert(table)
            .on_conflict_do_nothing(
                index_elements=[table.c.organization_id, table.c.crm_id], index_where=where
            )
            .returning(table.c.id)
        )
        return set((await self.session.execute(stmt, values)).scalars())

    def created_data(self) -> list[object]:
        """The rendered rows created so far (each a 201 result's `data`)."""
        return [r["data"] for r in self.results if r is not None and r["status"] == 201]

    def emit_created(self, event: type[RowEvent]) -> None:
        """Say that every row created was (`AccountCreated`, …): each event carries the row
        as the API answers it (its 201 result's `data`)."""
        org = self.ctx.organization_id
        for data in self.created_data():
            emit(self.session, event(org, data))

    def summary(self) -> dict[str, object]:
        final = [r for r in self.results if r is not None]
        created = sum(1 for r in final if r["status"] == 201)
        return {"results": final, "created": created, "failed": len(final) - created}
