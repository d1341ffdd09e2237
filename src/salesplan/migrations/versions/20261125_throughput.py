"""engage sender caps: the From address a message was sent from, indexed with its send time

Revision ID: 3b8e5d1f9a62
Revises: 9b3e5d7f1a24
Create Date: 2026-11-25 22:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "3b8e5d1f9a62"
down_revision: str | None = "9b3e5d7f1a24"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("engage_messages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("from_address", sa.String(length=320), nullable=True))
        batch_op.create_index(
            "ix_engage_messages_from_sent", ["from_address", "sent_at"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("engage_messages", schema=None) as batch_op:
        batch_op.drop_index("ix_engage_messages_from_sent")
        batch_op.drop_column("from_address")
