"""Sign-in, sign-out and developer settings over HTTP."""

from __future__ import annotations

import re

import httpx
import pytest
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.models.identity import ApiKey
from salesplan.models.oauth import OAuthApp, WebSession
from tests.fixtures.factories import Actor, make_org, make_user
from tests.oauth.flow import basic, csrf_of, sign_in

DEV = "/settings/developer"


async def signed_in_page(client: httpx.AsyncClient) -> str:
    page = await client.get(DEV)
    assert page.status_code == 200, page.text
    return page.text


async def post_form(
    client: httpx.AsyncClient, path: str, data: dict[str, object]
) -> httpx.Response:
    token = csrf_of(await signed_in_page(client))
    return await client.post(path, data={"csrf_token": token, **data})


# ------------------------------------------------------------------ sign-in


async def test_sign_in_sets_an_httponly_lax_session_cookie(
    client: httpx.AsyncClient, actor: Actor
) -> None:
    response = await sign_in(client, actor.user.email)
    assert response.status_code == 303
    cookie = next(v for v in response.headers.get_list("set-cookie") if v.startswith("sp_session="))
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie
    assert "Secure" not in cookie
    assert (await client.get(DEV)).status_code == 200


async def test_session_cookie_is_secure_under_https(
    client: httpx.AsyncClient, actor: Actor, app: object
) -> None:
    settings = app.state.settings  # type: ignore[attr-defined]
    page = await client.get("/login")  # over http first: a Secure cookie would not come back
    saved = settings.public_url
    settings.public_url = "https://salesplan.example.com"
    try:
        response = await client.post(
            "/login",
            data={
                "email": actor.user.email,
                "password": "correct horse battery",
                "csrf_token": csrf_of(page.text),
            },
        )
    finally:
        settings.public_url = saved
    assert response.status_code == 303
    cookie = next(v for v in response.headers.get_list("set-cookie") if v.startswith("sp_session="))
    assert "Secure" in cookie


@pytest.mark.parametrize("which", ["wrong password", "unknown e-mail"])
async def test_wrong_credentials_are_refused_with_one_message(
    client: httpx.AsyncClient, actor: Actor, which: str
) -> None:
    email = actor.user.email if which == "wrong password" else "nobody@example.com"
    response = await sign_in(client, email, "not the password")
    assert response.status_code == 401
    assert "The e-mail or password is not right." in response.text
    assert "sp_session=" not in response.headers.get("set-cookie", "")


async def test_sign_in_without_csrf_token_is_refused(
    client: httpx.AsyncClient, actor: Actor
) -> None:
    await client.get("/login")
    response = await client.post(
        "/login", data={"email": actor.user.email, "password": "correct horse battery"}
    )
    assert response.status_code == 400
    assert "sp_session=" not in response.headers.get("set-cookie", "")


async def test_sign_in_attempts_are_throttled_per_ip(
    client: httpx.AsyncClient, actor: Actor, app: object
) -> None:
    limiter = app.state.rate_limiter  # type: ignore[attr-defined]
    saved = limiter.ip_limit
    limiter.ip_limit = 2
    try:
        for _ in range(2):
            assert (await sign_in(client, actor.user.email, "guess")).status_code == 401
        throttled = await sign_in(client, actor.user.email)
    finally:
        limiter.ip_limit = saved
    assert throttled.status_code == 429
    assert "Too many sign-in attempts" in throttled.text
    assert int(throttled.headers["retry-after"]) >= 1


async def test_sign_in_page_refuses_framing(client: httpx.AsyncClient) -> None:
    response = await client.get("/login")
    assert response.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    assert 'name="csrf_token"' in response.text
    assert 'autocomplete="current-password"' in response.text


@pytest.mark.parametrize("target", ["//evil.example.com/x", "https://evil.example.com/", "/\\evil"])
async def test_sign_in_never_redirects_off_site(
    client: httpx.AsyncClient, actor: Actor, target: str
) -> None:
    page = await client.get("/login", params={"next": target})
    response = await client.post(
        "/login",
        data={
            "email": actor.user.email,
            "password": "correct horse battery",
            "csrf_token": csrf_of(page.text),
            "next": target,
        },
    )
    assert response.headers["location"] == DEV


