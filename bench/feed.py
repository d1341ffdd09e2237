"""The feed on PostgreSQL: getAccountInbox (first page, and a keyset page 100 deep) and
getCommunicationAnalytics (90 days, by day) for an account with 50,000 messages, at one
connection (sequential requests over one keep-alive connection to `salesplan serve`, 1 worker).

    .venv/bin/python bench/feed.py [--messages 50000] [--noise-threads 30000] [--requests 200] \
        [--database-url postgresql+asyncpg://postgres@127.0.0.1:5432/test] [--explain FILE] \
        [--wrk-seconds 5]

Creates a throwaway database beside the given URL, migrates it, generates the data with
INSERT … SELECT generate_series, prints p50/p90/p99 per read and the EXPLAIN ANALYZE of the
inbox and analytics queries, and drops the database.

Against the floor, as bench/run.py: the bare Starlette app (bench/floor_app.py, same server
program and worker count, its own process, measured in the same run just before the app) is
timed the same way, and each read is also driven by wrk at one connection for `--wrk-seconds`;
the table gives each read's requests/s and its ratio to the bare floor's (0 skips wrk).

The account's 50,000 messages: 20,000 e-mail threads (an outbound engage message each, half of
them answered by an engage reply: 30,000 messages), 4,000 Slack threads of 4 messages (16,000)
and 4,000 meetings (4,000), over 120 days, with 50 contacts at the account's domain. The same
organization holds `--noise-threads` one-message threads of 300 other accounts (other domains),
interleaved in time, so that attribution has to skip them.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import argparse
import asyncio
import json
import statistics
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from bench.harness import run_wrk, serve, serve_floor
from sqlalchemy import event, text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from salesplan.auth.principal import RequestContext
from salesplan.config import Settings
from salesplan.db import create_engine, create_sessionmaker
from salesplan.events import handlers
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.ratelimit.policy import GROUPS

SECRET = "bench-feed-secret-key"
FLOOR = "floor: bare Starlette /floor"
IN_APP_FLOOR = "in-app floor /_bench/floor"
HUGE = 10**9

# Each statement is one INSERT … SELECT over generate_series; :org, :acct, :now bound.
SEED = [
    # contacts c0..c49@big.example
    """INSERT INTO contacts (id, organization_id, account_id, first_name, last_name, email,
        created_at, updated_at)
       SELECT md5('contact' || g)::uuid, :org, :acct, 'C' || g, 'Big', 'c' || g || '@big.example',
              :now, :now FROM generate_series(0, 49) g""",
    # engage messages: 20,000 sent e-mails over 120 days, every other one answered after g%7 h
    """INSERT INTO engage_messages (id, organization_id, channel, to_address, subject, body, status,
        manual, attempts, rfc_message_id, sent_at, replied_at, open_count, click_count,
        created_at, updated_at)
       SELECT md5('em' || g)::uuid, :org, 'EMAIL', 'c' || (g % 50) || '@big.example',
              'Subject ' || g, 'Body of message ' || g, 'sent', false, 1,
              '<em' || g || '@bench.example>',
              :now - (g * interval '518 seconds'),
              CASE WHEN g % 2 = 0 THEN :now - (g * interval '518 seconds')
                                        + ((g % 7) + 1) * interval '1 hour' END,
              0, 0, :now - (g * interval '518 seconds'), :now
       FROM generate_series(0, :emails - 1) g""",
    """INSERT INTO engage_replies (id, organization_id, message_id, from_address, subject, text,
        rfc_message_id, received_at, created_at)
       SELECT md5('er' || g)::uuid, :org, md5('em' || g)::uuid, 'c' || (g % 50) || '@big.example',
              'Re: Subject ' || g, 'Reply ' || g, '<er' || g || '@big.example>',
              :now - (g * interval '518 seconds') + ((g % 7) + 1) * interval '1 hour',
              :now - (g * interval '518 seconds') + ((g % 7) + 1) * interval '1 hour'
       FROM generate_series(0, :emails - 1, 2) g""",
    # e-mail threads of the feed
    """INSERT INTO feed_threads (id, organization_id, kind, thread_key, subject, snippet,
        message_count, last_activity_at, last_inbound_at, last_outbound_at, created_at, updated_at)
       SELECT md5('ft-e' || g)::uuid, :org, 'email', '<em' || g || '@bench.example>',
              'Subject ' || g, 'Body of message ' || g, CASE WHEN g % 2 = 0 THEN 2 ELSE 1 END,
              :now - (g * interval '518 seconds')
                + CASE WHEN g % 2 = 0 THEN ((g % 7) + 1) * interval '1 hour' ELSE interval '0' END,
              CASE WHEN g % 2 = 0 THEN :now - (g * interval '518 seconds')
                                        + ((g % 7) + 1) * interval '1 hour' END,
              :now - (g * interval '518 seconds'), :now, :now
       FROM generate_series(0, :emails - 1) g""",
    """INSERT INTO feed_messages (id, organization_id, thread_id, kind, direction, source_key,
        subject, text, occurred_at, created_at)
       SELECT md5('fm-eo' || g)::uuid, :org, md5('ft-e' || g)::uuid, 'email', 'outbound',
              'engage_message:' || md5('em' || g)::uuid, 'Subject ' || g, 'Body of message ' || g,
              :now - (g * interval '518 seconds'), :now
       FROM generate_series(0, :emails - 1) g""",
    """INSERT INTO feed_messages (id, organization_id, thread_id, kind, direction, source_key,
        author_email, subject, text, occurred_at, created_at)
       SELECT md5('fm-ei' || g)::uuid, :org, md5('ft-e' || g)::uuid, 'email', 'inbound',
              'engage_reply:' || md5('er' || g)::uuid, 'c' || (g % 50) || '@big.example',
              'Re: Subject ' || g, 'Reply ' || g,
              :now - (g * interval '518 seconds') + ((g % 7) + 1) * interval '1 hour', :now
       FROM generate_series(0, :emails - 1, 2) g""",
    """INSERT INTO feed_participants (thread_id, email, organization_id, domain)
       SELECT md5('ft-e' || g)::uuid, 'c' || (g % 50) || '@big.example', :org, 'big.example'
       FROM generate_series(0, :emails - 1) g""",
    # Slack: threads of 4 messages (customer, rep, customer, rep)
    """INSERT INTO feed_threads (id, organization_id, kind, thread_key, snippet, message_count,
        last_activity_at, last_inbound_at, last_outbound_at, created_at, updated_at)
       SELECT md5('ft-s' || g)::uuid, :org, 'slack', 'C0BIG:' || g, 'Slack answer ' || g, 4,
              :now - (g * interval '2591 seconds') + interval '30 minutes',
              :now - (g * interval '2591 seconds') + interval '20 minutes',
              :now - (g * interval '2591 seconds') + interval '30 minutes', :now, :now
       FROM generate_series(0, :slack_threads - 1) g""",
    """INSERT INTO feed_messages (id, organization_id, thread_id, kind, direction, source_key,
        author_email, text, occurred_at, slack_channel, slack_ts, created_at)
       SELECT md5('fm-s' || g || '-' || k)::uuid, :org, md5('ft-s' || g)::uuid, 'slack',
              CASE WHEN k % 2 = 0 THEN 'inbound' ELSE 'outbound' END, 'slack:Ev' || g || '-' || k,
              CASE WHEN k % 2 = 0 THEN 'c' || (g % 50) || '@big.example'
                   ELSE 'rep@salesplan-bench.example' END,
              'Slack message ' || k, :now - (g * interval '2591 seconds') + k * interval '10 minutes',
              'C0BIG', g || '.' || k, :now
       FROM generate_series(0, :slack_threads - 1) g, generate_series(0, 3) k""",
    """INSERT INTO feed_participants (thread_id, email, organization_id, domain)
       SELECT md5('ft-s' || g)::uuid, e, :org, split_part(e, '@', 2)
       FROM generate_series(0, :slack_threads - 1) g,
            LATERAL (VALUES ('c' || (g % 50) || '@big.example'),
                            ('rep@salesplan-bench.example')) v(e)""",
    # meetings of the bench user
    """INSERT INTO calendar_connections (id, organization_id, user_id, url, username,
        password_encrypted, created_at, updated_at)
       VALUES (md5('conn')::uuid, :org, :user, 'https://calendar.invalid/', 'u', 'x', :now, :now)""",
    """INSERT INTO calendar_events (id, organization_id, connection_id, user_id, href, uid,
        recurrence_key, title, start_at, end_at, all_day, attendees, created_at, updated_at)
       SELECT md5('ce' || g)::uuid, :org, md5('conn')::uuid, :user, 'e' || g || '.ics', 'u' || g,
              '', 'Meeting ' || g, :now - (g * interval '2591 seconds'),
              :now - (g * interval '2591 seconds') + interval '1 hour', false,
              jsonb_build_array(jsonb_build_object('email', 'c' || (g % 50) || '@big.example')),
              :now, :now
       FROM generate_series(0, :meetings - 1) g""",
    """INSERT INTO feed_threads (id, organization_id, kind, thread_key, subject, snippet,
        message_count, last_activity_at, calendar_event_id, created_at, updated_at)
       SELECT md5('ft-c' || g)::uuid, :org, 'calendar', md5('ce' || g)::uuid::text,
              'Meeting ' || g, '', 1, :now - (g * interval '2591 seconds'), md5('ce' || g)::uuid,
              :now, :now
       FROM generate_series(0, :meetings - 1) g""",
    """INSERT INTO feed_messages (id, organization_id, thread_id, kind, direction, source_key,
        subject, text, occurred_at, created_at)
       SELECT md5('fm-c' || g)::uuid, :org, md5('ft-c' || g)::uuid, 'calendar', 'outbound',
              'calendar:' || md5('ce' || g)::uuid, 'Meeting ' || g, '',
              :now - (g * interval '2591 seconds'), :now
       FROM generate_series(0, :meetings - 1) g""",
    """INSERT INTO feed_participants (thread_id, email, organization_id, domain)
       SELECT md5('ft-c' || g)::uuid, 'c' || (g % 50) || '@big.example', :org, 'big.example'
       FROM generate_series(0, :meetings - 1) g""",
    # noise: one-message threads of 300 other domains, interleaved in time
    """INSERT INTO feed_threads (id, organization_id, kind, thread_key, subject, snippet,
        message_count, last_activity_at, created_at, updated_at)
       SELECT md5('ft-n' || g)::uuid, :org, 'email', '<n' || g || '@bench.example>',
              'Noise ' || g, 'Noise', 1, :now - (g * interval '345 seconds'), :now, :now
       FROM generate_series(0, :noise - 1) g""",
    """INSERT INTO feed_messages (id, organization_id, thread_id, kind, direction, source_key,
        text, occurred_at, created_at)
       SELECT md5('fm-n' || g)::uuid, :org, md5('ft-n' || g)::uuid, 'email', 'outbound',
              'noise:' || g, 'Noise', :now - (g * interval '345 seconds'), :now
       FROM generate_series(0, :noise - 1) g""",
    """INSERT INTO feed_participants (thread_id, email, organization_id, domain)
       SELECT md5('ft-n' || g)::uuid, 'p' || g || '@noise' || (g % 300) || '.example', :org,
              'noise' || (g % 300) || '.example'
       FROM generate_series(0, :noise - 1) g""",
    "ANALYZE",
]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def timed(client: httpx.Client, path: str, n: int) -> dict[str, float]:
    for _ in range(10):  # warm up
        assert client.get(path).status_code == 200
    took = []
    for _ in range(n):
        began = time.perf_counter()
        r = client.get(path)
        took.append((time.perf_counter() - began) * 1000)
        assert r.status_code == 200, r.text
    return {
        "p50": statistics.median(took),
        "p90": pct(took, 90),
        "p99": pct(took, 99),
    }


async def seed(url: str, counts: dict[str, int]) -> dict[str, Any]:
    from salesplan.auth.tokens import create_api_key
    from salesplan.models.crm import Account
    from salesplan.organizations.service import add_user, create_organization

    settings = Settings(database_url=url, secret_key=SECRET, _env_file=None)  # type: ignore[call-arg]
    engine = create_engine(settings)
    maker = create_sessionmaker(engine, handlers())
    async with maker() as s:
        org = await create_organization(s, name="Feed bench")
        user = await add_user(
            s,
            organization_id=org.id,
            email="rep@salesplan-bench.example",
            password="x" * 12,
            role="admin",
        )
        account = Account(organization_id=org.id, name="Big", domain="big.example")
        s.add(account)
        await s.flush()
        _, key = await create_api_key(s, user_id=user.id, name="bench")
        await s.commit()
        ids = {"org": org.id, "acct": account.id, "user": user.id}
    now = datetime.now(UTC).replace(microsecond=0)
    params = ids | counts | {"now": now}
    began = time.perf_counter()
    async with engine.begin() as conn:
        for sql in SEED:
            stmt = text(sql.replace(":now", "CAST(:now AS timestamptz)"))
            names = [k for k in params if f":{k}" in sql]
            await conn.execute(stmt, {k: params[k] for k in names})
    async with engine.connect() as conn:
        total = (
            await conn.execute(
                text(
                    "SELECT count(*) FROM feed_messages m JOIN feed_participants p "
                    "ON p.thread_id = m.thread_id AND p.domain = 'big.example'"
                )
            )
        ).scalar_one()
    print(f"seed: {total} messages of the account, in {time.perf_counter() - began:.1f} s")
    await engine.dispose()
    return ids | {"key": key, "messages": total}


async def in_process(
    url: str, ids: dict[str, Any], deep_cursor: str | None, n: int
) -> dict[str, dict[str, float]]:
    """The same reads as direct service calls (one session each, one pooled connection): the
    database's share of the HTTP figures."""
    from salesplan.feed import service

    settings = Settings(database_url=url, secret_key=SECRET, _env_file=None)  # type: ignore[call-arg]
    engine = create_engine(settings)
    maker = create_sessionmaker(engine, handlers())
    ctx = _ctx(ids)
    codec = _inbox_codec(settings, ids)
    runs = {
        "service: inbox first page": lambda s: service.account_inbox(
            s, ctx, ids["acct"], _params(None), codec
        ),
        "service: inbox page 101": lambda s: service.account_inbox(
            s, ctx, ids["acct"], _params(deep_cursor), codec
        ),
        "service: analytics 90 days": lambda s: service.analytics(
            s,
            ctx,
            start=datetime.now(UTC).date() - timedelta(days=89),
            end=None,
            granularity="day",
        ),
    }
    out = {}
    for label, run in runs.items():
        took = []
        for i in range(n + 10):
            began = time.perf_counter()
            async with maker() as s:
                await run(s)
            if i >= 10:
                took.append((time.perf_counter() - began) * 1000)
        out[label] = {"p50": statistics.median(took), "p90": pct(took, 90), "p99": pct(took, 99)}
    await engine.dispose()
    return out


