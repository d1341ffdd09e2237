"""Benchmark plumbing: start `salesplan serve`, drive it with wrk, read RSS.

Used by bench/run.py; every figure comes from real processes on loopback.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ensure_wrk() -> str:
    found = shutil.which("wrk")
    if found:
        return found
    print("bench: installing wrk (Debian package)", file=sys.stderr)
    subprocess.run(["apt-get", "install", "-y", "-q", "wrk"], check=False, capture_output=True)
    found = shutil.which("wrk")
    if not found:
        subprocess.run(["apt-get", "update", "-q"], check=False, capture_output=True)
        subprocess.run(["apt-get", "install", "-y", "-q", "wrk"], check=True, capture_output=True)
        found = shutil.which("wrk")
    if not found:
        raise SystemExit("wrk is required (apt-get install wrk)")
    return found


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]

    def pids(self) -> list[int]:
        out = [self.process.pid]
        try:
            children = subprocess.run(
                ["pgrep", "-P", str(self.process.pid)], capture_output=True, text=True
            ).stdout.split()
            out += [int(c) for c in children]
        except FileNotFoundError:
            pass
        return out

    def worker_rss_mb(self) -> list[float]:
        """RSS of each process serving requests (the workers; the server itself when single)."""
        pids = self.pids()
        workers = pids[1:] or pids[:1]
        if len(pids) > 1 and len(workers) == 1 and len(pids) == 2:
            # uvicorn with workers=1 has no children; with >1 the parent only supervises.
            workers = pids[1:]
        sizes = []
        for pid in workers:
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                if b"resource_tracker" in cmdline:  # multiprocessing's helper, not a worker
                    continue
                status = Path(f"/proc/{pid}/status").read_text()
            except FileNotFoundError:
                continue
            match = re.search(r"VmRSS:\s+(\d+) kB", status)
            if match:
                sizes.append(int(match.group(1)) / 1024)
        return sizes


# The server program both sides of a ratio run under: `salesplan serve`'s default (granian),
# or BENCH_SERVER=uvicorn. The floor and the app always run under the same one.
SERVER = os.environ.get("BENCH_SERVER", "granian")


@contextmanager
def serve(env: dict[str, str], workers: int = 1, server: str = SERVER) -> Iterator[Server]:
    """`salesplan serve --server {server}` with `workers` processes."""
    port = free_port()
    full_env = os.environ | env | {"SALESPLAN_LOG_LEVEL": "warning", "SALESPLAN_BENCH_ROUTES": "1"}
    command = [str(BIN / "salesplan"), "serve", "--port", str(port), "--workers", str(workers)]
    command += ["--server", server]
    with _running(command, full_env, f"http://127.0.0.1:{port}", "/healthz") as running:
        yield running


@contextmanager
def serve_floor(workers: int = 1, server: str = SERVER) -> Iterator[Server]:
    """The bare Starlette floor (bench/floor_app.py) under the same server program as `serve`,
    in its own process with the same worker count; its one route is `/floor`."""
    port = free_port()
    if server == "uvicorn":
        command = [str(BIN / "uvicorn"), "--port", str(port), "--workers", str(workers)]
        command += ["--log-level", "warning", "--no-access-log", "--factory"]
        command += ["--app-dir", str(ROOT / "bench")]
    else:
        command = [str(BIN / "granian"), "--interface", "asgi", "--port", str(port)]
        command += ["--workers", str(workers), "--log-level", "warning", "--factory"]
        command += ["--working-dir", str(ROOT / "bench")]
    command.append("floor_app:create_app")
    with _running(command, dict(os.environ), f"http://127.0.0.1:{port}", "/floor") as server:
        yield server


@contextmanager
def _running(command: list[str], env: dict[str, str], url: str, ready: str) -> Iterator[Server]:
    log = tempfile.NamedTemporaryFile(prefix="salesplan-bench-", suffix=".log", delete=False)
    process = subprocess.Popen(
        command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"server exited; see {log.name}")
        try:
            if httpx.get(url + ready, timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.2)
    else:
        raise SystemExit(f"server did not start; see {log.name}")
    try:
        yield Server(url, process)
    finally:
        if process.poll() is None:  # a caller may have stopped it already (a profiled run)
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


_LUA = """
wrk.method = "{method}"
wrk.headers["Authorization"] = "{auth}"
wrk.headers["Content-Type"] = "application/json"
{body}
"""

_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4}


@dataclass
class WrkResult:
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int
    non_2xx: int
    requests: int = 0


TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids: list[int]) -> tuple[float, float]:
    """User and system CPU seconds the processes have used so far (/proc/<pid>/stat)."""
    user = system = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        user += int(fields[11])  # utime, stime (after "state" at index 0)
        system += int(fields[12])
    return user / TICKS, system / TICKS


def _ms(text: str) -> float:
    match = re.match(r"([\d.]+)(us|ms|s|m)", text)
    if not match:
        return float("nan")
    return float(match.group(1)) * _UNITS[match.group(2)]


SETTLE_SECONDS = 1.0


def settle() -> None:
    """Wait for the server to finish what a loaded run left in flight. wrk stops at its
    deadline with up to one request per connection unanswered; the server still answers
    them (64 of them queued at the admission gate take ~60 ms), and a single-connection run
    started at once measured that drain as its p99 (3-14 ms instead of ~2 ms on make bench's
    lists, 2026-11-25)."""
    time.sleep(SETTLE_SECONDS)


def run_wrk(
    url: str,
    *,
    connections: int,
    seconds: int,
    auth: str = "",
    method: str = "GET",
    body: str | None = None,
    threads: int = 2,
    extra: str = "",
) -> WrkResult:
    wrk = ensure_wrk()
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        body_line = f"wrk.body = [[{body}]]" if body else ""
        script.write(_LUA.format(method=method, auth=auth, body=body_line) + extra)
    threads = max(1, min(threads, connections))
    out = subprocess.run(
        [
            wrk,
            f"-t{threads}",
            f"-c{connections}",
            f"-d{seconds}s",
            "--latency",
            "-s",
            script.name,
            url,
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    # Anchored: "71.50%" in the thread-stats lines must not read as the 50th percentile.
    p50 = _ms(re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1))  # type: ignore[union-attr]
    p99 = _ms(re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1))  # type: ignore[union-attr]
    errors = sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", out))
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    total = re.search(r"(\d+) requests in", out)
    return WrkResult(
        rps,
        p50,
        p99,
        errors,
        int(non2xx.group(1)) if non2xx else 0,
        int(total.group(1)) if total else 0,
    )
