"""The connection password at rest: Fernet (AES-128-CBC + HMAC-SHA256) with a key derived from
`SALESPLAN_SECRET_KEY` by HKDF, so that the database alone never reveals a password."""

from __future__ import annotations

import base64

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

_INFO = b"salesplan calendar connection password v1"


def _fernet(secret: bytes) -> Fernet:
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(secret)
    return Fernet(base64.urlsafe_b64encode(key))


def encrypt_password(secret: bytes, password: str) -> str:
    return _fernet(secret).encrypt(password.encode()).decode()


def decrypt_password(secret: bytes, token: str) -> str:
    try:
        return _fernet(secret).decrypt(token.encode()).decode()
    except InvalidToken as exc:  # the secret key changed since the connection was made
        raise ValueError("the stored password cannot be decrypted with this secret key") from exc
