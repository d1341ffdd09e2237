"""Meta's one statement: the health check's round trip to the database."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

_PING = text("SELECT 1")


async def ping(conn: AsyncConnection) -> None:
    """One round trip on `conn` (raises what the database raises)."""
    await conn.execute(_PING)
