"""Inbound Slack (contract §11 "Inbound Slack"): Slack's Events API posted to
`{origin}/inbound/slack?organizationId=ID`, signed with the organization's signing secret.

The request is checked (signature over `v0:{timestamp}:{raw body}`, timestamp within 5 minutes)
before anything is read from the body; a message event is stored at once in the request's
transaction, keyed by its `event_id`, so that Slack's retries (`X-Slack-Retry-Num`) never make a
second message, and answered 200 well inside Slack's 3-second window."""

from __future__ import annotations

import hashlib
import hmac
import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Query, Request
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session
from starlette.responses import JSONResponse, Response

from salesplan.auth.dependencies import public
from salesplan.db_dependencies import SessionDep
from salesplan.engage.delivery.integrations import slack_signing_secret
from salesplan.errors import PayloadTooLarge, Unauthorized, ValidationFailed
from salesplan.feed.events import FeedMessageReceived
from salesplan.feed.ingest import Incoming, record
from salesplan.feed.repository import is_own_address
from salesplan.kit.email import mailbox
from salesplan.kit.events import emit

router = APIRouter(include_in_schema=False)

MAX_SLACK_BYTES = 1024 * 1024
TOLERANCE_SECONDS = 5 * 60
MAX_EMAIL = 320
_UNKNOWN_SECRET = "\x00unknown organization\x00"


def signature(secret: str, timestamp: str, body: bytes) -> str:
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def verify(secret: str | None, timestamp: str, sig: str, body: bytes, now: float) -> bool:
    """Constant-time check; an unknown organization costs the same as a wrong signature."""
    expected = signature(secret if secret is not None else _UNKNOWN_SECRET, timestamp, body)
    good = hmac.compare_digest(expected.encode(), sig.strip().encode())
    try:
        fresh = abs(now - int(timestamp)) <= TOLERANCE_SECONDS
    except ValueError:
        fresh = False
    return secret is not None and good and fresh


def _ts_datetime(ts: str | None) -> datetime:
    try:
        return datetime.fromtimestamp(float(ts or ""), UTC)
    except (TypeError, ValueError, OverflowError):
        return datetime.now(UTC)


def _author_email(value: object) -> str | None:
    """`user_profile.email` when it is an address (RFC 5321: at most 320 characters); anything
    else is no author e-mail, and the message is stored without one."""
    if not isinstance(value, str):
        return None
    email = mailbox(value)
    if not email or len(email) > MAX_EMAIL or "@" not in email or any(c.isspace() for c in email):
        return None
    return email


async def store_event(
    session: AsyncSession, organization_id: uuid.UUID, payload: Mapping[str, object]
) -> bool:
    """Store a message event once; answers whether it was new."""
    event = payload.get("event")
    event_id = payload.get("event_id")
    if not isinstance(event, dict) or not isinstance(event_id, str) or not event_id:
        return False
    if event.get("type") != "message" or event.get("subtype") not in (None, "thread_broadcast"):
        return False  # edits, deletions, joins: not conversation
    channel = str(event.get("channel") or "")[:64]
    ts = str(event.get("ts") or "")[:32]
    thread_ts = str(event.get("thread_ts") or ts)[:32]
    raw_profile = event.get("user_profile")
    profile: dict[str, Any] = raw_profile if isinstance(raw_profile, dict) else {}
    email = _author_email(profile.get("email"))
    name = profile.get("real_name") or profile.get("display_name") or profile.get("name")
    text = str(event.get("text") or "")

    def write(sync_session: Session) -> uuid.UUID | None:
        conn = sync_session.connection()
        inbound = email is None or not is_own_address(conn, organization_id, email)
        return record(
            conn,
            Incoming(
                organization_id=organization_id,
                kind="slack",
                thread_key=f"{channel}:{thread_ts}",
                source_key=f"slack:{event_id[:200]}",
                direction="inbound" if inbound else "outbound",
                occurred_at=_ts_datetime(ts),
                text=text,
                subject=None,
                author_email=email,
                author_name=str(name)[:320] if name else None,
                slack_channel=channel or None,
                slack_ts=ts or None,
            ),
        )

    message_id: uuid.UUID | None = await session.run_sync(write)
    if message_id is None:
        return False
    emit(session, FeedMessageReceived(organization_id, message_id))
    return True


@router.post("/inbound/slack", openapi_extra=public())
async def inbound_slack(
    request: Request,
    session: SessionDep,
    organization_id: Annotated[uuid.UUID, Query(alias="organizationId")],
) -> Response:
    """Slack Events API: `url_verification` answered with its challenge; message events stored
    once per `event_id`; 401 and nothing stored on a bad signature or a stale timestamp."""
    raw = await request.body()
    if len(raw) > MAX_SLACK_BYTES:
        raise PayloadTooLarge()
    secret = await slack_signing_secret(session, request.app.state.settings, organization_id)
    ok = verify(
        secret,
        request.headers.get("x-slack-request-timestamp", ""),
        request.headers.get("x-slack-signature", ""),
        raw,
        time.time(),
    )
    if not ok:
        raise Unauthorized("Missing, invalid or stale X-Slack-Signature.")
    try:
        payload = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise ValidationFailed.at(["body"], "The body is not JSON.") from None
    if not isinstance(payload, dict):
        raise ValidationFailed.at(["body"], "The body is not a JSON object.")
    if payload.get("type") == "url_verification":
        return JSONResponse({"challenge": payload.get("challenge")})
    if payload.get("type") == "event_callback":
        await store_event(session, organization_id, payload)
    return JSONResponse({"ok": True})
