"""The route index (middleware.RouteIndex) matches a request against the routes its path can
match: for every path the app declares, the candidates hold every route of the whole table that
matches it, in the table's order, and the methods it allows are the whole table's."""

from __future__ import annotations

import re

from starlette.routing import Match

from salesplan.middleware import RouteIndex, methods_of_path


def _example(path: str) -> str:
    path = re.sub(r"\{[^}]*:path\}", "a/b", path)
    return re.sub(r"\{[^}]*\}", "x1", path)


def _paths(app) -> list[str]:
    found = set()
    for route in app.router.routes:
        path = getattr(route, "path", None)
        if isinstance(path, str):
            found |= {_example(path), _example(path) + "/", _example(path) + "/more"}
    return sorted(found | {"/", "/nothing-here", "/api/v1/nothing", "/static/app.css"})


def _matching(routes, scope) -> list:
    return [r for r in routes if r.matches(scope)[0] is not Match.NONE]


def test_candidates_hold_every_matching_route_in_order(app) -> None:
    routes = app.router.routes
    index = RouteIndex(routes)
    for path in _paths(app):
        for method in ("GET", "POST", "PATCH", "DELETE"):
            scope = {"type": "http", "path": path, "method": method, "root_path": ""}
            assert _matching(index.candidates(path), scope) == _matching(routes, scope), path
        scope = {"type": "http", "path": path, "method": "GET", "root_path": ""}
        assert index.allowed(scope) == methods_of_path(routes, scope), path


def test_index_follows_routes_added_later(app) -> None:
    from salesplan.middleware import route_index

    first = route_index(app.router)
    assert route_index(app.router) is first
    app.router.routes.append(app.router.routes[-1])
    try:
        assert route_index(app.router) is not first
    finally:
        app.router.routes.pop()


async def test_wrong_method_on_a_templated_path_is_405_with_every_method(client, actor) -> None:
    resp = await client.post("/api/v1/accounts/" + "0" * 8 + "-0000-0000-0000-" + "0" * 12)
    assert resp.status_code == 405
    assert set(resp.headers["allow"].replace(" ", "").split(",")) == {
        "GET",
        "HEAD",
        "PUT",
        "PATCH",
        "DELETE",
        "OPTIONS",
    }
    options = await client.options("/api/v1/accounts/abc")
    assert options.status_code == 204
    assert options.headers["allow"] == resp.headers["allow"]
    fixed = await client.get("/api/v1/accounts/bulk")
    assert fixed.status_code == 405
    assert fixed.headers["allow"] == "OPTIONS, POST"
