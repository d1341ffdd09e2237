"""The outbound e-mail: text and HTML parts, a stable Message-ID, RFC 8058 one-click
unsubscribe, and tracking (an open pixel and signed click links) in the HTML part only."""

from __future__ import annotations

import html
import re
from email.message import EmailMessage
from email.utils import formatdate

from salesplan.engage.delivery.signing import click_url, open_url, unsubscribe_url
from salesplan.models.engage_delivery import EngageMessage

_HREF = re.compile(r"""(<a\b[^>]*?\bhref\s*=\s*)(["'])(https?://[^"']+)\2""", re.IGNORECASE)


def text_to_html(text: str) -> str:
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    return (
        "".join("<p>" + html.escape(p).replace("\n", "<br>") + "</p>" for p in paragraphs)
        or "<p></p>"
    )


def tracked_html(message: EngageMessage, origin: str, key: bytes) -> str:
    body = message.body_html or text_to_html(message.body)

    def rewrite(match: re.Match[str]) -> str:
        target = html.unescape(match.group(3))
        signed = click_url(origin, key, message.id, target)
        return f"{match.group(1)}{match.group(2)}{html.escape(signed)}{match.group(2)}"

    body = _HREF.sub(rewrite, body)
    pixel = (
        f'<img src="{html.escape(open_url(origin, key, message.id))}" width="1" height="1" '
        'alt="" style="display:none">'
    )
    return f"<!doctype html><html><body>{body}{pixel}</body></html>"


def build_email(message: EngageMessage, sender: str, origin: str, key: bytes) -> EmailMessage:
    mail = EmailMessage()
    mail["From"] = sender
    mail["To"] = message.to_address or ""
    mail["Subject"] = message.subject or ""
    mail["Date"] = formatdate(usegmt=True)
    mail["Message-ID"] = message.rfc_message_id
    mail["List-Unsubscribe"] = f"<{unsubscribe_url(origin, key, message.id)}>"
    mail["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    mail.set_content(message.body)
    mail.add_alternative(tracked_html(message, origin, key), subtype="html")
    return mail
