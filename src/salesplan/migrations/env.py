"""Alembic environment: async engines, or a connection handed in by `salesplan.migrate`."""

from __future__ import annotations

import asyncio
from typing import Any

from alembic import context
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from salesplan.config import Settings
from salesplan.models import Base
from salesplan.models.base import JSONType

config = context.config
target_metadata = Base.metadata


def _render_item(type_: str, obj: Any, autogen_context: Any) -> Any:
    """Render our portable JSON type by name instead of its dialect variants."""
    if type_ == "type" and obj is JSONType:
        autogen_context.imports.add("import salesplan.models.base")
        return "salesplan.models.base.JSONType"
    return False


def _configure(connection: Connection) -> None:
    # `salesplan.migrate.upgrade` counts the revisions applied through this callback.
    counting = config.attributes.get("on_version_apply")
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        render_item=_render_item,
        **({"on_version_apply": counting} if counting else {}),
    )
    with context.begin_transaction():
        context.run_migrations()


def _url() -> str:
    url: Any = config.attributes.get("database_url") or config.get_main_option("sqlalchemy.url")
    return str(url or Settings().database_url)


def run_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


async def _run_async() -> None:
    engine = create_async_engine(_url())
    async with engine.connect() as conn:
        await conn.run_sync(_configure)
        await conn.commit()
    await engine.dispose()


def run_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
    else:
        asyncio.run(_run_async())


if context.is_offline_mode():
    run_offline()
else:
    run_online()
