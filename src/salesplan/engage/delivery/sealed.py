"""Secrets in transactional e-mail (a room link, a sign-in code: contract §16), kept out of the
outbox: the message's body holds a placeholder for each, and `EngageMessage.sealed` the values,
encrypted (`kit.crypto`, a key of their own derived from the server's secret). The worker fills
them in only in the bytes handed to the relay (`mime.build_email`), and the sent (or failed)
message's `sealed` is erased. What the queue, the feed and the webhooks show is the placeholder."""

from __future__ import annotations

import html

import orjson

from salesplan.kit import crypto

_PURPOSE = b"salesplan:engage-sealed"
UNREADABLE = "sealed content unreadable with this secret key"


class Unreadable(ValueError):
    """The sealed values cannot be opened (the server's secret key changed since)."""


def seal(signing_key: bytes, values: dict[str, str]) -> str:
    """`values` (placeholder → secret) encrypted for `EngageMessage.sealed`."""
    return crypto.encrypt(signing_key, _PURPOSE, orjson.dumps(values).decode())


def _values(signing_key: bytes, sealed: str) -> dict[str, str]:
    try:
        loaded = orjson.loads(crypto.decrypt(signing_key, _PURPOSE, sealed))
    except ValueError as exc:  # orjson's and kit.crypto's errors are ValueErrors
        raise Unreadable(UNREADABLE) from exc
    return {str(k): str(v) for k, v in loaded.items()} if isinstance(loaded, dict) else {}


def unseal(signing_key: bytes, sealed: str, text: str, markup: str) -> tuple[str, str]:
    """The text and HTML parts with each placeholder replaced by its secret (escaped in HTML).
    `Unreadable` when they cannot be opened: the message fails, it is never sent without."""
    for placeholder, secret in _values(signing_key, sealed).items():
        text = text.replace(placeholder, secret)
        markup = markup.replace(html.escape(placeholder), html.escape(secret))
    return text, markup
