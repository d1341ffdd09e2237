"""The embedded default's engine: pooled SQLite connections with the pragmas on each."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text

from salesplan.config import Settings
from salesplan.db import create_engine


def sqlite_settings(url: str) -> Settings:
    return Settings(database_url=url, secret_key="k", _env_file=None)  # type: ignore[call-arg]


async def test_sqlite_requests_reuse_pooled_connections(tmp_path: Path) -> None:
    engine = create_engine(sqlite_settings(f"sqlite+aiosqlite:///{tmp_path / 'p.db'}"))
    try:
        seen = []  # the objects themselves, kept alive so that no id is reused
        for _ in range(5):
            async with engine.connect() as conn:
                raw = await conn.get_raw_connection()
                seen.append(raw.driver_connection)
        # One connection serves sequential requests: no new file handle and thread per request.
        assert all(c is seen[0] for c in seen)
    finally:
        await engine.dispose()


async def test_every_pooled_sqlite_connection_has_the_pragmas(tmp_path: Path) -> None:
    engine = create_engine(sqlite_settings(f"sqlite+aiosqlite:///{tmp_path / 'p.db'}"))
    try:
        async with engine.connect() as first, engine.connect() as second:
            for conn in (first, second):
                assert (await conn.execute(text("PRAGMA journal_mode"))).scalar() == "wal"
                assert (await conn.execute(text("PRAGMA foreign_keys"))).scalar() == 1
                assert (await conn.execute(text("PRAGMA busy_timeout"))).scalar() == 10000
    finally:
        await engine.dispose()


async def test_an_in_memory_sqlite_database_is_one_database_for_every_session() -> None:
    engine = create_engine(sqlite_settings("sqlite+aiosqlite:///:memory:"))
    try:
        async with engine.begin() as conn:
            await conn.execute(text("CREATE TABLE t (x INTEGER)"))
            await conn.execute(text("INSERT INTO t VALUES (1)"))
        async with engine.connect() as conn:
            assert (await conn.execute(text("SELECT x FROM t"))).scalar() == 1
    finally:
        await engine.dispose()
