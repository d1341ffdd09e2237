"""deliverability: auto-replies, parsed addresses, suppression reasons, send windows, zones

Contract §14: replies flagged `auto_reply`; `contacts.email_mailbox` and
`engage_messages.to_mailbox` hold kit.email.mailbox of the address (filled here for existing
rows) so that a suppression's lookups are one indexed equality; suppressions keep the parsed
address and the contract's reasons (`unsubscribe` → `unsubscribed`); campaigns get
`send_window`, contacts `time_zone`.

Revision ID: 9b3e5d7f1a24
Revises: 4b7e2c9a1d63
Create Date: 2026-11-25 22:30:00.000000
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

from salesplan.kit.email import mailbox_or_none

revision: str = "9b3e5d7f1a24"
down_revision: str | None = "4b7e2c9a1d63"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(JSONB(), "postgresql")
BATCH = 1000


def _fill(table: str, source: str, target: str) -> None:
    """`target` = mailbox(`source`) for every row that has an address, in batches."""
    bind = op.get_bind()
    t = sa.table(table, sa.column("id", sa.Uuid()), sa.column(source), sa.column(target))
    rows = bind.execute(sa.select(t.c.id, t.c[source]).where(t.c[source].is_not(None))).all()
    stmt = t.update().where(t.c.id == sa.bindparam("b_id")).values({target: sa.bindparam("b_v")})
    values = [{"b_id": row[0], "b_v": mailbox_or_none(row[1])} for row in rows]
    for start in range(0, len(values), BATCH):
        bind.execute(stmt, values[start : start + BATCH])


def _normalize_suppressions() -> None:
    """Rows written before suppression parsed addresses: stored as their mailbox, the oldest
    row kept when two spellings meet."""
    bind = op.get_bind()
    t = sa.table(
        "engage_suppressions",
        sa.column("id", sa.Uuid()),
        sa.column("organization_id", sa.Uuid()),
        sa.column("email"),
        sa.column("created_at"),
    )
    rows = bind.execute(
        sa.select(t.c.id, t.c.organization_id, t.c.email).order_by(t.c.created_at, t.c.id)
    ).all()
    seen: set[tuple[Any, str]] = set()
    drop: list[Any] = []
    change: list[dict[str, Any]] = []
    for row_id, org, email in rows:
        address = mailbox_or_none(email) or email
        if (org, address) in seen:
            drop.append(row_id)
            continue
        seen.add((org, address))
        if address != email:
            change.append({"b_id": row_id, "b_v": address})
    for start in range(0, len(drop), BATCH):
        bind.execute(t.delete().where(t.c.id.in_(drop[start : start + BATCH])))
    if change:
        bind.execute(
            t.update().where(t.c.id == sa.bindparam("b_id")).values(email=sa.bindparam("b_v")),
            change,
        )


def upgrade() -> None:
    with op.batch_alter_table("engage_replies", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("auto_reply", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
    with op.batch_alter_table("contacts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("time_zone", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("email_mailbox", sa.String(length=320), nullable=True))
    with op.batch_alter_table("engage_messages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("to_mailbox", sa.String(length=320), nullable=True))
    with op.batch_alter_table("engage_campaigns", schema=None) as batch_op:
        batch_op.add_column(sa.Column("send_window", _JSON, nullable=True))

    _fill("contacts", "email", "email_mailbox")
    _fill("engage_messages", "to_address", "to_mailbox")
    _normalize_suppressions()
    op.execute(
        "UPDATE engage_suppressions SET reason = 'unsubscribed' WHERE reason = 'unsubscribe'"
    )
    op.execute("UPDATE engage_enrollments SET reason = 'unsubscribed' WHERE reason = 'unsubscribe'")

    with op.batch_alter_table("contacts", schema=None) as batch_op:
        batch_op.create_index(
            "ix_contacts_org_email_mailbox", ["organization_id", "email_mailbox"], unique=False
        )
    with op.batch_alter_table("engage_messages", schema=None) as batch_op:
        batch_op.create_index(
            "ix_engage_messages_org_to_mailbox", ["organization_id", "to_mailbox"], unique=False
        )
    with op.batch_alter_table("engage_suppressions", schema=None) as batch_op:
        batch_op.create_index(
            "ix_engage_suppressions_org_created",
            ["organization_id", "created_at", "id"],
            unique=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("engage_suppressions", schema=None) as batch_op:
        batch_op.drop_index("ix_engage_suppressions_org_created")
    op.execute(
        "UPDATE engage_suppressions SET reason = 'unsubscribe' WHERE reason = 'unsubscribed'"
    )
    with op.batch_alter_table("engage_messages", schema=None) as batch_op:
        batch_op.drop_index("ix_engage_messages_org_to_mailbox")
        batch_op.drop_column("to_mailbox")
    with op.batch_alter_table("contacts", schema=None) as batch_op:
        batch_op.drop_index("ix_contacts_org_email_mailbox")
        batch_op.drop_column("email_mailbox")
        batch_op.drop_column("time_zone")
    with op.batch_alter_table("engage_campaigns", schema=None) as batch_op:
        batch_op.drop_column("send_window")
    with op.batch_alter_table("engage_replies", schema=None) as batch_op:
        batch_op.drop_column("auto_reply")
