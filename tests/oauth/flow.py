"""Helpers that drive the OAuth flow over HTTP, as a browser and a client would."""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from salesplan.models.oauth import OAuthApp

PASSWORD = "correct horse battery"
REDIRECT = "http://127.0.0.1:8765/callback"
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = (
        base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    )
    return verifier, challenge


def csrf_of(html: str) -> str:
    match = _CSRF.search(html)
    assert match, "no CSRF token in the page"
    return match.group(1)


def hidden_fields(html: str) -> dict[str, str]:
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', html))
    return {
        k: v.replace("&amp;", "&").replace("&#34;", '"').replace("&#39;", "'")
        for k, v in fields.items()
    }


def ticked_scopes(html: str) -> list[str]:
    """The consent page's scope checkboxes that are ticked (as a browser would send them)."""
    boxes = re.findall(r'<input type="checkbox" name="granted_scope" value="([^"]+)"[^>]*>', html)
    ticked = re.findall(
        r'<input type="checkbox" name="granted_scope" value="([^"]+)"[^>]*\bchecked\b[^>]*>', html
    )
    assert boxes, "no scope checkboxes on the consent page"
    return ticked


async def sign_in(
    client: httpx.AsyncClient, email: str, password: str = PASSWORD
) -> httpx.Response:
    page = await client.get("/login")
    return await client.post(
        "/login",
        data={"email": email, "password": password, "csrf_token": csrf_of(page.text), "next": "/"},
    )


def authorize_params(app: OAuthApp, challenge: str, **overrides: Any) -> dict[str, str]:
    params = {
        "response_type": "code",
        "client_id": app.client_id,
        "redirect_uri": app.redirect_uris[0],
        "scope": "organizations:read accounts:read",
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "xyz-state",
    }
    params.update(overrides)
    return {k: v for k, v in params.items() if v is not None}


def redirect_query(response: httpx.Response) -> dict[str, str]:
    location = response.headers["location"]
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


async def consent(
    client: httpx.AsyncClient,
    params: dict[str, str],
    decision: str = "allow",
    *,
    untick: tuple[str, ...] = (),
    **extra: str,
) -> httpx.Response:
    """Consent as a person would: the page's fields, its scope boxes as ticked (all the
    request named) but for those in `untick`."""
    page = await client.get("/api/v1/oauth/authorize", params=params)
    assert page.status_code == 200, page.text
    fields: dict[str, str | list[str]] = hidden_fields(page.text) | {"decision": decision} | extra
    fields["granted_scope"] = [s for s in ticked_scopes(page.text) if s not in untick]
    return await client.post("/oauth/consent", data=fields)


async def get_code(client: httpx.AsyncClient, params: dict[str, str]) -> str:
    response = await consent(client, params)
    assert response.status_code == 303, response.text
    return redirect_query(response)["code"]


def basic(client_id: str, secret: str) -> dict[str, str]:
    raw = base64.b64encode(f"{client_id}:{secret}".encode()).decode()
    return {"Authorization": f"Basic {raw}"}
