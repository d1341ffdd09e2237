"""A webhook receiver on loopback (a free port) that records every request and answers what
the test tells it to."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """`status` answers each request (default 204); `hold` (when set) makes requests wait for
    the event before answering; `body_size` (when set) answers a body of that many bytes,
    streamed until the client stops reading (`sent` counts what was written)."""

    status: Callable[[Received], int] = lambda _r: 204
    headers: dict[str, str] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)
    hold: threading.Event | None = None
    arrived: threading.Event = field(default_factory=threading.Event)
    body_size: int = 0
    sent: int = 0
    server: Any = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                got = Received(
                    {k.lower(): v for k, v in self.headers.items()}, self.rfile.read(length)
                )
                receiver.received.append(got)
                receiver.arrived.set()
                if receiver.hold is not None:
                    receiver.hold.wait(30)
                self.send_response(receiver.status(got))
                for name, value in receiver.headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(receiver.body_size))
                self.end_headers()
                chunk = b"x" * 65536
                try:
                    while receiver.sent < receiver.body_size:
                        self.wfile.write(chunk)
                        receiver.sent += len(chunk)
                except OSError:
                    self.close_connection = True

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.hold is not None:
            self.hold.set()
        self.server.shutdown()
        self.server.server_close()
