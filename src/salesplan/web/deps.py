"""What the pages share: the 303 answer, the safe `next` path, and the signed-in-user dependency.

A page that needs a signed-in user takes `user: DeveloperUser` (or another `signed_in(...)`
alias) instead of checking `current_user(...) is None` itself: without a session the dependency
raises `SignInRequired`, which `install_web` turns into a 303 to /login."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated
from urllib.parse import quote, urlsplit

from fastapi import Depends, FastAPI, Request
from starlette.datastructures import FormData
from starlette.responses import RedirectResponse, Response

from salesplan.auth.scopes import APPROVED_SCOPES, SCOPE_DESCRIPTIONS
from salesplan.db_dependencies import SessionDep
from salesplan.models.identity import User
from salesplan.web.session import csrf_valid, current_user

DEVELOPER = "/settings/developer"
HERE = "."  # `signed_in(HERE)`: come back to the page asked for


def see_other(location: str) -> RedirectResponse:
    return RedirectResponse(location, status_code=303)


def safe_next(value: object) -> str:
    """Only a path on this site: never an open redirect."""
    if not isinstance(value, str) or not value.startswith("/") or value.startswith("//"):
        return DEVELOPER
    if "\\" in value or urlsplit(value).netloc:
        return DEVELOPER
    return value


def scope_groups(scopes: Sequence[str]) -> list[tuple[str, list[tuple[str, str]]]]:
    """Scopes grouped by the resource they reach, in the approved list's order."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for scope in APPROVED_SCOPES:
        if scope in scopes:
            resource = scope.split(":", 1)[0].replace("_", " ").capitalize()
            groups.setdefault(resource, []).append((scope, SCOPE_DESCRIPTIONS.get(scope, scope)))
    return list(groups.items())


class SignInRequired(Exception):
    """No signed-in user (or a developer form without a valid CSRF token): off to /login."""

    def __init__(self, next_path: str | None) -> None:
        super().__init__(next_path)
        self.next_path = next_path

    def response(self) -> Response:
        if self.next_path is None:
            return see_other("/login")
        return see_other("/login?next=" + quote(self.next_path, safe="/"))


def signed_in(next_path: str | None) -> Callable[[Request, SessionDep], Awaitable[User]]:
    """A dependency that answers the signed-in user; `next_path` is where /login sends the user
    back (HERE: the page asked for; None: nowhere in particular)."""

    async def dependency(request: Request, session: SessionDep) -> User:
        user = await current_user(request, session)
        if user is None:
            raise SignInRequired(request.url.path if next_path == HERE else next_path)
        return user

    return dependency


SignedInUser = Annotated[User, Depends(signed_in(HERE))]
DeveloperUser = Annotated[User, Depends(signed_in(DEVELOPER))]
AnyPageUser = Annotated[User, Depends(signed_in(None))]


async def developer_form(request: Request, user: DeveloperUser) -> tuple[User, FormData]:
    """A developer-settings POST: the signed-in user and the form, whose CSRF token is valid."""
    form = await request.form()
    if not csrf_valid(request, form.get("csrf_token")):
        raise SignInRequired(DEVELOPER)
    return user, form


DeveloperPost = Annotated[tuple[User, FormData], Depends(developer_form)]


def install_web(app: FastAPI) -> None:
    async def sign_in(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, SignInRequired)
        return exc.response()

    app.add_exception_handler(SignInRequired, sign_in)
