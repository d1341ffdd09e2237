"""Real loopback servers for the outbound guard's tests (contract §12): a catcher that records
every connection it accepts (an internal service an attacker aims at), a redirector, and a
server that accepts and never answers. The test app's public URL is `http://testserver`, not
loopback, so none of them is reachable unless a test re-allows it (`outbound_allow`)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from tests.calendar.conftest import radicale, worker  # noqa: F401  (Radicale and a worker)

SECRET_BODY = b"INTERNAL-SERVICE-SECRET-REPLY"


@dataclass
class Listener:
    host: str
    port: int = 0
    connections: int = 0
    requests: list[bytes] = field(default_factory=list)
    sock: socket.socket | None = None

    def url(self, host: str | None = None, path: str = "/") -> str:
        return f"http://{host or self.host}:{self.port}{path}"


def _serve(host: str, answer: bytes | None) -> Iterator[Listener]:
    """Accepts on `host`; reads one request and answers `answer` (None: never answers)."""
    listener = Listener(host)
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((host, 0))
    server.listen(64)
    listener.port = server.getsockname()[1]
    stop = threading.Event()
    held: list[socket.socket] = []

    def handle(conn: socket.socket) -> None:
        if answer is None:
            held.append(conn)  # accepted, never answered
            return
        with conn:
            conn.settimeout(5)
            data = b""
            try:
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            except OSError:
                pass
            listener.requests.append(data)
            with contextlib.suppress(OSError):
                conn.sendall(answer)

    def loop() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            listener.connections += 1
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    yield listener
    stop.set()
    thread.join(timeout=5)
    server.close()
    for conn in held:
        conn.close()


def http_answer(status: str, body: bytes, headers: str = "") -> bytes:
    return (
        f"HTTP/1.1 {status}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n{headers}\r\n"
    ).encode() + body


@pytest.fixture
def catcher() -> Iterator[Listener]:
    """An internal service on 127.0.0.1 that answers 200 with a secret body to anything."""
    yield from _serve("127.0.0.1", http_answer("200 OK", SECRET_BODY))


@pytest.fixture
def redirector(catcher: Listener) -> Iterator[Listener]:
    """An allowed-looking server on 127.0.0.2 that redirects every request to the catcher."""
    answer = http_answer("307 Temporary Redirect", b"", f"Location: {catcher.url()}\r\n")
    yield from _serve("127.0.0.2", answer)


@pytest.fixture
def blackhole() -> Iterator[Listener]:
    """Accepts connections on 127.0.0.3 and never answers."""
    yield from _serve("127.0.0.3", None)


def odd_spellings(port: int) -> list[str]:
    """127.0.0.1 as an attacker spells it, and a name that resolves to it."""
    return [
        f"http://127.0.0.1:{port}/",
        f"http://127.1:{port}/",
        f"http://0x7f000001:{port}/",
        f"http://2130706433:{port}/",
        f"http://0177.0.0.1:{port}/",
        f"http://[::ffff:127.0.0.1]:{port}/",
        f"http://localhost:{port}/",
    ]
