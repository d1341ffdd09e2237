"""POST /api/v1/oauth/token: authorization_code (PKCE) and client_credentials, contract §8."""

from __future__ import annotations

import uuid
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.tokens import resolve_token, token_hash
from salesplan.errors import Unauthorized
from salesplan.kit.clock import utcnow
from salesplan.models.oauth import OAuthCode, OAuthToken
from salesplan.oauth.apps import regenerate_client_secret
from tests.fixtures.factories import Actor, make_org
from tests.oauth.conftest import AppWithSecret, make_oauth_app
from tests.oauth.flow import (
    REDIRECT,
    authorize_params,
    basic,
    consent,
    get_code,
    hidden_fields,
    pkce_pair,
    redirect_query,
    sign_in,
)

TOKEN = "/api/v1/oauth/token"
ORGS = "/api/v1/organizations"


@pytest.fixture
async def signed_in(client: httpx.AsyncClient, actor: Actor) -> httpx.AsyncClient:
    assert (await sign_in(client, actor.user.email)).status_code == 303
    return client


async def code_for(
    client: httpx.AsyncClient, app: AppWithSecret, **overrides: str
) -> tuple[str, str]:
    verifier, challenge = pkce_pair()
    code = await get_code(client, authorize_params(app.app, challenge, **overrides))
    return code, verifier


async def exchange(
    client: httpx.AsyncClient, app: AppWithSecret, code: str, verifier: str, **fields: str
) -> httpx.Response:
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "code_verifier": verifier,
    } | fields
    return await client.post(TOKEN, data=data, headers=basic(app.app.client_id, app.secret))


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_authorization_code_exchange_issues_a_bearer_token_for_the_user(
    signed_in: httpx.AsyncClient, oauth_app: AppWithSecret, actor: Actor
) -> None:
    code, verifier = await code_for(signed_in, oauth_app)
    response = await exchange(signed_in, oauth_app, code, verifier)
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"access_token", "token_type", "expires_in", "scope"}
    assert body["token_type"] == "Bearer" and body["expires_in"] == 3600
    assert body["scope"] == "organizations:read accounts:read"
    assert body["access_token"].startswith("sp_at_")
    assert response.headers["cache-control"] == "no-store"
    orgs = await signed_in.get(ORGS, headers=bearer(body["access_token"]))
    assert orgs.status_code == 200
    assert [o["id"] for o in orgs.json()["data"]] == [str(actor.org.id)]


async def test_client_may_authenticate_in_the_body(
    signed_in: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    code, verifier = await code_for(signed_in, oauth_app)
    response = await signed_in.post(
        TOKEN,
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "code_verifier": verifier,
            "client_id": oauth_app.app.client_id,
            "client_secret": oauth_app.secret,
        },
    )
    assert response.status_code == 200, response.text


async def test_token_reaches_only_the_organization_chosen_at_consent(
    signed_in: httpx.AsyncClient, db: AsyncSession, actor: Actor
) -> None:
    from salesplan.organizations.service import add_user

    second = await make_org(db, "Chosen Co")
    await add_user(db, organization_id=second.id, email=actor.user.email, role="member")
    await db.commit()
    app = await make_oauth_app(db, actor)
    verifier, challenge = pkce_pair()
    from tests.oauth.flow import consent, redirect_query

    response = await consent(
        signed_in, authorize_params(app.app, challenge), organization_id=str(second.id)
    )
    code = redirect_query(response)["code"]
    token = (await exchange(signed_in, app, code, verifier)).json()["access_token"]
    orgs = await signed_in.get(ORGS, headers=bearer(token))
    assert [o["id"] for o in orgs.json()["data"]] == [str(second.id)]
    other = await signed_in.get(f"{ORGS}/{actor.org.id}", headers=bearer(token))
    assert other.status_code == 404


