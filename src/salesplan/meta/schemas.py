"""The /meta document on the wire (contract §11), for the OpenAPI document: the route answers
`build_meta_document`'s dict as it is; this says its shape."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from salesplan.kit.schemas import ApiModel


class PaginationDefaults(ApiModel):
    default_limit: int
    max_limit: int
    default_page: int
    default_page_size: int
    max_page_size: int
    default_order: Literal["asc", "desc"]


class GroupLimits(ApiModel):
    read: int | None = Field(description="Requests per window; null = none configured.")
    write: int | None = Field(description="Requests per window; null = none configured.")


class RateLimiting(ApiModel):
    enabled: bool
    store: Literal["memory", "shared"] = Field(
        description="`shared` (Redis: every process and machine sees one count) or `memory`."
    )
    window_seconds: int
    groups: dict[str, GroupLimits] = Field(description="Endpoint group → its limits.")


class McpInfo(ApiModel):
    url: str = Field(description="The MCP endpoint ({origin}/mcp).")


class MetaOut(ApiModel):
    """Service metadata: approved scopes, pagination defaults, rate-limit configuration."""

    name: str
    version: str
    base_path: str
    scopes: list[str] = Field(description="The approved scopes.")
    pagination: PaginationDefaults
    rate_limiting: RateLimiting
    mcp: McpInfo
