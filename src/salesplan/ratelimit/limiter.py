"""The limiter: turns (token, organization, group, verb class) into a bucket and asks the store."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass

from salesplan.errors import RateLimited
from salesplan.ratelimit.policy import WINDOW_SECONDS, GroupLimits
from salesplan.ratelimit.store import Decision, MemoryStore, RateLimitStore, StoreUnavailable


@dataclass(frozen=True, slots=True)
class Usage:
    group: str
    write: bool
    decision: Decision

    def headers(self) -> dict[str, str]:
        d = self.decision
        return {
            "X-RateLimit-Limit": str(d.limit),
            "X-RateLimit-Remaining": str(d.remaining),
            "X-RateLimit-Reset": str(d.reset_at),
        }


def organization_part(organization: str | uuid.UUID | None) -> str:
    """The organization part of a bucket: the canonical UUID the client named, else `global`.

    Canonical, so that spellings of one id (case, braces, no hyphens) share one bucket; a value
    that is no UUID (the request fails with 400 after spending its unit) is hashed, so that a
    client-chosen string never shapes the key.
    """
    if organization is None:
        return "global"
    if isinstance(organization, uuid.UUID):
        return str(organization)
    value = organization.strip()
    if not value:
        return "global"
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return "x" + hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()[:32]


class RateLimiter:
    def __init__(
        self,
        policy: dict[str, GroupLimits],
        store: RateLimitStore,
        *,
        enabled: bool = True,
        ip_limit: int = 30,
        window_seconds: float = WINDOW_SECONDS,
    ) -> None:
        self.policy = policy
        self.store = store
        self.enabled = enabled
        self.ip_limit = ip_limit
        self.window = window_seconds
        # The per-IP abuse limits (sign-in, registration, token) never fail open: while the
        # shared store is unavailable they count in this process instead.
        self.ip_fallback = MemoryStore()
        self.ip_fallback_in_use = False

    @staticmethod
    def bucket_key(token_id: uuid.UUID | str, organization: str, group: str, write: bool) -> str:
        """Token *id* (never the token itself), organization, group, verb class."""
        return f"rl:{token_id}:{organization}:{group}:{'w' if write else 'r'}"

    def limit_for(self, group: str, write: bool) -> int | None:
        return self.policy[group].for_write(write)

    async def _hit(self, key: str, limit: int) -> Decision | None:
        try:
            return await self.store.hit(key, limit, self.window)
        except StoreUnavailable:
            # Fail open: an unavailable store must not take the API down with it. The store
            # logs (throttled) and /healthz reports "degraded".
            return None

    async def consume(
        self,
        *,
        token_id: uuid.UUID | str,
        organization: str | uuid.UUID | None,
        group: str,
        write: bool,
        tool_name: str | None = None,
    ) -> Usage | None:
        """Spend one unit; None when the axis is unlimited, limiting is off or the store is
        unavailable. Raises RateLimited (429); `tool_name` names the MCP tool in its details."""
        if not self.enabled:
            return None
        limit = self.limit_for(group, write)
        if limit is None:
            return None
        key = self.bucket_key(token_id, organization_part(organization), group, write)
        decision = await self._hit(key, limit)
        if decision is None:
            return None
        usage = Usage(group, write, decision)
        if not decision.allowed:
            details: dict[str, object] = {
                "limit": limit,
                "retryAfterSeconds": decision.retry_after,
                "endpointGroup": group,
                "write": write,
            }
            if tool_name is not None:
                details["toolName"] = tool_name
            raise RateLimited(
                f"Rate limit exceeded for {group} ({'write' if write else 'read'}): "
                f"{limit} per {self.window:g} seconds. Retry in {decision.retry_after} seconds.",
                details=details,
                headers=usage.headers() | {"Retry-After": str(decision.retry_after)},
            )
        return usage

    async def consume_ip(self, ip: str, endpoint: str, limit: int | None = None) -> Usage | None:
        """Unauthenticated endpoints (registration, token, sign-in, tracking links) are limited
        per client IP, one bucket per (IP, endpoint), at `limit` requests per window (default:
        `ip_limit`); in this process's memory while the store is down."""
        limit = self.ip_limit if limit is None else limit
        if not self.enabled or limit <= 0:
            return None
        key = f"rl:ip:{ip}:{endpoint}"
        try:
            decision = await self.store.hit(key, limit, self.window)
            self.ip_fallback_in_use = False
        except StoreUnavailable:
            self.ip_fallback_in_use = True
            decision = await self.ip_fallback.hit(key, limit, self.window)
        usage = Usage("foundation", True, decision)
        if not decision.allowed:
            raise RateLimited(
                f"Too many requests from this address; retry in {decision.retry_after} seconds.",
                details={
                    "limit": limit,
                    "retryAfterSeconds": decision.retry_after,
                    "endpointGroup": "foundation",
                    "write": True,
                },
                headers=usage.headers() | {"Retry-After": str(decision.retry_after)},
            )
        return usage
