"""engage trust: one inbound reply per Message-ID and organization

Revision ID: 6d2f9b8e4c17
Revises: 7c41e9b2d5f3
Create Date: 2026-11-25 19:30:00.000000
"""

from collections.abc import Sequence

from alembic import op

revision: str = "6d2f9b8e4c17"
down_revision: str | None = "7c41e9b2d5f3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Copies stored before the rule: keep the first received of each Message-ID.
    op.execute(
        """
        DELETE FROM engage_replies WHERE id IN (
            SELECT id FROM (
                SELECT id, row_number() OVER (
                    PARTITION BY organization_id, rfc_message_id ORDER BY received_at, id
                ) AS copy
                FROM engage_replies WHERE rfc_message_id IS NOT NULL
            ) AS numbered WHERE copy > 1
        )
        """
    )
    with op.batch_alter_table("engage_replies", schema=None) as batch_op:
        batch_op.create_index(
            "uq_engage_replies_org_rfc_message_id",
            ["organization_id", "rfc_message_id"],
            unique=True,
        )


def downgrade() -> None:
    with op.batch_alter_table("engage_replies", schema=None) as batch_op:
        batch_op.drop_index("uq_engage_replies_org_rfc_message_id")
