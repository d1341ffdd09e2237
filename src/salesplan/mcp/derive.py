"""MCP tools derived from REST route declarations (contract §9: "each tool's input schema is the
REST operation's parameters and body as named arguments, plus optional `headers`").

A route flagged with `@as_tool(...)` (salesplan.kit.tools) becomes the tool named by its
operationId: title = summary, description = the flag's `brief`, else the description's first
sentence without the answer's shape (`brief()`), + the flag's note; scope, group, user-token and
organization rules = its `require(...)`, arguments = its path parameters, its query
parameters (a list route's `list_params` as the shared `ListArgs`) and its body's fields. The
arguments model (a `ToolArgs`) only describes and checks names: a call runs the route itself
(salesplan.mcp.pipeline), so that the REST validation, service and response apply unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, cast

from fastapi import APIRouter
from fastapi.routing import APIRoute
from pydantic import BaseModel, Field, create_model

from salesplan.auth.dependencies import Requirement
from salesplan.kit.tools import ToolOptions, tool_options
from salesplan.mcp.registry import ListArgs, ToolArgs, ToolSpec, register
from salesplan.mcp.toolsets import toolset_of
from salesplan.openapi import requirement_of, summary_of

if TYPE_CHECKING:
    from salesplan.kit.adapters import Dependant


@dataclass(frozen=True)
class Parameters:
    """Where each argument of a derived tool goes in the HTTP request."""

    path: tuple[str, ...]
    query: tuple[str, ...]
    body: tuple[str, ...]  # the body model's field aliases; empty without a body
    has_body: bool


# Where a derived tool's arguments go in the request it makes of its route, by tool name.
PARAMETERS: dict[str, Parameters] = {}


def _list_dependency(dependant: Dependant) -> Dependant | None:
    for dep in _walk(dependant):
        if hasattr(dep.call, "sortable"):
            return dep
    return None


def _walk(dependant: Dependant) -> Iterator[Dependant]:
    for dep in dependant.dependencies:
        yield dep
        yield from _walk(dep)


def _query_fields(route: APIRoute, skip: Dependant | None) -> list[Any]:
    fields = list(route.dependant.query_params)
    for dep in _walk(route.dependant):
        if dep is not skip:
            fields.extend(dep.query_params)
    return fields


def _body_model(route: APIRoute) -> type[BaseModel] | None:
    if route.body_field is None:
        return None
    model = route.body_field.field_info.annotation
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError(f"{route.operation_id}: a tool needs a model body")
    return model


def _field(model_field: Any, docs: dict[str, str], required: bool) -> tuple[Any, Any]:
    info = model_field.field_info
    alias = model_field.alias
    annotation = Annotated[(info.annotation, *info.metadata)] if info.metadata else info.annotation
    description = docs.get(alias) or info.description
    default = ... if required else info.default
    return annotation, Field(default, alias=alias, description=description)


BRIEF_LENGTH = 200
# The first sentence: up to a full stop followed by a space or the end.
_SENTENCE = re.compile(r"^(.+?[.!?])(?=\s|$)")
# Where a sentence starts to spell out the answer's shape (`{...}`): its output schema says it.
_SHAPE = re.compile(r"(?::|;|,| as| —)?\s*`[{\[]")


def brief(description: str) -> str:
    """A tool's description for MCP (contract §9, 2026-11-27: a catalog an agent can afford):
    the first sentence of the route's description, up to where it spells out the answer's shape,
    at most `BRIEF_LENGTH` characters (cut at a word, with an ellipsis)."""
    text = " ".join(description.split())
    match = _SENTENCE.match(text)
    sentence = match.group(1) if match else text
    shape = _SHAPE.search(sentence)
    if shape is not None and shape.start() > 0:
        sentence = sentence[: shape.start()].rstrip(" ,;:") + "."
    if len(sentence) > BRIEF_LENGTH:
        sentence = sentence[: BRIEF_LENGTH - 1].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"
    return sentence


def derive(route: APIRoute, options: ToolOptions) -> tuple[ToolSpec, Parameters]:
    name = route.operation_id
    if not name:
        raise ValueError(f"{route.path}: a tool needs an operationId")
    requirement = requirement_of(route)
    if requirement is None:  # a public route (getMeta): the tool still spends a unit
        if options.group is None:
            raise ValueError(f"{name}: a public route needs as_tool(group=...)")
        requirement = Requirement(None, options.group, organization=False)
    docs = dict(options.docs)

    listing = _list_dependency(route.dependant)
    base: type[ToolArgs] = ToolArgs
    if listing is not None:
        base = type(
            f"{name}List",
            (ListArgs,),
            {
                "__module__": __name__,
                "sortable": tuple(listing.call.sortable),  # type: ignore[union-attr]
                "default_sort": listing.call.default_sort,  # type: ignore[union-attr]
            },
        )
    body = _body_model(route)
    fields: dict[str, Any] = {}
    for param in route.dependant.path_params:
        fields[param.name] = _field(param, docs, required=True)
    query = _query_fields(route, listing)
    for param in query:
        fields[param.name] = _field(param, docs, required=param.field_info.is_required())
    bases: Any = (base, body) if body is not None else base
    args = cast(
        "type[ToolArgs]",
        create_model(f"{name[0].upper()}{name[1:]}Args", __base__=bases, **fields),
    )
    args.__module__ = __name__
    args.docs = docs

    method = next(iter(route.methods or {"GET"}))
    read_only = options.read_only if options.read_only is not None else method == "GET"
    destructive = (
        options.destructive if options.destructive is not None else method in ("PUT", "DELETE")
    )
    # Reads and PUT-style replacements (and upserts) leave the same state when repeated; a
    # create or a PATCH that appends is not assumed to.
    idempotent = read_only or method == "PUT"
    description = options.brief or brief(route.description or "")
    if options.note:
        description = f"{description} {' '.join(options.note.split())}"
    spec = ToolSpec(
        name=name,
        description=description,
        scope=requirement.scope,
        group=requirement.group,
        args=args,
        organization=requirement.organization,
        user_token=requirement.user_token,
        read_only=read_only,
        destructive=destructive,
        idempotent=idempotent,
        title=summary_of(route),
        result=options.result,
        toolset=toolset_of(route.endpoint),
    )
    body_names: tuple[str, ...] = ()
    if body is not None:
        body_names = tuple(f.alias or n for n, f in body.model_fields.items())
    parameters = Parameters(
        path=tuple(p.alias for p in route.dependant.path_params),
        query=tuple([p.alias for p in listing.query_params] if listing is not None else [])
        + tuple(p.alias for p in query),
        body=body_names,
        has_body=body is not None,
    )
    return spec, parameters


def flagged_routes(routers: Iterable[APIRouter]) -> Iterator[tuple[APIRoute, ToolOptions]]:
    """The routes flagged `@as_tool(...)`, once per operationId (a router mounted twice, like
    organizations under /subscribers, is one tool)."""
    seen: set[str] = set()
    for router in routers:
        for route in router.routes:
            if not isinstance(route, APIRoute):
                continue
            options = tool_options(route.endpoint)
            if options is None or route.operation_id in seen:
                continue
            seen.add(str(route.operation_id))
            yield route, options


def register_routes(routers: Iterable[APIRouter]) -> None:
    """Register the tool of every flagged route (salesplan.mcp.tools does, for the API's
    routers)."""
    for route, options in flagged_routes(routers):
        spec, parameters = derive(route, options)
        register(spec)
        PARAMETERS[spec.name] = parameters
