"""Every use of a private name of FastAPI, Starlette, the MCP SDK and SQLAlchemy, in one place.

The app reaches under four frameworks for speed (bench/README.md): FastAPI's per-parameter
helpers answered once per parameter, the router's dispatch through our route index, a tool call
handed straight to its route's ASGI app, the MCP server's request handlers, and SQLAlchemy's
own bind and result processors for statements run on the driver. Nothing else in
`src/salesplan` names a framework's private attribute (`tests/foundation/test_adapters.py`
fails if something does), and `pyproject.toml` bounds those packages to the releases these
names were read from.

Each hook checks, when it is installed or first used, that the internal it needs is there with
the shape it expects. When it is not (a release moved it), the hook logs one warning naming the
internal and the app runs the framework's plain, public path instead: a new release may cost
speed, never start-up or correctness."""

from __future__ import annotations

import copy
import functools
import logging
from collections.abc import Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.type_api import TypeEngine

# FastAPI and Starlette are imported by the hooks that use them, when they run: the SQLAlchemy
# hooks below serve CLI commands too, which start without FastAPI.
if TYPE_CHECKING:
    # FastAPI's parsed route signature (`APIRoute.dependant`), for typing (mcp/derive.py).
    from fastapi.dependencies.models import Dependant as Dependant
    from starlette.routing import BaseRoute, Router
    from starlette.types import ASGIApp, Message, Receive, Scope, Send


log = logging.getLogger("salesplan.adapters")

_warned: set[str] = set()

# The private names, one constant each (a test renames them to show each fallback).
MIDDLEWARE_STACK = "middleware_stack"  # starlette.routing.Router
LOWLEVEL_SERVER = "_lowlevel_server"  # mcp.server.mcpserver.MCPServer
REQUEST_HANDLERS = "_request_handlers"  # mcp.server.lowlevel.Server
BIND_PROCESSORS = "_bind_processors"  # sqlalchemy.sql.compiler.SQLCompiler
RESULT_PROCESSOR = "_cached_result_processor"  # sqlalchemy.types.TypeEngine


def unpatched(internal: str, why: str) -> None:
    """Log once per process that `internal` is missing and the plain path runs instead."""
    if internal in _warned:
        return
    _warned.add(internal)
    log.warning(
        "framework internal %s is not usable (%s): running unpatched, which may be slower",
        internal,
        why,
    )


def _drive(coroutine: Coroutine[object, None, object]) -> None:
    """Run a coroutine that never suspends, without an event loop (the probes below)."""
    try:
        coroutine.send(None)
    except StopIteration:
        return
    coroutine.close()
    raise RuntimeError("the probe suspended")


# --- FastAPI: per-parameter introspection answered once per parameter ----------------------------

PARAMETER_HELPERS = (
    "_get_param_model",
    "_get_param_aliases",
    "_is_json_field",
    "field_annotation_is_sequence",
)
"""The helpers of `fastapi.dependencies.utils` that `request_params_to_args` and
`_get_multidict_value` call per parameter and per request, pure functions of their first
argument: typing introspection (`get_origin`, `issubclass` over unions) that cost listPlans,
with its ten query parameters, about 12 % of its CPU per request (bench/README.md)."""

_LIMIT = 65_536
"""Objects remembered per helper at most (routes' parameters are a few hundred; apps built
again and again, as in the tests, add theirs): past it, the memory starts over."""


def remembering(helper: Callable[..., object]) -> Callable[..., object]:
    """`helper(obj)` answered once per object (by identity; the object is held so that its
    id is not reused); calls with further arguments go to `helper` itself."""
    answers: dict[int, tuple[object, object]] = {}

    @functools.wraps(helper)
    def remembered(obj: object, *args: object, **kwargs: object) -> object:
        if args or kwargs:
            return helper(obj, *args, **kwargs)
        found = answers.get(id(obj))
        if found is not None and found[0] is obj:
            return found[1]
        answer = helper(obj)
        if len(answers) >= _LIMIT:
            answers.clear()
        answers[id(obj)] = (obj, answer)
        return answer

    vars(remembered)["remembering"] = True  # read back by getattr (a function attribute)
    return remembered


