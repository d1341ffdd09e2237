"""The one-line flag that exposes a REST operation as an MCP tool (contract §9):

    @router.get("/{accountId}", operation_id="getAccount", response_model=AccountOut,
                summary="Read an account", description=text.GET_ACCOUNT)
    @as_tool(docs={"accountId": "Id of the account …"})
    async def get_account(accountId: uuid.UUID, ctx: Read, session: SessionDep) -> Response: ...

Everything else comes from the route declaration (salesplan.mcp.derive): the tool's name is the
operationId, its title the summary, its description the first sentence of the description (the
OpenAPI document keeps it whole; contract §9, 2026-11-27: a catalog an agent can afford), its
scope, rate-limit group, user-token rule and organization rule the route's `require(...)`, its
arguments the route's path and query parameters and body fields, its result the REST response
body. The flag carries only what MCP needs beyond that."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

F = TypeVar("F", bound=Callable[..., object])

# (the tool's arguments as sent, the REST response body or None for a 204) → the tool result.
ResultAdapter = Callable[[Mapping[str, object], object], object]

TOOL_ATTRIBUTE = "__salesplan_tool__"


@dataclass(frozen=True)
class ToolOptions:
    # Argument (wire name) → description for an agent, for arguments whose parameter or body
    # field carries none.
    docs: Mapping[str, str] = field(default_factory=dict)
    # Appended to the description in the tool only: where the tool differs from REST.
    note: str = ""
    # The tool's description, where the first sentence of the route's misses the one thing an
    # agent must know (at most ~200 characters).
    brief: str = ""
    # Where the tool answers something else than the REST body (see `deleted`).
    result: ResultAdapter | None = None
    # For a public route (no `require(...)`): the tool still spends a unit of this group.
    group: str | None = None
    # MCP annotations; None → from the HTTP method (GET reads; PUT and DELETE destroy).
    read_only: bool | None = None
    destructive: bool | None = None


def as_tool(
    *,
    docs: Mapping[str, str] | None = None,
    note: str = "",
    brief: str = "",
    result: ResultAdapter | None = None,
    group: str | None = None,
    read_only: bool | None = None,
    destructive: bool | None = None,
) -> Callable[[F], F]:
    """Expose the route as an MCP tool. Put it under the `@router.<method>(...)` decorator."""
    options = ToolOptions(
        docs=dict(docs or {}),
        note=note,
        brief=" ".join(brief.split()),
        result=result,
        group=group,
        read_only=read_only,
        destructive=destructive,
    )

    def mark(endpoint: F) -> F:
        setattr(endpoint, TOOL_ATTRIBUTE, options)
        return endpoint

    return mark


def tool_options(endpoint: object) -> ToolOptions | None:
    options = getattr(endpoint, TOOL_ATTRIBUTE, None)
    return options if isinstance(options, ToolOptions) else None


def deleted(path_parameter: str) -> ResultAdapter:
    """What a delete tool answers where REST answers 204 without a body: an MCP tool result
    needs content, and the agent needs to know what happened to which id
    (`{"deleted": true, "id": "<id>"}`)."""

    def adapt(arguments: Mapping[str, object], body: object) -> dict[str, object]:
        return {"deleted": True, "id": str(uuid.UUID(str(arguments[path_parameter])))}

    return adapt


DELETE_NOTE = (
    'Where REST answers 204 without a body, this tool answers `{{"deleted": true, "id": "<{}>"}}`.'
)
