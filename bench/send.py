"""sendEngageMessage throughput, in process: N sends at C at once through the whole app (httpx's
ASGI transport: middleware, auth, idempotency, the outbox write), with a plain subject and body,
and with a template rendered for a contact (the render pool, contract §12).

    .venv/bin/python bench/send.py [--sends 2000] [--concurrency 32] \
        [--database-url postgresql+asyncpg://postgres@127.0.0.1:5432/postgres]

A throwaway database is created beside the given one and dropped at the end. A before/after run
of two trees: run it from each (`PYTHONPATH=<tree>/src`). No worker runs: the sends stay queued.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
import uuid
from pathlib import Path

import httpx
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from salesplan.app import create_app
from salesplan.config import Settings
from salesplan.migrate import upgrade_connection
from salesplan.models.crm import Account, Contact


def children_cpu() -> float:
    """CPU seconds of this process's live children (the render pool's sandbox processes)."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def cpu() -> float:
    return time.process_time() + children_cpu()


async def run(
    client: httpx.AsyncClient, headers: dict, body: dict, sends: int, concurrency: int, tag: str
) -> tuple[float, float]:
    """(sends per second, CPU ms per send of this process and its children)."""
    numbers = iter(range(sends))

    async def lane() -> None:
        for number in numbers:
            response = await client.post(
                "/api/v1/engage/messages/send",
                json=body,
                headers=headers | {"Idempotency-Key": f"{tag}-{number}"},
            )
            assert response.status_code == 202, response.text

    started, cpu_started = time.perf_counter(), cpu()
    await asyncio.gather(*(lane() for _ in range(concurrency)))
    return sends / (time.perf_counter() - started), (cpu() - cpu_started) * 1000 / sends


async def main(database_url: str, sends: int, concurrency: int, rounds: int) -> None:
    url = make_url(database_url)
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
            smtp_from="sales@bench.example",
            _env_file=None,  # type: ignore[call-arg]
        )
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            from salesplan.auth.tokens import create_api_key
            from salesplan.organizations.service import add_user, create_organization

            async with app.state.sessionmaker() as session:
                org = await create_organization(session, name="Bench")
                user = await add_user(
                    session, organization_id=org.id, email="bench@example.com", password="x" * 12
                )
                _, key = await create_api_key(session, user_id=user.id, name="bench")
                account = Account(organization_id=org.id, name="Acme")
                session.add(account)
                await session.flush()
                contact = Contact(
                    organization_id=org.id,
                    account_id=account.id,
                    first_name="Ada",
                    last_name="Lovelace",
                    email="ada@bench.example",
                )
                session.add(contact)
                await session.commit()
            headers = {"Authorization": f"Bearer {key}"}
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
                tpl = await client.post(
                    "/api/v1/engage/templates",
                    json={
                        "name": "T",
                        "channel": "EMAIL",
                        "subject": "Hi {{ contact.firstName }}",
                        "body": "Hello {{ contact.fullName }} of {{ account.name }},\n"
                        "{{ sender.fullName }}",
                    },
                    headers=headers,
                )
                assert tpl.status_code == 201, tpl.text
                plain = {"channel": "EMAIL", "to": "ada@bench.example", "subject": "Hi"}
                plain["body"] = "Hello"
                templated = {
                    "channel": "EMAIL",
                    "contactId": str(contact.id),
                    "templateId": tpl.json()["id"],
                }
                await run(client, headers, plain, 200, concurrency, "warm-p")
                await run(client, headers, templated, 200, concurrency, "warm-t")
                for round_ in range(rounds):
                    p, p_cpu = await run(client, headers, plain, sends, concurrency, f"p{round_}")
                    t, t_cpu = await run(
                        client, headers, templated, sends, concurrency, f"t{round_}"
                    )
                    print(
                        f"round {round_ + 1}: plain {p:5.0f} sends/s {p_cpu:5.2f} cpu ms/send"
                        f"   template {t:5.0f} sends/s {t_cpu:5.2f} cpu ms/send"
                    )
    finally:
        async with admin.connect() as conn:
            await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        await admin.dispose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--database-url", default="postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
    )
    parser.add_argument("--sends", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.database_url, args.sends, args.concurrency, args.rounds))
