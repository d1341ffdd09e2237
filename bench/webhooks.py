"""Outbound webhooks (contract §13): what recording an event adds to a write, and deliveries per
second to a local receiver. In process (httpx's ASGI transport: middleware, auth, the service,
the outbox write), on a throwaway database beside the given one.

    .venv/bin/python bench/webhooks.py [--writes 2000] [--concurrency 16] [--rounds 3] \
        [--events 3000] [--database-url postgresql+asyncpg://postgres@127.0.0.1:5432/postgres]

1. Write cost: patchAccount in two organizations alike but for one thing: "none" has no
   endpoint, "subscribed" has one enabled endpoint receiving every event type. Rounds alternate
   none/subscribed; the figure is the subscribed write's CPU ms and wall time as a ratio to the
   unsubscribed one's (target ≤ 1.10).
2. Delivery: `--events` events queued for 1 endpoint and for 4 endpoints, drained by the
   delivery job kind to a loopback receiver (an asyncio HTTP/1.1 server answering 204): deliveries
   per second.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from typing import Any

import httpx
from sqlalchemy import func, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from salesplan.app import create_app
from salesplan.config import Settings
from salesplan.migrate import upgrade_connection
from salesplan.models.webhooks import WebhookDelivery
from salesplan.webhooks import events
from salesplan.webhooks.delivery import run_webhook_delivery, settle
from salesplan.worker.context import WorkerContext


class Receiver:
    """HTTP/1.1 with keep-alive: reads each request's body, answers 204."""

    def __init__(self) -> None:
        self.count = 0
        self.server: Any = None

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await reader.readexactly(length)
                self.count += 1
                writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            writer.close()

    async def start(self) -> str:
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/hook"


async def writes(
    client: httpx.AsyncClient, headers: dict[str, str], account_id: str, n: int, c: int
) -> tuple[float, float]:
    """(wall ms per write at `c` at once, CPU ms per write)."""
    numbers = iter(range(n))

    async def lane() -> None:
        for number in numbers:
            resp = await client.patch(
                f"/api/v1/accounts/{account_id}", json={"name": f"Acme {number}"}, headers=headers
            )
            assert resp.status_code == 200, resp.text

    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(lane() for _ in range(c)))
    return (time.perf_counter() - started) * 1000 / n, (time.process_time() - cpu) * 1000 / n


async def drain(ctx: WorkerContext, app: Any) -> float:
    """Deliver everything due; deliveries per second."""
    async with app.state.sessionmaker() as session:
        pending = await session.scalar(
            select(func.count())
            .select_from(WebhookDelivery)
            .where(WebhookDelivery.status == "pending")
        )
    started = time.perf_counter()
    # The kind starts one lane per free slot; each lane drains its endpoint's backlog.
    while await run_webhook_delivery(ctx):
        await settle(ctx)
    return float(pending or 0) / (time.perf_counter() - started)


