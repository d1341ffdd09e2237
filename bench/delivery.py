"""Delivery throughput: messages per second from the outbox to a local SMTP sink.

    .venv/bin/python bench/delivery.py [--messages 3000] [--explain-rows 1000000] [--sinks 2]
        [--workers 1,2] [--profile pyinstrument|cprofile] [--floor]

Needs PostgreSQL at BENCH_DATABASE_URL (default postgresql+asyncpg://postgres@127.0.0.1:5432/test).
Creates a throwaway database, queues N e-mails, starts aiosmtpd sinks in their own processes, then
drains the outbox with one worker process and again with two, each calling the delivery job kind
(`run_delivery`) in a loop until nothing is due. Prints messages/s for both and the EXPLAIN of
the claim query with `--explain-rows` queued rows. Drops its database at the end.

Each figure is printed with the machine's load average (other work on the machine depresses
it) and the worker processes' CPU milliseconds per message. The feed is recorded as in
production (every sent e-mail enters its organization's feed); the bench checks that it was.
`--floor`: the same sinks driven by a bare aiosmtplib sender (same connections, prebuilt
messages, no database): the ceiling of this machine's SMTP path. `--profile`: one more one-worker
drain under pyinstrument, its text report printed.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import socket
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

BASE_URL = os.environ.get("BENCH_DATABASE_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")


def sink_process(port: int, ready: Any, counter: Any) -> None:
    """An aiosmtpd server that accepts and discards; several of these share the port
    (SO_REUSEPORT), so that the sink is not the single-core ceiling of the measurement."""
    from aiosmtpd.smtp import SMTP

    class Sink:
        async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
            with counter.get_lock():
                counter.value += 1
            return "250 OK"

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(
            lambda: SMTP(Sink(), hostname="sink.local"), "127.0.0.1", port, reuse_port=True
        )
        ready.set()
        await server.serve_forever()

    asyncio.run(serve())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def settings_for(url: str, port: int) -> Any:
    from salesplan.config import Settings

    return Settings(
        database_url=url,
        secret_key="bench-secret",
        smtp_host="127.0.0.1",
        smtp_port=port,
        smtp_from="bench@example.com",
        _env_file=None,  # type: ignore[call-arg]
    )


def worker_process(
    url: str, port: int, start: Any, done: Any, cpu: Any, profile: str | None = None
) -> None:
    async def go() -> None:
        from salesplan.db import create_engine, create_sessionmaker
        from salesplan.engage.delivery.worker import run_delivery
        from salesplan.events import handlers
        from salesplan.worker.context import WorkerContext

        settings = settings_for(url, port)
        engine = create_engine(settings)
        ctx = WorkerContext(
            settings=settings,
            engine=engine,
            sessionmaker=create_sessionmaker(engine, handlers()),
            worker_id=f"bench-{uuid.uuid4().hex[:8]}",
        )
        start.wait()
        began = time.process_time()
        profiler: Any = None
        if profile and profile.endswith(".cprofile"):
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
        elif profile:
            from pyinstrument import Profiler

            profiler = Profiler(async_mode="enabled")
            profiler.start()
        while await run_delivery(ctx):
            pass
        if profile and profile.endswith(".cprofile"):
            import io
            import pstats

            profiler.disable()
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(30)
            Path(profile).write_text(out.getvalue())
        elif profiler is not None:
            profiler.stop()
            Path(profile).write_text(profiler.output_text(unicode=False, color=False))
        with cpu.get_lock():
            cpu.value += time.process_time() - began
        await engine.dispose()

    asyncio.run(go())
    done.set()


def smtp_floor(port: int, count: int, connections: int) -> float:
    """Messages/s of a bare aiosmtplib sender to the same sinks: `connections` reused
    connections, one prebuilt message, no database."""
    import aiosmtplib

    mail = (
        b"From: bench@example.com\r\nTo: rcpt@example.com\r\nSubject: Hello\r\n\r\n"
        + b"Body of the message\r\n" * 40
    )

    async def go() -> float:
        numbers = iter(range(count))

        async def lane() -> None:
            client = aiosmtplib.SMTP(hostname="127.0.0.1", port=port)
            await client.connect()
            for _ in numbers:
                await client.sendmail("bench@example.com", ["rcpt@example.com"], mail)
            await client.quit()

        began = time.perf_counter()
        await asyncio.gather(*(lane() for _ in range(connections)))
        return count / (time.perf_counter() - began)

    return asyncio.run(go())


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


async def queue_messages(url: str, org_id: uuid.UUID, count: int, *, status: str) -> None:
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.execute(
            text(
                """
                INSERT INTO engage_messages (id, organization_id, channel, to_address, subject,
                    body, status, manual, attempts, next_attempt_at, rfc_message_id, open_count,
                    click_count, created_at, updated_at)
                SELECT gen_random_uuid(), :org, 'EMAIL', 'rcpt' || n || '@example.com',
                    'Hello ' || n, 'Body of message ' || n || E'\\n\\nhttps://example.com/' || n,
                    :status, false, 0, now() - interval '1 second',
                    '<' || gen_random_uuid() || '@example.com>', 0, 0, now(), now()
                FROM generate_series(1, :count) AS n
                """
            ),
            {"org": org_id, "count": count, "status": status},
        )
    await engine.dispose()


def drain(
    url: str,
    port: int,
    workers: int,
    counter: Any,
    expected: int,
    profile: str | None = None,
) -> tuple[float, float]:
    """(seconds, worker CPU seconds)."""
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    cpu = ctx.Value("d", 0.0)
    dones = [ctx.Event() for _ in range(workers)]
    procs = [
        ctx.Process(target=worker_process, args=(url, port, start, done, cpu, profile))
        for done in dones
    ]
    for proc in procs:
        proc.start()
    time.sleep(2.0)  # let the processes import and connect before the clock starts
    began = time.perf_counter()
    start.set()
    for proc in procs:
        proc.join()
    elapsed = time.perf_counter() - began
    if counter.value != expected:
        print(f"warning: the sink received {counter.value} of {expected}")
    return elapsed, cpu.value


async def feed_count(url: str) -> int:
    engine = create_async_engine(url)
    async with engine.connect() as conn:
        count = await conn.scalar(
            text("SELECT count(*) FROM feed_messages WHERE source_key LIKE 'engage_message:%'")
        )
    await engine.dispose()
    return int(count or 0)


async def explain(url: str, org_id: uuid.UUID, rows: int) -> str:
    from salesplan.engage.delivery.worker import BATCH

    await queue_messages(url, org_id, rows, status="queued")
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.execute(text("ANALYZE engage_messages"))
        plan = await conn.execute(
            text(
                "EXPLAIN ANALYZE SELECT id FROM engage_messages WHERE next_attempt_at <= now() "
                "ORDER BY next_attempt_at LIMIT :n FOR UPDATE SKIP LOCKED"
            ),
            {"n": BATCH},
        )
        lines = [row[0] for row in plan]
    await engine.dispose()
    return "\n".join(lines)


async def setup(url: str) -> uuid.UUID:
    from salesplan.models import Base

    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
        org_id = uuid.uuid4()
        await conn.execute(
            text(
                "INSERT INTO organizations (id, name, slug, created_at, updated_at) "
                "VALUES (:id, 'Bench', :slug, now(), now())"
            ),
            {"id": org_id, "slug": f"bench-{org_id.hex[:8]}"},
        )
    await engine.dispose()
    return org_id


async def reset(url: str) -> None:
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.execute(text("DELETE FROM engage_messages"))
        await conn.execute(text("DELETE FROM feed_participants"))
        await conn.execute(text("DELETE FROM feed_messages"))
        await conn.execute(text("DELETE FROM feed_threads"))
    await engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=3000)
    parser.add_argument("--explain-rows", type=int, default=1_000_000)
    parser.add_argument("--sinks", type=int, default=2, help="SMTP sink processes")
    parser.add_argument("--workers", default="1,2", help="worker counts to measure, e.g. 1,2")
    parser.add_argument("--floor", action="store_true", help="also a bare aiosmtplib sender")
    parser.add_argument(
        "--profile",
        choices=["pyinstrument", "cprofile"],
        help="profile a one-worker drain: wall time by call tree, or CPU by function",
    )
    args = parser.parse_args()

    base = make_url(BASE_URL)
    name = f"salesplan_bench_delivery_{uuid.uuid4().hex[:8]}"
    url = base.set(database=name).render_as_string(hide_password=False)

    async def create() -> None:
        admin = create_async_engine(base, isolation_level="AUTOCOMMIT")
        async with admin.connect() as conn:
            await conn.execute(text(f'CREATE DATABASE "{name}"'))
        await admin.dispose()

    async def drop() -> None:
        admin = create_async_engine(base, isolation_level="AUTOCOMMIT")
        async with admin.connect() as conn:
            await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        await admin.dispose()

    asyncio.run(create())
    ctx = multiprocessing.get_context("spawn")
    counter = ctx.Value("i", 0)
    port = free_port()
    sinks = []
    for _ in range(args.sinks):
        ready = ctx.Event()
        sink = ctx.Process(target=sink_process, args=(port, ready, counter), daemon=True)
        sink.start()
        ready.wait(10)
        sinks.append(sink)
    try:
        org_id = asyncio.run(setup(url))
        results = {}
        counts = [int(n) for n in args.workers.split(",") if n]
        for workers in counts:
            asyncio.run(reset(url))
            counter.value = 0
            asyncio.run(queue_messages(url, org_id, args.messages, status="queued"))
            before = load()
            elapsed, cpu = drain(url, port, workers, counter, args.messages)
            results[workers] = args.messages / elapsed
            recorded = asyncio.run(feed_count(url))
            print(
                f"{workers} worker(s): {args.messages} messages in {elapsed:.2f} s = "
                f"{results[workers]:.0f} messages/s; worker CPU {1000 * cpu / args.messages:.2f} "
                f"ms/message; feed entries {recorded}; {before} -> {load()}",
                flush=True,
            )
        if 1 in results and 2 in results:
            print(f"two workers / one worker: {results[2] / results[1]:.2f}x")
        if args.floor:
            from salesplan.engage.delivery.transports import SMTP_CONNECTIONS

            before = load()
            rate = smtp_floor(port, args.messages, SMTP_CONNECTIONS)
            print(
                f"floor (bare aiosmtplib, {SMTP_CONNECTIONS} connections, no database): "
                f"{rate:.0f} messages/s; {before} -> {load()}",
                flush=True,
            )
        if args.profile:
            asyncio.run(reset(url))
            counter.value = 0
            asyncio.run(queue_messages(url, org_id, args.messages, status="queued"))
            suffix = ".cprofile" if args.profile == "cprofile" else ".txt"
            report = Path(f"/tmp/salesplan-bench-delivery-{uuid.uuid4().hex[:8]}{suffix}")
            drain(url, port, 1, counter, args.messages, profile=str(report))
            print(f"\nprofile of a one-worker drain ({report}):")
            print(report.read_text())
        if args.explain_rows:
            asyncio.run(reset(url))
            print(f"\nclaim query with {args.explain_rows:,} queued rows:")
            print(asyncio.run(explain(url, org_id, args.explain_rows)))
    finally:
        for sink in sinks:
            sink.terminate()
        asyncio.run(drop())


if __name__ == "__main__":
    main()
