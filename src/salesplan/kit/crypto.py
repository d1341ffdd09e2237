"""Secrets at rest that the server must read back (a CalDAV password, a webhook signing
secret): Fernet (AES-128-CBC + HMAC-SHA256) with a key derived from `SALESPLAN_SECRET_KEY` by
HKDF, one derived key per purpose, so that the database alone never reveals a secret."""

from __future__ import annotations

import base64
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF


@lru_cache(maxsize=16)
def fernet(secret: bytes, purpose: bytes) -> Fernet:
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=purpose).derive(secret)
    return Fernet(base64.urlsafe_b64encode(key))


def encrypt(secret: bytes, purpose: bytes, value: str) -> str:
    return fernet(secret, purpose).encrypt(value.encode()).decode()


def decrypt(secret: bytes, purpose: bytes, token: str) -> str:
    try:
        return fernet(secret, purpose).decrypt(token.encode()).decode()
    except InvalidToken as exc:  # the secret key changed since the value was stored
        raise ValueError("a stored secret cannot be decrypted with this secret key") from exc
