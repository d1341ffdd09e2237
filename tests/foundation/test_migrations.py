"""Migrations produce exactly the models' schema, on the engine under test."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.ext.asyncio import create_async_engine

from salesplan.migrate import is_current, upgrade_connection
from salesplan.models import Base


async def test_migrations_match_the_models(empty_database_url: str) -> None:
    engine = create_async_engine(empty_database_url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(upgrade_connection)
        async with engine.connect() as conn:

            def diff(sync_conn):  # type: ignore[no-untyped-def]
                ctx = MigrationContext.configure(sync_conn, opts={"compare_type": True})
                return compare_metadata(ctx, Base.metadata)

            assert await conn.run_sync(diff) == []
            assert await conn.run_sync(is_current)
    finally:
        await engine.dispose()


async def test_keys_made_before_keep_the_organizations_their_user_had(
    empty_database_url: str,
) -> None:
    """Contract §15 for keys that existed before the upgrade: a key without organization
    limits gets its user's organizations at upgrade time, so a later membership cannot widen
    it; a key with limits keeps them."""
    import uuid

    from sqlalchemy import select

    from salesplan.kit.clock import utcnow
    from salesplan.models.identity import ApiKey, Membership, Organization, User

    engine = create_async_engine(empty_database_url)
    user_id, first, second, limited_org = uuid.uuid4(), uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    now = utcnow()
    stamps = {"created_at": now, "updated_at": now}
    try:
        async with engine.begin() as conn:
            await conn.run_sync(upgrade_connection, "3f8a2d6c1b70")
            for org in (first, second, limited_org):
                await conn.execute(
                    Organization.__table__.insert().values(
                        id=org, name=str(org), slug=str(org), **stamps
                    )
                )
            await conn.execute(
                User.__table__.insert().values(id=user_id, email="k@x.example", **stamps)
            )
            for org in (first, second):
                await conn.execute(
                    Membership.__table__.insert().values(
                        id=uuid.uuid4(), organization_id=org, user_id=user_id, role="member",
                        **stamps,
                    )
                )  # fmt: skip
            for name, orgs in (("all", None), ("one", [str(limited_org)])):
                await conn.execute(
                    ApiKey.__table__.insert().values(
                        id=uuid.uuid4(), user_id=user_id, name=name, key_hash=name * 8,
                        key_prefix=name, scopes=["organizations:read"], organization_ids=orgs,
                        **stamps,
                    )
                )  # fmt: skip
            await conn.run_sync(upgrade_connection)
        async with engine.connect() as conn:
            rows = dict((await conn.execute(select(ApiKey.name, ApiKey.organization_ids))).all())
        assert sorted(rows["all"]) == sorted([str(first), str(second)])
        assert rows["one"] == [str(limited_org)]
    finally:
        await engine.dispose()


def test_the_scripts_heads_read_as_text_are_alembics() -> None:
    """`salesplan` commands skip Alembic on an up-to-date embedded database by reading the
    scripts' heads as text: they must be exactly what Alembic's script directory answers."""
    from alembic.script import ScriptDirectory

    from salesplan.migrate import alembic_config, script_heads

    assert script_heads() == set(ScriptDirectory.from_config(alembic_config()).get_heads())


def test_an_embedded_database_is_current_only_once_migrated_to_the_head(tmp_path) -> None:
    from alembic import command

    from salesplan.migrate import alembic_config, sqlite_is_current, upgrade

    url = f"sqlite+aiosqlite:///{tmp_path / 'current.db'}"
    assert not sqlite_is_current(url)  # no file yet
    upgrade(url)
    assert sqlite_is_current(url)
    command.downgrade(alembic_config(url), "-1")
    assert not sqlite_is_current(url)
    assert not sqlite_is_current(f"sqlite+aiosqlite:///{tmp_path / 'missing' / 'x.db'}")
