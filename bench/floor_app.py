"""The floor every ratio is taken against: a bare Starlette app with one route that answers a
small JSON object, served by the same server program (uvicorn) in its own process with the same
worker count as the app being measured. No middleware, no auth, no database."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


async def floor(request: Request) -> JSONResponse:
    return JSONResponse({"ok": True})


def create_app() -> Starlette:
    return Starlette(routes=[Route("/floor", floor)])
