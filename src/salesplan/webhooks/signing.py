"""Standard Webhooks 1.0 signing: `whsec_<base64 of 32 bytes>` secrets, stored encrypted
(`kit.crypto`), and `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` signatures."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Iterable

from salesplan.kit import crypto

PREFIX = "whsec_"
_PURPOSE = b"salesplan webhook signing secret v1"


def new_secret() -> str:
    return PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def seal(signing_key: bytes, secret: str) -> str:
    return crypto.encrypt(signing_key, _PURPOSE, secret)


def unseal(signing_key: bytes, sealed: str) -> str:
    return crypto.decrypt(signing_key, _PURPOSE, sealed)


def signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    key = base64.b64decode(secret.removeprefix(PREFIX))
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def signatures(secrets_: Iterable[str], message_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` header: one signature per live secret, space-separated."""
    return " ".join(signature(s, message_id, timestamp, body) for s in secrets_)
