"""Rendering a page: Jinja2 templates, the CSRF token, and the headers every page carries
(no framing, no caching, no referrer: consent redirects carry codes)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import Request
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.responses import HTMLResponse

from salesplan.web.session import csrf_token, set_csrf_cookie

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"

_env = Environment(
    loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html"]), enable_async=False
)

PAGE_HEADERS = {
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' https: data:; style-src 'self'; script-src 'none'; "
        "base-uri 'none'; object-src 'none'; frame-ancestors 'none'"
    ),
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}


def render_template(template: str, context: dict[str, Any]) -> str:
    """A template's HTML, without a request (what `render` and kept pages build from)."""
    return _env.get_template(template).render({"user": None, "title": "", **context})


def respond(
    request: Request,
    html: Callable[[str], str | bytes],
    *,
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> HTMLResponse:
    """A page built by `html` from the request's CSRF token, with the headers every page
    carries (and the CSRF cookie when the request had none)."""
    token, new_cookie = csrf_token(request)
    response = HTMLResponse(html(token), status_code=status, headers=PAGE_HEADERS | (headers or {}))
    if new_cookie is not None:
        set_csrf_cookie(response, request, new_cookie)
    return response


def render(
    request: Request,
    template: str,
    context: dict[str, Any] | None = None,
    *,
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> HTMLResponse:
    return respond(
        request,
        lambda token: render_template(template, {"csrf_token": token, **(context or {})}),
        status=status,
        headers=headers,
    )


def error_page(request: Request, title: str, message: str, *, status: int = 400) -> HTMLResponse:
    return render(request, "error.html", {"title": title, "message": message}, status=status)
