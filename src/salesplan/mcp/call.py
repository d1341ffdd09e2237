"""What a tool of its own (setActiveOrganization) receives: the caller, its organization, a database
session, the session's organization memory."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import Principal, RequestContext
from salesplan.errors import AppError
from salesplan.ratelimit.store import RateLimitStore

# Remembered organizations outlive neither their token nor (for sessions) a day of silence.
OAUTH_TOKEN_TTL = 3600
SESSION_TTL = 24 * 3600
TOKEN_TTL = 30 * 24 * 3600


class OrganizationMemory:
    """The organization remembered by setActiveOrganization (contract §9): per MCP session, keyed
    by the token id and `Mcp-Session-Id`; on session-less protocol revisions per token. Kept in the
    rate-limit store (memory or Redis) so that every worker process sees it."""

    def __init__(self, store: RateLimitStore, principal: Principal, session_id: str | None) -> None:
        self._store = store
        self._principal = principal
        self._session_id = session_id
        part = f"s:{session_id}" if session_id else "t"
        self.key = f"mcp:org:{principal.token_id}:{part}"

    @property
    def per_session(self) -> bool:
        return self._session_id is not None

    def _ttl(self) -> int:
        if self._principal.token_kind == "oauth":
            return OAUTH_TOKEN_TTL
        return SESSION_TTL if self.per_session else TOKEN_TTL

    async def get(self) -> uuid.UUID | None:
        raw = await self._store.kv_get(self.key)
        if not raw:
            return None
        try:
            return uuid.UUID(raw)
        except ValueError:
            return None

    async def set(self, organization_id: uuid.UUID) -> None:
        await self._store.kv_set(self.key, str(organization_id), self._ttl())

    async def clear(self) -> None:
        await self._store.kv_set(self.key, "", 1)


@dataclass
class ToolCall:
    """One tool call. `ctx` is the `RequestContext` the REST route would have built."""

    name: str
    app: Any
    principal: Principal
    session: AsyncSession
    organization_id: uuid.UUID | None
    request_id: str
    memory: OrganizationMemory

    @property
    def ctx(self) -> RequestContext:
        if self.organization_id is None:  # pragma: no cover - a registration mistake
            raise AppError(f"tool {self.name} is organization-level and has no context")
        return RequestContext(self.principal, self.organization_id, self.request_id)
