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
`**ids` (`only_id(ids)`)."""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from starlette.responses import Response

Run = Callable[..., Awaitable[Response]]


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