async def test_sign_out_ends_the_session_on_the_server(
    client: httpx.AsyncClient, actor: Actor, db: AsyncSession
) -> None:
    await sign_in(client, actor.user.email)
    cookie = client.cookies.get("sp_session")
    assert cookie
    response = await post_form(client, "/logout", {})
    assert response.status_code == 303 and response.headers["location"] == "/login"
    assert await db.scalar(select(func.count()).select_from(WebSession)) == 0
    client.cookies.set("sp_session", cookie)
    again = await client.get(DEV)
    assert again.status_code == 303 and again.headers["location"].startswith("/login")


# ------------------------------------------------------------------ developer settings


@pytest.fixture
async def dev(client: httpx.AsyncClient, actor: Actor) -> httpx.AsyncClient:
    assert (await sign_in(client, actor.user.email)).status_code == 303
    return client


async def test_developer_settings_need_sign_in(client: httpx.AsyncClient) -> None:
    response = await client.get(DEV)
    assert response.status_code == 303
    assert response.headers["location"] == "/login?next=/settings/developer"


async def test_creating_a_key_shows_it_once_and_it_works(
    dev: httpx.AsyncClient, actor: Actor
) -> None:
    response = await post_form(
        dev,
        DEV + "/keys",
        {
            "name": "Reporting",
            "scopes": ["organizations:read"],
            "organizations": [str(actor.org.id)],
        },
    )
    assert response.status_code == 303
    page = await dev.get(DEV)
    match = re.search(r'value="(sp_live_[^"]+)"', page.text)
    assert match and "will not be shown again" in page.text
    key = match.group(1)
    assert key not in (await dev.get(DEV)).text
    orgs = await dev.get("/api/v1/organizations", headers={"Authorization": f"Bearer {key}"})
    assert orgs.status_code == 200
    assert [o["id"] for o in orgs.json()["data"]] == [str(actor.org.id)]


async def test_revoking_a_key_stops_it(dev: httpx.AsyncClient, db: AsyncSession) -> None:
    await post_form(dev, DEV + "/keys", {"name": "Temp", "scopes": ["organizations:read"]})
    key = re.search(r'value="(sp_live_[^"]+)"', (await dev.get(DEV)).text).group(1)  # type: ignore[union-attr]
    row = (await db.execute(select(ApiKey).where(ApiKey.name == "Temp"))).scalar_one()
    response = await post_form(dev, f"{DEV}/keys/{row.id}/revoke", {})
    assert response.status_code == 303
    orgs = await dev.get("/api/v1/organizations", headers={"Authorization": f"Bearer {key}"})
    assert orgs.status_code == 401


async def test_a_key_may_expire_and_an_expired_key_is_listed_as_expired(
    dev: httpx.AsyncClient, db: AsyncSession
) -> None:
    """Contract §15: an expiry choice on the page; an expired key shows "Expired" and has no
    Revoke button."""
    from datetime import timedelta

    from salesplan.kit.clock import utcnow

    page = await dev.get(DEV)
    assert '<select id="key-expiry" name="expires_in_days">' in page.text
    await post_form(
        dev,
        DEV + "/keys",
        {"name": "Month", "scopes": ["organizations:read"], "expires_in_days": "30"},
    )
    key = re.search(r'value="(sp_live_[^"]+)"', (await dev.get(DEV)).text).group(1)  # type: ignore[union-attr]
    row = (await db.execute(select(ApiKey).where(ApiKey.name == "Month"))).scalar_one()
    assert row.expires_at is not None
    assert abs(row.expires_at - (utcnow() + timedelta(days=30))) < timedelta(minutes=5)
    listing = (await dev.get(DEV)).text
    assert row.expires_at.strftime("%Y-%m-%d") in listing
    assert 'aria-label="Revoke Month"' in listing

    await db.execute(
        update(ApiKey).where(ApiKey.id == row.id).values(expires_at=utcnow() - timedelta(1))
    )
    await db.commit()
    listing = (await dev.get(DEV)).text
    assert 'aria-label="Revoke Month"' not in listing
    assert '<span class="badge">Expired</span>' in listing
    answer = await dev.get("/api/v1/organizations", headers={"Authorization": f"Bearer {key}"})
    assert answer.status_code == 401 and "expired" in answer.json()["error"]["message"]


