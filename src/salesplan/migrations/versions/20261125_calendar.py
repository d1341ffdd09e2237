"""calendar identity: an event is (connection, UID, RECURRENCE-ID), not (connection, href, …)

Revision ID: 6d2c9e41a7b3
Revises: 5c1e7a9d2b40
Create Date: 2026-11-25 19:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "6d2c9e41a7b3"
down_revision: str | None = "5c1e7a9d2b40"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Rows that the new key would find twice (one UID under two hrefs of a connection): keep
    # the oldest of each, so that the unique constraint can be made. Their artifacts go with
    # the duplicates, as they did on every sync before.
    op.execute(
        sa.text(
            "DELETE FROM calendar_events WHERE id IN ("
            " SELECT e.id FROM calendar_events e JOIN calendar_events o"
            " ON o.connection_id = e.connection_id AND o.uid = e.uid"
            " AND o.recurrence_key = e.recurrence_key"
            " AND (o.created_at < e.created_at OR (o.created_at = e.created_at AND o.id < e.id)))"
        )
    )
    with op.batch_alter_table("calendar_events", schema=None) as batch_op:
        batch_op.drop_constraint(
            "uq_calendar_events_connection_id_href_recurrence_key", type_="unique"
        )
        batch_op.create_unique_constraint(
            batch_op.f("uq_calendar_events_connection_id_uid_recurrence_key"),
            ["connection_id", "uid", "recurrence_key"],
        )
        batch_op.create_index(
            "ix_calendar_events_connection_href", ["connection_id", "href"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("calendar_events", schema=None) as batch_op:
        batch_op.drop_index("ix_calendar_events_connection_href")
        batch_op.drop_constraint(
            batch_op.f("uq_calendar_events_connection_id_uid_recurrence_key"), type_="unique"
        )
        batch_op.create_unique_constraint(
            "uq_calendar_events_connection_id_href_recurrence_key",
            ["connection_id", "href", "recurrence_key"],
        )
