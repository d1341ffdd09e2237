"""GET /meta (public) and GET /healthz."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import JSONResponse

from salesplan import __version__
from salesplan.auth.dependencies import public
from salesplan.auth.scopes import APPROVED_SCOPES
from salesplan.config import Settings
from salesplan.db import database_unavailable
from salesplan.kit.pagination import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE
from salesplan.kit.tools import as_tool
from salesplan.kit.uow import UnitOfWork
from salesplan.meta import descriptions, repository
from salesplan.ratelimit.limiter import RateLimiter
from salesplan.ratelimit.policy import WINDOW_SECONDS

router = APIRouter(tags=["meta"])
health_router = APIRouter()


def meta_document(request: Request) -> dict[str, object]:
    return build_meta_document(request.app.state.settings, request.app.state.rate_limiter)


def build_meta_document(settings: Settings, limiter: RateLimiter) -> dict[str, object]:
    """The /meta body; shared by the REST route and the MCP tool `getMeta`."""
    return {
        "name": "salesplan",
        "version": __version__,
        "basePath": "/api/v1",
        "scopes": list(APPROVED_SCOPES),
        "pagination": {
            "defaultLimit": DEFAULT_PAGE_SIZE,
            "maxLimit": MAX_PAGE_SIZE,
            "defaultPage": 1,
            "defaultPageSize": DEFAULT_PAGE_SIZE,
            "maxPageSize": MAX_PAGE_SIZE,
            "defaultOrder": "asc",
        },
        "rateLimiting": {
            "enabled": limiter.enabled,
            "store": limiter.store.name,
            "windowSeconds": WINDOW_SECONDS,
            # Effective limits (a write limit of 0 shows the read limit it falls back to);
            # null = none configured.
            "groups": {
                group: {"read": limits.for_write(False), "write": limits.for_write(True)}
                for group, limits in limiter.policy.items()
            },
        },
        "mcp": {"url": settings.mcp_url},
    }


@router.get(
    "/meta",
    operation_id="getMeta",
    openapi_extra=public(),
    summary="Service metadata",
    description=descriptions.GET_META,
)
@as_tool(group="foundation", brief=descriptions.GET_META_BRIEF)
async def get_meta(request: Request) -> dict[str, Any]:
    """Approved scopes, pagination defaults and the rate-limit configuration."""
    return meta_document(request)


@health_router.get("/healthz", include_in_schema=False)
async def healthz(request: Request) -> JSONResponse:
    """Liveness and readiness: the database and, when configured, Redis answer."""
    checks: dict[str, str] = {}
    try:
        # Bounded: a hung database makes the check fail fast, not wait a statement timeout.
        async with (
            asyncio.timeout(request.app.state.settings.db_connect_timeout),
            # Not `db.unit_of_work`: the check is how a paused database is found back.
            UnitOfWork(request.app.state.database, read_only=True) as uow,
        ):
            await repository.ping(await uow.reader())
        checks["database"] = "ok"
        request.app.state.db_health.recovered()
    except Exception as exc:
        checks["database"] = "unavailable"
        if database_unavailable(exc):
            request.app.state.db_health.failed(exc)
    store = request.app.state.rate_limiter.store
    ping = getattr(store, "ping", None)
    if ping is not None:
        checks["rateLimitStore"] = "ok" if await ping() else "unavailable"
        if checks["rateLimitStore"] != "ok":
            # Which limits hold meanwhile: the API buckets fail open (documented); the per-IP
            # abuse limits count in each process.
            checks["apiRateLimits"] = "off"
            checks["ipRateLimits"] = "in-process"
    if checks["database"] != "ok":
        return JSONResponse({"status": "unavailable", "checks": checks}, status_code=503)
    if all(v == "ok" for v in checks.values()):
        return JSONResponse({"status": "ok"})
    return JSONResponse({"status": "degraded", "checks": checks})
