"""Signing in and out: /login, /logout (and / sends to developer settings)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from salesplan.auth.passwords import verify_password
from salesplan.db_dependencies import SessionDep
from salesplan.errors import RateLimited
from salesplan.organizations.repository import user_by_email
from salesplan.ratelimit.limiter import RateLimiter
from salesplan.web.deps import DEVELOPER, AnyPageUser, safe_next, see_other
from salesplan.web.pages import error_page, render
from salesplan.web.session import csrf_valid, current_user, end_session, start_session

router = APIRouter(include_in_schema=False)


@router.get("/")
async def home(request: Request) -> Response:
    return see_other(DEVELOPER)


@router.get("/login")
async def login_form(request: Request, session: SessionDep) -> Response:
    next_path = safe_next(request.query_params.get("next"))
    if await current_user(request, session) is not None:
        return see_other(next_path)
    return render(request, "login.html", {"title": "Sign in", "next": next_path, "email": ""})


@router.post("/login")
async def login(request: Request, session: SessionDep) -> Response:
    form = await request.form()
    next_path = safe_next(form.get("next"))
    email = str(form.get("email") or "").strip().lower()
    context = {"title": "Sign in", "next": next_path, "email": email}
    limiter: RateLimiter = request.app.state.rate_limiter
    try:
        await limiter.consume_ip(request.client.host if request.client else "unknown", "login")
    except RateLimited as exc:
        return render(
            request,
            "login.html",
            context | {"error": "Too many sign-in attempts. Wait a minute and try again."},
            status=429,
            headers={"Retry-After": exc.headers.get("Retry-After", "60")},
        )
    if not csrf_valid(request, form.get("csrf_token")):
        return render(
            request,
            "login.html",
            context | {"error": "Your form expired. Please try again."},
            status=400,
        )
    user = await user_by_email(session, email) if email else None
    password = str(form.get("password") or "")
    if not verify_password(user.password_hash if user else None, password) or user is None:
        return render(
            request,
            "login.html",
            context | {"error": "The e-mail or password is not right."},
            status=401,
        )
    response = see_other(next_path)
    await start_session(session, response, request, user.id)
    return response


@router.get("/logout")
async def logout_form(request: Request, user: AnyPageUser) -> Response:
    return render(request, "logout.html", {"title": "Sign out", "user": user})


@router.post("/logout")
async def logout(request: Request, session: SessionDep) -> Response:
    form = await request.form()
    if not csrf_valid(request, form.get("csrf_token")):
        return error_page(request, "Form expired", "Please go back and try again.")
    response = see_other("/login")
    await end_session(session, response, request)
    return response
