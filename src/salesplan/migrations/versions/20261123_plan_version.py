"""plan version: a counter every write to a plan or its children bumps (getPlan's ETag)

Revision ID: 3f8a2d6c1b70
Revises: a369b2901352
Create Date: 2026-11-23 11:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "3f8a2d6c1b70"
down_revision: str | None = "a369b2901352"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("plans", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("version", sa.Integer(), server_default=sa.text("1"), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("plans", schema=None) as batch_op:
        batch_op.drop_column("version")