async def test_a_bad_expiry_choice_is_explained(dev: httpx.AsyncClient) -> None:
    for bad in ("soon", "0"):
        await post_form(
            dev,
            DEV + "/keys",
            {"name": "X", "scopes": ["organizations:read"], "expires_in_days": bad},
        )
        page = (await dev.get(DEV)).text
        assert 'role="alert"' in page and "expir" in page
        assert "sp_live_" not in page.split('id="keys"')[0]


async def test_a_form_without_csrf_changes_nothing(
    dev: httpx.AsyncClient, db: AsyncSession
) -> None:
    response = await dev.post(DEV + "/keys", data={"name": "Sneaky", "scopes": "accounts:read"})
    assert response.status_code == 303
    assert (
        await db.scalar(select(func.count()).select_from(ApiKey).where(ApiKey.name == "Sneaky"))
        == 0
    )


async def app_credentials(dev: httpx.AsyncClient) -> tuple[str, str]:
    text = (await dev.get(DEV)).text
    client_id = re.search(r'id="new-client-id" class="secret-value" readonly value="([^"]+)"', text)
    secret = re.search(r'id="new-secret" class="secret-value" readonly value="([^"]+)"', text)
    assert client_id and secret
    return client_id.group(1), secret.group(1)


async def cc_status(client: httpx.AsyncClient, client_id: str, secret: str, scope: str) -> int:
    response = await client.post(
        "/api/v1/oauth/token",
        data={"grant_type": "client_credentials", "scope": scope},
        headers=basic(client_id, secret),
    )
    return response.status_code


async def test_oauth_app_lifecycle_create_edit_regenerate_delete(
    dev: httpx.AsyncClient, db: AsyncSession, actor: Actor
) -> None:
    created = await post_form(
        dev,
        DEV + "/apps",
        {
            "name": "Warehouse",
            "description": "Nightly export",
            "redirect_uris": "https://warehouse.example.com/cb",
            "grant_types": ["client_credentials", "authorization_code"],
            "scopes": ["organizations:read", "accounts:read"],
        },
    )
    assert created.status_code == 303
    client_id, secret = await app_credentials(dev)
    assert await cc_status(dev, client_id, secret, "accounts:read") == 200
    app = (await db.execute(select(OAuthApp).where(OAuthApp.client_id == client_id))).scalar_one()
    assert app.organization_ids == [str(actor.org.id)]

    edited = await post_form(
        dev,
        f"{DEV}/apps/{app.id}",
        {
            "redirect_uris": "https://warehouse.example.com/cb\nhttp://localhost:3000/cb",
            "scopes": ["organizations:read"],
            "organizations": [str(actor.org.id)],
        },
    )
    assert edited.status_code == 303
    await db.refresh(app)
    assert app.redirect_uris == ["https://warehouse.example.com/cb", "http://localhost:3000/cb"]
    assert app.scopes == ["organizations:read"]
    assert await cc_status(dev, client_id, secret, "accounts:read") == 400

    regenerated = await post_form(dev, f"{DEV}/apps/{app.id}/secret", {})
    assert regenerated.status_code == 303
    _, new_secret = await app_credentials(dev)
    assert await cc_status(dev, client_id, secret, "organizations:read") == 401
    assert await cc_status(dev, client_id, new_secret, "organizations:read") == 200

    deleted = await post_form(dev, f"{DEV}/apps/{app.id}/delete", {})
    assert deleted.status_code == 303
    assert await cc_status(dev, client_id, new_secret, "organizations:read") == 401


async def test_bad_redirect_uri_in_settings_is_explained(dev: httpx.AsyncClient) -> None:
    await post_form(dev, DEV + "/apps", {"name": "Bad", "redirect_uris": "http://example.com/cb"})
    page = await dev.get(DEV)
    assert "plain http is allowed only on loopback" in page.text


