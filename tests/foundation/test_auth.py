"""Contract §3 and the order of checks of §2: tokens, scopes, organization context."""

from __future__ import annotations

import uuid
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import update

from salesplan.auth.tokens import create_api_key, token_hash
from salesplan.kit.clock import utcnow
from salesplan.models.identity import ApiKey
from tests.fixtures.envelope import assert_envelope
from tests.fixtures.factories import make_actor, make_key, make_org, make_user

ORGS = "/api/v1/organizations"


async def test_missing_token_is_401_with_www_authenticate(client: httpx.AsyncClient) -> None:
    response = await client.get(ORGS)
    assert_envelope(response, 401, "unauthorized")
    assert response.headers["www-authenticate"].startswith("Bearer")


async def test_malformed_authorization_header_is_401(client, actor) -> None:
    for value in ("Basic abc", "Bearer", f"Token {actor.key}", f"Bearer {actor.key} extra"):
        assert_envelope(
            await client.get(ORGS, headers={"Authorization": value}), 401, "unauthorized"
        )


async def test_unknown_token_is_401(client) -> None:
    response = await client.get(ORGS, headers={"Authorization": "Bearer sp_live_nope"})
    assert_envelope(response, 401, "unauthorized")


async def test_revoked_key_is_401(client, db, actor) -> None:
    await db.execute(
        update(ApiKey).where(ApiKey.key_hash == token_hash(actor.key)).values(revoked_at=utcnow())
    )
    await db.commit()
    assert_envelope(await client.get(ORGS, headers=actor.headers), 401, "unauthorized")


async def test_expired_key_is_401(client, db, actor) -> None:
    _, raw = await create_api_key(
        db, user_id=actor.user.id, name="old", expires_at=utcnow() - timedelta(seconds=1)
    )
    await db.commit()
    assert_envelope(
        await client.get(ORGS, headers={"Authorization": f"Bearer {raw}"}), 401, "unauthorized"
    )


async def test_keys_are_stored_only_as_hashes(db, actor) -> None:
    from sqlalchemy import select

    rows = (await db.execute(select(ApiKey.key_hash, ApiKey.key_prefix))).all()
    assert rows and all(actor.key not in (h, p) for h, p in rows)
    assert rows[0].key_hash == token_hash(actor.key)


async def test_missing_scope_is_403_with_required_scope(client, db) -> None:
    actor = await make_actor(db, scopes=["accounts:read"])
    error = assert_envelope(await client.get(ORGS, headers=actor.headers), 403, "forbidden")
    assert error["details"]["requiredScope"] == "organizations:read"


async def test_get_organization_of_another_org_is_404(client, db, actor) -> None:
    other = await make_org(db)
    response = await client.get(f"{ORGS}/{other.id}", headers=actor.headers)
    assert_envelope(response, 404, "not_found")


async def test_unreachable_organization_in_header_is_403(client, db, actor) -> None:
    other = await make_org(db)
    response = await client.get(ORGS, headers=actor.in_org(other.id))
    assert_envelope(response, 403, "forbidden")


async def test_non_uuid_organization_is_400(client, actor) -> None:
    response = await client.get(ORGS, headers=actor.headers | {"X-Organization-Id": "acme"})
    assert_envelope(response, 400, "validation_error")


async def test_disagreeing_organization_values_are_400(client, db, actor) -> None:
    second = await make_org(db)
    response = await client.get(
        ORGS, headers=actor.in_org(), params={"organizationId": str(second.id)}
    )
    assert_envelope(response, 400, "validation_error")


async def test_legacy_aliases_are_accepted(client, actor) -> None:
    org = str(actor.org.id)
    for kwargs in (
        {"headers": actor.headers | {"X-Subscriber-Id": org}},
        {"headers": actor.headers, "params": {"organizationId": org}},
        {"headers": actor.headers, "params": {"subscriberId": org}},
    ):
        assert (await client.get(ORGS, **kwargs)).status_code == 200


async def test_key_organization_limits_narrow_reach(client, db, actor) -> None:
    second = await make_org(db)
    from salesplan.organizations.service import add_user

    await add_user(db, organization_id=second.id, email=actor.user.email)
    await db.commit()
    limited = await make_key(db, actor.user, orgs=[actor.org.id])
    response = await client.get(ORGS, headers={"Authorization": f"Bearer {limited}"})
    assert [o["id"] for o in response.json()["data"]] == [str(actor.org.id)]
    response = await client.get(
        f"{ORGS}/{second.id}", headers={"Authorization": f"Bearer {limited}"}
    )
    assert_envelope(response, 404, "not_found")


async def test_key_cannot_exceed_approved_scopes(db, actor) -> None:
    from salesplan.errors import ValidationFailed

    with pytest.raises(ValidationFailed) as raised:
        await create_api_key(db, user_id=actor.user.id, name="x", scopes=["admin:all"])
    assert raised.value.details["scopes"] == ["admin:all"]


async def test_api_key_records_last_used_time(client, db, actor) -> None:
    from sqlalchemy import select

    assert (await client.get(ORGS, headers=actor.headers)).status_code == 200
    db.expire_all()
    used = (
        await db.execute(
            select(ApiKey.last_used_at).where(ApiKey.key_hash == token_hash(actor.key))
        )
    ).scalar_one()
    assert used is not None


async def test_rate_limit_is_checked_before_scope(client, db, app) -> None:
    """Order of checks: authenticate → rate limit → scope."""
    actor = await make_actor(db, scopes=["accounts:read"])
    limit = app.state.rate_limiter.policy["organizations"].read
    for _ in range(limit):
        assert (await client.get(ORGS, headers=actor.headers)).status_code == 403
    assert_envelope(await client.get(ORGS, headers=actor.headers), 429, "rate_limit_exceeded")


