"""The request's way to the database, as FastAPI dependencies: its unit of work (`UoW`,
`unit_of_work`) or its session (`SessionDep`), committed before the response is sent, rolled
back on any error; 503 at once while the database is known to be down. Apart from
`salesplan.db` so that `db.py` (engines, what a CLI command opens) imports no FastAPI."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.db import RETRY_AFTER_SECONDS, DatabaseHealth
from salesplan.errors import ServiceUnavailable
from salesplan.kit.uow import UnitOfWork


def check_available(request: Request) -> None:
    """503 at once while the database is known to be down (DatabaseHealth's pause)."""
    health: DatabaseHealth | None = getattr(request.app.state, "db_health", None)
    if health is not None and health.paused:
        raise ServiceUnavailable(retry_after=RETRY_AFTER_SECONDS)


def _read_only(request: Request) -> bool:
    return getattr(request.scope.get("endpoint"), "__salesplan_read_only__", False)


async def get_uow(request: Request) -> AsyncIterator[UnitOfWork]:
    """The request's unit of work (`kit.uow`). Declared with scope="function" so that the
    commit happens before the response is sent: a client never sees success for a write that
    was lost."""
    check_available(request)
    uow = UnitOfWork(request.app.state.database, read_only=_read_only(request))
    try:
        yield uow
    except BaseException:
        try:
            await uow.rollback()
        finally:
            await uow.close()
        raise
    try:
        await uow.commit()
    finally:
        await uow.close()


UoW = Annotated[UnitOfWork, Depends(get_uow, scope="function")]


def unit_of_work(request: Request) -> UnitOfWork:
    """`get_uow` without the dependency machinery, for the hottest routes:
    `async with unit_of_work(request) as uow:` in the route (a function-scoped generator
    dependency costs FastAPI an exit stack per request: +15 % CPU on getAccount, measured
    with bench/cpu.py). The same unit of work: committed when the block ends, rolled back if
    it raises, before the response is sent."""
    check_available(request)
    return UnitOfWork(request.app.state.database, read_only=_read_only(request))


async def get_session(request: Request) -> AsyncIterator[AsyncSession]:
    """The session of the request's unit of work, for the routes that need nothing else:
    committed (with its domain events) before the response is sent, rolled back on any
    error."""
    check_available(request)
    async with UnitOfWork(request.app.state.database, read_only=_read_only(request)) as uow:
        yield await uow.session()


SessionDep = Annotated[AsyncSession, Depends(get_session, scope="function")]
