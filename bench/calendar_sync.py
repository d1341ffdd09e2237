"""Calendar sync against a local Radicale: the first sync of N events (default 5,000) and an
incremental sync after 10 of them changed (only those should be transferred), with the
incremental sync's breakdown and the floor: Radicale's own answer to the sync-collection REPORT
(it reads every item of the collection to answer it), timed with a bare HTTP client.

    .venv/bin/python bench/calendar_sync.py [--events 5000] [--changes 10] \
        [--database-url postgresql+asyncpg://postgres@127.0.0.1:5432/postgres]

Radicale runs as a subprocess on a free loopback port with a temporary storage folder; the
database is a temporary SQLite file unless a PostgreSQL URL is given (a throwaway database is
created beside it and dropped at the end).
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import argparse
import asyncio
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from sqlalchemy import func, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine


from salesplan.calendar.crypto import encrypt_password  # noqa: E402
from salesplan.calendar import provider  # noqa: E402
from salesplan.calendar.provider import CalDAVCalendar  # noqa: E402
from salesplan.calendar.sync import sync_connection  # noqa: E402
from salesplan.config import Settings  # noqa: E402
from salesplan.db import create_engine, create_sessionmaker  # noqa: E402
from salesplan.events import handlers  # noqa: E402
from salesplan.kit import outbound  # noqa: E402
from salesplan.models import Base  # noqa: E402
from salesplan.models.calendar import CalendarConnection, CalendarEvent  # noqa: E402
from salesplan.organizations.service import add_user, create_organization  # noqa: E402
from salesplan.worker.context import WorkerContext  # noqa: E402
from tests.calendar.radicale_server import ics_event, start_radicale  # noqa: E402


def vevent(uid: str, title: str, start: datetime) -> str:
    body = ics_event(uid, title=title, start=start, attendees=("guest@example.com",))
    return body.split("BEGIN:VEVENT", 1)[1].split("END:VEVENT", 1)[0]


async def timed_sync(
    ctx: WorkerContext, connection_id: uuid.UUID, timings: dict[str, float] | None = None
) -> tuple[float, int]:
    async with ctx.sessionmaker() as s, s.begin():
        conn = await s.get(CalendarConnection, connection_id)
        assert conn is not None
        conn.lease_owner = ctx.worker_id
        conn.lease_until = datetime.now(UTC) + timedelta(minutes=5)
    began = time.perf_counter()
    transferred = await sync_connection(ctx, connection_id, timings)
    return time.perf_counter() - began, transferred


def change(client: CalDAVCalendar, hrefs: list[str], label: str) -> None:
    for i, href in enumerate(hrefs):
        current = client.get(href)
        assert current is not None
        etag, ics = current
        client.put(href, ics.replace("SUMMARY:", f"SUMMARY:{label} {i} "), etag)


def radicale_answer(url: str, token: str, auth: tuple[str, str]) -> float:
    """Seconds Radicale takes to answer a sync-collection REPORT (credentials sent up front,
    nothing of ours in the way): it reads the ETag of every item of the collection whatever
    changed, so this is the floor of an incremental sync."""
    body = (
        '<?xml version="1.0" encoding="utf-8"?><d:sync-collection xmlns:d="DAV:">'
        f"<d:sync-token>{token}</d:sync-token><d:sync-level>1</d:sync-level>"
        "<d:prop><d:getetag/></d:prop></d:sync-collection>"
    )
    began = time.perf_counter()
    r = httpx.request("REPORT", url, content=body, auth=auth, timeout=60)
    assert r.status_code == 207, r.status_code
    return time.perf_counter() - began


def breakdown(timings: dict[str, float]) -> str:
    names = ("known", "listing", "fetch", "parse", "provider_other", "store")
    return ", ".join(f"{n} {timings.get(n, 0) * 1000:.0f} ms" for n in names)


async def main(n_events: int, n_changes: int, database_url: str | None, n_rounds: int = 3) -> None:
    tmp = Path(tempfile.mkdtemp())
    radicale = start_radicale(tmp / "radicale")
    admin = None
    target = f"sqlite+aiosqlite:///{tmp / 'bench.db'}"
    if database_url and make_url(database_url).get_backend_name() == "postgresql":
        name = f"salesplan_bench_{uuid.uuid4().hex[:10]}"
        admin = create_async_engine(make_url(database_url), isolation_level="AUTOCOMMIT")
        async with admin.connect() as conn:
            await conn.execute(text(f'CREATE DATABASE "{name}"'))
        target = make_url(database_url).set(database=name).render_as_string(hide_password=False)
    try:
        url = radicale.new_calendar()
        now = datetime.now(UTC).replace(microsecond=0)
        uids = [str(uuid.uuid4()) for _ in range(n_events)]
        whole = (
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\n"
            + "".join(
                "BEGIN:VEVENT"
                + vevent(uid, f"Event {i}", now + timedelta(minutes=17 * i))
                + "END:VEVENT\r\n"
                for i, uid in enumerate(uids)
            )
            + "END:VCALENDAR\r\n"
        )
        began = time.perf_counter()
        r = httpx.put(
            url,
            content=whole,
            auth=radicale.auth(),
            timeout=600,
            headers={"Content-Type": "text/calendar"},
        )
        assert r.status_code in (201, 204), r.text
        print(f"upload: {n_events} events into Radicale in {time.perf_counter() - began:.1f} s")

        settings = Settings(database_url=target, secret_key="bench", _env_file=None)  # type: ignore[call-arg]
        engine = create_engine(settings)
        async with engine.begin() as conn:
            await conn.run_sync(Base.metadata.create_all)
        sessionmaker = create_sessionmaker(engine, handlers())
        async with sessionmaker() as s:
            org = await create_organization(s, name="Bench")
            user = await add_user(
                s,
                organization_id=org.id,
                email="bench@example.com",
                password="x" * 12,
                role="admin",
            )
            conn_row = CalendarConnection(
                organization_id=org.id,
                user_id=user.id,
                url=url,
                username="alice",
                password_encrypted=encrypt_password(settings.signing_key, "alice-pass"),
            )
            s.add(conn_row)
            await s.commit()
            connection_id = conn_row.id
        ctx = WorkerContext(settings, engine, sessionmaker, worker_id="bench")

        seconds, transferred = await timed_sync(ctx, connection_id)
        async with sessionmaker() as s:
            stored = await s.scalar(select(func.count()).select_from(CalendarEvent))
        print(
            f"first sync: {transferred} objects transferred, {stored} events stored, {seconds:.2f} s"
        )

        client = CalDAVCalendar(url, "alice", "alice-pass", outbound.policy(settings))
        hrefs = sorted(client.sync_collection(None).changed)[:n_changes]
        rounds: dict[str, list[tuple[float, dict[str, float]]]] = {"now": [], "before": []}
        for r in range(n_rounds):
            for mode in ("now", "before"):
                change(client, hrefs, f"Changed {mode} {r}")
                if mode == "before":
                    # Credentials held back until the server asks, as before this change:
                    # every sync paid a 401 first, which Radicale delays by 0.5 to 1.5 s.
                    provider._BASIC.clear()
                timings: dict[str, float] = {}
                seconds, transferred = await timed_sync(ctx, connection_id, timings)
                assert transferred == len(hrefs), transferred
                rounds[mode].append((seconds, timings))
        async with sessionmaker() as s:
            changed = await s.scalar(
                select(func.count())
                .select_from(CalendarEvent)
                .where(CalendarEvent.title.like(f"Changed before {n_rounds - 1}%"))
            )
            token = (await s.get(CalendarConnection, connection_id)).sync_token  # type: ignore[union-attr]
        floor = sorted(radicale_answer(url, token, radicale.auth()) for _ in range(5))[2]
        for mode, label in (
            ("now", "incremental sync"),
            ("before", "incremental sync, credentials only after a 401 (as before)"),
        ):
            runs = sorted(rounds[mode], key=lambda x: x[0])
            seconds, timings = runs[len(runs) // 2]
            print(
                f"{label}, {n_changes} changes, median of {n_rounds}: {seconds * 1000:.0f} ms "
                f"(runs: {', '.join(f'{x[0] * 1000:.0f}' for x in runs)} ms; target < 1 s)"
            )
            print(f"  breakdown: {breakdown(timings)}")
        print(f"  {changed} changed events stored by the last round")
        print(f"floor: Radicale answers a sync-collection REPORT in {floor * 1000:.0f} ms (median)")
        await engine.dispose()
    finally:
        radicale.process.terminate()
        radicale.process.wait(timeout=10)
        if admin is not None:
            async with admin.connect() as conn:
                await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            await admin.dispose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--changes", type=int, default=10)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.events, args.changes, args.database_url, args.rounds))
