"""Verify a webhook delivery (Standard Webhooks 1.0) and read its event.

    event = salesplan_client.webhooks.verify(request_body, request_headers, secret)

The signature is an HMAC-SHA256 of `"{webhook-id}.{webhook-timestamp}.{body}"` with the
endpoint's secret (`whsec_<base64>`); while a rotated secret is live the server signs with
both, so a receiver holding either one verifies. The timestamp must be within `tolerance`
seconds (5 minutes) of now, so that a captured delivery cannot be replayed later."""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import hmac
import json
import time
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, SkipValidation, ValidationError

from salesplan_client._errors import WebhookVerificationError
from salesplan_client._events import EVENT_DATA
from salesplan_client._models import ApiObject

__all__ = ["DEFAULT_TOLERANCE", "WebhookEvent", "WebhookVerificationError", "verify"]

DEFAULT_TOLERANCE = 300
SECRET_PREFIX = "whsec_"


class WebhookEvent(BaseModel):
    """A delivery's body: `type` (`account.created`, …), `timestamp`, and `data`, the resource
    as the API answers it (its model when the type is known, else the JSON object). `id` is
    the delivery's `webhook-id`, the same on every retry of it: drop one you already handled."""

    model_config = ConfigDict(extra="allow")

    id: str
    type: str
    timestamp: AwareDatetime
    data: Annotated[ApiObject | dict[str, Any], SkipValidation]


def _key(secret: str) -> bytes:
    try:
        return base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)
    except (binascii.Error, ValueError):
        raise WebhookVerificationError("The secret is not a whsec_ base64 secret.") from None


def _header(headers: Mapping[str, str] | Any, name: str) -> str:
    value = None
    if hasattr(headers, "get"):
        value = headers.get(name)
        if value is None:
            lowered = {str(k).lower(): v for k, v in headers.items()}
            value = lowered.get(name)
    if not value:
        raise WebhookVerificationError(f"The {name} header is missing.")
    return str(value)


def verify(
    body: bytes | str,
    headers: Mapping[str, str] | Any,
    secret: str | Sequence[str],
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    now: float | None = None,
) -> WebhookEvent:
    """The delivery's event, or `WebhookVerificationError` when its signature matches none of
    `secret` (one secret, or several while you rotate yours), its timestamp is more than
    `tolerance` seconds away from now, or its body is not an event. Pass the body exactly as
    received (bytes), before any JSON parsing."""
    raw = body.encode() if isinstance(body, str) else bytes(body)
    message_id = _header(headers, "webhook-id")
    stamp = _header(headers, "webhook-timestamp")
    signatures = _header(headers, "webhook-signature")
    try:
        sent_at = int(stamp)
    except ValueError:
        raise WebhookVerificationError("The webhook-timestamp header is not a number.") from None
    current = time.time() if now is None else now
    if abs(current - sent_at) > tolerance:
        raise WebhookVerificationError(
            f"The delivery's timestamp is more than {tolerance:g} seconds from now."
        )
    signed = f"{message_id}.{sent_at}.".encode() + raw
    secrets = [secret] if isinstance(secret, str) else list(secret)
    expected = [
        base64.b64encode(hmac.new(_key(s), signed, hashlib.sha256).digest()) for s in secrets
    ]
    offered = [
        part.split(",", 1)[1].encode()
        for part in signatures.split()
        if part.startswith("v1,") and "," in part
    ]
    if not any(hmac.compare_digest(e, o) for e in expected for o in offered):
        raise WebhookVerificationError("No signature matches the secret.")
    try:
        payload = json.loads(raw)
        event_type = str(payload["type"])
        data = payload["data"]
    except (ValueError, KeyError, TypeError):
        raise WebhookVerificationError("The body is not a webhook event.") from None
    model = EVENT_DATA.get(event_type) or EVENT_DATA.get(event_type.split(".", 1)[0] + ".*")
    if model is not None and isinstance(data, dict):
        # A thin payload, or a shape this version does not know: the plain object.
        with contextlib.suppress(ValidationError):
            data = model.model_validate(data)
    return WebhookEvent.model_validate({**payload, "id": message_id, "data": data})
