"""The outbound e-mail: text and HTML parts, a stable Message-ID, RFC 8058 one-click
unsubscribe, and tracking (an open pixel and signed click links) in the HTML part only."""

from __future__ import annotations

import functools
import html
import quopri
import re
import secrets
from email.header import Header
from email.utils import formataddr, formatdate, parseaddr

from salesplan.engage.delivery.dkim import DkimSigner
from salesplan.engage.delivery.sealed import unseal
from salesplan.engage.delivery.signing import click_url, open_url, unsubscribe_url
from salesplan.kit.email import smtp_address
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


def _header(value: str) -> str:
    """One header value: no line breaks (no header injection), RFC 2047 when not ASCII."""
    value = " ".join(value.splitlines()).strip()
    if value.isascii():
        return value
    return Header(value, "utf-8", maxlinelen=998).encode()


@functools.lru_cache(maxsize=4096)
def _address(value: str) -> str:
    """A header's mailbox: the display name encoded as RFC 2047 words, the address in ASCII
    (its domain in IDNA A-labels, `kit.email.smtp_address`)."""
    name, address = parseaddr(" ".join(value.splitlines()))
    return formataddr((name, smtp_address(address) or address), charset="utf-8")


def _part(subtype: str, content: str) -> bytes:
    body = quopri.encodestring(
        content.replace("\r\n", "\n").replace("\r", "\n").encode(), quotetabs=False
    )
    return (
        f"Content-Type: text/{subtype}; charset=utf-8\r\n"
        "Content-Transfer-Encoding: quoted-printable\r\n\r\n"
    ).encode() + body.replace(b"\n", b"\r\n")


def build_email(
    message: EngageMessage,
    sender: str,
    origin: str,
    key: bytes,
    signer: DkimSigner | None = None,
) -> bytes:
    """The message as bytes, ready for DATA, DKIM-signed when a `signer` is given. Written
    directly rather than through `email.message.EmailMessage`, whose header registry and
    generator cost ~4 ms a message: the throughput of a worker is bounded by it
    (bench/delivery.py)."""
    boundary = f"=_sp_{secrets.token_hex(12)}"
    text, markup = message.body, tracked_html(message, origin, key)
    if message.sealed is not None:  # a transactional message's secrets, filled in only here
        text, markup = unseal(key, message.sealed, text, markup)
    headers = [
        ("From", _address(sender)),
        ("To", _address(message.to_address or "")),
        ("Subject", _header(message.subject or "")),
        ("Date", formatdate(usegmt=True)),
        ("Message-ID", message.rfc_message_id),
        ("MIME-Version", "1.0"),
        ("List-Unsubscribe", f"<{unsubscribe_url(origin, key, message.id)}>"),
        ("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"),
        ("Content-Type", f'multipart/alternative; boundary="{boundary}"'),
    ]
    head = "".join(f"{name}: {value}\r\n" for name, value in headers).encode()
    delimiter = f"--{boundary}\r\n".encode()
    body = b"".join(
        (
            delimiter,
            _part("plain", text),
            b"\r\n",
            delimiter,
            _part("html", markup),
            b"\r\n",
            f"--{boundary}--\r\n".encode(),
        )
    )
    if signer is not None:
        head = signer.signature(headers, body).encode() + head
    return b"".join((head, b"\r\n", body))
