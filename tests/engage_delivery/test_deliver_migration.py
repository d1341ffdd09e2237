"""The deliverability migration fills what rows written before it lack: the parsed address of
contacts and messages (so the suppression lookups find them), suppressions stored as their
parsed address (two spellings of one address merged, the oldest kept) and the contract's
`unsubscribed` reason."""

from __future__ import annotations

import uuid
from datetime import timedelta

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import create_async_engine

from salesplan.kit.clock import utcnow
from salesplan.migrate import upgrade_connection

BEFORE = "4b7e2c9a1d63"  # the revision before 20261125_deliver


def _table(name: str, *columns: str, uuids: tuple[str, ...] = ()) -> sa.TableClause:
    return sa.table(
        name,
        *(sa.column(c, sa.Uuid()) for c in uuids),
        *(sa.column(c) for c in columns),
    )


async def test_rows_from_before_get_their_parsed_addresses(empty_database_url: str) -> None:
    engine = create_async_engine(empty_database_url)
    org, account, contact, message = (uuid.uuid4() for _ in range(4))
    now = utcnow()
    stamps = {"created_at": now, "updated_at": now}
    suppressions = _table(
        "engage_suppressions", "email", "reason", "created_at", uuids=("id", "organization_id")
    )
    try:
        async with engine.begin() as conn:
            await conn.run_sync(upgrade_connection, BEFORE)
            await conn.execute(
                _table("organizations", "name", "slug", "created_at", "updated_at", uuids=("id",))
                .insert()
                .values(id=org, name="o", slug="o", **stamps)
            )
            await conn.execute(
                _table("accounts", "name", "created_at", "updated_at", uuids=("id", "organization_id"))
                .insert()
                .values(id=account, organization_id=org, name="A", **stamps)
            )  # fmt: skip
            await conn.execute(
                _table(
                    "contacts", "email", "created_at", "updated_at",
                    uuids=("id", "organization_id", "account_id"),
                )
                .insert()
                .values(
                    id=contact, organization_id=org, account_id=account,
                    email='"Ada L" <ADA@X.example>', **stamps,
                )
            )  # fmt: skip
            await conn.execute(
                _table(
                    "engage_messages", "channel", "to_address", "body", "status", "manual",
                    "attempts", "rfc_message_id", "open_count", "click_count", "created_at",
                    "updated_at", uuids=("id", "organization_id"),
                )
                .insert()
                .values(
                    id=message, organization_id=org, channel="EMAIL",
                    to_address="Grace <GRACE@x.example>", body="b", status="sent", manual=False,
                    attempts=1, rfc_message_id="<m@x>", open_count=0, click_count=0, **stamps,
                )
            )  # fmt: skip
            for email, reason, age in (
                ("OptOut@X.example", "unsubscribe", 2),
                ("optout@x.example", "hard_bounce", 1),
                ("bounce@x.example", "hard_bounce", 0),
            ):
                await conn.execute(
                    suppressions.insert().values(
                        id=uuid.uuid4(), organization_id=org, email=email, reason=reason,
                        created_at=now - timedelta(days=age),
                    )
                )  # fmt: skip
            await conn.run_sync(upgrade_connection)
        async with engine.connect() as conn:
            mailbox = (
                await conn.execute(sa.text("SELECT email_mailbox, time_zone FROM contacts"))
            ).one()
            to = (await conn.execute(sa.text("SELECT to_mailbox FROM engage_messages"))).scalar()
            rows = (
                await conn.execute(
                    sa.text("SELECT email, reason FROM engage_suppressions ORDER BY email")
                )
            ).all()
            auto = (await conn.execute(sa.text("SELECT count(*) FROM engage_replies"))).scalar()
        assert tuple(mailbox) == ("ada@x.example", None)
        assert to == "grace@x.example"
        assert [tuple(r) for r in rows] == [
            ("bounce@x.example", "hard_bounce"),
            ("optout@x.example", "unsubscribed"),
        ]
        assert auto == 0
    finally:
        await engine.dispose()
