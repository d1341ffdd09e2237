"""Toolsets and the read-only mode (contract §9, 2026-11-27): an agent asks for a part of the
catalog with the MCP URL's `toolsets` query parameter (`/mcp?toolsets=core,engage`) or the
`X-MCP-Toolsets` header, and for the read tools only with `readonly=1` or `X-MCP-Readonly: 1`.
`tools/list` then shows only those tools, and a call to any other is an unknown tool.

A tool's toolset is its route's domain (the package under `salesplan.` its endpoint is declared
in), through ONE mapping, `DOMAIN_TOOLSETS`: a tool added later to a route of `salesplan.rooms`
is in `rooms` without a word more. Every other domain (CRM, plans, buying groups, relationship
maps, organizations, meta, the MCP session tool) is `core`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from starlette.datastructures import Headers, QueryParams

from salesplan.errors import ValidationFailed

CORE = "core"
TOOLSETS: tuple[str, ...] = (CORE, "engage", "calendar", "feed", "rooms")

# The one mapping: a route's domain → its tools' toolset (any other domain is `core`).
DOMAIN_TOOLSETS: dict[str, str] = {
    "engage": "engage",
    "calendar": "calendar",
    "feed": "feed",
    "rooms": "rooms",
}

TOOLSETS_PARAMETER = "toolsets"
READONLY_PARAMETER = "readonly"
TOOLSETS_HEADER = "x-mcp-toolsets"
READONLY_HEADER = "x-mcp-readonly"
_TRUE = frozenset({"1", "true"})
_FALSE = frozenset({"0", "false", ""})


def domain_of(module: str) -> str:
    """`salesplan.engage.delivery.router` → `engage`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "salesplan" else ""


def toolset_of(endpoint: Callable[..., Any]) -> str:
    """The toolset of a tool whose route (or adapter) is `endpoint`."""
    return DOMAIN_TOOLSETS.get(domain_of(getattr(endpoint, "__module__", "") or ""), CORE)


@dataclass(frozen=True)
class Selection:
    """What the client asked to see: some toolsets (None: all) and maybe the reads only."""

    toolsets: frozenset[str] | None = None
    readonly: bool = False

    def shows(self, toolset: str, read_only: bool) -> bool:
        if self.readonly and not read_only:
            return False
        return self.toolsets is None or toolset in self.toolsets


EVERYTHING = Selection()


def _readonly(value: str, location: list[str | int]) -> bool:
    flag = value.strip().lower()
    if flag in _TRUE:
        return True
    if flag in _FALSE:
        return False
    raise ValidationFailed.at(location, "Must be 1 (read tools only) or 0.")


def _toolsets(value: str, location: list[str | int]) -> frozenset[str]:
    names = frozenset(n.strip().lower() for n in value.split(",") if n.strip())
    unknown = sorted(names - set(TOOLSETS))
    if not names or unknown:
        known = ", ".join(TOOLSETS)
        message = f"Unknown toolset {', '.join(unknown)}" if unknown else "No toolset named"
        raise ValidationFailed.at(location, f"{message}; the toolsets are {known}.")
    return names


def parse_selection(query: QueryParams, headers: Headers) -> Selection:
    """The selection of a request to `/mcp`: the query parameter, else the header. A value
    that names no known toolset, or a readonly flag that is not 1/0, is a 400."""
    toolsets: frozenset[str] | None = None
    if TOOLSETS_PARAMETER in query:
        toolsets = _toolsets(query[TOOLSETS_PARAMETER], ["query", TOOLSETS_PARAMETER])
    elif TOOLSETS_HEADER in headers:
        toolsets = _toolsets(headers[TOOLSETS_HEADER], ["header", "X-MCP-Toolsets"])
    readonly = False
    if READONLY_PARAMETER in query:
        readonly = _readonly(query[READONLY_PARAMETER], ["query", READONLY_PARAMETER])
    elif READONLY_HEADER in headers:
        readonly = _readonly(headers[READONLY_HEADER], ["header", "X-MCP-Readonly"])
    return Selection(toolsets, readonly)
