"""Browser sessions and CSRF.

- The session cookie holds a random id; the database holds its SHA-256 (`WebSession`), so that
  signing out ends it on the server. HttpOnly, SameSite=Lax, Secure when the public URL is https.
- CSRF: a random HttpOnly cookie, and in every form an HMAC of it under the server's signing key.
  A cross-site page can neither read the cookie nor compute the HMAC (double submit, signed)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from datetime import timedelta
from typing import Any

from fastapi import Request
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.responses import Response

from salesplan.auth.tokens import token_hash
from salesplan.kit.clock import utcnow
from salesplan.models.identity import User
from salesplan.models.oauth import WebSession
from salesplan.web import repository

SESSION_COOKIE = "sp_session"
CSRF_COOKIE = "sp_csrf"
SESSION_LIFETIME = timedelta(hours=12)


def _secure(request: Request) -> bool:
    return bool(request.app.state.settings.public_url.startswith("https://"))


async def session_row(request: Request, session: AsyncSession) -> WebSession | None:
    raw = request.cookies.get(SESSION_COOKIE)
    if not raw or len(raw) > 100:
        return None
    row = await repository.web_session(session, token_hash(raw))
    if row is None or row.expires_at <= utcnow():
        return None
    return row


async def flash(request: Request, session: AsyncSession, data: dict[str, Any]) -> None:
    """What the next page view shows once (a notice, a new secret, a problem)."""
    row = await session_row(request, session)
    if row is not None:
        row.flash = data


async def current_user(request: Request, session: AsyncSession) -> User | None:
    row = await session_row(request, session)
    if row is None:
        return None
    return await session.get(User, row.user_id)


async def start_session(
    session: AsyncSession, response: Response, request: Request, user_id: uuid.UUID
) -> None:
    raw = secrets.token_urlsafe(32)
    session.add(
        WebSession(
            session_hash=token_hash(raw), user_id=user_id, expires_at=utcnow() + SESSION_LIFETIME
        )
    )
    await session.flush()
    response.set_cookie(
        SESSION_COOKIE,
        raw,
        max_age=int(SESSION_LIFETIME.total_seconds()),
        path="/",
        httponly=True,
        samesite="lax",
        secure=_secure(request),
    )


async def end_session(session: AsyncSession, response: Response, request: Request) -> None:
    raw = request.cookies.get(SESSION_COOKIE)
    if raw:
        await repository.delete_web_session(session, token_hash(raw))
    response.delete_cookie(
        SESSION_COOKIE, path="/", httponly=True, samesite="lax", secure=_secure(request)
    )


def _csrf_for(request: Request, cookie: str) -> str:
    key: bytes = request.app.state.settings.signing_key
    return hmac.new(key, b"csrf:" + cookie.encode(), hashlib.sha256).hexdigest()


def csrf_token(request: Request) -> tuple[str, str | None]:
    """The form token, and a new cookie value to set when the browser has none yet."""
    cookie = request.cookies.get(CSRF_COOKIE)
    new = None
    if not cookie or len(cookie) > 100:
        cookie = new = secrets.token_urlsafe(24)
    return _csrf_for(request, cookie), new


def set_csrf_cookie(response: Response, request: Request, value: str) -> None:
    response.set_cookie(
        CSRF_COOKIE, value, path="/", httponly=True, samesite="lax", secure=_secure(request)
    )


def csrf_valid(request: Request, presented: object) -> bool:
    cookie = request.cookies.get(CSRF_COOKIE)
    if not cookie or not isinstance(presented, str) or not presented:
        return False
    return hmac.compare_digest(_csrf_for(request, cookie), presented)
