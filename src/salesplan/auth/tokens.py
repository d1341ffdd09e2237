"""Bearer tokens: parsing, the registry of token kinds, and partner API keys."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth import repository
from salesplan.auth.principal import Principal
from salesplan.auth.repository import user_organizations
from salesplan.auth.scopes import APPROVED_SCOPES, unknown_scopes
from salesplan.errors import NotFound, Unauthorized, ValidationFailed
from salesplan.kit.clock import isoformat, utcnow
from salesplan.models.identity import ApiKey, User

API_KEY_PREFIX = "sp_live_"
LAST_USED_GRANULARITY = timedelta(minutes=1)
MAX_EXPIRY_DAYS = 3650

# A resolver answers the principal and when the token expires (None: no expiry), or None.
Resolved = tuple[Principal, "datetime | None"]
TokenResolver = Callable[[AsyncSession, str, str], Awaitable[Resolved | None]]
_resolvers: dict[str, TokenResolver] = {}


def register_token_kind(prefix: str, resolver: TokenResolver) -> None:
    """Token kinds are told apart by prefix (`sp_live_` API keys, OAuth access tokens, …)."""
    _resolvers[prefix] = resolver


def token_hash(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def hashes_match(stored: str, presented: str) -> bool:
    return hmac.compare_digest(stored.encode(), presented.encode())


def bearer_token(authorization: str | None) -> str:
    if not authorization:
        raise Unauthorized("Missing bearer token.")
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        raise Unauthorized("Malformed Authorization header: expected `Bearer <token>`.")
    return token


class PrincipalCache:
    """A short-lived, in-process cache of resolved tokens, so that the hot path does not look the
    token up on every request. Staleness is bounded by `ttl` seconds (memberships, scopes);
    revocation in this process invalidates at once (`invalidate`)."""

    def __init__(self, ttl: float = 5.0, max_entries: int = 50_000) -> None:
        self.ttl = ttl
        self.max_entries = max_entries
        self._entries: dict[tuple[str, str], tuple[Principal, float, datetime | None]] = {}

    def get(self, digest: str, audience: str) -> Principal | None:
        entry = self._entries.get((digest, audience))
        if entry is None:
            return None
        principal, until, expires_at = entry
        now = time.monotonic()
        if now >= until or (expires_at is not None and expires_at <= utcnow()):
            self._entries.pop((digest, audience), None)
            return None
        return principal

    def put(
        self, digest: str, audience: str, principal: Principal, expires_at: datetime | None
    ) -> None:
        if self.ttl <= 0:
            return
        if len(self._entries) >= self.max_entries:
            now = time.monotonic()
            self._entries = {k: v for k, v in self._entries.items() if v[1] > now}
            if len(self._entries) >= self.max_entries:
                self._entries.clear()
        self._entries[(digest, audience)] = (principal, time.monotonic() + self.ttl, expires_at)

    def invalidate(self, token_id: uuid.UUID) -> None:
        for key in [k for k, v in self._entries.items() if v[0].token_id == token_id]:
            del self._entries[key]

    def invalidate_app(self, app_id: uuid.UUID) -> None:
        for key in [k for k, v in self._entries.items() if v[0].app_id == app_id]:
            del self._entries[key]

    def clear(self) -> None:
        self._entries.clear()


principal_cache = PrincipalCache()


def cached_principal(raw: str, audience: str) -> Principal | None:
    """The principal of a token resolved a moment ago (PrincipalCache), or None."""
    return principal_cache.get(token_hash(raw), audience)


async def resolve_token(session: AsyncSession, raw: str, audience: str) -> Principal:
    """The principal behind a token, or 401. `audience` is `api` or `mcp`."""
    digest = token_hash(raw)
    cached = principal_cache.get(digest, audience)
    if cached is not None:
        return cached
    for prefix, resolver in _resolvers.items():
        if raw.startswith(prefix):
            resolved = await resolver(session, raw, audience)
            if resolved is not None:
                principal, expires_at = resolved
                principal_cache.put(digest, audience, principal, expires_at)
                return principal
            break
    raise Unauthorized("The bearer token is invalid, expired or revoked.")


async def _resolve_api_key(session: AsyncSession, raw: str, audience: str) -> Resolved | None:
    digest = token_hash(raw)
    # One round trip: the key and the user's memberships.
    rows = await repository.api_key_with_memberships(session, digest)
    if not rows or not hashes_match(rows[0].key_hash, digest):
        return None
    key = rows[0]
    now = utcnow()
    if key.revoked_at is not None:
        return None
    if key.expires_at is not None and key.expires_at <= now:
        raise expired_key(key.expires_at)
    roles = {r.organization_id: r.role for r in rows if r.organization_id is not None}
    if key.organization_ids is not None:
        allowed = {uuid.UUID(str(o)) for o in key.organization_ids}
        roles = {org: role for org, role in roles.items() if org in allowed}
    if key.last_used_at is None or now - key.last_used_at > LAST_USED_GRANULARITY:
        await repository.touch_api_key(session, key.id, now)
    return Principal.of_token(key, "api_key", roles, roles), key.expires_at


register_token_kind(API_KEY_PREFIX, _resolve_api_key)


def expired_key(expires_at: datetime) -> Unauthorized:
    """401 for a key past its expiry (contract §15), saying so (RFC 6750 `invalid_token`)."""
    message = f"The API key expired at {isoformat(expires_at)}: create a new one."
    challenge = f'Bearer error="invalid_token", error_description="{message}"'
    return Unauthorized(message, headers={"WWW-Authenticate": challenge})


def expiry_in_days(days: int | None) -> datetime | None:
    """When a key made now with `--expires-in-days N` expires (None: never); N is 1..3650."""
    if days is None:
        return None
    if not 1 <= days <= MAX_EXPIRY_DAYS:
        raise ValidationFailed.at(
            ["expiresInDays"], f"The expiry must be between 1 and {MAX_EXPIRY_DAYS} days."
        )
    return utcnow() + timedelta(days=days)


def key_status(key: ApiKey) -> str:
    """`active`, `revoked` or `expired`: how listings show a key (an expired one is not revocable)."""
    if key.revoked_at is not None:
        return "revoked"
    if key.expires_at is not None and key.expires_at <= utcnow():
        return "expired"
    return "active"


def chosen_scopes(scopes: Sequence[str] | None) -> list[str]:
    """The scopes a key or an app asks for, de-duplicated in order (none: every approved
    scope); a scope outside the approved list is a 400 naming it. The one scope validator of
    API keys and OAuth apps (dynamic registration answers RFC 7591 errors with
    `unknown_scopes`)."""
    chosen = list(dict.fromkeys(scopes)) if scopes else list(APPROVED_SCOPES)
    bad = unknown_scopes(chosen)
    if bad:
        raise ValidationFailed(
            "Unknown or unapproved scopes: " + ", ".join(bad), details={"scopes": bad}
        )
    return chosen


async def check_member_of(
    session: AsyncSession, user_id: uuid.UUID, organization_ids: Sequence[uuid.UUID]
) -> None:
    """A key or an app of a user reaches only organizations the user is a member of."""
    member_of = await user_organizations(session, user_id)
    outside = [str(o) for o in organization_ids if o not in member_of]
    if outside:
        raise ValidationFailed(
            "The user is not a member of: " + ", ".join(outside),
            details={"organizations": outside},
        )


async def create_api_key(
    session: AsyncSession,
    *,
    user_id: uuid.UUID,
    name: str,
    scopes: list[str] | None = None,
    organization_ids: list[uuid.UUID] | None = None,
    expires_at: datetime | None = None,
) -> tuple[ApiKey, str]:
    """Create a key for a user; returns the row and the key itself, which is never stored.

    Without `organization_ids` it reaches the organizations the user belongs to now, stored
    with the key: a membership added later does not widen it (contract §15)."""
    user = await session.get(User, user_id)
    if user is None:
        raise NotFound("User not found.", details={"id": str(user_id)})
    chosen = chosen_scopes(scopes)
    if organization_ids is not None:
        await check_member_of(session, user_id, organization_ids)
        organization_ids = list(dict.fromkeys(organization_ids))
    else:
        organization_ids = list(await user_organizations(session, user_id))
    raw = API_KEY_PREFIX + secrets.token_urlsafe(32)
    key = ApiKey(
        user_id=user_id,
        name=name,
        key_hash=token_hash(raw),
        key_prefix=raw[: len(API_KEY_PREFIX) + 6],
        scopes=chosen,
        organization_ids=[str(o) for o in organization_ids],
        expires_at=expires_at,
    )
    session.add(key)
    await session.flush()
    return key, raw


async def revoke_api_key(session: AsyncSession, *, user_id: uuid.UUID, key_id: uuid.UUID) -> None:
    key = await repository.owned_api_key(session, user_id, key_id)
    if key is None:
        raise NotFound("API key not found.")
    if key.revoked_at is None:
        key.revoked_at = utcnow()
    principal_cache.invalidate(key.id)
