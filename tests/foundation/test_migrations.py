"""Migrations produce exactly the models' schema, on the engine under test."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.ext.asyncio import create_async_engine

from salesplan.migrate import is_current, upgrade_connection
from salesplan.models import Base


async def test_migrations_match_the_models(empty_database_url: str) -> None:
    engine = create_async_engine(empty_database_url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(upgrade_connection)
        async with engine.connect() as conn:

            def diff(sync_conn):  # type: ignore[no-untyped-def]
                ctx = MigrationContext.configure(sync_conn, opts={"compare_type": True})
                return compare_metadata(ctx, Base.metadata)

            assert await conn.run_sync(diff) == []
            assert await conn.run_sync(is_current)
    finally:
        await engine.dispose()