async def test_second_redemption_is_refused_and_revokes_the_tokens_from_that_code(
    signed_in: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    code, verifier = await code_for(signed_in, oauth_app)
    first = await exchange(signed_in, oauth_app, code, verifier)
    token = first.json()["access_token"]
    assert (await signed_in.get(ORGS, headers=bearer(token))).status_code == 200
    again = await exchange(signed_in, oauth_app, code, verifier)
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"
    assert (await signed_in.get(ORGS, headers=bearer(token))).status_code == 401


async def test_expired_code_is_invalid_grant(
    signed_in: httpx.AsyncClient, oauth_app: AppWithSecret, db: AsyncSession
) -> None:
    code, verifier = await code_for(signed_in, oauth_app)
    await db.execute(
        update(OAuthCode)
        .where(OAuthCode.code_hash == token_hash(code))
        .values(expires_at=utcnow() - timedelta(seconds=1))
    )
    await db.commit()
    response = await exchange(signed_in, oauth_app, code, verifier)
    assert response.json()["error"] == "invalid_grant"


async def test_code_lives_ten_minutes(
    signed_in: httpx.AsyncClient, oauth_app: AppWithSecret, db: AsyncSession
) -> None:
    code, _ = await code_for(signed_in, oauth_app)
    row = (
        await db.execute(select(OAuthCode).where(OAuthCode.code_hash == token_hash(code)))
    ).scalar_one()
    assert timedelta(minutes=9) < row.expires_at - row.created_at <= timedelta(minutes=10)


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"redirect_uri": "http://127.0.0.1:8765/other"}, "invalid_grant"),
        ({"code_verifier": "x" * 64}, "invalid_grant"),
        ({"code": "sp_ac_not-a-code"}, "invalid_grant"),
        ({"code_verifier": ""}, "invalid_request"),
        ({"code": ""}, "invalid_request"),
        ({"redirect_uri": ""}, "invalid_request"),
        ({"resource": "http://testserver/mcp"}, "invalid_target"),
    ],
)
async def test_code_is_bound_to_redirect_uri_verifier_and_resource(
    signed_in: httpx.AsyncClient,
    oauth_app: AppWithSecret,
    fields: dict[str, str],
    error: str,
) -> None:
    code, verifier = await code_for(signed_in, oauth_app)
    data = {"code": code, "code_verifier": verifier, "redirect_uri": REDIRECT} | fields
    data = {k: v for k, v in data.items() if v}
    response = await signed_in.post(
        TOKEN,
        data={"grant_type": "authorization_code", **data},
        headers=basic(oauth_app.app.client_id, oauth_app.secret),
    )
    assert response.status_code == 400
    assert response.json()["error"] == error
    assert response.json()["error_description"]


async def test_code_is_bound_to_its_client(
    signed_in: httpx.AsyncClient, oauth_app: AppWithSecret, db: AsyncSession, actor: Actor
) -> None:
    other = await make_oauth_app(db, actor, name="Other")
    code, verifier = await code_for(signed_in, oauth_app)
    response = await exchange(signed_in, other, code, verifier)
    assert response.json()["error"] == "invalid_grant"
    # …and the rightful client can still redeem it.
    assert (await exchange(signed_in, oauth_app, code, verifier)).status_code == 200


async def test_resource_bound_token_is_accepted_only_at_mcp(
    signed_in: httpx.AsyncClient, oauth_app: AppWithSecret, app: object
) -> None:
    code, verifier = await code_for(signed_in, oauth_app, resource="http://testserver/mcp")
    response = await exchange(
        signed_in, oauth_app, code, verifier, resource="http://testserver/mcp"
    )
    assert response.status_code == 200, response.text
    token = response.json()["access_token"]
    assert (await signed_in.get(ORGS, headers=bearer(token))).status_code == 401
    async with app.state.sessionmaker() as session:  # type: ignore[attr-defined]
        principal = await resolve_token(session, token, "mcp")
        assert principal.resource == "http://testserver/mcp"
        assert principal.token_kind == "oauth" and principal.user_backed


