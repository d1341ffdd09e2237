"""OAuth apps (clients), authorization codes, access tokens and web sign-in sessions.

Secrets, codes, access tokens and session ids are stored only as SHA-256 hashes."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from salesplan.models.base import Base, IdMixin, TimestampMixin


class OAuthApp(IdMixin, TimestampMixin, Base):
    """A client. `owner_user_id` is null for dynamically registered clients.

    `organization_ids` null = no limit (the consenting user picks among their organizations);
    client-credentials apps always carry the list they reach."""

    __tablename__ = "oauth_apps"

    owner_user_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True, default=None
    )
    client_id: Mapped[str] = mapped_column(String(64), unique=True)
    client_secret_hash: Mapped[str | None] = mapped_column(String(64), default=None)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    icon_url: Mapped[str | None] = mapped_column(String(2000), default=None)
    client_uri: Mapped[str | None] = mapped_column(String(2000), default=None)
    redirect_uris: Mapped[list[Any]] = mapped_column()
    scopes: Mapped[list[Any]] = mapped_column()
    organization_ids: Mapped[list[Any] | None] = mapped_column(default=None)
    grant_types: Mapped[list[Any]] = mapped_column()
    token_endpoint_auth_method: Mapped[str] = mapped_column(
        String(40), default="client_secret_basic"
    )
    dynamic: Mapped[bool] = mapped_column(default=False)


class OAuthCode(IdMixin, TimestampMixin, Base):
    """An authorization code: single use, short-lived, bound to everything consent decided."""

    __tablename__ = "oauth_codes"

    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    app_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("oauth_apps.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    organization_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("organizations.id", ondelete="CASCADE")
    )
    redirect_uri: Mapped[str] = mapped_column(String(2000))
    code_challenge: Mapped[str] = mapped_column(String(128))
    scopes: Mapped[list[Any]] = mapped_column()
    resource: Mapped[str | None] = mapped_column(String(2000), default=None)
    expires_at: Mapped[datetime] = mapped_column()
    used_at: Mapped[datetime | None] = mapped_column(default=None)


class OAuthToken(IdMixin, TimestampMixin, Base):
    """An access token. `user_id` null = an app (client-credentials) token."""

    __tablename__ = "oauth_tokens"

    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    app_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("oauth_apps.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), default=None
    )
    code_id: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("oauth_codes.id", ondelete="CASCADE"), index=True, default=None
    )
    scopes: Mapped[list[Any]] = mapped_column()
    organization_ids: Mapped[list[Any]] = mapped_column()
    resource: Mapped[str | None] = mapped_column(String(2000), default=None)
    expires_at: Mapped[datetime] = mapped_column()
    revoked_at: Mapped[datetime | None] = mapped_column(default=None)


class WebSession(IdMixin, TimestampMixin, Base):
    """A signed-in browser. The cookie holds a random id; the row holds its hash, so that
    signing out ends the session on the server. `flash` carries a one-time message (a new
    key or secret shown once after a POST-redirect)."""

    __tablename__ = "web_sessions"

    session_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    expires_at: Mapped[datetime] = mapped_column()
    flash: Mapped[dict[str, Any] | None] = mapped_column(default=None)
