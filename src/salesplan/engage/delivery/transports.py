"""How the delivery worker hands messages to their providers: SMTP (a few connections at
once, each reused for its share of a batch) and Slack's incoming webhooks. Each message's
`Outcome` says what happened; `on_sent` is called as soon as a provider accepted one."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parseaddr

import aiosmtplib
import httpx
import orjson
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.config import Settings
from salesplan.engage.delivery import sealed
from salesplan.engage.delivery.dkim import DkimSigner
from salesplan.engage.delivery.integrations import slack_webhook_url
from salesplan.engage.delivery.mime import build_email
from salesplan.kit import outbound
from salesplan.kit.clock import utcnow
from salesplan.kit.email import smtp_address
from salesplan.models.engage_delivery import EngageMessage

SMTP_CONNECTIONS = 16
# How long a throttled sender rests when the provider names no time.
DEFAULT_PAUSE = timedelta(seconds=60)
THROTTLE_CODES = frozenset({421, 451, 452})
UNSENDABLE = (
    "The address cannot be sent over SMTP: its local part is not ASCII (SMTPUTF8 is not used) "
    "or its domain is not a valid IDNA name."
)


@dataclass
class Outcome:
    """What happened to one claimed message."""

    message_id: uuid.UUID
    kind: str  # sent | retry | failed | throttled
    error: str | None = None
    pause_until: datetime | None = None


OnSent = Callable[[EngageMessage], Awaitable[None]]


def _smtp_outcome(message: EngageMessage, exc: Exception) -> Outcome:
    code = getattr(exc, "code", None)
    if isinstance(exc, aiosmtplib.SMTPRecipientsRefused) and exc.recipients:
        code = exc.recipients[0].code
        exc = exc.recipients[0]
    text = f"SMTP {code}: {getattr(exc, 'message', '') or exc}" if code else f"SMTP: {exc}"
    text = text[:1000]
    if code in THROTTLE_CODES:
        return Outcome(message.id, "throttled", text, utcnow() + DEFAULT_PAUSE)
    if isinstance(code, int) and 500 <= code < 600:
        return Outcome(message.id, "failed", text)
    return Outcome(message.id, "retry", text)


async def _smtp_client(settings: Settings) -> aiosmtplib.SMTP:
    client = aiosmtplib.SMTP(
        hostname=settings.smtp_host,
        port=settings.smtp_port,
        start_tls=settings.smtp_starttls,
        timeout=30,
    )
    await client.connect()
    if settings.smtp_username:
        await client.login(settings.smtp_username, settings.smtp_password or "")
    return client


async def send_email_batch(
    settings: Settings,
    messages: list[EngageMessage],
    on_sent: OnSent,
    signer: DkimSigner | None = None,
) -> list[Outcome]:
    """Send over a few SMTP connections at once, each reused for its share of the batch. The
    first throttling answer stops the whole batch: the rest waits for the pause."""
    origin, key = settings.public_url, settings.signing_key
    envelope_from = parseaddr(settings.smtp_from)[1] or settings.smtp_from
    throttled: list[datetime] = []
    outcomes: dict[uuid.UUID, Outcome] = {}
    lanes = min(SMTP_CONNECTIONS, len(messages))

    async def lane(share: list[EngageMessage]) -> None:
        client: aiosmtplib.SMTP | None = None
        try:
            for message in share:
                if throttled:
                    break
                recipient = smtp_address(message.to_address or "")
                if recipient is None:  # one address that cannot go stops nothing else
                    outcomes[message.id] = Outcome(message.id, "failed", UNSENDABLE)
                    continue
                try:
                    if client is None or not client.is_connected:
                        client = await _smtp_client(settings)
                    mail = build_email(message, settings.smtp_from, origin, key, signer)
                    await client.sendmail(envelope_from, [recipient], mail)
                    outcomes[message.id] = Outcome(message.id, "sent")
                    await on_sent(message)
                except sealed.Unreadable:
                    outcomes[message.id] = Outcome(message.id, "failed", sealed.UNREADABLE)
                except UnicodeError as exc:  # a header the message cannot carry in ASCII
                    outcomes[message.id] = Outcome(message.id, "failed", f"{UNSENDABLE} ({exc})")
                except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
                    outcome = _smtp_outcome(message, exc)
                    outcomes[message.id] = outcome
                    if outcome.kind == "throttled" and outcome.pause_until is not None:
                        throttled.append(outcome.pause_until)
                    if isinstance(exc, aiosmtplib.SMTPServerDisconnected | OSError):
                        client = None
        finally:
            if client is not None and client.is_connected:
                try:
                    await client.quit()
                except (aiosmtplib.SMTPException, OSError):
                    client.close()

    await asyncio.gather(*(lane(messages[i::lanes]) for i in range(lanes)))
    until = max(throttled) if throttled else None
    result = []
    for message in messages:
        outcome = outcomes.get(message.id)
        if outcome is None:  # not tried: the sender was throttled meanwhile
            outcome = Outcome(message.id, "throttled", "Sender paused by the provider.", until)
        if outcome.kind == "throttled":
            outcome.pause_until = until
        result.append(outcome)
    return result


async def send_slack_batch(
    session: AsyncSession, settings: Settings, messages: list[EngageMessage], on_sent: OnSent
) -> list[Outcome]:
    results: list[Outcome] = []
    paused: dict[uuid.UUID, datetime] = {}
    urls: dict[uuid.UUID, str | None] = {}
    # Contract §12: the webhook is a user's URL: public destinations only, no redirects, our
    # own error texts (never the server's body).
    async with outbound.async_client(outbound.policy(settings)) as http:
        for message in messages:
            org = message.organization_id
            if org in paused:
                results.append(Outcome(message.id, "throttled", "Sender paused.", paused[org]))
                continue
            if org not in urls:
                urls[org] = await slack_webhook_url(session, settings, org)
            url = urls[org]
            if not url:
                results.append(Outcome(message.id, "failed", "No Slack webhook URL configured."))
                continue
            text = f"*{message.subject}*\n{message.body}" if message.subject else message.body
            try:
                response = await http.post(
                    url,
                    content=orjson.dumps({"text": text}),
                    headers={"Content-Type": "application/json"},
                )
            except outbound.DestinationNotAllowed:
                results.append(Outcome(message.id, "failed", outbound.REFUSED))
                continue
            except httpx.InvalidURL:
                results.append(Outcome(message.id, "failed", "invalid Slack webhook URL"))
                continue
            except (httpx.HTTPError, outbound.OutboundError):
                results.append(Outcome(message.id, "retry", outbound.UNREACHABLE))
                continue
            if response.status_code == 429:
                seconds = _retry_after(response.headers.get("Retry-After"))
                paused[org] = utcnow() + seconds
                results.append(Outcome(message.id, "throttled", "Slack 429", paused[org]))
            elif response.is_success:
                results.append(Outcome(message.id, "sent"))
                await on_sent(message)
            elif response.status_code >= 500:
                results.append(Outcome(message.id, "retry", f"Slack {response.status_code}"))
            else:  # the status only: the body is the server's, not ours to repeat
                results.append(Outcome(message.id, "failed", f"Slack {response.status_code}"))
    return results


def _retry_after(value: str | None) -> timedelta:
    try:
        return timedelta(seconds=max(1, min(3600, int(value or ""))))
    except ValueError:
        return DEFAULT_PAUSE
