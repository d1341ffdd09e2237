"""DKIM signing of outbound e-mail (RFC 6376, contract §14): relaxed/relaxed, RSA-SHA256 or
Ed25519-SHA256 (RFC 8463), with the key of `SALESPLAN_DKIM_PRIVATE_KEY_FILE`.

The signature is computed here rather than by `dkim.sign` (dkimpy): dkimpy parses the PEM and
signs RSA in pure Python on every call (~6.5 ms a message, bench/delivery.py), while the message
is built by `mime.build_email` from a known list of headers, so the canonical forms are cheap to
write directly and the key is loaded once (OpenSSL through `cryptography`: ~0.25 ms for
RSA-2048, ~0.05 ms for Ed25519). The tests verify every signature with dkimpy against the public
key, so the two cannot drift apart.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
import time
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, padding, rsa

from salesplan.config import Settings

MIN_RSA_BITS = 2048
# What every signature covers (contract §14: at least From, To, Subject, Date, Message-ID,
# List-Unsubscribe, List-Unsubscribe-Post), plus the MIME headers that say how to read the body.
SIGNED = (
    "From",
    "To",
    "Subject",
    "Date",
    "Message-ID",
    "List-Unsubscribe",
    "List-Unsubscribe-Post",
    "MIME-Version",
    "Content-Type",
)
_WSP = re.compile(rb"[ \t]+")
_TRAILING_WSP = re.compile(rb"[ \t]+\r\n")
_TRAILING_LINES = re.compile(rb"(\r\n)+\Z")


class DkimKeyError(ValueError):
    """The configured key does not load: `serve` and `worker` refuse to start (one line)."""


def _relaxed_header(name: str, value: str) -> bytes:
    """RFC 6376 §3.4.2: lower-case name, unfolded value, runs of white space as one space."""
    unfolded = value.encode().replace(b"\r\n", b"")
    return name.lower().encode() + b":" + _WSP.sub(b" ", unfolded).strip(b" \t")


def relaxed_body(body: bytes) -> bytes:
    """RFC 6376 §3.4.4: white space runs as one space, none at line ends, no empty lines at
    the end; a non-empty body ends with one CRLF."""
    body = _TRAILING_WSP.sub(b"\r\n", _WSP.sub(b" ", body))
    if body.endswith((b" ", b"\t")):
        body = body.rstrip(b" \t")
    body = _TRAILING_LINES.sub(b"", body)
    return body + b"\r\n" if body else b""


@dataclass(frozen=True)
class DkimSigner:
    domain: str
    selector: str
    key: rsa.RSAPrivateKey | ed25519.Ed25519PrivateKey

    @property
    def algorithm(self) -> str:
        return "rsa-sha256" if isinstance(self.key, rsa.RSAPrivateKey) else "ed25519-sha256"

    def signature(self, headers: list[tuple[str, str]], body: bytes) -> str:
        """The `DKIM-Signature` header line (with its CRLF) for a message made of `headers`
        (each exactly once, as written) and `body` (as written, CRLF line ends)."""
        present = {name.lower(): (name, value) for name, value in headers}
        signed = [present[n.lower()] for n in SIGNED if n.lower() in present]
        body_hash = base64.b64encode(hashlib.sha256(relaxed_body(body)).digest()).decode()
        tags = (
            f"v=1; a={self.algorithm}; c=relaxed/relaxed; d={self.domain}; s={self.selector};\r\n"
            f" t={int(time.time())}; h={':'.join(n for n, _ in signed)};\r\n"
            f" bh={body_hash};\r\n b="
        )
        data = b"".join(_relaxed_header(n, v) + b"\r\n" for n, v in signed)
        data += _relaxed_header("DKIM-Signature", tags)
        if isinstance(self.key, rsa.RSAPrivateKey):
            raw = self.key.sign(data, padding.PKCS1v15(), hashes.SHA256())
        else:  # RFC 8463: Ed25519 over the SHA-256 of the same data
            raw = self.key.sign(hashlib.sha256(data).digest())
        return f"DKIM-Signature: {tags}{base64.b64encode(raw).decode()}\r\n"


def load_signer(settings: Settings) -> DkimSigner | None:
    """The signer of the configured key; None when DKIM is not configured. Raises DkimKeyError
    (a one-line reason) for a half configuration or a key that does not load."""
    domain, selector = settings.dkim_domain, settings.dkim_selector
    path = settings.dkim_private_key_file
    if not (domain or selector or path):
        return None
    if not (domain and selector and path):
        raise DkimKeyError(
            "SALESPLAN_DKIM_DOMAIN, SALESPLAN_DKIM_SELECTOR and SALESPLAN_DKIM_PRIVATE_KEY_FILE "
            "must be set together"
        )
    return _load(domain.strip().lower(), selector.strip(), str(path))


@functools.lru_cache(maxsize=8)
def _load(domain: str, selector: str, path: str) -> DkimSigner:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise DkimKeyError(
            f"cannot read SALESPLAN_DKIM_PRIVATE_KEY_FILE {path}: {exc.strerror or exc}"
        ) from None
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise DkimKeyError(
            f"SALESPLAN_DKIM_PRIVATE_KEY_FILE {path} is not an unencrypted PEM private key"
        ) from None
    if isinstance(key, rsa.RSAPrivateKey):
        if key.key_size < MIN_RSA_BITS:
            raise DkimKeyError(
                f"the DKIM key in {path} is RSA {key.key_size} bits; at least "
                f"{MIN_RSA_BITS} are required"
            )
    elif not isinstance(key, ed25519.Ed25519PrivateKey):
        raise DkimKeyError(f"the DKIM key in {path} must be RSA (>= 2048 bits) or Ed25519")
    return DkimSigner(domain=domain, selector=selector, key=key)
