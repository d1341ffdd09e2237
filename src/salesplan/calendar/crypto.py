"""The connection password at rest (`kit.crypto`: Fernet, a key derived from
`SALESPLAN_SECRET_KEY` by HKDF), so that the database alone never reveals a password."""

from __future__ import annotations

from salesplan.kit import crypto

_INFO = b"salesplan calendar connection password v1"


def encrypt_password(secret: bytes, password: str) -> str:
    return crypto.encrypt(secret, _INFO, password)


def decrypt_password(secret: bytes, token: str) -> str:
    try:
        return crypto.decrypt(secret, _INFO, token)
    except ValueError as exc:
        raise ValueError("the stored password cannot be decrypted with this secret key") from exc
