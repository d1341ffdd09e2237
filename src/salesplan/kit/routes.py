"""Route functions built from a declaration, for the runs of routes that differ only in their
names, models and the service they call (a resource's create, read, change, archive and
restore by id).

FastAPI reads a route's parameters from its function's signature. `endpoint` builds a function
whose signature is the one a hand-written route would have (the same names, annotations and
defaults, in the same order) and which calls `run` with those keywords; so the route's OpenAPI
operation, its request validation and the MCP tool derived from it (`@as_tool`) are the
hand-written route's:

    async def read(goalId: uuid.UUID, ctx: RequestContext, session: AsyncSession) -> Response:
        return json_response(GoalOut.model_validate(await service.get_goal(session, ctx, goalId)))

    router.get("/goals/{goalId}", operation_id="getGoal", response_model=GoalOut)(
        endpoint(__name__, "get_goal", "Read a goal.", read,
                 goalId=uuid.UUID, ctx=Read, session=SessionDep)
    )

`run` may be shared by several routes: the path's id then comes under its own name in
`**ids` (`only_id(ids)`). `Records` declares a resource's create, read, write and delete
routes so, in a line each."""

from __future__ import annotations

import inspect
import re
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Generic, TypedDict, TypeVar, Unpack

from fastapi import APIRouter
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import Response

from salesplan.kit.responses import IF_MATCH, json_response

Run = Callable[..., Awaitable[Response]]
# `as_tool(...)` (salesplan.kit.tools), put on the route function.
Flag = Callable[[Run], Run]
DbT = TypeVar("DbT")
CtxT = TypeVar("CtxT")
BodyT = TypeVar("BodyT", bound=BaseModel)


class Declared(TypedDict, total=False):
    """What a route may declare beyond its operationId and docstring."""

    summary: str
    description: str
    tool: Flag


@dataclass(frozen=True)
class Default:
    """A parameter with a default (a query parameter):
    `include_archived=Default(IncludeArchived, False)`."""

    annotation: object
    value: object


def endpoint(module: str, name: str, doc: str, run: Run, **parameters: object) -> Run:
    """A route function `name` of `module` (an MCP tool's toolset is its route's domain:
    salesplan.mcp.toolsets), documented by `doc` (the operation's description, and its summary
    where none is declared), taking `parameters` (name → annotation, or `Default`), in order;
    it calls `run` with them as keywords."""

    async def route(**arguments: object) -> Response:
        return await run(**arguments)

    vars(route)["__signature__"] = inspect.Signature(
        [_parameter(n, a) for n, a in parameters.items()], return_annotation=Response
    )
    route.__module__ = module
    route.__name__ = route.__qualname__ = name
    route.__doc__ = doc
    return route


def _parameter(name: str, annotation: object) -> inspect.Parameter:
    if isinstance(annotation, Default):
        return inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            annotation=annotation.annotation,
            default=annotation.value,
        )
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation)


def only_id(ids: Mapping[str, uuid.UUID]) -> uuid.UUID:
    """The one path id a shared `run` received as `**ids`."""
    (value,) = ids.values()
    return value


def _path_id(path: str) -> str:
    (name,) = re.findall(r"\{(\w+)\}", path)
    return str(name)


