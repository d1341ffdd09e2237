"""Meta's one statement: the health check's round trip to the database."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

_PING = text("SELECT 1")


async def ping(engine: AsyncEngine) -> None:
    """One round trip on a connection of `engine` (raises what the database raises)."""
    async with engine.connect() as conn:
        await conn.execute(_PING)
