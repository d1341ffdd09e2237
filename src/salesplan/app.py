"""`create_app(settings)`: middleware, the error handler, routers, state."""

from __future__ import annotations

import contextlib
import gc
import inspect
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from starlette.responses import JSONResponse
from starlette.routing import Route
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

import salesplan.oauth.access  # noqa: F401 - registers the OAuth token kind
from salesplan import API_PREFIX, __version__, accesslog
from salesplan.auth.dependencies import authorize_before_bodies
from salesplan.config import Settings
from salesplan.db import (
    DatabaseHealth,
    create_admission_gate,
    create_database,
    create_engine,
)
from salesplan.engage.delivery.public import router as engage_public_router
from salesplan.error_handlers import install_error_handlers
from salesplan.events import handlers
from salesplan.feed.slack import router as feed_slack_router
from salesplan.jobs.loop import in_process_worker
from salesplan.kit.adapters import install_parameter_caches
from salesplan.kit.pagination import CursorCodec
from salesplan.mcp.server import install_mcp
from salesplan.meta.router import health_router
from salesplan.middleware import RequestMiddleware, install_route_index
from salesplan.oauth.discovery import router as discovery_router
from salesplan.oauth.errors import OAuthError, oauth_error_handler
from salesplan.openapi import build_openapi, collect_requirements, requirement_of
from salesplan.ratelimit.limiter import RateLimiter
from salesplan.ratelimit.policy import build_policy
from salesplan.ratelimit.store import MemoryStore, RateLimitStore, RedisStore
from salesplan.routers import api_routers
from salesplan.web.buyer_rooms import router as rooms_pages_router
from salesplan.web.consent import authorize_page
from salesplan.web.deps import install_web
from salesplan.web.docs import install_docs
from salesplan.web.integrations import router as integrations_router
from salesplan.web.maps import router as maps_router
from salesplan.web.pages import STATIC
from salesplan.web.plan_rooms import router as plan_room_pages_router
from salesplan.web.router import router as web_router
from salesplan.web.webhooks import router as webhooks_page_router
from salesplan.webhooks.catalog import openapi_webhooks

log = logging.getLogger("salesplan")


_ROUTE_PARAMS = tuple(
    name
    for name in inspect.signature(APIRoute.__init__).parameters
    if name not in ("self", "path", "endpoint", "dependency_overrides_provider")
)


def include_flat(
    app: FastAPI, router: APIRouter, prefix: str = "", *, in_schema: bool = True
) -> None:
    """Add a router's routes straight onto the app's router.

    `include_router` keeps included routers as lazy wrappers that are re-matched on every
    request, at a cost that grows with every route (measured: ~270 µs per request with our
    ~150 routes). Declared routes copied one by one match with one regex each."""
    for route in router.routes:
        if not isinstance(route, APIRoute):
            raise TypeError(f"unexpected route type {type(route).__name__} in {router}")
        options = {name: getattr(route, name) for name in _ROUTE_PARAMS if hasattr(route, name)}
        options["include_in_schema"] = route.include_in_schema and in_schema
        app.router.add_api_route(prefix + route.path, route.endpoint, **options)


def create_rate_limit_store(settings: Settings) -> RateLimitStore:
    """Redis (shared by every worker and machine) when SALESPLAN_REDIS_URL is set, else memory."""
    if settings.redis_url:
        return RedisStore(settings.redis_url, prefix=settings.redis_prefix)
    return MemoryStore()


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    install_parameter_caches()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for hook in app.state.lifespan_hooks:
                await stack.enter_async_context(hook(app))
            try:
                yield
            finally:
                await app.state.rate_limiter.store.close()
                await app.state.engine.dispose()

    app = FastAPI(
        title="salesplan",
        version=__version__,
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url=None,  # served from the package's assets below (web/docs.py), not a CDN
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.engine = create_engine(settings)
    app.state.db_health = DatabaseHealth()
    app.state.database = database = create_database(app.state.engine, handlers())
    app.state.sessionmaker = database.sessionmaker
    app.state.read_sessionmaker = database.read_sessionmaker
    app.state.read_engine = database.read_engine
    app.state.admission = create_admission_gate(settings)
    app.state.cursor_codec = CursorCodec(settings.signing_key)
    app.state.rate_limiter = RateLimiter(
        build_policy(settings.rate_limits),
        create_rate_limit_store(settings),
        enabled=settings.rate_limits_enabled,
        ip_limit=settings.ip_rate_limit_per_minute,
    )
    app.state.lifespan_hooks = []
    if settings.run_worker_in_process:
        app.state.lifespan_hooks.append(in_process_worker)

    install_error_handlers(app)
    # OAuth endpoints answer RFC 6749 errors, not ErrorEnvelope (contract §2).
    app.add_exception_handler(OAuthError, oauth_error_handler)
    app.add_middleware(RequestMiddleware)
    if settings.trusted_proxies:
        # The client address (per-IP limits) comes from X-Forwarded-For only when the peer is
        # a configured proxy; `salesplan serve` runs its server (granian or uvicorn)
        # with no proxy header support of its own (tests/reliability/test_forwarded_for.py).
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=settings.trusted_proxies)

    include_flat(app, health_router)
    # Origin-level pages and discovery (not under /api/v1).
    include_flat(app, discovery_router)
    include_flat(app, web_router)
    install_web(app)
    app.state.authorize_page = authorize_page  # GET /api/v1/oauth/authorize's page
    include_flat(app, maps_router)
    include_flat(app, rooms_pages_router)
    include_flat(app, plan_room_pages_router)
    include_flat(app, engage_public_router)
    include_flat(app, feed_slack_router)
    include_flat(app, integrations_router)
    include_flat(app, webhooks_page_router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    install_docs(app, f"{API_PREFIX}/openapi.json")
    routers = api_routers()
    app.state.requirements = collect_requirements([router for _, router, _ in routers])
    for prefix, router, in_schema in routers:
        include_flat(app, router, API_PREFIX + prefix, in_schema=in_schema)
    # Contract §12: authentication before the body is read, for every operation with a body.
    authorize_before_bodies(app.router.routes, requirement_of)

    if settings.bench_routes:

        async def floor(request: Any) -> JSONResponse:
            return JSONResponse({"ok": True})

        app.router.routes.append(Route("/_bench/floor", floor))

    def openapi() -> dict[str, Any]:
        return build_openapi(app, extend=openapi_webhooks)

    app.openapi = openapi  # type: ignore[method-assign]

    install_mcp(app, settings)
    install_route_index(app)
    return app


@contextlib.asynccontextmanager
async def _frozen_startup_heap(_app: FastAPI) -> AsyncIterator[None]:
    """Move everything alive once the app has started (modules, routes, models, schemas: about
    250,000 objects) out of the garbage collector's reach with `gc.freeze()`. Otherwise each
    full collection walks them all: ~170-220 ms measured on this heap, one stalled request each
    time (bench/README.md). Only for the served process: a test suite that builds many apps
    must keep collecting what the earlier ones left."""
    gc.collect()
    gc.freeze()
    yield


def create_served_app() -> FastAPI:
    """The app as `salesplan serve` runs it in each worker process."""
    accesslog.install()  # each worker process, after the server configured its logging
    app = create_app()
    app.state.lifespan_hooks.append(_frozen_startup_heap)
    return app