async def test_unknown_user_id_for_key_is_404(db) -> None:
    from salesplan.errors import NotFound

    with pytest.raises(NotFound):
        await create_api_key(db, user_id=uuid.uuid4(), name="x")


async def test_password_hashes_are_argon2(db, actor) -> None:
    from salesplan.auth.passwords import verify_password

    user = await make_user(db, actor.org, password="s3cret-pass")
    assert user.password_hash and user.password_hash.startswith("$argon2")
    assert verify_password(user.password_hash, "s3cret-pass")
    assert not verify_password(user.password_hash, "wrong")
    assert not verify_password(None, "anything")


def test_the_production_hasher_is_argon2id_at_the_rfc_9106_cost() -> None:
    """The tests' app hashes at the least cost (tests/conftest.py); the one `serve` runs with is
    argon2-cffi's default, RFC 9106's low-memory profile, and its hashes check as they should."""
    from argon2 import profiles

    from salesplan.auth.passwords import verify_password
    from tests.conftest import PRODUCTION_HASHER

    expected = profiles.RFC_9106_LOW_MEMORY
    hasher = PRODUCTION_HASHER
    assert (hasher.type, hasher.time_cost, hasher.memory_cost, hasher.parallelism) == (
        expected.type,
        expected.time_cost,
        expected.memory_cost,
        expected.parallelism,
    )
    stored = hasher.hash("s3cret-pass")
    assert stored.startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    assert verify_password(stored, "s3cret-pass")
    assert not verify_password(stored, "wrong")


async def test_revoking_a_key_takes_effect_at_once_despite_the_cache(client, db, actor) -> None:
    from sqlalchemy import select

    from salesplan.auth.tokens import revoke_api_key

    assert (await client.get(ORGS, headers=actor.headers)).status_code == 200
    key_id = (
        await db.execute(select(ApiKey.id).where(ApiKey.key_hash == token_hash(actor.key)))
    ).scalar_one()
    await revoke_api_key(db, user_id=actor.user.id, key_id=key_id)
    await db.commit()
    assert_envelope(await client.get(ORGS, headers=actor.headers), 401, "unauthorized")


async def test_a_resolved_token_is_reused_for_a_few_seconds(client, app, actor) -> None:
    """The hot path does not look the key up again within the cache's time-to-live."""
    from sqlalchemy import event

    statements: list[str] = []

    def count(conn, cursor, statement, *args):  # type: ignore[no-untyped-def]
        statements.append(statement)

    engine = app.state.engine.sync_engine
    assert (await client.get(ORGS, headers=actor.headers)).status_code == 200
    event.listen(engine, "before_cursor_execute", count)
    try:
        assert (await client.get(ORGS, headers=actor.headers)).status_code == 200
    finally:
        event.remove(engine, "before_cursor_execute", count)
    assert not any("api_keys" in s for s in statements)


async def test_a_key_keeps_the_reach_it_had_when_made(client, db, actor) -> None:
    """Contract §15: a key made without organization limits reaches the organizations its user
    belonged to then; joining another one later neither widens it nor breaks it."""
    from salesplan.organizations.service import add_user

    later = await make_org(db)
    await add_user(db, organization_id=later.id, email=actor.user.email, role="admin")
    await db.commit()
    response = await client.get(ORGS, headers=actor.headers)
    assert response.status_code == 200, response.text
    assert [o["id"] for o in response.json()["data"]] == [str(actor.org.id)]
    # Still one organization reachable: no X-Organization-Id needed.
    accounts = await client.get("/api/v1/accounts", headers=actor.headers)
    assert accounts.status_code == 200, accounts.text
    assert_envelope(
        await client.get("/api/v1/accounts", headers=actor.in_org(later.id)), 403, "forbidden"
    )
    # A key made now reaches both (and asks which one).
    both = {"Authorization": f"Bearer {await make_key(db, actor.user)}"}
    listed = (await client.get(ORGS, headers=both)).json()["data"]
    assert sorted(o["id"] for o in listed) == sorted([str(actor.org.id), str(later.id)])
    assert_envelope(
        await client.get("/api/v1/accounts", headers=both), 400, "organization_required"
    )


async def test_a_key_without_limits_stores_the_organizations_of_its_user(db, actor) -> None:
    key, _ = await create_api_key(db, user_id=actor.user.id, name="all mine")
    assert key.organization_ids == [str(actor.org.id)]


async def test_an_expired_key_says_it_expired(client, db, actor) -> None:
    """Contract §15: 401 whose message says "expired", with an RFC 6750 challenge."""
    _, raw = await create_api_key(
        db, user_id=actor.user.id, name="old", expires_at=utcnow() - timedelta(seconds=1)
    )
    await db.commit()
    error = assert_envelope(
        await client.get(ORGS, headers={"Authorization": f"Bearer {raw}"}), 401, "unauthorized"
    )
    assert "expired" in error["message"]
    response = await client.get(ORGS, headers={"Authorization": f"Bearer {raw}"})
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith('Bearer error="invalid_token", error_description="')
    assert "expired" in challenge


async def test_a_key_expiring_while_cached_stops_at_its_expiry(client, db, actor) -> None:
    """The principal cache (~5 s) never keeps an expired key alive."""
    import asyncio

    _, raw = await create_api_key(
        db, user_id=actor.user.id, name="short", expires_at=utcnow() + timedelta(seconds=1.5)
    )
    await db.commit()
    headers = {"Authorization": f"Bearer {raw}"}
    assert (await client.get(ORGS, headers=headers)).status_code == 200  # now cached
    await asyncio.sleep(1.6)
    error = assert_envelope(await client.get(ORGS, headers=headers), 401, "unauthorized")
    assert "expired" in error["message"]
