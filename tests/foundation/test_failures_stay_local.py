"""Contract §12 "failures stay local": a driver or statement error in one request (too many
parameters, a value too long) is that request's 4xx or 500; only a lost connection to the
database makes the process answer 503 service_unavailable to everyone."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import APIRouter, FastAPI
from sqlalchemy import literal, select, text

from salesplan import db
from salesplan.app import create_app
from salesplan.config import Settings
from salesplan.db_dependencies import SessionDep

ORGS = "/api/v1/organizations"
probe = APIRouter()


@probe.get("/api/v1/probe/many-parameters", operation_id="probeManyParameters")
async def many_parameters(session: SessionDep) -> dict[str, int]:
    """One statement with 40,000 parameters: over asyncpg's 32,767 and SQLite's 32,766."""
    stmt = select(literal(1)).where(literal(0).in_(list(range(40_000))))
    await session.execute(stmt)
    return {"ok": 1}


@probe.post("/api/v1/probe/too-long", operation_id="probeTooLong")
async def too_long(session: SessionDep) -> dict[str, int]:
    """A value longer than its column (PostgreSQL: SQLSTATE 22001)."""
    await session.execute(text("CREATE TEMP TABLE IF NOT EXISTS probe_short (v VARCHAR(5))"))
    await session.execute(text("INSERT INTO probe_short (v) VALUES (:v)"), {"v": "x" * 50})
    return {"ok": 1}


@pytest.fixture
async def probe_client(app: FastAPI, settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """The real app (its middleware, its DatabaseHealth) with the probe routes."""
    probed = create_app(settings)
    probed.include_router(probe)
    async with probed.router.lifespan_context(probed):
        transport = httpx.ASGITransport(app=probed, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            yield c


async def test_too_many_parameters_fail_only_that_request(probe_client, actor, is_postgres) -> None:
    response = await probe_client.get("/api/v1/probe/many-parameters")
    if is_postgres:  # asyncpg refuses over 32,767 (an InterfaceError, the connection intact)
        assert response.status_code == 500, response.text
        assert response.json()["error"]["code"] == "internal_error"
    else:  # this SQLite build takes 40,000 variables
        assert response.status_code == 200, response.text
    for _ in range(3):  # no pause: the next requests are served
        assert (await probe_client.get(ORGS, headers=actor.headers)).status_code == 200
    assert (await probe_client.get("/healthz")).status_code == 200


async def test_a_value_too_long_is_that_requests_400(probe_client, actor, is_postgres) -> None:
    response = await probe_client.post("/api/v1/probe/too-long")
    if is_postgres:
        assert response.status_code == 400, response.text
        assert response.json()["error"]["code"] == "validation_error"
    else:  # SQLite does not enforce VARCHAR lengths
        assert response.status_code == 200
    assert (await probe_client.get(ORGS, headers=actor.headers)).status_code == 200


def test_only_a_lost_connection_is_an_outage() -> None:
    class InterfaceError(Exception):
        """Named as asyncpg's: it raises this for many things."""

    class ConnectionDoesNotExistError(Exception):
        pass

    too_many = InterfaceError("the number of query arguments cannot exceed 32767")
    busy = InterfaceError("cannot perform operation: another operation is in progress")
    closed = InterfaceError("cannot call Connection.fetch(): connection is closed")
    for exc in (too_many, busy):
        assert not db.database_unavailable(exc) and not db.connection_lost(exc)
    for exc in (closed, ConnectionDoesNotExistError("gone"), ConnectionResetError()):
        assert db.database_unavailable(exc) and db.connection_lost(exc)


def test_a_statement_timeout_is_that_requests_503_not_an_outage() -> None:
    class DriverError(Exception):
        sqlstate = "57014"

    assert db.database_unavailable(DriverError())
    assert not db.connection_lost(DriverError())
