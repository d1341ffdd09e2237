"""Test harness: the same suite on SQLite (default) and on PostgreSQL + Redis.

- `SALESPLAN_TEST_DATABASE_URL=postgresql+asyncpg://…/test` runs on PostgreSQL: a fresh database
  named after this run is created beside it and dropped at the end, so that parallel runs never
  meet.
- `SALESPLAN_TEST_REDIS_URL=redis://…` gives the tests that need Redis a server.
- `SALESPLAN_REQUIRE_SERVICES=1`: a test that needs a missing service fails instead of skipping.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import httpx
import pytest
from argon2 import PasswordHasher
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from salesplan.app import create_app
from salesplan.auth import passwords
from salesplan.config import Settings
from salesplan.models import Base

# Argon2 at its production cost (argon2-cffi's default: argon2id, 64 MiB, 3 passes, 4 lanes)
# takes 0.1-0.7 s per hash or check on the CI machine kind, and the suite signs in and sets
# passwords a few hundred times. In this process the app hashes at argon2id's least cost (a
# hash names its own cost, so a full-cost hash still checks at full cost); the production hasher
# is tested in tests/foundation/test_auth.py, and every process the tests start (`serve`, the
# CLI) hashes at full cost.
PRODUCTION_HASHER = passwords._hasher
passwords._hasher = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
passwords._DUMMY = passwords._hasher.hash("salesplan-timing-equaliser")

# The embedded default's data folder (§15) is one of this run, never the real home's: for the
# tests' own Settings() and every subprocess they start.
os.environ["SALESPLAN_DATA_DIR"] = tempfile.mkdtemp(prefix="salesplan-test-data-")
REQUIRE_SERVICES = os.environ.get("SALESPLAN_REQUIRE_SERVICES") == "1"
PG_URL = os.environ.get("SALESPLAN_TEST_DATABASE_URL", "")
REDIS_URL = os.environ.get("SALESPLAN_TEST_REDIS_URL", "")
if REQUIRE_SERVICES:
    PG_URL = PG_URL or "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
    REDIS_URL = REDIS_URL or "redis://127.0.0.1:6379/0"


def need_service(what: str, reason: str) -> None:
    """Skip, or fail when services are required."""
    if REQUIRE_SERVICES:
        pytest.fail(f"{what} is required (SALESPLAN_REQUIRE_SERVICES=1): {reason}")
    pytest.skip(f"{what} not configured: {reason}")


def pytest_report_header(config: pytest.Config) -> str:
    engine = "postgresql" if PG_URL else "sqlite"
    return f"salesplan: database={engine} redis={'yes' if REDIS_URL else 'no'}"


@pytest.fixture(scope="session")
def tmp_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("salesplan")


@pytest.fixture(scope="session")
async def database_url(tmp_data_dir: Path) -> AsyncIterator[str]:
    if not PG_URL:
        yield f"sqlite+aiosqlite:///{tmp_data_dir / 'test.db'}"
        return
    base = make_url(PG_URL)
    name = f"salesplan_t_{uuid.uuid4().hex[:12]}"
    admin = create_async_engine(base, isolation_level="AUTOCOMMIT")
    try:
        async with admin.connect() as conn:
            await conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # pragma: no cover - depends on the machine
        await admin.dispose()
        need_service("PostgreSQL", str(exc))
    yield base.set(database=name).render_as_string(hide_password=False)
    async with admin.connect() as conn:
        await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    await admin.dispose()


@pytest.fixture(scope="session")
def is_postgres(database_url: str) -> bool:
    return database_url.startswith("postgresql")


@pytest.fixture(scope="session")
async def settings(database_url: str, tmp_data_dir: Path) -> Settings:
    return Settings(
        database_url=database_url,
        secret_key="test-secret-key-not-for-production",
        public_url="http://testserver",
        redis_url=None,
        # Tests run the worker themselves (tests/worker); the shared app never runs it.
        worker_in_process=False,
        _env_file=None,  # type: ignore[call-arg]
    )


@pytest.fixture(scope="session")
async def schema(settings: Settings) -> AsyncIterator[None]:
    engine = create_async_engine(settings.database_url)
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.drop_all)
        await conn.run_sync(Base.metadata.create_all)
    await engine.dispose()
    yield


@pytest.fixture(scope="session")
async def app_session_scoped(settings: Settings, schema: None) -> AsyncIterator[object]:
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        yield app


def delete_all_rows_script(dialect: str) -> str:
    """One script that deletes every table's rows, children first, in one transaction."""
    tables = [t.name for t in reversed(Base.metadata.sorted_tables)]
    deletes = "".join(f'DELETE FROM "{table}";' for table in tables)
    # sqlite3's executescript runs each statement in autocommit unless told otherwise; a
    # PostgreSQL simple query of several statements is one implicit transaction already.
    return f"BEGIN;{deletes}COMMIT;" if dialect == "sqlite" else deletes


