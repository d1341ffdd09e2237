"""A real server for browser tests: uvicorn on a free loopback port, in a thread, on the test
database; and a tiny loopback HTTP server that plays an OAuth client's redirect URI."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import uvicorn

from salesplan.app import create_app
from salesplan.config import Settings

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def screenshot_dir(default: Path) -> Path:
    """Where page screenshots go: `SALESPLAN_SCREENSHOTS` to keep them, else the test's tmp."""
    path = Path(os.environ.get("SALESPLAN_SCREENSHOTS") or default)
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def live_server(settings: Settings) -> Iterator[str]:
    sock = _loopback_socket()
    origin = f"http://127.0.0.1:{sock.getsockname()[1]}"
    app = create_app(settings.model_copy(update={"public_url": origin}))
    with serve_in_thread(app, sock) as served:
        yield served


def _loopback_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextmanager
def serve_in_thread(app: Any, sock: socket.socket | None = None) -> Iterator[str]:
    """Any ASGI app served by uvicorn on a free loopback port, in a thread of its own (so that
    a blocking client in the test's thread can call it); yields its origin."""
    sock = sock or _loopback_socket()
    origin = f"http://127.0.0.1:{sock.getsockname()[1]}"
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the live server did not start")
        time.sleep(0.02)
    try:
        yield origin
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@dataclass
class Callback:
    """The client's loopback redirect URI; remembers the query of each request."""

    url: str
    received: list[dict[str, str]] = field(default_factory=list)
    arrived: threading.Event = field(default_factory=threading.Event)


@contextmanager
def callback_server() -> Iterator[Callback]:
    holder: list[Callback] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path == "/callback":  # not the browser's /favicon.ico
                holder[0].received.append({k: v[0] for k, v in parse_qs(parts.query).items()})
                holder[0].arrived.set()
            body = b"<!doctype html><title>Connected</title><p>You can close this window.</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder.append(Callback(f"http://127.0.0.1:{httpd.server_address[1]}/callback"))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield holder[0]
    finally:
        httpd.shutdown()
        httpd.server_close()
