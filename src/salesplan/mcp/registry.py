"""The tool registry: every tool, by name. Most tools are REST operations flagged with
`@as_tool(...)` (salesplan.kit.tools) and derived from their route declarations
(salesplan.mcp.derive): their `ToolSpec` has no `run`, and a call runs the route itself. A tool
that has no REST operation (setActiveOrganization) is ONE adapter registered here:

    @mcp_tool("setActiveOrganization", scope="organizations:read", group="organizations",
              organization=False, args=OrganizationArgs, description="…")
    async def set_active_organization(call: ToolCall, args: OrganizationArgs) -> Any: ...

Either way a call goes through the one pipeline (salesplan.auth.dependencies.authorize, driven
by salesplan.mcp.pipeline): authenticate → rate-limit unit (write, in `group`, bucket
organization = `headers.xOrganizationId` else the remembered one) → scope → user-backed token →
organization → argument validation → the operation, in a database transaction.
A body with a model of its own is a field group: `args.body_of(CreateAccountBody)` builds it from the
arguments that belong to it (only those sent, so PATCH semantics hold).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel
from pydantic.json_schema import JsonSchemaValue

from salesplan.errors import ValidationFailed, validation_errors
from salesplan.kit.pagination import (
    MAX_PAGE_SIZE,
    ListParams,
    parse_list_params,
)
from salesplan.kit.tools import ResultAdapter
from salesplan.mcp.compact import compact_input
from salesplan.mcp.toolsets import CORE, toolset_of
from salesplan.ratelimit.policy import GROUPS

if TYPE_CHECKING:
    from salesplan.mcp.call import ToolCall

BodyT = TypeVar("BodyT", bound=BaseModel)


class ToolArgs(BaseModel):
    """A tool's named arguments: camelCase on the wire; an unknown argument is a 400.

    An adapter may inherit its REST body model too (`class Args(ToolArgs, AccountIn)`), so that
    the body's fields, types and checks are the arguments'; `docs` then describes them for the
    agent (camelCase name → text), since the body models carry no descriptions."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=False, extra="forbid")
    docs: ClassVar[dict[str, str]] = {}

    def body_of(self, model: type[BodyT]) -> BodyT:
        """The REST request body `model`, from the arguments of its fields that were sent.
        (Not `body`: a body model's field of that name, a comment's, is an argument.)"""
        fields = set(model.model_fields)
        sent = self.model_dump(
            by_alias=True, exclude_unset=True, include=fields & self.model_fields_set
        )
        try:
            return model.model_validate(sent)
        except ValidationError as exc:  # the REST body's own checks, reported on the arguments
            errors = validation_errors(exc.errors())
            for error in errors:
                error["location"] = ["arguments", *error["location"]]
            raise ValidationFailed(
                "The tool arguments are not valid.", details={"errors": errors}
            ) from None


def _list_schema_extra(schema: JsonSchemaValue, cls: type[ListArgs]) -> None:
    sort_by = schema.get("properties", {}).get("sortBy")
    if sort_by is not None:
        sort_by["enum"] = list(cls.sortable)
        sort_by["default"] = cls.default_sort
        sort_by.pop("anyOf", None)
        sort_by["type"] = "string"


class ListArgs(ToolArgs):
    """The list parameters every list operation takes (contract §4). Subclasses set `sortable`.
    What they mean is said once, in the server's instructions (`SHARED_ARGUMENTS`)."""

    sortable: ClassVar[tuple[str, ...]] = ("createdAt",)
    default_sort: ClassVar[str] = "createdAt"
    model_config = ConfigDict(json_schema_extra=_list_schema_extra)

    # Described once, in the server's instructions (salesplan.mcp.server.INSTRUCTIONS).
    page: int | None = Field(default=None, ge=1)
    page_size: int | None = Field(default=None, ge=1, le=MAX_PAGE_SIZE)
    limit: int | None = Field(default=None, ge=1, le=MAX_PAGE_SIZE)
    cursor: str | None = None
    sort_by: str | None = None
    order: Literal["asc", "desc"] = "asc"
    search: str | None = Field(default=None, description="Case-insensitive name substring.")

    def list_params(self) -> ListParams:
        """The same `ListParams` (and the same 400s) as the REST list's query parameters."""
        params: ListParams = parse_list_params(
            self.sortable,
            self.default_sort,
            limit=self.limit,
            cursor=self.cursor,
            page=self.page,
            page_size=self.page_size,
            sort_by=self.sort_by,
            order=self.order,
            search=self.search,
        )
        return params


class NoArgs(ToolArgs):
    """A tool without arguments (besides the optional `headers`)."""


