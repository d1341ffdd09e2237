"""Engine and the session dependency: one transaction per request, committed before the
response is sent, rolled back on any error. Services never commit."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request
from sqlalchemy import event
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.pool import NullPool

from salesplan.config import Settings


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


def create_engine(settings: Settings, **kwargs: Any) -> AsyncEngine:
    # Statement parameters are user data (e-mails, names): never in an exception's text, so
    # never in a logged traceback.
    kwargs.setdefault("hide_parameters", True)
    if settings.is_sqlite:
        engine = create_async_engine(settings.database_url, poolclass=NullPool, **kwargs)
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    return create_async_engine(
        settings.database_url,
        pool_size=settings.db_pool_size,
        max_overflow=settings.db_max_overflow,
        pool_pre_ping=settings.db_pool_pre_ping,
        **kwargs,
    )


def create_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False, autoflush=False)


def create_read_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Sessions for `@read_only` endpoints. On PostgreSQL their connection runs in autocommit:
    no BEGIN and no COMMIT round trip around the request's reads. Under READ COMMITTED (the
    default) each statement takes its own snapshot inside a transaction too, so what a read
    sees is the same; a write a read path does (the API key's last_used_at, once a minute)
    commits on its own, which is all it needs."""
    if engine.dialect.name != "postgresql":
        return create_sessionmaker(engine)
    return create_sessionmaker(engine.execution_options(isolation_level="AUTOCOMMIT"))


F = TypeVar("F", bound=Callable[..., Any])


def read_only(endpoint: F) -> F:
    """Mark a route whose request only reads (hot GETs): its session skips BEGIN/COMMIT.
    Put it under the `@router.get(...)` decorator."""
    endpoint.__salesplan_read_only__ = True  # type: ignore[attr-defined]
    return endpoint


async def get_session(request: Request) -> AsyncIterator[AsyncSession]:
    """The request's session. Declared with scope="function" so that the commit happens
    before the response is sent: a client never sees success for a write that was lost."""
    maker: async_sessionmaker[AsyncSession] = request.app.state.sessionmaker
    if getattr(request.scope.get("endpoint"), "__salesplan_read_only__", False):
        maker = getattr(request.app.state, "read_sessionmaker", maker)
    async with maker() as session:
        try:
            yield session
        except BaseException:
            await session.rollback()
            raise
        else:
            if session.in_transaction():
                await session.commit()


SessionDep = Annotated[AsyncSession, Depends(get_session, scope="function")]
