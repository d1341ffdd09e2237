"""calendar connections: failed syncs in a row, for the exponential back-off

Revision ID: bd587fd3e5d8
Revises: 924a355da063
Create Date: 2026-11-27 16:15:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "bd587fd3e5d8"
down_revision: str | None = "924a355da063"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("calendar_connections") as batch:
        batch.add_column(
            sa.Column("sync_failures", sa.Integer(), nullable=False, server_default="0")
        )


def downgrade() -> None:
    with op.batch_alter_table("calendar_connections") as batch:
        batch.drop_column("sync_failures")