async def test_token_without_resource_is_refused_at_mcp(
    signed_in: httpx.AsyncClient, oauth_app: AppWithSecret, app: object
) -> None:
    code, verifier = await code_for(signed_in, oauth_app)
    token = (await exchange(signed_in, oauth_app, code, verifier)).json()["access_token"]
    async with app.state.sessionmaker() as session:  # type: ignore[attr-defined]
        with pytest.raises(Unauthorized):
            await resolve_token(session, token, "mcp")
        principal = await resolve_token(session, token, "api")
    assert principal.resource is None


async def test_access_tokens_are_stored_only_as_hashes(
    signed_in: httpx.AsyncClient, oauth_app: AppWithSecret, db: AsyncSession
) -> None:
    code, verifier = await code_for(signed_in, oauth_app)
    token = (await exchange(signed_in, oauth_app, code, verifier)).json()["access_token"]
    row = (await db.execute(select(OAuthToken))).scalar_one()
    assert row.token_hash == token_hash(token) and token not in str(row.__dict__)
    assert timedelta(minutes=59) < row.expires_at - row.created_at <= timedelta(hours=1)


async def test_expired_access_token_is_401(
    client: httpx.AsyncClient, oauth_app: AppWithSecret, db: AsyncSession
) -> None:
    token = await client_credentials_token(client, oauth_app)
    await db.execute(update(OAuthToken).values(expires_at=utcnow() - timedelta(seconds=1)))
    await db.commit()
    response = await client.get(ORGS, headers=bearer(token))
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"


async def test_public_client_redeems_with_client_id_only(
    signed_in: httpx.AsyncClient,
) -> None:
    registered = await signed_in.post(
        "/api/v1/oauth/register",
        json={"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"},
    )
    client_id = registered.json()["client_id"]
    verifier, challenge = pkce_pair()
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "scope": "organizations:read",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    code = await get_code(signed_in, params)
    response = await signed_in.post(
        TOKEN,
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "code_verifier": verifier,
            "client_id": client_id,
        },
    )
    assert response.status_code == 200, response.text
    # A public client cannot use client credentials.
    cc = await signed_in.post(
        TOKEN, data={"grant_type": "client_credentials", "client_id": client_id}
    )
    assert cc.json()["error"] == "unauthorized_client"


# ------------------------------------------------------------------ client authentication