async def main(args: argparse.Namespace) -> None:
    url = make_url(args.database_url)
    name = f"salesplan_bench_{uuid.uuid4().hex[:10]}"
    admin = create_async_engine(url, isolation_level="AUTOCOMMIT")
    async with admin.connect() as conn:
        await conn.execute(text(f'CREATE DATABASE "{name}"'))
    target = url.set(database=name).render_as_string(hide_password=False)
    try:
        engine = create_async_engine(target)
        async with engine.begin() as conn:
            await conn.run_sync(upgrade_connection)
        await engine.dispose()
        settings = Settings(
            database_url=target,
            secret_key="bench",
            rate_limits_enabled=False,
            worker_in_process=False,
            public_url="http://127.0.0.1:8000",  # loopback: the local receiver is allowed
            _env_file=None,  # type: ignore[call-arg]
        )
        receiver = Receiver()
        hook = await receiver.start()
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            from salesplan.auth.tokens import create_api_key
            from salesplan.organizations.service import add_user, create_organization

            keys: dict[str, str] = {}
            orgs: dict[str, uuid.UUID] = {}
            async with app.state.sessionmaker() as session:
                for tag in ("none", "subscribed"):
                    org = await create_organization(session, name=tag)
                    user = await add_user(
                        session,
                        organization_id=org.id,
                        email=f"{tag}@bench.example",
                        password="x" * 12,
                        role="admin",
                    )
                    _, keys[tag] = await create_api_key(session, user_id=user.id, name=tag)
                    orgs[tag] = org.id
                await session.commit()
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
                accounts = {}
                for tag, key in keys.items():
                    h = {"Authorization": f"Bearer {key}"}
                    made = await client.post("/api/v1/accounts", json={"name": "Acme"}, headers=h)
                    accounts[tag] = made.json()["id"]
                sub = {"Authorization": f"Bearer {keys['subscribed']}"}
                made = await client.post(
                    "/api/v1/webhooks/endpoints", json={"url": hook}, headers=sub
                )
                assert made.status_code == 201, made.text
                for tag in keys:  # warm-up
                    await writes(
                        client,
                        {"Authorization": f"Bearer {keys[tag]}"},
                        accounts[tag],
                        200,
                        args.concurrency,
                    )
                totals = {"off": [0.0, 0.0], "none": [0.0, 0.0], "subscribed": [0.0, 0.0]}
                real_record_many = events.record_many

                async def off(*_: Any) -> int:
                    return 0

                for round_ in range(args.rounds):
                    line = []
                    for tag in ("off", "none", "subscribed"):
                        # "off": the outbox not called at all (the write before webhooks).
                        events.record_many = off if tag == "off" else real_record_many  # type: ignore[assignment]
                        wall, cpu = await writes(
                            client,
                            {"Authorization": f"Bearer {keys[tag if tag != 'off' else 'none']}"},
                            accounts[tag if tag != "off" else "none"],
                            args.writes,
                            args.concurrency,
                        )
                        totals[tag][0] += wall
                        totals[tag][1] += cpu
                        line.append(f"{tag} {wall:5.3f} ms/write {cpu:5.3f} cpu ms")
                    print(f"round {round_ + 1}: " + "   ".join(line))
                events.record_many = real_record_many  # type: ignore[assignment]
                none, subscribed, before = totals["none"], totals["subscribed"], totals["off"]
                print(
                    f"patchAccount without an endpoint / without the outbox: "
                    f"wall {none[0] / before[0]:.3f}, cpu {none[1] / before[1]:.3f}"
                )
                print(
                    f"patchAccount with one subscribed endpoint / without: "
                    f"wall {subscribed[0] / none[0]:.3f}, cpu {subscribed[1] / none[1]:.3f} "
                    f"({args.rounds} rounds x {args.writes} writes at {args.concurrency} at once)"
                )
            ctx = WorkerContext(
                settings=settings,
                engine=app.state.engine,
                sessionmaker=app.state.sessionmaker,
                worker_id="bench",
            )
            await drain(ctx, app)  # what the write rounds queued
            for endpoints in (1, 4):
                async with app.state.sessionmaker() as session:
                    await session.execute(text("DELETE FROM webhook_deliveries"))
                    await session.execute(text("DELETE FROM webhook_endpoints"))
                    await session.commit()
                async with httpx.AsyncClient(
                    transport=transport, base_url="http://bench"
                ) as client:
                    for _ in range(endpoints):
                        await client.post(
                            "/api/v1/webhooks/endpoints", json={"url": hook}, headers=sub
                        )
                async with app.state.sessionmaker() as session:
                    batch = [
                        (orgs["subscribed"], "account.updated", {"id": str(uuid.uuid4()), "n": n})
                        for n in range(args.events)
                    ]
                    await events.record_many(session, batch)
                    await session.commit()
                before = receiver.count
                rate = await drain(ctx, app)
                print(
                    f"delivery: {endpoints} endpoint(s), {receiver.count - before} deliveries, "
                    f"{rate:,.0f} deliveries/s"
                )
            ctx.stopping.set()
            await asyncio.sleep(0)
        receiver.server.close()
    finally:
        async with admin.connect() as conn:
            await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        await admin.dispose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--database-url", default="postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
    )
    parser.add_argument("--writes", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--events", type=int, default=3000)
    asyncio.run(main(parser.parse_args()))
