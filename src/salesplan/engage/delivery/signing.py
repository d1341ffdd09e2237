"""Signed tracking links and encrypted integration secrets, both keyed from the server's
signing key (`SALESPLAN_SECRET_KEY`), each with its own derived key."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import uuid
from urllib.parse import quote

from cryptography.hazmat.primitives.ciphers.aead import AESGCM


def _derive(signing_key: bytes, purpose: bytes) -> bytes:
    return hmac.new(signing_key, b"salesplan:" + purpose, hashlib.sha256).digest()


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def link_signature(signing_key: bytes, kind: str, message_id: uuid.UUID, url: str = "") -> str:
    """`kind` is `o` (open), `c` (click, bound to its URL) or `u` (unsubscribe)."""
    key = _derive(signing_key, b"tracking")
    payload = f"{kind}\n{message_id}\n{url}".encode()
    return _b64(hmac.new(key, payload, hashlib.sha256).digest()[:18])


def verify_link(
    signing_key: bytes, kind: str, message_id: uuid.UUID, signature: str, url: str = ""
) -> bool:
    """A malformed signature (any length, any characters: `compare_digest` refuses non-ASCII
    strings with a TypeError) is simply not valid."""
    if not signature.isascii():
        return False
    return hmac.compare_digest(link_signature(signing_key, kind, message_id, url), signature)


def open_url(origin: str, signing_key: bytes, message_id: uuid.UUID) -> str:
    return f"{origin}/t/o/{message_id}/{link_signature(signing_key, 'o', message_id)}.gif"


def click_url(origin: str, signing_key: bytes, message_id: uuid.UUID, target: str) -> str:
    sig = link_signature(signing_key, "c", message_id, target)
    return f"{origin}/t/c/{message_id}/{sig}?u={quote(target, safe='')}"


def unsubscribe_url(origin: str, signing_key: bytes, message_id: uuid.UUID) -> str:
    return f"{origin}/t/u/{message_id}/{link_signature(signing_key, 'u', message_id)}"


class SecretBox:
    """AES-GCM with a key derived from the signing key; a random nonce per value."""

    def __init__(self, signing_key: bytes) -> None:
        self._aead = AESGCM(_derive(signing_key, b"integration-secrets"))

    def seal(self, value: str) -> bytes:
        nonce = os.urandom(12)
        return nonce + self._aead.encrypt(nonce, value.encode(), b"salesplan")

    def open(self, sealed: bytes) -> str:
        return self._aead.decrypt(sealed[:12], sealed[12:], b"salesplan").decode()