async def test_another_users_app_cannot_be_changed(
    dev: httpx.AsyncClient, db: AsyncSession
) -> None:
    from salesplan.oauth.apps import create_oauth_app

    other_org = await make_org(db)
    other = await make_user(db, other_org)
    theirs, _ = await create_oauth_app(db, owner_user_id=other.id, name="Theirs")
    await db.commit()
    response = await post_form(dev, f"{DEV}/apps/{theirs.id}/secret", {})
    assert response.status_code == 303
    assert "OAuth app not found." in (await dev.get(DEV)).text


async def test_sign_out_page_offers_a_csrf_protected_button(
    client: httpx.AsyncClient, actor: Actor
) -> None:
    assert (await client.get("/logout")).headers["location"] == "/login"
    await sign_in(client, actor.user.email)
    page = await client.get("/logout")
    assert page.status_code == 200 and 'action="/logout"' in page.text
    assert (await client.post("/logout", data={"csrf_token": "forged"})).status_code == 400
    response = await client.post("/logout", data={"csrf_token": csrf_of(page.text)})
    assert response.status_code == 303


async def test_no_scope_is_ticked_for_a_new_key(dev: httpx.AsyncClient) -> None:
    page = (await dev.get(DEV)).text
    key_form = page[page.index('action="/settings/developer/keys"') :]
    key_form = key_form[: key_form.index("</form>")]
    assert 'name="scopes"' in key_form
    assert not re.search(r"<input[^>]*\bchecked\b", key_form)


async def test_a_refused_app_keeps_the_form_and_quotes_the_whole_bad_value(
    dev: httpx.AsyncClient, actor: Actor
) -> None:
    bad = "http://example.com/oauth callback"
    await post_form(
        dev,
        DEV + "/apps",
        {
            "name": "Partner portal",
            "description": "Syncs accounts nightly",
            "redirect_uris": f"https://ok.example.com/cb\n{bad}",
            "grant_types": ["authorization_code"],
            "scopes": ["accounts:read"],
            "organizations": [str(actor.org.id)],
        },
    )
    page = (await dev.get(DEV)).text
    assert f"{bad!r}: plain http is allowed only on loopback".replace("'", "&#39;") in page
    app_form = page[page.index('action="/settings/developer/apps"') :]
    app_form = app_form[: app_form.index("</form>")]
    assert 'value="Partner portal"' in app_form and 'value="Syncs accounts nightly"' in app_form
    assert f"https://ok.example.com/cb\n{bad}</textarea>" in app_form
    assert re.search(r'value="accounts:read"[^>]*checked', app_form)
    assert not re.search(r'value="client_credentials"[^>]*checked', app_form)
    assert re.search(rf'value="{actor.org.id}"[^>]*checked', app_form)
    # Shown once: the next visit starts from an empty form.
    again = (await dev.get(DEV)).text
    assert "Partner portal" not in again


async def test_a_refused_key_keeps_the_form(dev: httpx.AsyncClient) -> None:
    await post_form(dev, DEV + "/keys", {"name": "Nightly sync", "scopes": []})
    page = (await dev.get(DEV)).text
    assert "Choose at least one scope" in page
    key_form = page[page.index('action="/settings/developer/keys"') :]
    assert 'value="Nightly sync"' in key_form[: key_form.index("</form>")]


async def test_every_scope_picker_says_what_no_ticked_scope_means(
    dev: httpx.AsyncClient, actor: Actor
) -> None:
    """The key form, the new-app form and an app's edit form each say, in the same words, what
    happens when no scope is ticked (the key and an app's edit are refused; a new app gets every
    approved scope)."""
    await post_form(
        dev,
        DEV + "/apps",
        {"name": "Sync", "grant_types": ["client_credentials"], "scopes": ["accounts:read"]},
    )
    page = (await dev.get(DEV)).text
    forms = {
        "key": 'action="/settings/developer/keys"',
        "new app": 'action="/settings/developer/apps"',
        "edit app": 'action="/settings/developer/apps/',
    }
    said = {}
    for name, start in forms.items():
        form = page[page.index(start) :]
        form = form[: form.index("</form>")]
        said[name] = re.findall(r'<p class="hint">(None ticked: [^<]*)</p>', form)
    assert said == {
        "key": ["None ticked: the key is refused; tick each scope it needs."],
        "new app": ["None ticked: the app gets every approved scope."],
        "edit app": ["None ticked: the change is refused; tick each scope the app needs."],
    }
