"""`search` is served by trigram GIN indexes on PostgreSQL."""

from __future__ import annotations

from sqlalchemy import select, text

from salesplan.kit.search import contains_ci
from salesplan.models.crm import Account, Contact
from tests.conftest import need_service


async def test_search_uses_trigram_indexes_on_postgresql(db, is_postgres) -> None:
    if not is_postgres:
        # SQLite cannot serve '%term%' from an index; its trigram indexes are empty stand-ins.
        need_service("PostgreSQL", "trigram indexes exist only on PostgreSQL")
    await db.execute(text("SET LOCAL enable_seqscan = off"))
    for stmt in (
        select(Account.id).where(contains_ci(Account.name, "acme")),
        select(Contact.id).where(
            contains_ci(Contact.first_name, "ada")
            | contains_ci(Contact.last_name, "ada")
            | contains_ci(Contact.email, "ada")
        ),
    ):
        compiled = stmt.compile(db.bind, compile_kwargs={"literal_binds": True})
        plan = "\n".join((await db.execute(text(f"EXPLAIN {compiled}"))).scalars())
        assert "_trgm" in plan, plan
