"""A loopback HTTP proxy in front of the tests' Radicale: it forwards every request as it came
and calls `hook(method, path)` first, so that a test can look at (or change) the database
while the server is in the middle of talking to the provider. `seen` lists every exchange as
(method, whether it carried credentials, the status answered)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

FORWARDED = ("authorization", "content-type", "depth", "if-match", "if-none-match")
RETURNED = ("content-type", "etag", "www-authenticate")


class _Handler(BaseHTTPRequestHandler):
    server: _Proxy

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _forward(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.hook(self.command, self.path)
        headers = {k.lower(): v for k, v in self.headers.items() if k.lower() in FORWARDED}
        r = httpx.request(
            self.command, self.server.target + self.path, content=body, headers=headers
        )
        self.server.seen.append((self.command, "authorization" in headers, r.status_code))
        self.send_response(r.status_code)
        for name in RETURNED:
            if name in r.headers:
                self.send_header(name, r.headers[name])
        self.send_header("Content-Length", str(len(r.content)))
        self.end_headers()
        self.wfile.write(r.content)

    do_GET = do_PUT = do_DELETE = do_PROPFIND = do_REPORT = do_OPTIONS = _forward


class _Proxy(ThreadingHTTPServer):
    daemon_threads = True
    target: str
    hook: Callable[[str, str], None]
    seen: list[tuple[str, bool, int]]


@contextmanager
def proxy(
    target: str,
    hook: Callable[[str, str], None] = lambda _m, _p: None,
    seen: list[tuple[str, bool, int]] | None = None,
) -> Iterator[str]:
    """Answers the proxy's base URL (`http://127.0.0.1:<port>`) for the server at `target`."""
    server = _Proxy(("127.0.0.1", 0), _Handler)
    server.target = target.rstrip("/")
    server.hook = hook
    server.seen = seen if seen is not None else []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