@dataclass(frozen=True)
class Records(Generic[DbT, CtxT]):
    """A resource's routes that answer `out`, validated from what the service answers: create
    (201), read, write (a path id and a body: replace, change, or create under a parent) and
    delete (204). `read`, `write` and `delete` are the caller's context by scope
    (`Annotated[RequestContext, require(...)]`), `session` the session dependency; the
    route functions are named after their operationIds (`getContact` → `get_contact`) in
    `module`. Each route's parameters come in the hand-written order: path id, body, ctx,
    session."""

    router: APIRouter
    module: str
    out: type[BaseModel]
    read: object
    write: object
    delete: object
    session: object

    def create_route(
        self,
        path: str,
        operation_id: str,
        doc: str,
        body: type[BodyT],
        call: Callable[[DbT, CtxT, BodyT], Awaitable[object]],
        **declared: Unpack[Declared],
    ) -> None:
        async def run(body: BodyT, ctx: CtxT, session: DbT) -> Response:
            return json_response(self.out.model_validate(await call(session, ctx, body)), 201)

        parameters = {"body": body, "ctx": self.write}
        self._add("POST", path, operation_id, doc, run, parameters, 201, **declared)

    def read_route(
        self,
        path: str,
        operation_id: str,
        doc: str,
        call: Callable[[DbT, CtxT, uuid.UUID], Awaitable[object]],
        **declared: Unpack[Declared],
    ) -> None:
        async def run(ctx: CtxT, session: DbT, **ids: uuid.UUID) -> Response:
            return json_response(self.out.model_validate(await call(session, ctx, only_id(ids))))

        parameters = {_path_id(path): uuid.UUID, "ctx": self.read}
        self._add("GET", path, operation_id, doc, run, parameters, None, **declared)

    def write_route(
        self,
        method: str,
        path: str,
        operation_id: str,
        doc: str,
        body: type[BodyT],
        call: Callable[[DbT, CtxT, uuid.UUID, BodyT], Awaitable[object]],
        *,
        status_code: int | None = None,
        **declared: Unpack[Declared],
    ) -> None:
        def without_tag(
            session: DbT, ctx: CtxT, row_id: uuid.UUID, written: BodyT, _tag: str | None
        ) -> Awaitable[object]:
            return call(session, ctx, row_id, written)

        self._write(
            method, path, operation_id, doc, body, without_tag, status_code, False, declared
        )

    def delete_route(
        self,
        path: str,
        operation_id: str,
        doc: str,
        call: Callable[[DbT, CtxT, uuid.UUID], Awaitable[None]],
        **declared: Unpack[Declared],
    ) -> None:
        async def run(ctx: CtxT, session: DbT, **ids: uuid.UUID) -> Response:
            await call(session, ctx, only_id(ids))
            return Response(status_code=204)

        parameters = {_path_id(path): uuid.UUID, "ctx": self.delete}
        self._add("DELETE", path, operation_id, doc, run, parameters, 204, **declared)

    def write_if_match_route(
        self,
        method: str,
        path: str,
        operation_id: str,
        doc: str,
        body: type[BodyT],
        call: Callable[[DbT, CtxT, uuid.UUID, BodyT, str | None], Awaitable[object]],
        **declared: Unpack[Declared],
    ) -> None:
        """`write_route` for a service that honours `If-Match` (RFC 9110 §13.1.1: 412 when it
        names a version no longer current), given the header's value last."""
        self._write(method, path, operation_id, doc, body, call, None, True, declared)

    def _write(
        self,
        method: str,
        path: str,
        operation_id: str,
        doc: str,
        body: type[BodyT],
        call: Callable[[DbT, CtxT, uuid.UUID, BodyT, str | None], Awaitable[object]],
        status_code: int | None,
        if_match: bool,
        declared: Declared,
    ) -> None:
        async def run(
            body: BodyT, ctx: CtxT, session: DbT, request: Request | None = None, **ids: uuid.UUID
        ) -> Response:
            tag = request.headers.get("if-match") if request is not None else None
            written = await call(session, ctx, only_id(ids), body, tag)
            return json_response(self.out.model_validate(written), status_code or 200)

        parameters = {_path_id(path): uuid.UUID, "body": body, "ctx": self.write}
        self._add(
            method, path, operation_id, doc, run, parameters, status_code, if_match, **declared
        )

    def delete_if_match_route(
        self,
        path: str,
        operation_id: str,
        doc: str,
        call: Callable[[DbT, CtxT, uuid.UUID, str | None], Awaitable[None]],
        **declared: Unpack[Declared],
    ) -> None:
        """`delete_route` for a service that honours `If-Match`, given the header's value last."""

        async def run(ctx: CtxT, session: DbT, request: Request, **ids: uuid.UUID) -> Response:
            await call(session, ctx, only_id(ids), request.headers.get("if-match"))
            return Response(status_code=204)

        parameters = {_path_id(path): uuid.UUID, "ctx": self.delete}
        self._add("DELETE", path, operation_id, doc, run, parameters, 204, True, **declared)

    def _add(
        self,
        method: str,
        path: str,
        operation_id: str,
        doc: str,
        run: Run,
        parameters: Mapping[str, object],
        status_code: int | None,
        if_match: bool = False,
        *,
        summary: str | None = None,
        description: str | None = None,
        tool: Flag | None = None,
    ) -> None:
        name = re.sub(r"(?<!^)(?=[A-Z])", "_", operation_id).lower()
        # The request last, for its `If-Match`.
        tail: dict[str, object] = {"request": Request} if if_match else {}
        route = endpoint(self.module, name, doc, run, **parameters, session=self.session, **tail)
        self.router.api_route(
            path,
            methods=[method],
            operation_id=operation_id,
            status_code=status_code,
            # A 204 has no body to document.
            response_model=None if status_code == 204 else self.out,
            responses=IF_MATCH if if_match else None,
            summary=summary,
            description=description,
        )(tool(route) if tool is not None else route)