ToolRunner = Callable[["ToolCall", Any], Awaitable[Any]]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    scope: str | None
    group: str
    args: type[ToolArgs]
    # An adapter of its own; None for a tool derived from a route (the call runs the route).
    run: ToolRunner | None = None
    # False for organization-level tools (meta, organizations): they need no organization context.
    organization: bool = True
    user_token: bool = False
    read_only: bool = True
    destructive: bool = False
    # Calling it again with the same arguments changes nothing more (reads, PUT replacements).
    idempotent: bool = True
    title: str | None = None
    # A derived tool: (arguments as sent, REST body) → the tool result, where they differ.
    result: ResultAdapter | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # The part of the catalog it is in (salesplan.mcp.toolsets: from its route's domain).
    toolset: str = CORE


TOOLS: dict[str, ToolSpec] = {}


def register(spec: ToolSpec) -> None:
    """Add a tool; a name is registered once."""
    if spec.group not in GROUPS:
        raise ValueError(f"unknown rate-limit group {spec.group}")
    if spec.name in TOOLS and TOOLS[spec.name] != spec:
        raise ValueError(f"tool {spec.name} registered twice")
    TOOLS[spec.name] = spec


def mcp_tool(
    name: str,
    *,
    scope: str | None,
    group: str,
    description: str,
    args: type[ToolArgs] = NoArgs,
    organization: bool = True,
    user_token: bool = False,
    read_only: bool = True,
    destructive: bool = False,
    idempotent: bool = True,
    title: str | None = None,
) -> Callable[[ToolRunner], ToolRunner]:
    """Register an adapter as the tool `name` (the REST operationId)."""
    if group not in GROUPS:
        raise ValueError(f"unknown rate-limit group {group}")

    def decorator(fn: ToolRunner) -> ToolRunner:
        if name in TOOLS and TOOLS[name].run is not fn:
            raise ValueError(f"tool {name} registered twice")
        register(
            ToolSpec(
                name=name,
                description=description.strip(),
                scope=scope,
                group=group,
                args=args,
                run=fn,
                organization=organization,
                user_token=user_token,
                read_only=read_only,
                destructive=destructive,
                idempotent=idempotent,
                title=title,
                toolset=toolset_of(fn),
            )
        )
        return fn

    return decorator


HEADERS_SCHEMA: JsonSchemaValue = {
    "type": "object",
    "properties": {"xOrganizationId": {"type": "string"}},
}
"""The optional `headers` argument of every tool; the server's instructions say the rest once."""

# The list arguments, described once in the server's instructions, not in each tool.
SHARED_ARGUMENTS = ("page", "pageSize", "limit", "cursor", "sortBy", "order")


def _tidy(prop: JsonSchemaValue) -> JsonSchemaValue:
    """An optional argument reads as its type (`null` is still accepted), without titles."""
    prop = {k: v for k, v in prop.items() if k != "title"}
    options = prop.get("anyOf")
    if isinstance(options, list):
        concrete = [o for o in options if o.get("type") != "null"]
        if len(concrete) == 1 and len(options) == 2:
            del prop["anyOf"]
            prop = {**concrete[0], **prop}
    if "default" in prop and prop["default"] is None:
        del prop["default"]
    return prop


def _own_arguments(args: type[ToolArgs]) -> list[str]:
    """The wire names of the arguments not inherited from a REST body model."""
    inherited: set[str] = set()
    for base in args.__mro__[1:]:
        if issubclass(base, BaseModel) and not issubclass(base, ToolArgs):
            inherited |= set(base.model_fields)
    return [f.alias or n for n, f in args.model_fields.items() if n not in inherited]


def input_schema(spec: ToolSpec) -> JsonSchemaValue:
    """The tool's JSON schema: its arguments (required ones first) plus the optional `headers`."""
    schema = spec.args.model_json_schema(by_alias=True)
    schema.pop("title", None)
    schema.pop("description", None)
    props = schema.get("properties", {})
    # The tool's own arguments (the path parameters) before those of an inherited REST body.
    own = set(_own_arguments(spec.args))
    rank = {name: i for i, name in enumerate(props)}
    required = sorted(schema.get("required", []), key=lambda n: (n not in own, rank.get(n, 0)))
    if required:
        schema["required"] = required
    rest = sorted((n for n in props if n not in required), key=lambda n: (n not in own, rank[n]))
    ordered = {name: _tidy(props[name]) for name in [*required, *rest] if name in props}
    for name, text in spec.args.docs.items():
        if name in ordered:
            ordered[name] = {**ordered[name], "description": text}
    for name, prop in ordered.items():
        if name in SHARED_ARGUMENTS:
            # Bounds and defaults said once in the instructions; the values (sortBy's keys)
            # are the tool's own.
            ordered[name] = {k: v for k, v in prop.items() if k in ("type", "enum")}
    ordered["headers"] = HEADERS_SCHEMA
    schema["type"] = "object"
    schema["properties"] = ordered
    schema["additionalProperties"] = False
    return compact_input(schema)