async def delete_all_rows(engine: AsyncEngine) -> None:
    """DELETE, children first, on both engines (on PostgreSQL a TRUNCATE of the 50-odd tables
    costs ~380 ms per test: new relation files for every table), as one script in one round
    trip on the driver's connection: one statement at a time through SQLAlchemy (prepared,
    then executed, on asyncpg) cost ~100 ms per test on PostgreSQL on a busy 2-core machine,
    the script ~8 ms."""
    dialect = engine.dialect.name
    async with engine.connect() as conn:
        driver = (await conn.get_raw_connection()).driver_connection
        if dialect == "sqlite":
            await driver.executescript(delete_all_rows_script(dialect))  # type: ignore[union-attr]
        else:
            await driver.execute(delete_all_rows_script(dialect))  # type: ignore[union-attr]


async def _truncate(app: object) -> None:
    await delete_all_rows(app.state.engine)  # type: ignore[attr-defined]


@pytest.fixture
async def app(app_session_scoped: object) -> AsyncIterator[object]:
    """The app, with an empty database and empty rate-limit buckets for every test."""
    from salesplan.auth.tokens import principal_cache

    await app_session_scoped.state.rate_limiter.store.reset()  # type: ignore[attr-defined]
    principal_cache.clear()
    yield app_session_scoped
    await _truncate(app_session_scoped)


@pytest.fixture
def outbound_allow(app: object) -> Iterator[Callable[[str], None]]:
    """Contract §12: the test server's public URL is not loopback, so a local Radicale or
    webhook catcher is refused unless re-allowed; `outbound_allow("127.0.0.0/8")` sets
    SALESPLAN_OUTBOUND_ALLOW for this test. Loopback is allowed from the start."""
    settings = app.state.settings  # type: ignore[attr-defined]
    before = settings.outbound_allow

    def allow(cidrs: str) -> None:
        settings.outbound_allow = cidrs

    allow("127.0.0.0/8")
    yield allow
    settings.outbound_allow = before


@pytest.fixture
async def client(app: object) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
        yield c


@pytest.fixture
async def db(app: object) -> AsyncIterator[object]:
    """A session for arranging data; commit what you add."""
    async with app.state.sessionmaker() as session:  # type: ignore[attr-defined]
        yield session


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    if not REDIS_URL:
        need_service("Redis", "set SALESPLAN_TEST_REDIS_URL")
    yield REDIS_URL


@pytest.fixture
async def actor(db: object) -> object:
    """An organization with an admin user and an all-scopes API key."""
    from tests.fixtures.factories import make_actor

    return await make_actor(db)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
async def cli_template(
    database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[str]:
    """A database migrated once for the run, which the CLI tests' `cli_db` hands out."""
    from tests.foundation.test_cli import migrated_template

    async with migrated_template(database_url, tmp_path_factory) as url:
        yield url


@pytest.fixture
async def empty_database_url(database_url: str, tmp_path: Path) -> AsyncIterator[str]:
    """A second, empty database on the same engine (for migration and CLI tests)."""
    if not database_url.startswith("postgresql"):
        yield f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}"
        return
    base = make_url(database_url)
    name = f"salesplan_e_{uuid.uuid4().hex[:12]}"
    admin = create_async_engine(base, isolation_level="AUTOCOMMIT")
    async with admin.connect() as conn:
        await conn.execute(text(f'CREATE DATABASE "{name}"'))
    yield base.set(database=name).render_as_string(hide_password=False)
    async with admin.connect() as conn:
        await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    await admin.dispose()