def install_parameter_caches() -> list[str]:
    """Replace FastAPI's per-parameter helpers with the same functions remembering their answer
    per parameter object (once per process; creating more apps changes nothing). A helper that
    is gone is left to FastAPI (logged). Returns the helpers remembered."""
    try:
        import fastapi.dependencies.utils as fastapi_utils
    except ImportError as exc:  # pragma: no cover - depends on the FastAPI release
        unpatched("fastapi.dependencies.utils", str(exc))
        return []
    installed = []
    for name in PARAMETER_HELPERS:
        helper = getattr(fastapi_utils, name, None)
        if not callable(helper):
            unpatched(f"fastapi.dependencies.utils.{name}", "no such function")
            continue
        if not getattr(helper, "remembering", False):
            setattr(fastapi_utils, name, remembering(helper))
        installed.append(name)
    return installed


# --- Starlette: the router's dispatch ---------------------------------------------------------


def _probe_route() -> Any:
    """A route that matches every request and notes that it was handled."""
    from starlette.routing import BaseRoute, Match

    class _ProbeRoute(BaseRoute):
        def __init__(self) -> None:
            self.handled = False

        def matches(self, scope: Scope) -> tuple[Match, Scope]:
            return Match.FULL, {}

        async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
            self.handled = True

    return _ProbeRoute()


async def _nothing() -> Message:  # pragma: no cover - the probes never receive
    return {}


async def _discard(message: Message) -> None:  # pragma: no cover - the probes never send
    return None


def _router_dispatch_works() -> str | None:
    """Why Starlette's Router cannot take our dispatch (None when it can): a router calls
    its `middleware_stack`, and a shallow copy of it with other routes dispatches to those."""
    from starlette.routing import Router

    router = Router()
    if not callable(getattr(router, MIDDLEWARE_STACK, None)):
        return f"Router has no {MIDDLEWARE_STACK}"
    reached = []

    async def stack(scope: Scope, receive: Receive, send: Send) -> None:
        reached.append(scope)

    setattr(router, MIDDLEWARE_STACK, stack)
    scope: Scope = {"type": "http", "path": "/", "method": "GET", "root_path": ""}
    try:
        _drive(router(scope, _nothing, _discard))
        if not reached:
            return "Router.__call__ does not call middleware_stack"
        probe = _probe_route()
        _drive(router_view(router, [probe]).app(dict(scope), _nothing, _discard))
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None if probe.handled else "a copy of the Router does not route to its routes"


def install_router_dispatch(router: Router, dispatch: Callable[[ASGIApp], ASGIApp]) -> bool:
    """Make `dispatch(the router's own dispatch)` what the router runs for every request
    (Starlette's `Router.middleware_stack`). False, logged, when this Starlette does not
    dispatch that way: the router then matches against its whole table, as without us."""
    why = _router_dispatch_works()
    if why is not None:
        unpatched(f"starlette.routing.Router.{MIDDLEWARE_STACK}", why)
        return False
    setattr(router, MIDDLEWARE_STACK, dispatch(getattr(router, MIDDLEWARE_STACK)))
    return True


def router_view(router: Router, routes: Iterable[BaseRoute]) -> Router:
    """A shallow copy of `router` that matches only `routes`: its `.app` is Starlette's own
    matching loop over them (redirects, partial matches and the rest as the router's)."""
    view = copy.copy(router)
    view.routes = list(routes)
    return view


# --- FastAPI: a route's ASGI app called without the app's middleware --------------------------


def route_runner(route: Any) -> ASGIApp | None:
    """The route's ASGI app with what FastAPI's own middleware gives every request (the
    per-request exit stack FastAPI's request handler requires), for a request made in the
    process (an MCP tool call runs its route). None, logged, when this FastAPI has no such
    middleware: the caller then sends the request through the whole app."""
    try:
        from fastapi.middleware.asyncexitstack import AsyncExitStackMiddleware
    except ImportError as exc:
        unpatched("fastapi.middleware.asyncexitstack.AsyncExitStackMiddleware", str(exc))
        return None
    return AsyncExitStackMiddleware(route.app)


# --- the MCP SDK: the low-level server's request handlers -------------------------------------


