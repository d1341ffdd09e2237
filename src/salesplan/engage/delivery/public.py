"""Origin-level Engage routes, reached without a bearer token and trusted by signature:
tracking (`/t/o` open pixel, `/t/c` click redirect), RFC 8058 one-click unsubscribe (`/t/u`)
and inbound e-mail (`/inbound/email`, HMAC-signed with the organization's inbound secret)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from salesplan.auth.dependencies import limit_by_ip, public
from salesplan.db_dependencies import SessionDep
from salesplan.engage.delivery.inbound import receive_email, suppress
from salesplan.engage.delivery.integrations import inbound_secret
from salesplan.engage.delivery.queue import count_engagement
from salesplan.engage.delivery.signing import verify_link
from salesplan.errors import NotFound, PayloadTooLarge, Unauthorized, ValidationFailed
from salesplan.models.engage_delivery import EngageMessage

router = APIRouter(include_in_schema=False)

PIXEL = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")
MAX_INBOUND_BYTES = 10 * 1024 * 1024
# Contract §12: `/t/` is limited per client IP (one bucket for all tracking links).
TRACKING_LIMIT = [
    limit_by_ip("tracking", per_minute=lambda settings: settings.tracking_rate_limit_per_minute)
]


def _checked(request: Request, kind: str, message_id: uuid.UUID, sig: str, url: str = "") -> None:
    if not verify_link(request.app.state.settings.signing_key, kind, message_id, sig, url):
        raise NotFound("The link is not valid.")


@router.get("/t/o/{messageId}/{signature}.gif", openapi_extra=public(), dependencies=TRACKING_LIMIT)
async def track_open(
    messageId: uuid.UUID, signature: str, request: Request, session: SessionDep
) -> Response:
    """Count an open (the pixel in the HTML part)."""
    _checked(request, "o", messageId, signature)
    await count_engagement(session, messageId, "open")
    return Response(
        PIXEL,
        media_type="image/gif",
        headers={"Cache-Control": "no-store, max-age=0"},
    )


@router.get("/t/c/{messageId}/{signature}", openapi_extra=public(), dependencies=TRACKING_LIMIT)
async def track_click(
    messageId: uuid.UUID,
    signature: str,
    request: Request,
    session: SessionDep,
    u: Annotated[str, Query()],
) -> Response:
    """Count a click and redirect to the URL that was signed (never any other)."""
    _checked(request, "c", messageId, signature, u)
    if not u.startswith(("http://", "https://")):
        raise ValidationFailed.at(["query", "u"], "Not a web address.")
    await count_engagement(session, messageId, "click")
    return RedirectResponse(u, status_code=302, headers={"Cache-Control": "no-store"})


_PAGE = (
    "<!doctype html><html><head><meta charset='utf-8'><title>Unsubscribe</title></head>"
    "<body style='font-family:sans-serif;max-width:32rem;margin:3rem auto'>{}</body></html>"
)


@router.get("/t/u/{messageId}/{signature}", openapi_extra=public(), dependencies=TRACKING_LIMIT)
async def unsubscribe_page(messageId: uuid.UUID, signature: str, request: Request) -> Response:
    """A confirmation page: a GET never unsubscribes (link scanners follow GETs)."""
    _checked(request, "u", messageId, signature)
    action = html.escape(str(request.url.path))
    body = (
        "<h1>Unsubscribe</h1><p>Stop receiving these e-mails?</p>"
        f"<form method='post' action='{action}'>"
        "<input type='hidden' name='List-Unsubscribe' value='One-Click'>"
        "<button type='submit'>Unsubscribe</button></form>"
    )
    return HTMLResponse(_PAGE.format(body))


@router.post("/t/u/{messageId}/{signature}", openapi_extra=public(), dependencies=TRACKING_LIMIT)
async def unsubscribe(
    messageId: uuid.UUID, signature: str, request: Request, session: SessionDep
) -> Response:
    """RFC 8058 one-click unsubscribe: the address goes on the suppression list."""
    _checked(request, "u", messageId, signature)
    message = await session.get(EngageMessage, messageId)
    if message is None:
        raise NotFound("The link is not valid.")
    if message.to_address:
        await suppress(session, message.organization_id, message.to_address, "unsubscribed")
    return HTMLResponse(
        _PAGE.format("<h1>Unsubscribed</h1><p>You will not hear from us again.</p>")
    )


@router.post("/inbound/email", status_code=202, openapi_extra=public())
async def inbound_email(
    request: Request,
    session: SessionDep,
    organization_id: Annotated[uuid.UUID, Query(alias="organizationId")],
) -> Response:
    """Take a raw RFC 5322 message (a reply, a DSN or a complaint report)."""
    raw = await request.body()
    if len(raw) > MAX_INBOUND_BYTES:
        raise PayloadTooLarge()
    header = request.headers.get("x-salesplan-signature", "")
    secret = await inbound_secret(
        session, request.app.state.settings, organization_id, create=False
    )
    # An unknown organization and a wrong signature look the same from outside.
    expected = (
        "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()
        if secret is not None
        else "sha256=" + "0" * 64
    )
    if secret is None or not hmac.compare_digest(expected.encode(), header.strip().encode()):
        raise Unauthorized("Missing or invalid X-Salesplan-Signature.")
    kind = await receive_email(session, organization_id, raw)
    return Response(
        content=f'{{"accepted": true, "kind": "{kind}"}}',
        status_code=202,
        media_type="application/json",
    )
