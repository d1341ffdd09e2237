"""`/docs`: Swagger UI served from the installed package (fastapi-offline ships Swagger UI's
assets, MIT; Swagger UI itself is Apache-2.0), so a server behind a firewall shows its docs."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.staticfiles import StaticFiles
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.routing import Route

DOCS_PATH = "/docs"
ASSETS_PATH = "/docs/assets"
ASSETS = Path(str(files("fastapi_offline") / "static"))


def install_docs(app: FastAPI, openapi_url: str) -> None:
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=root + openapi_url,
            title="salesplan API",
            swagger_js_url=f"{root}{ASSETS_PATH}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_PATH}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_PATH}/favicon.png",
        )

    app.router.routes.append(Route(DOCS_PATH, swagger_ui, methods=["GET"], include_in_schema=False))
    app.mount(ASSETS_PATH, StaticFiles(directory=ASSETS), name="docs-assets")
