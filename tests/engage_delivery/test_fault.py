"""A worker killed with SIGKILL in the middle of a batch loses no message, and re-sends only
what was in flight at the kill."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from sqlalchemy import select, update

from salesplan.engage.delivery.transports import SMTP_CONNECTIONS
from salesplan.engage.delivery.worker import run_delivery
from salesplan.kit.clock import utcnow
from salesplan.kit.ids import uuid7
from salesplan.models.engage_delivery import EngageMessage
from tests.engage_delivery.conftest import SmtpSink, worker_context

SRC = str(Path(__file__).resolve().parents[2] / "src")

WORKER = """
import asyncio, sys
from salesplan.config import Settings
from salesplan.db import create_engine, create_sessionmaker
from salesplan.events import handlers
from salesplan.engage.delivery.worker import run_delivery
from salesplan.worker.context import WorkerContext

async def main():
    settings = Settings(database_url=sys.argv[1], secret_key="test-secret-key-not-for-production",
                        smtp_host="127.0.0.1", smtp_port=int(sys.argv[2]),
                        smtp_from="sales@example.com", _env_file=None)
    engine = create_engine(settings)
    ctx = WorkerContext(settings=settings, engine=engine,
                        sessionmaker=create_sessionmaker(engine, handlers()), worker_id="doomed")
    while True:
        await run_delivery(ctx)
        await asyncio.sleep(0.05)

asyncio.run(main())
"""


class SlowSink(SmtpSink):
    """50 ms per message, and an event once ten have arrived."""

    reached: threading.Event

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        await asyncio.sleep(0.05)
        answer = await super().handle_DATA(server, session, envelope)
        if len(self.received) >= 10:
            self.reached.set()
        return answer


async def test_sigkill_mid_batch_loses_nothing_and_resends_only_in_flight(
    app, actor, db, smtp
) -> None:
    smtp.__class__ = SlowSink
    smtp.reached = threading.Event()  # type: ignore[attr-defined]
    total = 40
    now = utcnow()
    for n in range(total):
        message_id = uuid7()
        db.add(  # type: ignore[attr-defined]
            EngageMessage(
                id=message_id,
                organization_id=actor.org.id,
                channel="EMAIL",
                to_address=f"rcpt{n}@example.com",
                subject="Hi",
                body=f"message {n}",
                next_attempt_at=now,
                rfc_message_id=f"<{message_id}@example.com>",
            )
        )
    await db.commit()  # type: ignore[attr-defined]

    env = os.environ | {"PYTHONPATH": SRC}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", WORKER, app.state.settings.database_url, str(smtp.port), env=env
    )
    try:
        started = await asyncio.to_thread(smtp.reached.wait, 60)  # type: ignore[attr-defined]
        assert started, "the doomed worker never got going"
    finally:
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
    assert len(smtp.received) < total, "the batch finished before the kill"

    recorded_sent = set(
        (
            await db.execute(
                select(EngageMessage.rfc_message_id).where(EngageMessage.status == "sent")
            )
        ).scalars()  # type: ignore[attr-defined]
    )
    # The dead worker's lease runs out; a new worker takes over.
    await db.execute(  # type: ignore[attr-defined]
        update(EngageMessage)
        .where(EngageMessage.status == "sending")
        .values(next_attempt_at=utcnow())
    )
    await db.commit()  # type: ignore[attr-defined]
    ctx = worker_context(app, smtp)
    while await run_delivery(ctx):
        pass

    counts = Counter(mail["Message-ID"] for mail in smtp.received)
    rows = (await db.execute(select(EngageMessage.rfc_message_id, EngageMessage.status))).all()  # type: ignore[attr-defined]
    assert {status for _, status in rows} == {"sent"}
    assert set(counts) == {rfc for rfc, _ in rows}  # nothing lost
    duplicates = {rfc for rfc, n in counts.items() if n > 1}
    # Only messages in flight at the kill (at most one per SMTP connection) went twice, and
    # none that had been recorded as sent.
    assert len(duplicates) <= SMTP_CONNECTIONS
    assert not duplicates & recorded_sent
    assert all(n <= 2 for n in counts.values())
