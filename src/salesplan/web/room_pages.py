"""The signed-in buyer's room page (contract §16 "The page"), rendered once per state of the
room and kept.

The page is the same for every buyer of a plan with the same role, on the same day, until the
room changes; what changes it is stamped by one statement (`rooms.repository.room_stamp`):
the plan's version (every write to the plan, its milestones, goals and tasks moves it), the
room's settings (hidden items, welcome message) and its comments. `RoomPages` keeps one page
per (plan, role, invitations allowed, organization name, day) with the stamp it was rendered
at; a request reads the stamp and renders only when it moved. A page is kept only when the
stamp did not move while it was read, so a kept page is the page of its stamp.

What differs per request is put in at the slots the kept page leaves: the link's token, the
CSRF token and the one-time notice of the last action, each escaped. People's and the
account's names are read with the page: a rename shows within `NAMES_TTL` seconds.

The page never counts a view: its script posts the hidden form (`/rooms/{token}/views`)."""

from __future__ import annotations

import asyncio
import re
import secrets
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from fastapi import Request
from markupsafe import Markup, escape
from sqlalchemy.ext.asyncio import AsyncConnection
from starlette.applications import Starlette
from starlette.responses import Response

from salesplan.kit.clock import today
from salesplan.kit.stamped_cache import StampedCache
from salesplan.rooms import access
from salesplan.rooms import repository as repo
from salesplan.rooms.view import room_plan
from salesplan.web.pages import PAGE_HEADERS, render_template, respond

NAMES_TTL = 60.0
# Slots no content can name: random per process, letters and digits only (nothing to escape).
_SLOT = secrets.token_hex(12)
TOKEN_SLOT, CSRF_SLOT, FLASH_SLOT = (f"{_SLOT}{part}" for part in ("token", "csrf", "flash"))
_TOKEN, _CSRF, _FLASH = (slot.encode() for slot in (TOKEN_SLOT, CSRF_SLOT, FLASH_SLOT))
_CUT = re.compile(f"({TOKEN_SLOT}|{CSRF_SLOT}|{FLASH_SLOT})")
# The room page runs its one script, from this origin (the view beacon).
ROOM_HEADERS = {
    "Content-Security-Policy": PAGE_HEADERS["Content-Security-Policy"].replace(
        "script-src 'none'", "script-src 'self'"
    )
}


@dataclass(frozen=True, slots=True)
class PageKey:
    plan_id: uuid.UUID
    role: str
    allow_invites: bool
    organization: str
    day: str


@dataclass(frozen=True, slots=True)
class KeptPage:
    """A rendered page as bytes cut at its slots: literal, slot, literal, … (filled by one
    join: an eighth of the time three `str.replace` passes and an encode take)."""

    parts: tuple[bytes, ...]
    size: int

    @classmethod
    def of(cls, html: str) -> KeptPage:
        parts = tuple(part.encode() for part in _CUT.split(html))
        return cls(parts, sum(map(len, parts)))

    def __len__(self) -> int:
        return self.size

    def fill(self, values: Mapping[bytes, bytes]) -> bytes:
        parts = self.parts
        out = list(parts)
        for i in range(1, len(parts), 2):
            out[i] = values[parts[i]]
        return b"".join(out)


class RoomPages(StampedCache[PageKey, tuple[object, ...], KeptPage]):
    def __init__(
        self, max_bytes: int = 16 * 1024 * 1024, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__(max_bytes, max_age=NAMES_TTL, clock=clock)


def room_pages(app: Starlette) -> RoomPages:
    """The app's kept room pages (one cache per app, so one per worker process)."""
    pages: RoomPages | None = getattr(app.state, "room_pages", None)
    if pages is None:
        pages = app.state.room_pages = RoomPages()
    return pages


def flash_html(flash: Mapping[str, object] | None) -> str:
    if not flash:
        return ""
    kind = "ok" if flash.get("kind") == "ok" else "error"
    text = flash.get("text")
    return Markup('<p class="alert {}" role="status">{}</p>').format(kind, str(text or ""))


async def _render(conn: AsyncConnection, door: access.Door) -> KeptPage | None:
    """The page with its slots: what `room.html` shows of the plan as this share sees it
    (None: the plan is gone)."""
    share = door.share
    plan = await room_plan(conn, share, share.plan_id)
    if plan is None:
        return None
    context: dict[str, object] = {
        "title": door.plan_name,
        "plan_name": door.plan_name,
        "organization": door.organization_name,
        "token": TOKEN_SLOT,
        "csrf_token": CSRF_SLOT,
        "flash_html": Markup(FLASH_SLOT),
        "plan": plan,
        "share": share,
        "collaborator": share.role == "collaborator",
        "signed_in": True,
        "today": today(),
    }
    # A big plan's page takes tens of milliseconds to render: in a thread, not on the loop.
    return await asyncio.to_thread(_kept, context)


def _kept(context: dict[str, object]) -> KeptPage:
    return KeptPage.of(render_template("rooms/room.html", context))


async def room_page(
    request: Request, conn: AsyncConnection, door: access.Door, token: str
) -> Response | None:
    """The signed-in page of `door` (None: the plan is gone). `conn` reads, outside any
    transaction where the engine allows."""
    share = door.share
    key = PageKey(
        share.plan_id, share.role, share.allow_invites, door.organization_name, str(today())
    )
    pages = room_pages(request.app)
    page = pages.get(key, door.stamp)
    if page is None:
        page = await _render(conn, door)
        if page is None:
            return None
        if await repo.room_stamp(conn, share, share.plan_id) == door.stamp:
            pages.put(key, door.stamp, page)
    kept = page
    link, notice = str(escape(token)).encode(), flash_html(door.flash).encode()

    def fill(csrf: str) -> bytes:
        return kept.fill({_TOKEN: link, _CSRF: str(escape(csrf)).encode(), _FLASH: notice})

    return respond(request, fill, headers=ROOM_HEADERS)
