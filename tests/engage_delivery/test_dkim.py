"""DKIM signing (contract §14): every e-mail the worker sends is signed relaxed/relaxed with the
configured key, which dkimpy verifies against the public key; a key that does not load stops
`serve` and `worker` at start with one `error:` line; unset, mail goes unsigned."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import dkim
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

from salesplan.engage.delivery.worker import run_delivery
from tests.engage_delivery.conftest import worker_context
from tests.engage_delivery.test_send import email, send

REQUIRED = {
    b"from",
    b"to",
    b"subject",
    b"date",
    b"message-id",
    b"list-unsubscribe",
    b"list-unsubscribe-post",
}


def write_key(path: Path, key: Any) -> Path:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return path


def dns_record(key: Any) -> bytes:
    """The TXT record a receiver would find at {selector}._domainkey.{domain}."""
    public = key.public_key()
    if isinstance(key, rsa.RSAPrivateKey):
        der = public.public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        return b"v=DKIM1; k=rsa; p=" + base64.b64encode(der)
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return b"v=DKIM1; k=ed25519; p=" + base64.b64encode(raw)


def verifier(key: Any) -> Any:
    asked: list[bytes] = []

    def dnsfunc(name: bytes, timeout: int = 5) -> bytes:
        asked.append(name)
        return dns_record(key) if name == b"mail2026._domainkey.example.com." else b""

    dnsfunc.asked = asked  # type: ignore[attr-defined]
    return dnsfunc


def signed_context(app: Any, smtp: Any, key_file: Path) -> Any:
    ctx = worker_context(app, smtp)
    ctx.settings = ctx.settings.model_copy(
        update={
            "dkim_domain": "example.com",
            "dkim_selector": "mail2026",
            "dkim_private_key_file": key_file,
        }
    )
    return ctx


@pytest.mark.parametrize("kind", ["rsa", "ed25519"])
async def test_every_email_is_signed_and_verifies_against_the_public_key(
    app, client, actor, smtp, tmp_path, kind
) -> None:
    key: Any = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        if kind == "rsa"
        else ed25519.Ed25519PrivateKey.generate()
    )
    ctx = signed_context(app, smtp, write_key(tmp_path / "dkim.pem", key))
    bodies = [
        email(subject="Quarterly plan", body="Hello Ada\n\nSee https://example.com/x  \n\n\n"),
        email(
            to="Grace Hopper <grace@example.com>",
            subject="Réunion — ünïcode subject " + "long " * 30,
            body="Tabs\tand  spaces   \t\nline two",
            bodyHtml='<p>Hi <a href="https://example.com/y">there</a></p>',
        ),
    ]
    for n, body in enumerate(bodies):
        assert (await send(client, actor, body, key=f"dkim-{n}")).status_code == 202
    assert await run_delivery(ctx) == 2
    assert len(smtp.raw) == 2
    algorithm = b"rsa-sha256" if kind == "rsa" else b"ed25519-sha256"
    for raw in smtp.raw:
        dnsfunc = verifier(key)
        assert dkim.verify(raw, dnsfunc=dnsfunc), raw[:400]
        assert dnsfunc.asked == [b"mail2026._domainkey.example.com."]  # type: ignore[attr-defined]
        signature = dkim.DKIM(raw)
        signature.verify(dnsfunc=dnsfunc)
        tags = signature.signature_fields
        assert tags[b"a"] == algorithm
        assert tags[b"c"] == b"relaxed/relaxed"
        assert tags[b"d"] == b"example.com"
        covered = {h.strip().lower() for h in tags[b"h"].split(b":")}
        assert covered >= REQUIRED
        # A changed subject no longer verifies: the signature covers what was sent.
        tampered = raw.replace(b"Subject: ", b"Subject: Re: ", 1)
        assert not dkim.verify(tampered, dnsfunc=verifier(key))


async def test_another_key_does_not_verify(app, client, actor, smtp, tmp_path) -> None:
    key = ed25519.Ed25519PrivateKey.generate()
    ctx = signed_context(app, smtp, write_key(tmp_path / "dkim.pem", key))
    assert (await send(client, actor, email())).status_code == 202
    assert await run_delivery(ctx) == 1
    assert not dkim.verify(smtp.raw[0], dnsfunc=verifier(ed25519.Ed25519PrivateKey.generate()))


async def test_unset_sends_unsigned(app, client, actor, smtp) -> None:
    assert (await send(client, actor, email())).status_code == 202
    assert await run_delivery(worker_context(app, smtp)) == 1
    assert b"DKIM-Signature" not in smtp.raw[0]


def run_command(tmp_path: Path, command: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    environment = os.environ | {
        "SALESPLAN_DATA_DIR": str(tmp_path / "data"),
        "SALESPLAN_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'refused.db'}",
        "SALESPLAN_DKIM_DOMAIN": "example.com",
        "SALESPLAN_DKIM_SELECTOR": "mail2026",
        "SALESPLAN_SMTP_HOST": "127.0.0.1",
    }
    environment.pop("SALESPLAN_DKIM_PRIVATE_KEY_FILE", None)
    args = [command, "--port", "1"] if command == "serve" else [command]
    return subprocess.run(
        [sys.executable, "-m", "salesplan.cli", *args],
        capture_output=True,
        text=True,
        env=environment | env,
        timeout=120,
        check=False,
    )


def weak_key(tmp_path: Path) -> Path:
    # cryptography refuses to generate RSA keys under 1024 bits; 1024 is below the rule.
    return write_key(
        tmp_path / "weak.pem", rsa.generate_private_key(public_exponent=65537, key_size=1024)
    )


@pytest.mark.parametrize("command", ["serve", "worker"])
@pytest.mark.parametrize("case", ["missing", "not_pem", "rsa_1024", "half"])
def test_a_key_that_does_not_load_stops_the_command_at_start(tmp_path, command, case) -> None:
    env: dict[str, str] = {}
    if case == "missing":
        env["SALESPLAN_DKIM_PRIVATE_KEY_FILE"] = str(tmp_path / "absent.pem")
    elif case == "not_pem":
        (tmp_path / "bad.pem").write_text("-----BEGIN PRIVATE KEY-----\nnot a key\n")
        env["SALESPLAN_DKIM_PRIVATE_KEY_FILE"] = str(tmp_path / "bad.pem")
    elif case == "rsa_1024":
        env["SALESPLAN_DKIM_PRIVATE_KEY_FILE"] = str(weak_key(tmp_path))
    else:  # a key file without a selector
        env["SALESPLAN_DKIM_PRIVATE_KEY_FILE"] = str(
            write_key(tmp_path / "ok.pem", ed25519.Ed25519PrivateKey.generate())
        )
        env["SALESPLAN_DKIM_SELECTOR"] = ""
    result = run_command(tmp_path, command, env)
    assert result.returncode == 1, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert "DKIM" in lines[0]
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "refused.db").exists()  # stopped before touching the database
