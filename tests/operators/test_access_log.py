"""Contract §12 "Logs": the INFO access log of `salesplan serve` never holds the signature of a
tracking or unsubscribe link (a capability: whoever reads it can unsubscribe the recipient)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest
from uvicorn.logging import AccessFormatter

from salesplan.accesslog import RedactSignatures, redact_path
from tests.fixtures.served import came_up
from tests.operators.test_serve import free_port

SIGNATURE = "Zk3mQ9sEcretSig0123456x"


def _links() -> list[tuple[str, str]]:
    message = uuid.uuid4()
    return [
        ("GET", f"/t/o/{message}/{SIGNATURE}.gif"),
        ("GET", f"/t/c/{message}/{SIGNATURE}?u=https%3A%2F%2Fexample.com%2F"),
        ("GET", f"/t/u/{message}/{SIGNATURE}"),
        ("POST", f"/t/u/{message}/{SIGNATURE}"),
    ]


# Stable ids (the paths hold a new UUID per collection; parallel workers must collect the same
# names).
@pytest.mark.parametrize(
    ("method", "path"), _links(), ids=["open", "click", "unsubscribe-get", "unsubscribe-post"]
)
def test_the_access_formatter_shows_the_path_without_the_signature(method, path) -> None:
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", method, path, "1.1", 404),
        None,
    )
    assert RedactSignatures().filter(record)
    line = AccessFormatter("%(message)s", use_colors=False).format(record)
    assert SIGNATURE not in line
    assert redact_path(path) in line and "[redacted]" in line
    assert redact_path("/api/v1/accounts?page=2") == "/api/v1/accounts?page=2"


def test_the_served_access_log_holds_no_link_signature(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SALESPLAN_")}
    env["SALESPLAN_DATABASE_URL"] = f"sqlite+aiosqlite:///{tmp_path / 'serve.db'}"
    env["SALESPLAN_LOG_LEVEL"] = "info"
    process = subprocess.Popen(
        [sys.executable, "-m", "salesplan.cli", "serve", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    origin = f"http://127.0.0.1:{port}"
    try:
        if not came_up(process, origin, 60):
            pytest.fail("serve did not start")
        for method, path in _links():
            response = httpx.request(method, origin + path)
            assert response.status_code == 404
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=20)
    log = output.decode()
    assert '"GET /healthz HTTP/1.1" 200' in log  # the access log is on
    assert log.count("[redacted]") == 4, log
    assert SIGNATURE not in log, log
