"""The Python client (clients/python) against a live server: uvicorn on a loopback port in a
thread of its own, on the test database (both engines), so that the blocking client can call
it from the test; and a flaky proxy in front of it that answers what the test scripts (a 503
with Retry-After) before passing requests on."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from tests.web.live import serve_in_thread

from salesplan.app import create_app
from salesplan.config import Settings


@dataclass
class Live:
    origin: str
    app: Any


@pytest.fixture(scope="session")
def live_server(settings: Settings, schema: None) -> Iterator[Live]:
    """One live server for the run (an app of its own on the test database)."""
    app = create_app(settings)
    with serve_in_thread(app) as origin:
        yield Live(origin, app)


@pytest.fixture
async def live(live_server: Live, app: Any) -> Live:
    """The live server with empty rate-limit buckets; `app` empties the database after."""
    await live_server.app.state.rate_limiter.store.reset()
    return live_server


@dataclass
class Seen:
    at: float
    method: str
    path: str
    headers: dict[str, str]
    status: int


@dataclass
class Flaky:
    """Answers `fail(method, path, attempt)` when it returns a status (with `Retry-After:
    retry_after`), else passes the request on to the live server; records every request."""

    upstream: str
    fail: Callable[[str, str, int], int | None] = lambda *_: None
    retry_after: str | None = "1"
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    origin: str = ""

    def attempts(self, path: str) -> list[Seen]:
        return [s for s in self.seen if s.path == path]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                kind = message["type"].rsplit(".", 1)[-1]  # startup or shutdown
                await send({"type": f"lifespan.{kind}.complete"})
                if kind == "shutdown":
                    return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        method, path = scope["method"], scope["path"]
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        with self.lock:
            attempt = len(self.attempts(path)) + 1
        status = self.fail(method, path, attempt)
        if status is not None:
            envelope = (
                b'{"error":{"code":"service_unavailable","message":"Try again later.",'
                b'"details":{}}}'
            )
            out = [(b"content-type", b"application/json")]
            if self.retry_after is not None:
                out.append((b"retry-after", self.retry_after.encode()))
            content, code = envelope, status
        else:
            query = scope["query_string"].decode()
            url = self.upstream + path + (f"?{query}" if query else "")
            forwarded = {k: v for k, v in headers.items() if k not in ("host", "content-length")}
            async with httpx.AsyncClient() as http:
                answer = await http.request(method, url, headers=forwarded, content=body)
            content, code = answer.content, answer.status_code
            out = [
                (k.encode(), v.encode())
                for k, v in answer.headers.items()
                if k.lower() not in ("content-length", "transfer-encoding", "content-encoding")
            ]
        with self.lock:
            self.seen.append(Seen(time.monotonic(), method, path, headers, code))
        await send({"type": "http.response.start", "status": code, "headers": out})
        await send({"type": "http.response.body", "body": content})


@pytest.fixture
def flaky(live: Live) -> Iterator[Flaky]:
    proxy = Flaky(live.origin)
    with serve_in_thread(proxy) as origin:
        proxy.origin = origin
        yield proxy
