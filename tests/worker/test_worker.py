"""The worker loop: safe claims when several workers run, a killed worker's job taken over and
resumed from its last committed batch, wake-ups without busy polling, the in-process runner."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import uuid
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from salesplan.app import create_app
from salesplan.jobs.loop import drain, in_process_worker, run_loop
from salesplan.kit.clock import utcnow
from salesplan.models.engage import EngageEnrollmentJob
from salesplan.worker import context as worker_context
from salesplan.worker.context import WorkerContext
from tests.engage.helpers import API, bulk_contacts, campaign
from tests.fixtures.crm import make_account


def ctx_for(app: Any, worker_id: str, **overrides: Any) -> WorkerContext:
    return WorkerContext(
        settings=app.state.settings.model_copy(update=overrides),
        engine=app.state.engine,
        sessionmaker=app.state.sessionmaker,
        worker_id=worker_id,
    )


async def job_row(app: Any, job_id: str) -> EngageEnrollmentJob:
    async with app.state.sessionmaker() as session:
        stmt = select(EngageEnrollmentJob).where(EngageEnrollmentJob.id == uuid.UUID(job_id))
        return (await session.execute(stmt)).scalar_one()


async def enroll_all(client: Any, actor: Any, contact_ids: list[uuid.UUID]) -> str:
    created = await campaign(client, actor)
    resp = await client.post(
        f"{API}/campaigns/{created['id']}/enrollments",
        json={"contactIds": [str(c) for c in contact_ids]},
        headers=actor.headers,
    )
    assert resp.status_code == 202, resp.text
    return str(resp.json()["job"]["id"])


async def wait_for(predicate: Any, seconds: float = 30.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not await predicate():
        if asyncio.get_running_loop().time() > deadline:
            pytest.fail("the condition did not hold in time")
        await asyncio.sleep(0.05)


async def test_two_workers_never_process_one_job_twice(client, actor, db, app) -> None:
    acme, _ = await make_account(db, actor.org.id)
    ids = await bulk_contacts(db, actor.org.id, acme.id, 300)
    jobs = [await enroll_all(client, actor, ids) for _ in range(8)]
    workers = [ctx_for(app, f"w{i}", enrollment_batch_size=50, worker_poll_seconds=0.05)
               for i in range(2)]  # fmt: skip
    loops = [asyncio.create_task(run_loop(w)) for w in workers]

    async def all_done() -> bool:
        return all([(await job_row(app, j)).status == "completed" for j in jobs])

    try:
        await wait_for(all_done, 120)
    finally:
        for w in workers:
            w.stopping.set()
        await asyncio.gather(*loops)
    for job_id in jobs:
        job = await job_row(app, job_id)
        # Claimed once, every contact enrolled once, none found already enrolled by a rival.
        assert job.attempts == 1
        assert (job.processed, job.enrolled, job.skipped) == (300, 300, 0)


async def test_a_job_whose_lease_expired_is_taken_over_and_resumed(client, actor, db, app) -> None:
    acme, _ = await make_account(db, actor.org.id)
    ids = await bulk_contacts(db, actor.org.id, acme.id, 500)
    job_id = await enroll_all(client, actor, ids)
    first = ctx_for(app, "first", enrollment_batch_size=100)
    from salesplan.engage.enrollment import _claim, _run_batch

    claimed = await _claim(first)
    assert claimed is not None
    await _run_batch(first, claimed)
    await _run_batch(first, claimed)
    # `first` stalls; a rival cannot take the job while the lease holds...
    rival = ctx_for(app, "rival", enrollment_batch_size=100)
    assert await _claim(rival) is None
    async with app.state.sessionmaker() as session:
        job = await session.get(EngageEnrollmentJob, claimed)
        assert job is not None
        job.lease_expires_at = utcnow()
        await session.commit()
    # ...and takes it over once the lease has run out, resuming at the cursor.
    await drain(rival)
    # The stalled worker wakes up: its batch is refused, nothing is done twice.
    assert await _run_batch(first, claimed) == (-1, True)
    job = await job_row(app, job_id)
    assert job.status == "completed"
    assert (job.processed, job.enrolled, job.skipped, job.attempts) == (500, 500, 0, 2)
    assert job.skipped_reasons["already_enrolled"] == 0


def _worker_env(settings: Any, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SALESPLAN_")}
    env.update(
        SALESPLAN_DATABASE_URL=settings.database_url,
        SALESPLAN_SECRET_KEY=settings.secret_key,
        SALESPLAN_LOG_LEVEL="warning",
        **extra,
    )
    return env


def _worker_command() -> list[str]:
    return [sys.executable, "-c", "from salesplan.cli import main; main()", "worker"]


async def test_a_killed_workers_job_is_finished_by_another_with_correct_counts(
    client, actor, db, app
) -> None:
    acme, _ = await make_account(db, actor.org.id)
    ids = await bulk_contacts(db, actor.org.id, acme.id, 5000, without_email=10)
    job_id = await enroll_all(client, actor, ids)
    proc = await asyncio.create_subprocess_exec(
        *_worker_command(),
        env=_worker_env(
            app.state.settings,
            SALESPLAN_ENROLLMENT_BATCH_SIZE="100",
            SALESPLAN_ENROLLMENT_BATCH_PAUSE_SECONDS="0.05",
            SALESPLAN_WORKER_LEASE_SECONDS="2",
            SALESPLAN_WORKER_POLL_SECONDS="0.2",
        ),
    )
    try:

        async def started() -> bool:
            return (await job_row(app, job_id)).processed >= 500

        await wait_for(started, 60)
    finally:
        proc.send_signal(signal.SIGKILL)
        await asyncio.wait_for(proc.wait(), 10)
    killed = await job_row(app, job_id)
    assert killed.status == "running" and 0 < killed.processed < 5000
    assert killed.worker_id is not None
    survivor = ctx_for(app, "survivor", worker_lease_seconds=2)
    lease_end = killed.lease_expires_at
    assert lease_end is not None
    await asyncio.sleep(max(0.0, (lease_end - utcnow()).total_seconds()) + 0.1)
    await drain(survivor)
    job = await job_row(app, job_id)
    assert job.status == "completed" and job.worker_id is None
    assert (job.total, job.processed, job.enrolled, job.skipped) == (5000, 5000, 4990, 10)
    assert job.skipped_reasons == {"no_email": 10, "suppressed": 0, "already_enrolled": 0}
    assert job.attempts == 2


async def test_worker_command_stops_cleanly_on_sigterm(app) -> None:
    proc = await asyncio.create_subprocess_exec(
        *_worker_command(),
        env=_worker_env(app.state.settings, SALESPLAN_WORKER_POLL_SECONDS="0.2")
        | {"SALESPLAN_LOG_LEVEL": "info"},
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stderr is not None
    try:
        # Its signal handlers are installed once it says it started.
        while b"started" not in await asyncio.wait_for(proc.stderr.readline(), 60):
            pass
    except BaseException:
        proc.kill()
        raise
    proc.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(proc.wait(), 15) == 0


async def test_postgres_worker_wakes_on_notify_without_polling(
    client, actor, db, app, is_postgres
) -> None:
    if not is_postgres:
        pytest.skip("LISTEN/NOTIFY is PostgreSQL's")
    acme, _ = await make_account(db, actor.org.id)
    ids = await bulk_contacts(db, actor.org.id, acme.id, 5)
    # A poll interval far beyond the wait below: only the NOTIFY can wake this worker.
    worker = ctx_for(app, "listener", worker_poll_seconds=600)
    loop = asyncio.create_task(run_loop(worker))
    try:
        await asyncio.sleep(1)  # the loop has found nothing and sleeps
        job_id = await enroll_all(client, actor, ids)

        async def done() -> bool:
            return (await job_row(app, job_id)).status == "completed"

        await wait_for(done, 30)
    finally:
        worker.stopping.set()
        await loop


async def test_in_process_worker_runs_jobs_and_stops_with_the_app(client, actor, db, app) -> None:
    acme, _ = await make_account(db, actor.org.id)
    ids = await bulk_contacts(db, actor.org.id, acme.id, 20)
    settings = app.state.settings.model_copy(
        update={"worker_in_process": True, "worker_poll_seconds": 600}
    )
    serving = create_app(settings)
    async with serving.router.lifespan_context(serving):
        assert worker_context.in_process_wakeup is not None
        transport = httpx.ASGITransport(app=serving)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            job_id = await enroll_all(c, actor, ids)

            async def done() -> bool:
                return (await job_row(app, job_id)).status == "completed"

            await wait_for(done, 30)
    assert worker_context.in_process_wakeup is None
    assert (await job_row(app, job_id)).enrolled == 20


def test_the_test_app_does_not_run_the_worker(settings) -> None:
    assert settings.run_worker_in_process is False
    assert in_process_worker not in create_app(settings).state.lifespan_hooks


async def test_a_failing_job_is_retried_then_marked_failed(
    client, actor, db, app, monkeypatch
) -> None:
    from salesplan.engage import enrollment, enrollment_repository

    acme, _ = await make_account(db, actor.org.id)
    ids = await bulk_contacts(db, actor.org.id, acme.id, 3)
    job_id = await enroll_all(client, actor, ids)

    async def broken(*_: Any) -> Any:
        raise RuntimeError("database on fire")

    # Every batch fails where it reads its contacts.
    monkeypatch.setattr(enrollment_repository, "next_contacts", broken)
    await drain(ctx_for(app, "w"))
    resp = await client.get(f"{API}/enrollment-jobs/{job_id}", headers=actor.headers)
    job = resp.json()
    assert job["status"] == "failed" and job["attempts"] == enrollment.MAX_ATTEMPTS
    assert len(job["errors"]) == enrollment.MAX_ATTEMPTS
    assert "fire" not in resp.text
    assert job["completedAt"] is not None and job["enrolled"] == 0


async def test_one_worker_continuing_a_long_job_is_one_attempt(client, actor, db, app) -> None:
    from salesplan.engage.enrollment import BATCHES_PER_CALL

    acme, _ = await make_account(db, actor.org.id)
    ids = await bulk_contacts(db, actor.org.id, acme.id, (BATCHES_PER_CALL + 5) * 10)
    job_id = await enroll_all(client, actor, ids)
    await drain(ctx_for(app, "w", enrollment_batch_size=10))
    job = await job_row(app, job_id)
    assert job.status == "completed" and job.attempts == 1
    assert job.enrolled == len(ids)
