"""GET /api/v1/oauth/authorize and the consent page: the spec's parameter table, contract §8."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from tests.fixtures.factories import Actor, make_org
from tests.oauth.conftest import AppWithSecret, make_oauth_app
from tests.oauth.flow import (
    authorize_params,
    consent,
    hidden_fields,
    pkce_pair,
    redirect_query,
    sign_in,
    ticked_scopes,
)

AUTHORIZE = "/api/v1/oauth/authorize"


@pytest.fixture
async def signed_in(client: httpx.AsyncClient, actor: Actor) -> httpx.AsyncClient:
    response = await sign_in(client, actor.user.email)
    assert response.status_code == 303
    return client


def challenge() -> str:
    return pkce_pair()[1]


@pytest.mark.parametrize(
    ("override", "title"),
    [
        ({"client_id": "sp_client_unknown"}, "Unknown application"),
        ({"client_id": None}, "Missing client"),
        ({"redirect_uri": "http://127.0.0.1:8765/other"}, "Redirect URI not registered"),
        ({"redirect_uri": "https://evil.example.com/cb"}, "Redirect URI not registered"),
        ({"redirect_uri": None}, "Missing redirect URI"),
    ],
)
async def test_untrusted_client_or_redirect_uri_gets_an_error_page_never_a_redirect(
    signed_in: httpx.AsyncClient,
    oauth_app: AppWithSecret,
    override: dict[str, str | None],
    title: str,
) -> None:
    response = await signed_in.get(
        AUTHORIZE, params=authorize_params(oauth_app.app, challenge(), **override)
    )
    assert response.status_code == 400
    assert "location" not in response.headers
    assert response.headers["content-type"].startswith("text/html")
    assert title in response.text


@pytest.mark.parametrize(
    ("override", "error"),
    [
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"response_type": None}, "invalid_request"),
        ({"code_challenge": None}, "invalid_request"),
        ({"code_challenge_method": None}, "invalid_request"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"code_challenge": "short"}, "invalid_request"),
        ({"scope": None}, "invalid_request"),
        ({"scope": "accounts:read accounts:delete"}, "invalid_scope"),
        ({"scope": "made:up"}, "invalid_scope"),
        ({"resource": "https://elsewhere.example.com/mcp"}, "invalid_target"),
    ],
)
async def test_other_errors_redirect_with_error_and_state(
    signed_in: httpx.AsyncClient,
    oauth_app: AppWithSecret,
    override: dict[str, str | None],
    error: str,
) -> None:
    response = await signed_in.get(
        AUTHORIZE, params=authorize_params(oauth_app.app, challenge(), **override)
    )
    assert response.status_code == 302
    assert response.headers["location"].startswith(oauth_app.app.redirect_uris[0] + "?")
    query = redirect_query(response)
    assert query["error"] == error
    assert query["state"] == "xyz-state"
    assert query["error_description"]
    assert query["iss"] == "http://testserver"  # RFC 9207: the issuer of the metadata


async def test_repeated_parameter_is_invalid_request(
    signed_in: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    params = [*authorize_params(oauth_app.app, challenge()).items(), ("scope", "x:y")]
    response = await signed_in.get(AUTHORIZE, params=params)
    assert response.status_code == 302
    assert redirect_query(response)["error"] == "invalid_request"


async def test_client_without_the_code_grant_is_unauthorized_client(
    signed_in: httpx.AsyncClient, db: AsyncSession, actor: Actor
) -> None:
    machine = await make_oauth_app(db, actor, grant_types=["client_credentials"])
    response = await signed_in.get(AUTHORIZE, params=authorize_params(machine.app, challenge()))
    assert redirect_query(response)["error"] == "unauthorized_client"


async def test_unauthenticated_user_goes_to_sign_in_and_comes_back(
    client: httpx.AsyncClient, actor: Actor, oauth_app: AppWithSecret
) -> None:
    params = authorize_params(oauth_app.app, challenge())
    first = await client.get(AUTHORIZE, params=params)
    assert first.status_code == 302
    assert first.headers["location"].startswith("/login?next=%2Fapi%2Fv1%2Foauth%2Fauthorize")
    login_page = await client.get(first.headers["location"])
    fields = hidden_fields(login_page.text)
    assert fields["next"].startswith("/api/v1/oauth/authorize?")
    signed = await client.post(
        "/login",
        data=fields | {"email": actor.user.email, "password": "correct horse battery"},
    )
    assert signed.status_code == 303
    back = await client.get(signed.headers["location"])
    assert back.status_code == 200
    assert "Pipeline Sync" in back.text


async def test_consent_page_shows_app_scopes_by_resource_and_refuses_framing(
    signed_in: httpx.AsyncClient, db: AsyncSession, actor: Actor
) -> None:
    app = await make_oauth_app(
        db,
        actor,
        description="Keeps your pipeline in sync.",
        icon_url="https://cdn.example.com/i.png",
    )
    response = await signed_in.get(
        AUTHORIZE,
        params=authorize_params(app.app, challenge(), scope="accounts:read plans:read"),
    )
    assert response.status_code == 200
    html = response.text
    assert "Pipeline Sync" in html and "Keeps your pipeline in sync." in html
    assert 'src="https://cdn.example.com/i.png"' in html
    assert "<strong>Accounts</strong>" in html and "<strong>Plans</strong>" in html
    assert actor.org.name in html
    assert 'value="allow"' in html and 'value="cancel"' in html
    assert response.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert 'name="csrf_token"' in html


async def test_consent_offers_an_organization_picker_when_the_user_has_several(
    signed_in: httpx.AsyncClient, db: AsyncSession, actor: Actor, oauth_app: AppWithSecret
) -> None:
    from salesplan.organizations.service import add_user

    second = await make_org(db, "Second Co")
    await add_user(db, organization_id=second.id, email=actor.user.email, role="member")
    await db.commit()
    # The app was created before the second membership: it reaches only the first.
    narrow = await signed_in.get(AUTHORIZE, params=authorize_params(oauth_app.app, challenge()))
    assert "<select" not in narrow.text
    wide = await make_oauth_app(db, actor, name="Wide App")
    response = await signed_in.get(AUTHORIZE, params=authorize_params(wide.app, challenge()))
    assert '<select id="organization_id"' in response.text
    assert "Second Co" in response.text and actor.org.name in response.text


async def test_consent_shows_each_requested_scope_as_a_ticked_checkbox(
    signed_in: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    """Contract §15: one box per scope the client asked for, each ticked; no other scope."""
    params = authorize_params(oauth_app.app, challenge(), scope="organizations:read plans:read")
    page = await signed_in.get(AUTHORIZE, params=params)
    assert ticked_scopes(page.text) == ["organizations:read", "plans:read"]
    assert 'value="accounts:read"' not in page.text


async def test_unticking_every_scope_is_refused_on_the_page(
    signed_in: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    response = await consent(
        signed_in,
        authorize_params(oauth_app.app, challenge()),
        untick=("organizations:read", "accounts:read"),
    )
    assert response.status_code == 200
    assert "location" not in response.headers
    assert "Tick at least one permission" in response.text
    assert ticked_scopes(response.text) == []  # shown as it was sent


async def test_cancel_redirects_with_access_denied_and_state(
    signed_in: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    response = await consent(
        signed_in, authorize_params(oauth_app.app, challenge()), decision="cancel"
    )
    assert response.status_code == 303
    query = redirect_query(response)
    assert query == {
        "error": "access_denied",
        "error_description": query["error_description"],
        "state": "xyz-state",
        "iss": "http://testserver",
    }


async def test_allow_redirects_303_with_code_and_state(
    signed_in: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    response = await consent(signed_in, authorize_params(oauth_app.app, challenge()))
    assert response.status_code == 303
    assert response.headers["location"].startswith("http://127.0.0.1:8765/callback?code=")
    query = redirect_query(response)
    assert query["code"].startswith("sp_ac_") and query["state"] == "xyz-state"


async def test_every_authorization_response_names_the_issuer(
    signed_in: httpx.AsyncClient, client: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    """RFC 9207: `iss` equal to the metadata's `issuer` on the code and on errors, and the
    metadata says so (`authorization_response_iss_parameter_supported`)."""
    metadata = (await client.get("/.well-known/oauth-authorization-server")).json()
    assert metadata["authorization_response_iss_parameter_supported"] is True
    allowed = await consent(signed_in, authorize_params(oauth_app.app, challenge()))
    denied = await consent(
        signed_in, authorize_params(oauth_app.app, challenge()), decision="cancel"
    )
    refused = await signed_in.get(
        AUTHORIZE, params=authorize_params(oauth_app.app, challenge(), scope="nope:read")
    )
    for response in (allowed, denied, refused):
        assert redirect_query(response)["iss"] == metadata["issuer"], response.headers


async def test_consent_without_a_valid_csrf_token_issues_no_code(
    signed_in: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    page = await signed_in.get(AUTHORIZE, params=authorize_params(oauth_app.app, challenge()))
    fields = hidden_fields(page.text) | {"decision": "allow", "csrf_token": "forged"}
    response = await signed_in.post("/oauth/consent", data=fields)
    assert response.status_code == 200
    assert "location" not in response.headers


async def test_consent_post_revalidates_the_request(
    signed_in: httpx.AsyncClient, oauth_app: AppWithSecret
) -> None:
    page = await signed_in.get(AUTHORIZE, params=authorize_params(oauth_app.app, challenge()))
    fields = hidden_fields(page.text) | {"decision": "allow", "scope": "calendar:write"}
    response = await signed_in.post("/oauth/consent", data=fields)
    assert response.status_code == 303
    assert redirect_query(response)["error"] == "invalid_scope"


async def test_consent_refuses_an_organization_outside_the_choices(
    signed_in: httpx.AsyncClient, db: AsyncSession, oauth_app: AppWithSecret
) -> None:
    other = await make_org(db, "Not Mine")
    response = await consent(
        signed_in, authorize_params(oauth_app.app, challenge()), organization_id=str(other.id)
    )
    assert response.status_code == 200
    assert "Choose an organization" in response.text


async def test_user_outside_the_apps_organizations_is_denied(
    client: httpx.AsyncClient, db: AsyncSession, actor: Actor
) -> None:
    from tests.fixtures.factories import make_user

    app = await make_oauth_app(db, actor)
    stranger_org = await make_org(db)
    stranger = await make_user(db, stranger_org)
    await sign_in(client, stranger.email)
    response = await client.get(AUTHORIZE, params=authorize_params(app.app, challenge()))
    assert response.status_code == 302
    assert redirect_query(response)["error"] == "access_denied"


async def test_dynamic_client_lets_the_user_pick_among_their_organizations(
    signed_in: httpx.AsyncClient, db: AsyncSession, actor: Actor
) -> None:
    from salesplan.organizations.service import add_user

    second = await make_org(db, "Dyn Second")
    await add_user(db, organization_id=second.id, email=actor.user.email, role="member")
    await db.commit()
    registered = await signed_in.post(
        "/api/v1/oauth/register",
        json={"client_name": "Agent", "redirect_uris": ["http://localhost:9/cb"]},
    )
    client_id = registered.json()["client_id"]
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": "http://localhost:9/cb",
        "scope": "organizations:read",
        "code_challenge": challenge(),
        "code_challenge_method": "S256",
    }
    page = await signed_in.get(AUTHORIZE, params=params)
    assert "Dyn Second" in page.text and "<select" in page.text
    response = await consent(signed_in, params, organization_id=str(second.id))
    assert response.status_code == 303
    assert "code" in redirect_query(response)
    assert "state" not in redirect_query(response)
