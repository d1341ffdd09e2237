"""keys keep their reach: a key made without organization limits gets the organizations its
user belongs to now, stored with it (contract §15), so that a membership added later no longer
widens it. Data only; the columns exist.

Revision ID: 5c1e7a9d2b40
Revises: 3f8a2d6c1b70
Create Date: 2026-11-25 19:30:00.000000
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "5c1e7a9d2b40"
down_revision: str | None = "3f8a2d6c1b70"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(JSONB(), "postgresql")
api_keys = sa.table(
    "api_keys",
    sa.column("id", sa.Uuid()),
    sa.column("user_id", sa.Uuid()),
    sa.column("organization_ids", _JSON),
)
memberships = sa.table(
    "memberships",
    sa.column("user_id", sa.Uuid()),
    sa.column("organization_id", sa.Uuid()),
)


def upgrade() -> None:
    bind = op.get_bind()
    keys = bind.execute(sa.select(api_keys.c.id, api_keys.c.user_id, api_keys.c.organization_ids))
    # JSON null and SQL NULL both read as None: the keys without limits.
    unlimited = [(key_id, user_id) for key_id, user_id, orgs in keys if orgs is None]
    reach: dict[object, list[str]] = {}
    for key_id, user_id in unlimited:
        if user_id not in reach:
            rows = bind.execute(
                sa.select(memberships.c.organization_id)
                .where(memberships.c.user_id == user_id)
                .order_by(memberships.c.organization_id)
            )
            reach[user_id] = [str(org_id) for (org_id,) in rows]
        bind.execute(
            api_keys.update().where(api_keys.c.id == key_id).values(organization_ids=reach[user_id])
        )


def downgrade() -> None:
    # What was "every organization of the user" cannot be told from a list chosen by hand.
    pass
