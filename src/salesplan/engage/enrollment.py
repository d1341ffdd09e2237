"""The enrollment job kind: the worker claims a queued job (or one whose lease expired), then
enrolls its audience batch by batch. Each batch is one transaction: extend the lease (only if
still ours), read the next contacts by keyset, one INSERT of enrollments (ON CONFLICT DO NOTHING
for contacts already in the campaign), and the job's counters and cursor. A worker killed between
batches loses nothing committed; whoever takes the job over after the lease resumes at the cursor."""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import timedelta

from salesplan.engage import enrollment_repository as repository
from salesplan.kit.clock import utcnow
from salesplan.kit.ids import uuid7
from salesplan.models.engage import SKIP_REASONS, EngageCampaign
from salesplan.worker.context import WorkerContext

log = logging.getLogger("salesplan.worker.enrollment")

# A call runs at most this many batches, then returns so that other job kinds get a turn; the
# loop calls again at once since work was done (the lease stays ours meanwhile).
BATCHES_PER_CALL = 20
# A batch that raised is retried from the job's cursor by the next claim, up to this many
# attempts in all; then the job is `failed`.
MAX_ATTEMPTS = 3


async def run_enrollment_jobs(ctx: WorkerContext) -> int:
    """Job kind: claim one due job and run up to BATCHES_PER_CALL batches of it."""
    job_id = await _claim(ctx)
    if job_id is None:
        return 0
    done = 0
    try:
        for _ in range(BATCHES_PER_CALL):
            if ctx.stopping.is_set():
                await _release(ctx, job_id)
                break
            processed, finished = await _run_batch(ctx, job_id)
            if processed < 0:  # taken over by another worker after our lease ran out
                break
            done += processed
            if finished:
                break
            pause = ctx.settings.enrollment_batch_pause_seconds
            if pause:
                await asyncio.sleep(pause)
    except Exception as exc:
        log.exception("enrollment job %s failed", job_id)
        await _fail(ctx, job_id, exc)
    return max(done, 1)


async def _claim(ctx: WorkerContext) -> uuid.UUID | None:
    """One due job: queued, or running with an expired lease (its worker died), or already ours
    (worker/claims.py: concurrent workers pass over each other's candidates)."""
    now = utcnow()
    lease = now + timedelta(seconds=ctx.settings.worker_lease_seconds)
    async with ctx.unit_of_work() as uow:
        return await repository.claim_job(await uow.session(), ctx.worker_id, now, lease)


async def _run_batch(ctx: WorkerContext, job_id: uuid.UUID) -> tuple[int, bool]:
    """One committed batch. Returns (contacts processed, finished); (-1, True) when the job
    is no longer ours (its lease was taken over)."""
    size = ctx.settings.enrollment_batch_size
    async with ctx.unit_of_work() as uow:
        session = await uow.session()
        now = utcnow()
        # First statement: take the row's write lock and prove the lease is still ours.
        lease = now + timedelta(seconds=ctx.settings.worker_lease_seconds)
        if not await repository.extend_lease(session, job_id, ctx.worker_id, lease):
            await uow.rollback()
            return -1, True
        job = await repository.job(session, job_id)
        campaign = await session.get(EngageCampaign, job.campaign_id)
        assert campaign is not None
        needs_email = any(s.get("channel") == "EMAIL" for s in campaign.flow.get("steps", []))

        reasons = dict(job.skipped_reasons or {})
        for reason in SKIP_REASONS:
            reasons.setdefault(reason, 0)
        rows = await repository.next_contacts(session, job, size)

        eligible: list[uuid.UUID] = []
        for row in rows:
            if needs_email and not row.email:
                reasons["no_email"] += 1
            elif row.suppressed:
                reasons["suppressed"] += 1
            elif row.enrolled:
                reasons["already_enrolled"] += 1
            else:
                eligible.append(row.id)
        inserted = 0
        if eligible:
            params = [
                {
                    "id": uuid7(),
                    "organization_id": job.organization_id,
                    "campaign_id": job.campaign_id,
                    "contact_id": cid,
                    "job_id": job.id,
                    "state": "pending",
                    "current_step": 0,
                    "enrolled_at": now,
                    "updated_at": now,
                }
                for cid in eligible
            ]
            inserted = await repository.insert_enrollments(session, params)
            # Enrolled by someone else between our read and our insert.
            reasons["already_enrolled"] += len(eligible) - inserted

        finished = len(rows) < size
        await repository.record_batch(
            session,
            job_id,
            processed=len(rows),
            inserted=inserted,
            reasons=reasons,
            cursor=rows[-1].id if rows else None,
            finished=finished,
            now=now,
        )
    return len(rows), finished


async def _release(ctx: WorkerContext, job_id: uuid.UUID) -> None:
    """A worker shutting down hands its job back at once instead of letting the lease run out."""
    async with ctx.unit_of_work() as uow:
        await repository.release_job(await uow.session(), job_id, ctx.worker_id)


async def _fail(ctx: WorkerContext, job_id: uuid.UUID, exc: Exception) -> None:
    """Hand the job back for a retry from its cursor, or mark it failed after MAX_ATTEMPTS.
    The error is recorded without internals (they go to the log)."""
    now = utcnow()
    async with ctx.unit_of_work() as uow:
        job = await repository.job_of_worker(await uow.session(), job_id, ctx.worker_id)
        if job is None:
            return
        errors = list(job.errors or [])
        errors.append(
            {"code": "internal_error", "message": "A batch failed.", "at": now.isoformat()}
        )
        job.errors = errors[-10:]
        job.worker_id = None
        job.lease_expires_at = None
        job.updated_at = now
        if job.attempts >= MAX_ATTEMPTS:
            job.status = "failed"
            job.completed_at = now
