"""The buyer's pages (contract §16), at `{public_url}/rooms/{token}`: server-rendered, every
action a plain form (works with JavaScript off), every form with a CSRF token.

- GET `/rooms/{token}`: signed in (a room session of this share), the room (`room_pages`);
  otherwise the plan's name and a button asking for a code. A GET sends nothing, spends
  nothing and counts no view, so link scanners and unfurlers change nothing.
- Views are counted by POSTs: the sign-in (the buyer opens the room), and `…/views`, which
  the room page's script posts when a browser shows it (at most one `viewed` per share per
  30 minutes either way).
- POST `…/code` e-mails a code; GET `…/code` is the form to type it; POST `…/sign-in` checks
  it and sets the room session cookie (HttpOnly, SameSite=Lax, Secure on https, path
  `/rooms/`, 30 days). POST `…/sign-out` ends it.
- GET `…/plan.ics`: the visible dated milestones and tasks.
- POSTs of a signed-in collaborator: `…/tasks/{taskId}/completion`, `…/tasks/{taskId}/comments`,
  `…/invitations`. Each answers 303 back to the room with the outcome shown once.

Unknown links answer 404; revoked ones (or an archived plan) 410; expired ones 410 saying so.
Looking a link up is one statement whatever it finds, so an unknown link costs what a revoked
one does."""

from __future__ import annotations

import uuid
from collections.abc import Mapping

from fastapi import APIRouter, Request
from starlette.datastructures import FormData
from starlette.responses import Response

from salesplan.config import Settings
from salesplan.db_dependencies import UoW, unit_of_work
from salesplan.errors import RateLimited
from salesplan.kit import clock
from salesplan.kit import uow as uow_kit
from salesplan.models.rooms import PlanShareSession
from salesplan.ratelimit.limiter import RateLimiter
from salesplan.rooms import access, activity, buyer, mail
from salesplan.rooms import repository as repo
from salesplan.rooms.ics import plan_ics
from salesplan.web import room_pages
from salesplan.web.deps import see_other
from salesplan.web.pages import render
from salesplan.web.session import csrf_valid

router = APIRouter(include_in_schema=False)

COOKIE_PATH = "/rooms/"


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def _home(token: str) -> str:
    return f"/rooms/{token}"


