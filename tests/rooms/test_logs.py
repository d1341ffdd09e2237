"""A room's link token is a capability (whoever holds it may ask for a code): the access log
of `salesplan serve`, and the log of an unhandled error, name the path without it."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from uvicorn.logging import AccessFormatter

from salesplan.accesslog import RedactSignatures, redact_path
from tests.fixtures.served import came_up
from tests.operators.test_serve import free_port

TOKEN = "Ts9urWoM1DyeE3Cg0NkDvXstM9ar6lCscfQ13xt4fyE"
PATHS = [
    ("GET", f"/rooms/{TOKEN}"),
    ("GET", f"/rooms/{TOKEN}/plan.ics"),
    ("POST", f"/rooms/{TOKEN}/code"),
    ("GET", f"/rooms/{TOKEN}/code?x=1"),
]


@pytest.mark.parametrize(("method", "path"), PATHS)
def test_the_access_log_shows_a_room_path_without_its_token(method: str, path: str) -> None:
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
    assert TOKEN not in line and "/rooms/[redacted]" in line
    assert redact_path(path).removeprefix("/rooms/[redacted]") == path.removeprefix(
        f"/rooms/{TOKEN}"
    )


def test_the_served_access_log_holds_no_room_token(tmp_path: Path) -> None:
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
        for method, path in PATHS:
            httpx.request(method, origin + path)
    finally:
        process.terminate()
        output, _ = process.communicate(timeout=20)
    log = output.decode()
    assert '"GET /healthz HTTP/1.1" 200' in log  # the access log is on
    assert log.count("/rooms/[redacted]") == len(PATHS), log
    assert TOKEN not in log, log