async def test_wrong_secret_by_basic_is_invalid_client_401_with_www_authenticate(
    client: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    response = await client.post(
        TOKEN,
        data={"grant_type": "client_credentials"},
        headers=basic(oauth_app.app.client_id, "wrong"),
    )
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"
    assert response.headers["www-authenticate"].startswith("Basic")
    assert response.headers["cache-control"] == "no-store"


@pytest.mark.parametrize(
    "data",
    [
        {"client_id": "sp_client_nobody", "client_secret": "x"},
        {},
        {"client_id": "CLIENT"},
    ],
)
async def test_unknown_or_unauthenticated_client_in_body_is_invalid_client(
    client: httpx.AsyncClient, oauth_app: AppWithSecret, data: dict[str, str]
) -> None:
    data = {k: (oauth_app.app.client_id if v == "CLIENT" else v) for k, v in data.items()}
    response = await client.post(TOKEN, data={"grant_type": "client_credentials", **data})
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"


async def test_malformed_basic_header_is_invalid_client(client: httpx.AsyncClient) -> None:
    response = await client.post(
        TOKEN, data={"grant_type": "client_credentials"}, headers={"Authorization": "Basic !!!"}
    )
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_client"


async def test_two_authentication_methods_are_invalid_request(
    client: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    response = await client.post(
        TOKEN,
        data={"grant_type": "client_credentials", "client_secret": oauth_app.secret},
        headers=basic(oauth_app.app.client_id, oauth_app.secret),
    )
    assert response.json()["error"] == "invalid_request"


async def test_regenerated_secret_stops_the_old_one_at_once(
    client: httpx.AsyncClient, oauth_app: AppWithSecret, db: AsyncSession, actor: Actor
) -> None:
    _, new_secret = await regenerate_client_secret(
        db, user_id=actor.user.id, app_id=oauth_app.app.id
    )
    await db.commit()
    old = await client.post(
        TOKEN,
        data={"grant_type": "client_credentials"},
        headers=basic(oauth_app.app.client_id, oauth_app.secret),
    )
    assert old.status_code == 401
    new = await client.post(
        TOKEN,
        data={"grant_type": "client_credentials"},
        headers=basic(oauth_app.app.client_id, new_secret),
    )
    assert new.status_code == 200


# ------------------------------------------------------------------ request shape


async def test_missing_grant_type_is_invalid_request(client: httpx.AsyncClient) -> None:
    response = await client.post(TOKEN, data={"scope": "accounts:read"})
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"


async def test_unknown_grant_type_is_unsupported_grant_type(
    client: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    for grant in ("password", "refresh_token", "implicit"):
        response = await client.post(
            TOKEN,
            data={"grant_type": grant},
            headers=basic(oauth_app.app.client_id, oauth_app.secret),
        )
        assert response.status_code == 400
        assert response.json()["error"] == "unsupported_grant_type"


async def test_json_body_is_invalid_request(
    client: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    response = await client.post(
        TOKEN,
        json={"grant_type": "client_credentials"},
        headers=basic(oauth_app.app.client_id, oauth_app.secret),
    )
    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid_request",
        "error_description": response.json()["error_description"],
    }


async def test_repeated_form_parameter_is_invalid_request(
    client: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    response = await client.post(
        TOKEN,
        content="grant_type=client_credentials&scope=a&scope=b",
        headers={"content-type": "application/x-www-form-urlencoded"}
        | basic(oauth_app.app.client_id, oauth_app.secret),
    )
    assert response.json()["error"] == "invalid_request"


async def test_token_endpoint_is_limited_per_ip(client: httpx.AsyncClient, app: object) -> None:
    limiter = app.state.rate_limiter  # type: ignore[attr-defined]
    saved = limiter.ip_limit
    limiter.ip_limit = 1
    try:
        await client.post(TOKEN, data={"grant_type": "client_credentials"})
        limited = await client.post(TOKEN, data={"grant_type": "client_credentials"})
    finally:
        limiter.ip_limit = saved
    assert limited.status_code == 429
    assert limited.json()["error"] == "rate_limit_exceeded"
    assert "retry-after" in limited.headers


# ------------------------------------------------------------------ client credentials


async def client_credentials_token(
    client: httpx.AsyncClient, app: AppWithSecret, scope: str | None = None
) -> str:
    data = {"grant_type": "client_credentials"} | ({"scope": scope} if scope else {})
    response = await client.post(TOKEN, data=data, headers=basic(app.app.client_id, app.secret))
    assert response.status_code == 200, response.text
    return str(response.json()["access_token"])


async def test_client_credentials_issues_an_app_token_with_requested_scopes(
    client: httpx.AsyncClient, oauth_app: AppWithSecret, actor: Actor, app: object
) -> None:
    response = await client.post(
        TOKEN,
        data={"grant_type": "client_credentials", "scope": "organizations:read"},
        headers=basic(oauth_app.app.client_id, oauth_app.secret),
    )
    assert response.status_code == 200
    body = response.json()
    assert body["scope"] == "organizations:read" and body["expires_in"] == 3600
    assert body["token_type"] == "Bearer"
    assert response.headers["cache-control"] == "no-store"
    orgs = await client.get(ORGS, headers=bearer(body["access_token"]))
    assert [o["id"] for o in orgs.json()["data"]] == [str(actor.org.id)]
    async with app.state.sessionmaker() as session:  # type: ignore[attr-defined]
        principal = await resolve_token(session, body["access_token"], "api")
    assert principal.user_id is None and principal.app_id == oauth_app.app.id
    assert not principal.user_backed


async def test_client_credentials_without_scope_gets_the_apps_scopes(
    client: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    response = await client.post(
        TOKEN,
        data={"grant_type": "client_credentials"},
        headers=basic(oauth_app.app.client_id, oauth_app.secret),
    )
    assert response.json()["scope"].split() == oauth_app.app.scopes


async def test_client_credentials_beyond_the_apps_scopes_is_invalid_scope(
    client: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    response = await client.post(
        TOKEN,
        data={"grant_type": "client_credentials", "scope": "accounts:read accounts:write"},
        headers=basic(oauth_app.app.client_id, oauth_app.secret),
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_scope"


async def test_client_credentials_token_lacks_scopes_it_was_not_given(
    client: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    token = await client_credentials_token(client, oauth_app, "accounts:read")
    response = await client.get(ORGS, headers=bearer(token))
    assert response.status_code == 403


async def test_client_credentials_with_an_unknown_resource_is_invalid_target(
    client: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    response = await client.post(
        TOKEN,
        data={"grant_type": "client_credentials", "resource": "https://else.example.com/"},
        headers=basic(oauth_app.app.client_id, oauth_app.secret),
    )
    assert response.json()["error"] == "invalid_target"


async def test_app_without_the_grant_is_unauthorized_client(
    client: httpx.AsyncClient, db: AsyncSession, actor: Actor
) -> None:
    app = await make_oauth_app(db, actor, grant_types=["authorization_code"])
    response = await client.post(
        TOKEN,
        data={"grant_type": "client_credentials"},
        headers=basic(app.app.client_id, app.secret),
    )
    assert response.status_code == 400
    assert response.json()["error"] == "unauthorized_client"


async def test_app_reaches_its_org_limits_else_the_owners_organizations_at_creation(
    client: httpx.AsyncClient, db: AsyncSession, actor: Actor
) -> None:
    from salesplan.organizations.service import add_user

    second = await make_org(db, "Later Co")
    third = await make_org(db, "Limited Co")
    await add_user(db, organization_id=third.id, email=actor.user.email, role="member")
    await db.commit()
    everything = await make_oauth_app(db, actor)
    limited = await make_oauth_app(db, actor, organization_ids=[third.id])
    await add_user(db, organization_id=second.id, email=actor.user.email, role="member")
    await db.commit()

    async def reach(app: AppWithSecret) -> set[str]:
        token = await client_credentials_token(client, app, "organizations:read")
        orgs = await client.get(ORGS, headers=bearer(token))
        return {o["id"] for o in orgs.json()["data"]}

    assert await reach(everything) == {str(actor.org.id), str(third.id)}
    assert await reach(limited) == {str(third.id)}
    unreachable = await client.get(
        f"{ORGS}/{second.id}",
        headers=bearer(await client_credentials_token(client, everything, "organizations:read")),
    )
    assert unreachable.status_code == 404
    assert uuid.UUID(str(third.id))


async def test_mcp_token_on_the_rest_api_says_whom_it_was_issued_for(
    signed_in: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    code, verifier = await code_for(signed_in, oauth_app, resource="http://testserver/mcp")
    token = (
        await exchange(signed_in, oauth_app, code, verifier, resource="http://testserver/mcp")
    ).json()["access_token"]
    response = await signed_in.get(ORGS, headers=bearer(token))
    assert response.status_code == 401
    message = response.json()["error"]["message"]
    assert response.json()["error"]["code"] == "unauthorized"
    assert message.startswith("The bearer token was issued for http://testserver/mcp")
    assert response.headers["www-authenticate"] == (
        f'Bearer error="invalid_token", error_description="{message}"'
    )


async def test_rest_token_at_mcp_says_whom_it_was_issued_for(
    signed_in: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    code, verifier = await code_for(signed_in, oauth_app)
    token = (await exchange(signed_in, oauth_app, code, verifier)).json()["access_token"]
    response = await signed_in.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers=bearer(token) | {"Accept": "application/json, text/event-stream"},
    )
    assert response.status_code == 401
    message = response.json()["error"]["message"]
    assert message.startswith("The bearer token was issued for the REST API")
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith('Bearer resource_metadata="http://testserver/.well-known/')
    assert challenge.endswith(f', error="invalid_token", error_description="{message}"')


async def test_a_wrong_code_verifier_burns_the_code(
    signed_in: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    """Issue 18, defect 15 (RFC 9700 §2.1.1): a failed PKCE check spends the code."""
    code, verifier = await code_for(signed_in, oauth_app)
    wrong, _ = pkce_pair()
    response = await exchange(signed_in, oauth_app, code, wrong)
    assert response.status_code == 400 and response.json()["error"] == "invalid_grant"
    response = await exchange(signed_in, oauth_app, code, verifier)
    assert response.status_code == 400 and response.json()["error"] == "invalid_grant"


async def test_the_token_carries_exactly_the_scopes_left_ticked_at_consent(
    signed_in: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    """Contract §15: the person unticks a scope; the token lacks it and `scope` says so."""
    verifier, challenge = pkce_pair()
    params = authorize_params(oauth_app.app, challenge, scope="organizations:read accounts:read")
    response = await consent(signed_in, params, untick=("accounts:read",))
    assert response.status_code == 303, response.text
    answer = await exchange(signed_in, oauth_app, redirect_query(response)["code"], verifier)
    assert answer.status_code == 200, answer.text
    assert answer.json()["scope"] == "organizations:read"
    token = answer.json()["access_token"]
    assert (await signed_in.get(ORGS, headers=bearer(token))).status_code == 200
    refused = await signed_in.get("/api/v1/accounts", headers=bearer(token))
    assert refused.status_code == 403
    assert refused.json()["error"]["details"]["requiredScope"] == "accounts:read"


async def test_a_client_registered_for_two_scopes_never_holds_a_third(
    client: httpx.AsyncClient, actor: Actor
) -> None:
    """Registration's `scope` bounds the authorization request's, which bounds the token's."""
    assert (await sign_in(client, actor.user.email)).status_code == 303
    registered = await client.post(
        "/api/v1/oauth/register",
        json={
            "client_name": "Two scopes",
            "redirect_uris": [REDIRECT],
            "scope": "organizations:read accounts:read",
            "token_endpoint_auth_method": "none",
        },
    )
    assert registered.status_code == 201, registered.text
    client_id = registered.json()["client_id"]
    verifier, challenge = pkce_pair()
    base = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "s",
    }
    wider = await client.get(
        "/api/v1/oauth/authorize", params=base | {"scope": "organizations:read plans:read"}
    )
    assert wider.status_code in (302, 303)
    assert redirect_query(wider)["error"] == "invalid_scope"
    # A box for a scope it did not ask for, forged into the consent form, adds nothing.
    page = await client.get(
        "/api/v1/oauth/authorize", params=base | {"scope": "organizations:read accounts:read"}
    )
    fields: dict[str, str | list[str]] = hidden_fields(page.text) | {"decision": "allow"}
    fields["granted_scope"] = ["organizations:read", "accounts:read", "engage:send"]
    response = await client.post("/oauth/consent", data=fields)
    assert response.status_code == 303, response.text
    answer = await client.post(
        TOKEN,
        data={
            "grant_type": "authorization_code",
            "code": redirect_query(response)["code"],
            "redirect_uri": REDIRECT,
            "code_verifier": verifier,
            "client_id": client_id,
        },
    )
    assert answer.status_code == 200, answer.text
    assert sorted(answer.json()["scope"].split()) == ["accounts:read", "organizations:read"]