def _page(
    request: Request,
    template: str,
    context: Mapping[str, object],
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> Response:
    return render(request, f"rooms/{template}", dict(context), status=status, headers=headers)


def _closed(request: Request, entry: access.Entry | access.Door | None) -> Response | None:
    """The page of a link that opens no room, or None."""
    if entry is None:
        return _page(request, "closed.html", {"title": "Link not found", "kind": "unknown"}, 404)
    if entry.status == "active":
        return None
    return _closed_page(
        request, "expired" if entry.status == "expired" else "revoked", entry.organization_name
    )


def _closed_page(request: Request, kind: str, organization: str) -> Response:
    context = {
        "title": "Link expired" if kind == "expired" else "Link turned off",
        "kind": kind,
        "organization": organization,
    }
    return _page(request, "closed.html", context, 410)


async def _limited(request: Request, endpoint: str, context: dict[str, object]) -> Response | None:
    """Per-IP limits on the sign-in POSTs (contract §5: as the sign-in form)."""
    limiter: RateLimiter = request.app.state.rate_limiter
    try:
        await limiter.consume_ip(request.client.host if request.client else "unknown", endpoint)
    except RateLimited as exc:
        return _page(
            request,
            "message.html",
            context | {"title": "Too many attempts", "text": "Wait a minute and try again."},
            429,
            headers={"Retry-After": exc.headers.get("Retry-After", "60")},
        )
    return None


def _expired_form(request: Request, context: dict[str, object]) -> Response:
    text = "Your form expired. Go back, reload the page and try again."
    return _page(request, "message.html", context | {"title": "Form expired", "text": text}, 400)


def _landing(
    request: Request, entry: access.Entry | access.Door, token: str, **extra: object
) -> dict[str, object]:
    return {
        "title": entry.plan_name,
        "plan_name": entry.plan_name,
        "organization": entry.organization_name,
        "token": token,
        **extra,
    }


async def _open(request: Request, uow: UoW, token: str) -> access.Entry | Response:
    """The share a link opens, or the page of a link that opens none."""
    entry = await access.entry(await uow.session(), token)
    closed = _closed(request, entry)
    if closed is not None:
        return closed
    assert entry is not None  # `_closed` answers the 404 page of no entry
    return entry


async def _form(
    request: Request, uow: UoW, token: str, limit: str | None = None
) -> tuple[access.Entry, FormData] | Response:
    """A POST of the room's pages: within the per-IP limit (the sign-in forms), a valid CSRF
    token, an open link."""
    if limit is not None and (limited := await _limited(request, limit, {"token": token})):
        return limited
    form = await request.form()
    if not csrf_valid(request, form.get("csrf_token")):
        return _expired_form(request, {"token": token})
    entry = await _open(request, uow, token)
    return entry if isinstance(entry, Response) else (entry, form)


@router.get("/rooms/{token}")
async def room_page(token: str, request: Request) -> Response:
    # One statement on a read connection (`access.door`), then the kept page (`room_pages`);
    # a write only to clear a one-time notice. As a block, not the dependency (an exit stack
    # less per request, as getPlan).
    async with unit_of_work(request) as uow:
        door = await access.door(await uow.reader(), token, request.cookies)
        closed = _closed(request, door)
        if closed is not None:
            return closed
        assert door is not None  # `_closed` answers the 404 page of no door
        if door.session_id is None:
            return _page(request, "landing.html", _landing(request, door, token))
        if door.flash is not None:
            await repo.set_flash(await uow.session(), door.session_id, None)
        page = await room_pages.room_page(request, await uow.reader(), door, token)
        if page is None:
            return _closed_page(request, "revoked", door.organization_name)
        return page


@router.post("/rooms/{token}/views")
async def count_view(token: str, request: Request, uow: UoW) -> Response:
    """The page's beacon: a browser showed the room. `lastViewedAt` now, and a `viewed`
    activity when none was counted for the share in the last 30 minutes. Read in one
    statement; written only when the view is due (`activity.view_due`)."""
    form = await request.form()
    if not csrf_valid(request, form.get("csrf_token")):
        return _expired_form(request, {"token": token})
    door = await access.door(await uow.reader(), token, request.cookies)
    closed = _closed(request, door)
    if closed is not None:
        return closed
    assert door is not None
    if door.session_id is None:
        return see_other(_home(token))
    if activity.view_due(door.share, clock.utcnow()):
        await activity.view(await uow.session(), door.share)
    return Response(status_code=204, headers={"Cache-Control": "no-store"})


@router.post("/rooms/{token}/code")
async def ask_code(token: str, request: Request, uow: UoW) -> Response:
    found = await _form(request, uow, token, "room_code")
    if isinstance(found, Response):
        return found
    entry, _ = found
    session = await uow.session()
    share = entry.share
    context = _landing(request, entry, token)
    if await mail.suppressed(session, share):
        text = (
            f"We cannot e-mail the address this plan was shared with: it opted out of our "
            f"e-mails. Ask your contact at {entry.organization_name} for help."
        )
        return _page(request, "message.html", context | {"text": text}, 422)
    code = await access.issue_code(session, _settings(request).signing_key, share)
    if code is None:
        text = (
            f"We sent {access.CODES_PER_HOUR} codes in the last hour, the most we send. Use the "
            "newest one, or try again later."
        )
        return _page(request, "message.html", context | {"text": text}, 429)
    await mail.queue(
        session, _settings(request), share, mail.code_mail(entry.plan_name), {mail.CODE: code}
    )
    return see_other(f"/rooms/{token}/code")


@router.get("/rooms/{token}/code")
async def code_form(token: str, request: Request, uow: UoW) -> Response:
    entry = await _open(request, uow, token)
    if isinstance(entry, Response):
        return entry
    return _page(request, "code.html", _landing(request, entry, token))


@router.post("/rooms/{token}/sign-in")
async def sign_in(token: str, request: Request, uow: UoW) -> Response:
    found = await _form(request, uow, token, "room_sign_in")
    if isinstance(found, Response):
        return found
    entry, form = found
    session = await uow.session()
    context = _landing(request, entry, token)
    code = access.normalized_code(form.get("code"))
    if code is None:
        error = "Enter the 6 digits of the code we e-mailed you."
        return _page(request, "code.html", context | {"error": error}, 400)
    outcome, left = await access.check_code(
        session, _settings(request).signing_key, entry.share, code
    )
    if outcome == "wrong":
        error = f"That code is not right. {left} {'try' if left == 1 else 'tries'} left."
        if left == 0:
            error = "That code is not right, and it was tried too often. Ask for a new code."
        return _page(request, "code.html", context | {"error": error}, 400)
    if outcome == "none":
        error = "This code expired or was tried too often. Ask for a new code."
        return _page(request, "code.html", context | {"error": error, "expired": True}, 400)
    raw = await access.start_session(session, entry.share)
    await activity.view(session, entry.share)  # the buyer opens the room: a view
    response = see_other(_home(token))
    response.set_cookie(
        access.cookie_name(entry.share.id),
        raw,
        max_age=int(access.SESSION_TTL.total_seconds()),
        path=COOKIE_PATH,
        httponly=True,
        samesite="lax",
        secure=_settings(request).public_url.startswith("https://"),
    )
    return response


async def _signed_in(
    request: Request, uow: UoW, token: str
) -> tuple[access.Entry, PlanShareSession, FormData] | Response:
    """A room POST of a signed-in buyer: `_form`'s checks and a room session of the share."""
    found = await _form(request, uow, token)
    if isinstance(found, Response):
        return found
    entry, form = found
    room_session = await access.find_session(await uow.session(), entry.share, request.cookies)
    if room_session is None:
        return see_other(_home(token))
    return entry, room_session, form


async def _back(uow: UoW, room_session: uuid.UUID, token: str, flash: dict[str, str]) -> Response:
    anchor = flash.pop("anchor", "")
    await repo.set_flash(await uow.session(), room_session, flash)
    return see_other(_home(token) + anchor)


async def _refused(
    request: Request, uow: UoW, room_session: uuid.UUID, token: str, exc: buyer.Refused
) -> Response:
    """Nothing of a refused action stays; the buyer is told why (a page for what the room
    never offers, the room with the reason for a mistake)."""
    await uow_kit.rollback(await uow.session())
    if exc.status in (403, 404, 410):
        context = {"title": "Not possible", "text": exc.message, "token": token}
        return _page(request, "message.html", context, exc.status)
    return await _back(uow, room_session, token, {"kind": "error", "text": exc.message})


@router.post("/rooms/{token}/tasks/{taskId}/completion")
async def set_completion(token: str, taskId: uuid.UUID, request: Request, uow: UoW) -> Response:
    found = await _signed_in(request, uow, token)
    if isinstance(found, Response):
        return found
    entry, room_session, form = found
    done = form.get("completed") == "true"
    try:
        task = await buyer.set_completed(uow, entry.share, taskId, done)
    except buyer.Refused as exc:
        return await _refused(request, uow, room_session.id, token, exc)
    text = f"“{task.title}” is {'done' if done else 'open again'}."
    return await _back(
        uow, room_session.id, token, {"kind": "ok", "text": text, "anchor": f"#task-{taskId}"}
    )


@router.post("/rooms/{token}/tasks/{taskId}/comments")
async def add_comment(token: str, taskId: uuid.UUID, request: Request, uow: UoW) -> Response:
    found = await _signed_in(request, uow, token)
    if isinstance(found, Response):
        return found
    entry, room_session, form = found
    try:
        await buyer.comment(await uow.session(), entry.share, taskId, form.get("body"))
    except buyer.Refused as exc:
        return await _refused(request, uow, room_session.id, token, exc)
    flash = {"kind": "ok", "text": "Your comment is posted.", "anchor": f"#task-{taskId}"}
    return await _back(uow, room_session.id, token, flash)


@router.post("/rooms/{token}/invitations")
async def invite(token: str, request: Request, uow: UoW) -> Response:
    found = await _signed_in(request, uow, token)
    if isinstance(found, Response):
        return found
    entry, room_session, form = found
    try:
        invited = await buyer.invite(
            await uow.session(), _settings(request), entry.share, form.get("email")
        )
    except buyer.Refused as exc:
        return await _refused(request, uow, room_session.id, token, exc)
    text = f"We e-mailed {invited.email} a link to this plan."
    return await _back(
        uow, room_session.id, token, {"kind": "ok", "text": text, "anchor": "#invite"}
    )


@router.post("/rooms/{token}/sign-out")
async def sign_out(token: str, request: Request, uow: UoW) -> Response:
    found = await _signed_in(request, uow, token)
    if isinstance(found, Response):
        return found
    entry, room_session, _ = found
    await repo.delete_room_session(await uow.session(), room_session.id)
    response = see_other(_home(token))
    response.delete_cookie(
        access.cookie_name(entry.share.id),
        path=COOKIE_PATH,
        httponly=True,
        samesite="lax",
        secure=_settings(request).public_url.startswith("https://"),
    )
    return response


@router.get("/rooms/{token}/plan.ics")
async def calendar(token: str, request: Request, uow: UoW) -> Response:
    entry = await _open(request, uow, token)
    if isinstance(entry, Response):
        return entry
    session = await uow.session()
    if await access.find_session(session, entry.share, request.cookies) is None:
        return see_other(_home(token))
    plan = await buyer.room(session, entry.share)
    host = _settings(request).public_url.split("://", 1)[-1].split("/", 1)[0]
    return Response(
        plan_ics(plan, host),
        media_type="text/calendar; charset=utf-8",
        headers={
            "Content-Disposition": 'attachment; filename="plan.ics"',
            "Cache-Control": "no-store",
            "X-Content-Type-Options": "nosniff",
        },
    )