def _inbox_codec(settings: Settings, ids: dict[str, Any]) -> CursorCodec:
    """The codec the inbox route binds to its path and organization (as `for_request` does)."""
    binding = f"/api/v1/accounts/{ids['acct']}/inbox\n{ids['org']}"
    return CursorCodec(settings.signing_key)._bound(lambda: binding)


def _ctx(ids: dict[str, Any]) -> RequestContext:
    return RequestContext.internal(ids["org"], ids["user"])


def _params(cursor: str | None) -> ListParams:
    return ListParams("cursor", 1, 50, cursor, "lastActivityAt", "desc", None)


async def explain(url: str, ids: dict[str, Any], deep_cursor: str | None) -> str:
    """EXPLAIN ANALYZE of the SQL the services run (captured from a direct service call)."""
    from salesplan.feed import service

    settings = Settings(database_url=url, secret_key=SECRET, _env_file=None)  # type: ignore[call-arg]
    engine = create_engine(settings)
    captured: list[tuple[str, Any]] = []

    @event.listens_for(engine.sync_engine, "before_cursor_execute")
    def grab(conn: Any, cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        captured.append((statement, parameters))

    ctx = _ctx(ids)
    codec = _inbox_codec(settings, ids)
    out = []
    maker = create_sessionmaker(engine, handlers())
    for label, run in (
        (
            "getAccountInbox, first page (limit 50)",
            lambda s: service.account_inbox(
                s,
                ctx,
                ids["acct"],
                ListParams("cursor", 1, 50, None, "lastActivityAt", "desc", None),
                codec,
            ),
        ),
        (
            "getAccountInbox, 100 pages deep (keyset)",
            lambda s: service.account_inbox(
                s,
                ctx,
                ids["acct"],
                ListParams("cursor", 1, 50, deep_cursor, "lastActivityAt", "desc", None),
                codec,
            ),
        ),
        (
            "getCommunicationAnalytics, 90 days by day",
            lambda s: service.analytics(
                s,
                ctx,
                start=datetime.now(UTC).date() - timedelta(days=89),
                end=None,
                granularity="day",
            ),
        ),
    ):
        captured.clear()
        async with maker() as s:
            try:
                await run(s)
            except Exception as exc:  # a deep cursor bound to the HTTP path: explain page 1
                out.append(f"-- {label}: {exc}")
                continue
        statements = list(captured)
        out.append(f"=== {label}")
        async with engine.connect() as conn:
            raw = await conn.get_raw_connection()
            driver = raw.driver_connection
            for sql, parameters in statements:
                if "feed_" not in sql and "engage_" not in sql and "calendar_" not in sql:
                    continue
                rows = await driver.fetch("EXPLAIN (ANALYZE, BUFFERS) " + sql, *(parameters or ()))
                out.append(sql.strip())
                out.extend(r[0] for r in rows)
                out.append("")
    await engine.dispose()
    return "\n".join(out)


async def main(args: argparse.Namespace) -> None:
    base = make_url(args.database_url)
    name = f"salesplan_bench_feed_{uuid.uuid4().hex[:8]}"
    admin = create_async_engine(base, isolation_level="AUTOCOMMIT")
    async with admin.connect() as conn:
        await conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = base.set(database=name).render_as_string(hide_password=False)
    try:
        from salesplan.migrate import upgrade

        await asyncio.to_thread(upgrade, url)
        emails = args.messages * 2 // 5  # 20,000 of 50,000: 1.5 messages each
        counts = {
            "emails": emails,
            "slack_threads": args.messages * 2 // 25,  # 4,000 × 4
            "meetings": args.messages * 2 // 25,  # 4,000
            "noise": args.noise_threads,
        }
        ids = await seed(url, counts)
        limits = json.dumps({g: {"read": HUGE, "write": HUGE} for g in GROUPS})
        env = {
            "SALESPLAN_DATABASE_URL": url,
            "SALESPLAN_SECRET_KEY": SECRET,
            "SALESPLAN_RATE_LIMITS": limits,
            "SALESPLAN_REDIS_URL": "",
            "SALESPLAN_WORKER_IN_PROCESS": "false",
        }
        inbox = f"/api/v1/accounts/{ids['acct']}/inbox"
        results = {}
        rps: dict[str, float] = {}
        auth = f"Bearer {ids['key']}"

        def loaded(url: str, label: str, bearer: str = "") -> None:
            if args.wrk_seconds > 0:
                run = run_wrk(url, connections=1, seconds=args.wrk_seconds, auth=bearer)
                if run.errors or run.non_2xx:
                    raise SystemExit(f"{label}: {run.errors} errors, {run.non_2xx} non-2xx")
                rps[label] = run.rps

        # The floor first, alone (never both servers at once on a small machine).
        with serve_floor(workers=1) as bare, httpx.Client(base_url=bare.url, timeout=30) as plain:
            results[FLOOR] = timed(plain, "/floor", args.requests)
            loaded(bare.url + "/floor", FLOOR)
        with (
            serve(env, workers=1) as server,
            httpx.Client(
                base_url=server.url,
                headers={"Authorization": f"Bearer {ids['key']}"},
                timeout=30,
            ) as client,
        ):
            cursor = None
            for _ in range(100):  # walk to the page 100 deep
                body = client.get(
                    inbox, params={"limit": 50} | ({"cursor": cursor} if cursor else {})
                ).json()
                cursor = body["pagination"]["nextCursor"]
            first = client.get(inbox, params={"limit": 50}).json()
            kinds = sorted({i["type"] for i in first["data"]})
            results["getAccountInbox first page"] = timed(
                client, f"{inbox}?limit=50", args.requests
            )
            results["getAccountInbox page 101 (keyset)"] = timed(
                client, f"{inbox}?limit=50&cursor={cursor}", args.requests
            )
            since = (datetime.now(UTC).date() - timedelta(days=89)).isoformat()
            stats_path = f"/api/v1/feed/analytics?from={since}&granularity=day"
            stats = client.get(stats_path).json()
            results["getCommunicationAnalytics 90 days by day"] = timed(
                client, stats_path, args.requests
            )
            results[IN_APP_FLOOR] = timed(client, "/_bench/floor", args.requests)
            loaded(server.url + "/_bench/floor", IN_APP_FLOOR)
            for label, path in (
                ("getAccountInbox first page", f"{inbox}?limit=50"),
                ("getAccountInbox page 101 (keyset)", f"{inbox}?limit=50&cursor={cursor}"),
                ("getCommunicationAnalytics 90 days by day", stats_path),
            ):
                loaded(server.url + path, label, auth)
        print(f"inbox kinds on page 1: {kinds}; analytics totals: {stats['totals']}")
        print(
            f"{'read (1 connection, ' + str(args.requests) + ' requests)':48} {'p50 ms':>8} {'p90':>8} {'p99':>8}"
            f" {'req/s':>8} {'ratio':>6}  target"
        )
        targets = {
            "getAccountInbox first page": "p50 ≤ 10",
            "getAccountInbox page 101 (keyset)": "p50 ≤ 10",
            "getCommunicationAnalytics 90 days by day": "p50 ≤ 50",
        }
        floor = rps.get(FLOOR)
        for label, r in results.items():
            per_s = f"{rps[label]:8.0f}" if label in rps else f"{'':8}"
            ratio = f"{rps[label] / floor:6.3f}" if floor and label in rps else f"{'':6}"
            print(
                f"{label:48} {r['p50']:8.2f} {r['p90']:8.2f} {r['p99']:8.2f} {per_s} {ratio}"
                f"  {targets.get(label, '')}"
            )
        if floor:
            print(
                f"req/s: wrk, 1 connection, {args.wrk_seconds} s each; ratio: to the bare "
                "Starlette floor (bench/floor_app.py) measured in this run"
            )
        results |= await in_process(url, ids, cursor, args.requests)
        for label, r in results.items():
            if label.startswith("service"):
                print(f"{label:48} {r['p50']:8.2f} {r['p90']:8.2f} {r['p99']:8.2f}")
        plans = await explain(url, ids, cursor)
        if args.explain:
            with open(args.explain, "w") as fh:
                fh.write(plans)
            print(f"EXPLAIN written to {args.explain}")
        else:
            print(plans)
    finally:
        async with admin.connect() as conn:
            await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        await admin.dispose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=50_000)
    parser.add_argument("--noise-threads", type=int, default=30_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument(
        "--database-url", default="postgresql+asyncpg://postgres@127.0.0.1:5432/test"
    )
    parser.add_argument("--explain", default=None)
    parser.add_argument("--wrk-seconds", type=int, default=5)
    asyncio.run(main(parser.parse_args()))
