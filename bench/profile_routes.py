"""What remains per request on the hot routes, in the app itself: pyinstrument over requests
handed straight to the ASGI app (no HTTP server, no client library), the top frames printed.

    .venv/bin/python bench/profile_routes.py [--only getAccount] [--requests 3000]
        [--concurrency 16] [--top 25] [--sqlite]

cpu.py's small data set (2,000 accounts, 60 plans and a big one) in a throwaway PostgreSQL
database beside BENCH_DATABASE_URL (or a SQLite file). For each route: the app of
`create_app` (auth, rate limits with the in-memory store, tenancy: every middleware), its
lifespan, 200 warm-up requests, then `--requests` requests from `--concurrency` concurrent
callers, each checked 200, under pyinstrument (async mode off, a sample every 0.2 ms of wall
time, `--cpu` for the process's CPU time). Printed per
route: the wall time and CPU per request of the process, the share of samples by layer (the
package of the innermost frame, `salesplan.<folder>` for ours; the event loop waiting for the
database is `idle`), and the frames with the most self time and the most inclusive time
(each function counted once per sample), as a share of the non-idle samples.

The HTTP server's own work (parsing, the `send` path) is not here: bench/servers.py measures
the servers; bench/profile.py profiles a served process.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cpu import small_data_set

# The event loop waiting (for the database's answer, for another caller): not a request's work.
IDLE = ("select", "poll", "epoll", "_run_once")
IDLE_FILES = ("selectors.py",)


# Frames every request passes through whole (the ASGI middleware chain, this script's callers):
# left out of the inclusive list, where they would all show ~100 %.
WRAPPERS = frozenset(
    (
        "__call__",
        "handle",
        "wrapped_app",
        "app",
        "call",
        "caller",
        "MainThread",
        "_run",
        "run",
        "<module>",
        "main",
    )
)


def layer(file_path: str) -> str:
    """The package of a frame's file: `salesplan.<folder>` for ours, the distribution's top
    module for a dependency, `stdlib:<module>` for the standard library."""
    path = file_path.replace("\\", "/")
    if "/salesplan/" in path and "site-packages" not in path:
        rest = path.rsplit("/salesplan/", 1)[1]
        head = rest.split("/", 1)[0]
        return "salesplan." + head.removesuffix(".py")
    if "site-packages/" in path:
        return path.split("site-packages/", 1)[1].split("/", 1)[0].removesuffix(".py")
    if path.startswith("<"):
        return path
    return "stdlib:" + path.rsplit("/", 1)[-1].removesuffix(".py")


def parse(identifier: str) -> tuple[str, str, str]:
    parts = identifier.split("\x01", 1)[0].split("\x00")
    function = parts[0]
    file_path = parts[1] if len(parts) > 1 else ""
    line = parts[2] if len(parts) > 2 else ""
    return function, file_path, line


def short(file_path: str) -> str:
    path = file_path.replace("\\", "/")
    for marker in ("site-packages/", "/src/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path.rsplit("/", 1)[-1]


def is_idle(stack: list[str]) -> bool:
    function, file_path, _ = parse(stack[-1])
    return file_path.endswith(IDLE_FILES) or (function in IDLE and "asyncio" in file_path)


def report(records: Iterable[tuple[list[str], float]], top: int) -> str:
    by_layer: Counter[str] = Counter()
    self_time: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    busy = idle = 0.0
    for stack, seconds in records:
        if not stack:
            continue
        if is_idle(stack):
            idle += seconds
            continue
        busy += seconds
        function, file_path, line = parse(stack[-1])
        by_layer[layer(file_path)] += seconds
        self_time[f"{function}  {short(file_path)}:{line}"] += seconds
        seen = set()
        for identifier in stack:
            function, file_path, _ = parse(identifier)
            key = f"{function}  {short(file_path)}"
            if key not in seen:
                seen.add(key)
                inclusive[key] += seconds
    lines = [f"samples: {busy:.2f} s busy, {idle:.2f} s idle (the event loop waiting)"]
    lines.append("by layer (innermost frame), share of busy:")
    lines += [f"  {100 * s / busy:5.1f} %  {name}" for name, s in by_layer.most_common(14)]
    lines.append(f"top {top} by self time, share of busy:")
    lines += [f"  {100 * s / busy:5.1f} %  {name}" for name, s in self_time.most_common(top)]
    lines.append(f"top {top} by inclusive time (the middleware chain left out), share of busy:")
    ours = [
        (name, s)
        for name, s in inclusive.most_common()
        if name.split("  ", 1)[0] not in WRAPPERS
        and not name.split("  ", 1)[1].startswith(("asyncio/", "runners", "base_events"))
    ]
    lines += [f"  {100 * s / busy:5.1f} %  {name}" for name, s in ours[:top]]
    return "\n".join(lines)


async def call(app: Any, path: str, auth: bytes) -> int:
    """One GET handed to the ASGI app; its status."""
    raw_path, _, query = path.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": raw_path,
        "raw_path": raw_path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8000"), (b"authorization", auth)],
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    status = 0

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(scope, receive, send)
    return status


async def drive(app: Any, path: str, auth: bytes, requests: int, concurrency: int) -> None:
    remaining = requests

    async def caller() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            status = await call(app, path, auth)
            assert status == 200, (path, status)

    await asyncio.gather(*(caller() for _ in range(concurrency)))


async def profile_route(name: str, path: str, auth: bytes, args: argparse.Namespace) -> str:
    from pyinstrument import Profiler
    from pyinstrument.stack_sampler import get_stack_sampler

    from salesplan.app import create_app

    if args.cpu:
        # Samples in CPU time: a wall-clock sample also counts the time the process was
        # preempted (on a shared machine: mostly in the syscall that wakes PostgreSQL,
        # socket.send). The timer is then a Python call on every profile event, which slows
        # call-heavy code most (FastAPI's dependency solving): read its shares as an upper bound.
        get_stack_sampler().timer_func = time.process_time

    app = create_app()
    async with app.router.lifespan_context(app):
        await drive(app, path, auth, 200, args.concurrency)
        profiler = Profiler(interval=0.0002, async_mode="disabled")
        cpu0, wall0 = time.process_time(), time.perf_counter()
        profiler.start()
        await drive(app, path, auth, args.requests, args.concurrency)
        profiler.stop()
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    session = profiler.last_session
    assert session is not None
    head = (
        f"== {name} ({path}): {args.requests} requests, {args.concurrency} concurrent: "
        f"{1000 * wall / args.requests:.3f} ms wall, {1000 * cpu / args.requests:.3f} ms CPU "
        f"per request (under the profiler)"
    )
    return head + "\n" + report(session.frame_records, args.top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--sqlite", action="store_true")
    parser.add_argument("--cpu", action="store_true", help="sample CPU time, not wall time")
    args = parser.parse_args()
    with small_data_set(args.sqlite, "salesplan-profile-routes-") as (data, env):
        os.environ.update(env)
        os.environ["SALESPLAN_WORKER_IN_PROCESS"] = "false"
        os.environ["SALESPLAN_LOG_LEVEL"] = "warning"
        auth = f"Bearer {data['key']}".encode()
        routes = {
            "getAccount": f"/api/v1/accounts/{data['account']}",
            "listAccounts": "/api/v1/accounts?limit=50",
        }
        for name, path in routes.items():
            if args.only and name not in args.only:
                continue
            print(asyncio.run(profile_route(name, path, auth, args)), flush=True)


if __name__ == "__main__":
    main()