def lowlevel_server(server: Any) -> Any | None:
    """The MCP server's low-level server (`MCPServer._lowlevel_server`) when it has the
    request-handler methods we use, else None (logged)."""
    lowlevel = getattr(server, LOWLEVEL_SERVER, None)
    if lowlevel is None:
        unpatched(f"mcp MCPServer.{LOWLEVEL_SERVER}", "no such attribute")
        return None
    for name in ("get_request_handler", "add_request_handler"):
        if not callable(getattr(lowlevel, name, None)):
            unpatched(f"mcp Server.{name}", "no such method")
            return None
    return lowlevel


def drop_handlers(lowlevel: object, prefixes: tuple[str, ...]) -> None:
    """Remove the handlers of the methods starting with `prefixes` (the SDK advertises a
    capability when it has a handler). Left as they are, logged, when the handler table moved:
    the capabilities then advertise empty prompts and resources."""
    handlers = getattr(lowlevel, REQUEST_HANDLERS, None)
    if not isinstance(handlers, dict):
        unpatched(f"mcp Server.{REQUEST_HANDLERS}", "not a dict")
        return
    for method in [m for m in handlers if isinstance(m, str) and m.startswith(prefixes)]:
        del handlers[method]


# --- SQLAlchemy: a compiled statement's processors --------------------------------------------


def bind_processors(compiled: SQLCompiler) -> dict[str, Callable[[object], object]]:
    """The compiled statement's bind processors by parameter name, as SQLAlchemy applies them
    when it executes the statement itself (`SQLCompiler._bind_processors`). Else built from
    each parameter's type (the public `TypeEngine.dialect_impl(...).bind_processor`)."""
    processors = getattr(compiled, BIND_PROCESSORS, None)
    if processors is not None and hasattr(processors, "items"):
        return {k: v for k, v in processors.items() if v is not None}
    unpatched(f"sqlalchemy SQLCompiler.{BIND_PROCESSORS}", "no such mapping")
    dialect = compiled.dialect
    found: dict[str, Callable[[object], object]] = {}
    for bind, name in compiled.bind_names.items():
        processor = bind.type.dialect_impl(dialect).bind_processor(dialect)
        if processor is not None:
            found[name] = processor
    return found


def result_processor(
    type_: TypeEngine[object], dialect: Dialect
) -> Callable[[object], object] | None:
    """The type's result processor on `dialect`, as SQLAlchemy's result rows apply it
    (`TypeEngine._cached_result_processor`), else the public equivalent."""
    cached = getattr(type_, RESULT_PROCESSOR, None)
    if callable(cached):
        processor: Callable[[object], object] | None = cached(dialect, None)
        return processor
    unpatched(f"sqlalchemy TypeEngine.{RESULT_PROCESSOR}", "no such method")
    public: Callable[[object], object] | None = type_.dialect_impl(dialect).result_processor(
        dialect, None
    )
    return public


# --- SQLAlchemy: the asyncpg adapter's transaction --------------------------------------------

ASYNCPG_TRANSACTION = "_transaction"  # sqlalchemy.dialects.postgresql.asyncpg adapter
ASYNCPG_START = "_start_transaction"


async def begin_on_driver(conn: AsyncConnection) -> None:
    """Begin, on asyncpg, the transaction SQLAlchemy began on `conn` (an AsyncConnection):
    SQLAlchemy's adapter sends BEGIN only with the first statement SQLAlchemy itself runs
    (`AsyncAdapt_asyncpg_connection._start_transaction`), and statements sent straight to the
    driver before it would commit on their own. Else (a release moved it) the public path: a
    statement through SQLAlchemy, which begins it (one round trip more)."""
    raw = await conn.get_raw_connection()
    adapter = raw.dbapi_connection
    start = getattr(adapter, ASYNCPG_START, None)
    if callable(start) and hasattr(adapter, ASYNCPG_TRANSACTION):
        if getattr(adapter, ASYNCPG_TRANSACTION) is None:
            await start()
        return
    unpatched(f"sqlalchemy asyncpg adapter.{ASYNCPG_START}", "no such method")
    await conn.exec_driver_sql("SELECT 1")
