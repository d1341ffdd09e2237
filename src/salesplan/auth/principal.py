"""Who is calling, and in which organization."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller behind a bearer token: a user (API key, authorization-code token) or an app
    (client-credentials token)."""

    token_id: uuid.UUID
    token_kind: Literal["api_key", "oauth"]
    scopes: frozenset[str]
    organization_ids: frozenset[uuid.UUID]
    user_id: uuid.UUID | None = None
    app_id: uuid.UUID | None = None
    roles: Mapping[uuid.UUID, str] = field(default_factory=dict)
    resource: str | None = None

    @property
    def user_backed(self) -> bool:
        return self.user_id is not None

    def role_in(self, organization_id: uuid.UUID) -> str | None:
        return self.roles.get(organization_id)

    @classmethod
    def of_token(
        cls,
        token: Any,
        kind: Literal["api_key", "oauth"],
        reach: Iterable[uuid.UUID],
        roles: Mapping[uuid.UUID, str],
        **extra: Any,
    ) -> Principal:
        """The principal of a stored token (an API key row, an OAuth token): its id, scopes and
        user, the organizations it reaches, and the user's role in each."""
        return cls(
            token_id=token.id,
            token_kind=kind,
            scopes=frozenset(token.scopes),
            organization_ids=frozenset(reach),
            user_id=token.user_id,
            roles=roles,
            **extra,
        )


@dataclass(frozen=True, slots=True)
class RequestContext:
    """What every service receives: the principal and the resolved organization."""

    principal: Principal
    organization_id: uuid.UUID
    request_id: str = ""

    @property
    def user_id(self) -> uuid.UUID | None:
        return self.principal.user_id

    @property
    def role(self) -> str | None:
        return self.principal.role_in(self.organization_id)

    @classmethod
    def internal(
        cls, organization_id: uuid.UUID, user_id: uuid.UUID | None = None, request_id: str = ""
    ) -> RequestContext:
        """Work the server does on its own behalf in one organization (the demo, the CLI
        import, the benchmarks' data): no stored token behind it, no scopes checked."""
        principal = Principal(
            token_id=uuid.uuid4(),
            token_kind="api_key",
            scopes=frozenset(),
            organization_ids=frozenset({organization_id}),
            user_id=user_id,
        )
        return cls(principal, organization_id, request_id)


@dataclass(frozen=True, slots=True)
class PrincipalContext:
    """For organization-level routes (`/organizations…`), which need no organization context."""

    principal: Principal
    request_id: str = ""
