"""The limiter: turns (token, organization, group, verb class) into a bucket and asks the store."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from salesplan.errors import RateLimited
from salesplan.ratelimit.policy import WINDOW_SECONDS, GroupLimits
from salesplan.ratelimit.store import Decision, RateLimitStore


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


class RateLimiter:
    def __init__(
        self,
        policy: dict[str, GroupLimits],
        store: RateLimitStore,
        *,
        enabled: bool = True,
        ip_limit: int = 30,
    ) -> None:
        self.policy = policy
        self.store = store
        self.enabled = enabled
        self.ip_limit = ip_limit

    @staticmethod
    def bucket_key(token_id: uuid.UUID | str, organization: str, group: str, write: bool) -> str:
        return f"rl:{token_id}:{organization or 'global'}:{group}:{'w' if write else 'r'}"

    async def consume(
        self,
        *,
        token_id: uuid.UUID | str,
        organization: str | None,
        group: str,
        write: bool,
        tool_name: str | None = None,
    ) -> Usage | None:
        """Spend one unit; None when the axis is unlimited or limiting is off. Raises 429."""
        if not self.enabled:
            return None
        limit = self.policy[group].for_write(write)
        if limit is None:
            return None
        key = self.bucket_key(token_id, (organization or "global").lower(), group, write)
        decision = await self.store.hit(key, limit, WINDOW_SECONDS)
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
            headers = usage.headers() | {"Retry-After": str(decision.retry_after)}
            raise RateLimited(
                f"Rate limit exceeded for {group} ({'write' if write else 'read'}): "
                f"{limit} per {WINDOW_SECONDS} seconds.",
                details=details,
                headers=headers,
            )
        return usage

    async def consume_ip(self, ip: str, endpoint: str) -> Usage | None:
        """Unauthenticated endpoints (registration, token, sign-in) are limited per client IP."""
        if not self.enabled or self.ip_limit <= 0:
            return None
        key = f"rl:ip:{ip}:{endpoint}"
        decision = await self.store.hit(key, self.ip_limit, WINDOW_SECONDS)
        usage = Usage("foundation", True, decision)
        if not decision.allowed:
            raise RateLimited(
                f"Too many requests from this address; retry in {decision.retry_after} seconds.",
                details={
                    "limit": self.ip_limit,
                    "retryAfterSeconds": decision.retry_after,
                    "endpointGroup": "foundation",
                    "write": True,
                },
                headers=usage.headers() | {"Retry-After": str(decision.retry_after)},
            )
        return usage
