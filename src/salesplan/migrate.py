"""Applying migrations (Alembic) from the CLI, `serve` and tests."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(database_url: str | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.set_main_option("file_template", "%%(year)d%%(month).2d%%(day).2d_%%(slug)s")
    if database_url:
        cfg.attributes["database_url"] = database_url
    return cfg


def upgrade(database_url: str, revision: str = "head") -> None:
    """Apply migrations (runs its own event loop: call it outside one)."""
    command.upgrade(alembic_config(database_url), revision)


def upgrade_connection(connection: Connection, revision: str = "head") -> None:
    """Apply migrations on a sync connection (from `AsyncConnection.run_sync`)."""
    cfg = alembic_config()
    cfg.attributes["connection"] = connection
    command.upgrade(cfg, revision)


def is_current(connection: Connection) -> bool:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    current = MigrationContext.configure(connection).get_current_revision()
    return bool(current == head)
