"""What one request of a hot route spends its time on: `salesplan serve` (1 worker) under
pyinstrument while wrk drives one route, the report printed per route.

    .venv/bin/python bench/profile.py [--only getAccount] [--seconds 8] [--connections 16]
        [--sqlite] [--server uvicorn|granian]

cpu.py's small data set (2,000 accounts, 60 plans and a big one) in a throwaway PostgreSQL
database beside BENCH_DATABASE_URL (or a SQLite file). For each route a fresh server runs under
`pyinstrument` (async mode off: the samples are of the main thread, the event loop's idle time
included, shown as `select`/`run_once`); wrk drives it, the server is stopped with SIGINT and
the text report (frames under 1 % hidden) goes to /tmp/salesplan-profile.<route>.txt and to
stdout.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cpu import small_data_set
from harness import BIN, free_port, run_wrk


def profile(name: str, path: str, env: dict[str, str], args: argparse.Namespace) -> str:
    port = free_port()
    report = Path(tempfile.gettempdir()) / f"salesplan-profile.{name}.txt"
    command = [
        str(BIN / "pyinstrument"),
        "-r",
        "text",
        *(["--show-all"] if args.all else []),
        "-o",
        str(report),
        str(BIN / "salesplan"),
        "serve",
        "--port",
        str(port),
        "--server",
        args.server,
    ]
    process = subprocess.Popen(
        command,
        env=os.environ | env | {"SALESPLAN_LOG_LEVEL": "warning"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        for _ in range(50):
            httpx.get(url + path, headers={"Authorization": env["AUTH"]}, timeout=30)
        result = run_wrk(
            url + path, connections=args.connections, seconds=args.seconds, auth=env["AUTH"]
        )
    finally:
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=60)
    return f"{name}: {result.rps:.0f} req/s under the profiler\n" + report.read_text()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--sqlite", action="store_true")
    parser.add_argument("--server", default="uvicorn")
    parser.add_argument("--all", action="store_true", help="pyinstrument --show-all")
    args = parser.parse_args()
    with small_data_set(args.sqlite, "salesplan-profile-") as (data, env):
        env = env | {
            "AUTH": f"Bearer {data['key']}",
        }
        routes = {
            "getAccount": f"/api/v1/accounts/{data['account']}",
            "listAccounts": "/api/v1/accounts?limit=50",
            "listPlans": "/api/v1/plans?limit=50",
            "getPlan": f"/api/v1/plans/{data['plan']}",
        }
        for name, path in routes.items():
            if args.only and name not in args.only:
                continue
            print(profile(name, path, env, args), flush=True)


if __name__ == "__main__":
    main()
