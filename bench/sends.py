"""sendEngageMessage throughput through a real `salesplan serve` (one process) on PostgreSQL,
against the bare floor in the same run.

    .venv/bin/python bench/sends.py [--seconds 10] [--connections 16] [--profile]

Creates a throwaway database beside BENCH_DATABASE_URL (default
postgresql+asyncpg://postgres@127.0.0.1:5432/test), migrates it, makes an organization, a user and
an API key, then:
- the floor: a bare Starlette app with one JSON route (bench/floor_app.py) under the same server
  program (uvicorn) and worker count, driven by wrk like the app;
- `salesplan serve --workers 1` (rate limits off, no in-process worker, no SMTP relay: the sends
  stay queued), driven by wrk with POST /api/v1/engage/messages/send, a fresh Idempotency-Key per
  request (a plain subject and body).
Prints sends/s, p50/p99, the server's CPU ms per send and the load average beside each figure.
`--profile`: the serve process runs under pyinstrument and its report is printed at the end.
Before/after: run the script of each tree (it puts its own tree's src first on the path).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx
from harness import (
    BIN,
    _running,
    cpu_seconds,
    free_port,
    run_wrk,
    serve_floor,
    settle,
)
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

BASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")

# A fresh Idempotency-Key per request: thread number, start time, counter.
UNIQUE_KEYS = """
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
function init(args)
  prefix = "k" .. tid .. "-" .. os.time() .. "-" .. math.random(1000000) .. "-"
  counter = 0
end
function request()
  counter = counter + 1
  wrk.headers["Idempotency-Key"] = prefix .. counter
  return wrk.format()
end
"""


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


async def prepare(url: str) -> tuple[str, str]:
    """(API key, organization id) in a migrated database."""
    from salesplan.auth.tokens import create_api_key
    from salesplan.config import Settings
    from salesplan.db import create_engine, create_sessionmaker
    from salesplan.events import handlers
    from salesplan.migrate import upgrade
    from salesplan.organizations.service import add_user, create_organization

    await asyncio.to_thread(upgrade, url)
    settings = Settings(database_url=url, secret_key="bench", _env_file=None)  # type: ignore[call-arg]
    engine = create_engine(settings)
    async with create_sessionmaker(engine, handlers())() as session:
        org = await create_organization(session, name="Bench")
        user = await add_user(
            session, organization_id=org.id, email="bench@example.com", password="x" * 12
        )
        _, key = await create_api_key(session, user_id=user.id, name="bench")
        await session.commit()
    await engine.dispose()
    return key, str(org.id)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()

    base = make_url(BASE_URL)
    name = f"salesplan_bench_sends_{uuid.uuid4().hex[:8]}"
    url = base.set(database=name).render_as_string(hide_password=False)

    async def admin(sql: str) -> None:
        engine = create_async_engine(base, isolation_level="AUTOCOMMIT")
        async with engine.connect() as conn:
            await conn.execute(text(sql))
        await engine.dispose()

    asyncio.run(admin(f'CREATE DATABASE "{name}"'))
    try:
        key, org = asyncio.run(prepare(url))
        with serve_floor(1) as bare:
            for _ in range(50):
                httpx.get(bare.url + "/floor", timeout=30)
            before = load()
            pids = bare.pids()
            cpu0 = sum(cpu_seconds(pids))
            floor = run_wrk(bare.url + "/floor", connections=args.connections, seconds=args.seconds)
            cpu = 1000 * (sum(cpu_seconds(pids)) - cpu0) / max(floor.requests, 1)
            print(
                f"floor (bare Starlette, uvicorn, 1 process): {floor.rps:7.0f} req/s  "
                f"p50 {floor.p50_ms:6.2f} ms  p99 {floor.p99_ms:6.2f} ms  cpu {cpu:.3f} ms/req; "
                f"{before} -> {load()}",
                flush=True,
            )
        settle()
        port = free_port()
        env = os.environ | {
            "SALESPLAN_DATABASE_URL": url,
            "SALESPLAN_SECRET_KEY": "bench",
            "SALESPLAN_RATE_LIMITS_ENABLED": "false",
            "SALESPLAN_WORKER_IN_PROCESS": "false",
            "SALESPLAN_SMTP_FROM": "sales@bench.example",
            "SALESPLAN_LOG_LEVEL": "warning",
            "SALESPLAN_PUBLIC_URL": f"http://127.0.0.1:{port}",
            # This tree's code, whatever the venv's editable install points at.
            "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src"),
        }
        report = Path(tempfile.gettempdir()) / f"salesplan-bench-sends-{uuid.uuid4().hex[:8]}.txt"
        command = [str(BIN / "salesplan"), "serve", "--port", str(port), "--workers", "1"]
        if args.profile:
            command = [
                str(BIN / "pyinstrument"),
                "-r",
                "text",
                "-o",
                str(report),
                str(BIN / "salesplan"),
                *command[1:],
            ]
        with _running(command, env, f"http://127.0.0.1:{port}", "/healthz") as server:
            auth = f"Bearer {key}"
            body = (
                '{"channel": "EMAIL", "to": "ada@bench.example", "subject": "Hi", '
                '"body": "Hello Ada"}'
            )
            target = server.url + "/api/v1/engage/messages/send"
            headers = {"Authorization": auth, "X-Organization-Id": org}
            for n in range(50):  # warm caches
                warm = httpx.post(
                    target,
                    content=body,
                    headers=headers
                    | {"Idempotency-Key": f"warm-{n}", "Content-Type": "application/json"},
                    timeout=30,
                )
                assert warm.status_code == 202, warm.text
            before = load()
            pids = server.pids()
            cpu0 = sum(cpu_seconds(pids))
            result = run_wrk(
                target,
                connections=args.connections,
                seconds=args.seconds,
                auth=auth,
                method="POST",
                body=body,
                extra=f'wrk.headers["X-Organization-Id"] = "{org}"\n' + UNIQUE_KEYS,
            )
            cpu = 1000 * (sum(cpu_seconds(pids)) - cpu0) / max(result.requests, 1)
            print(
                f"sendEngageMessage (serve, 1 process):       {result.rps:7.0f} sends/s  "
                f"p50 {result.p50_ms:6.2f} ms  p99 {result.p99_ms:6.2f} ms  cpu {cpu:.3f} ms/send"
                f"  non-2xx {result.non_2xx} errors {result.errors}; {before} -> {load()}",
                flush=True,
            )
            print(f"ratio to the floor: {result.rps / floor.rps:.2f}")
            if args.profile:
                # pyinstrument writes its report on an interrupt, not on SIGTERM.
                os.killpg(server.process.pid, signal.SIGINT)
                server.process.wait(timeout=120)
        if args.profile:
            time.sleep(1)
            print(f"\nprofile of the serve process ({report}):")
            print(report.read_text() if report.exists() else "(no report written)")
    finally:
        asyncio.run(admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


if __name__ == "__main__":
    main()
