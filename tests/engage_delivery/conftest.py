"""Real servers for delivery tests: an aiosmtpd SMTP server (optionally answering a fixed
refusal) and a local HTTP server standing in for a Slack webhook."""

from __future__ import annotations

import json
import socket
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from salesplan.config import Settings
from salesplan.worker.context import WorkerContext


@dataclass
class SmtpSink:
    """Collects what it accepts; answers `refusals` (in order, one per DATA) before accepting."""

    refusals: list[str] = field(default_factory=list)
    received: list[EmailMessage] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)  # the bytes of each accepted DATA
    recipients: list[list[str]] = field(default_factory=list)  # each DATA's RCPT TO
    port: int = 0

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if self.refusals:
            return self.refusals.pop(0)
        self.raw.append(envelope.original_content)
        self.recipients.append(list(envelope.rcpt_tos))
        self.received.append(
            message_from_bytes(envelope.original_content, policy=policy.default)  # type: ignore[arg-type]
        )
        return "250 OK"


@pytest.fixture
def smtp() -> Iterator[SmtpSink]:
    sink = SmtpSink()
    with socket.socket() as probe:  # a free port (aiosmtpd's start-up check cannot use 0)
        probe.bind(("127.0.0.1", 0))
        sink.port = probe.getsockname()[1]
    controller = Controller(sink, hostname="127.0.0.1", port=sink.port)
    controller.start()
    yield sink
    controller.stop()


@dataclass
class Webhook:
    posts: list[dict[str, Any]] = field(default_factory=list)
    answers: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    url: str = ""


@pytest.fixture
def slack_webhook(outbound_allow: object) -> Iterator[Webhook]:
    """On loopback, which the test app (public URL not loopback) reaches only re-allowed."""
    hook = Webhook()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            payload = json.loads(self.rfile.read(length))
            status, headers = hook.answers.pop(0) if hook.answers else (200, {})
            if status == 200:
                hook.posts.append(payload)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    hook.url = f"http://127.0.0.1:{server.server_address[1]}/services/T/B/X"
    yield hook
    server.shutdown()


def worker_context(app: Any, smtp: SmtpSink | None = None) -> WorkerContext:
    """A worker context on the test app's engine, its settings pointed at the test SMTP server."""
    settings: Settings = app.state.settings
    update: dict[str, Any] = {}
    if smtp is not None:
        update = {
            "smtp_host": "127.0.0.1",
            "smtp_port": smtp.port,
            "smtp_from": "sales@example.com",
        }
    return WorkerContext(
        settings=settings.model_copy(update=update),
        engine=app.state.engine,
        sessionmaker=app.state.sessionmaker,
        worker_id=f"test-{uuid.uuid4().hex[:8]}",
    )
