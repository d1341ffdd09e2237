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
from typing import Any

from sqlalchemy import and_, case, exists, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.engage.audience import audience_of_ids, audience_of_list
from salesplan.kit.clock import utcnow
from salesplan.kit.ids import uuid7
from salesplan.kit.scoping import in_organization
from salesplan.models.crm import Contact
from salesplan.models.engage import (
    SKIP_REASONS,
    EngageCampaign,
    EngageEnrollment,
    EngageEnrollmentJob,
    EngageList,
    EngageSuppression,
)
from salesplan.worker.context import WorkerContext

log = logging.getLogger("salesplan.worker.enrollment")

Job = EngageEnrollmentJob
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
    """One due job: queued, or running with an expired lease (its worker died), or already ours.
    `FOR UPDATE SKIP LOCKED` on PostgreSQL lets concurrent workers pass over each other's
    candidates; SQLite serializes writers, so the same UPDATE is atomic there too."""
    now = utcnow()
    due = (
        select(Job.id)
        .where(
            Job.status.in_(("queued", "running")),
            or_(
                Job.lease_expires_at.is_(None),
                Job.lease_expires_at < now,
                Job.worker_id == ctx.worker_id,
            ),
        )
        .order_by(Job.created_at, Job.id)
        .limit(1)
        .with_for_update(skip_locked=True)
        .scalar_subquery()
    )
    lease = now + timedelta(seconds=ctx.settings.worker_lease_seconds)
    stmt = (
        update(Job)
        .where(Job.id == due)
        .values(
            status="running",
            worker_id=ctx.worker_id,
            lease_expires_at=lease,
            started_at=func.coalesce(Job.started_at, now),
            # A worker taking the job (again after a failure, or over from a dead one) counts
            # as an attempt; the same worker continuing it does not.
            attempts=case((Job.worker_id == ctx.worker_id, Job.attempts), else_=Job.attempts + 1),
            updated_at=now,
        )
        .returning(Job.id)
        .execution_options(synchronize_session=False)
    )
    async with ctx.sessionmaker() as session:
        job_id = (await session.execute(stmt)).scalar_one_or_none()
        await session.commit()
    return job_id


async def _run_batch(ctx: WorkerContext, job_id: uuid.UUID) -> tuple[int, bool]:
    """One committed batch. Returns (contacts processed, finished); (-1, True) when the job
    is no longer ours (its lease was taken over)."""
    size = ctx.settings.enrollment_batch_size
    async with ctx.sessionmaker() as session:
        now = utcnow()
        # First statement: take the row's write lock and prove the lease is still ours.
        owned = await session.execute(
            update(Job)
            .where(Job.id == job_id, Job.worker_id == ctx.worker_id, Job.status == "running")
            .values(lease_expires_at=now + timedelta(seconds=ctx.settings.worker_lease_seconds))
            .returning(Job.id)
            .execution_options(synchronize_session=False)
        )
        if owned.scalar_one_or_none() is None:
            await session.rollback()
            return -1, True
        job = (await session.execute(select(Job).where(Job.id == job_id))).scalar_one()
        campaign = await session.get(EngageCampaign, job.campaign_id)
        assert campaign is not None
        needs_email = any(s.get("channel") == "EMAIL" for s in campaign.flow.get("steps", []))

        audience = await _audience(session, job)
        reasons = dict(job.skipped_reasons or {})
        for reason in SKIP_REASONS:
            reasons.setdefault(reason, 0)
        rows: list[Any] = []
        if audience is not None:
            stmt = audience
            if job.cursor is not None:
                stmt = stmt.where(Contact.id > job.cursor)
            rows = list((await session.execute(stmt.order_by(Contact.id).limit(size))).all())

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
            dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
            # One INSERT … VALUES (…), (…) … of the whole batch (SQLAlchemy's "insertmanyvalues":
            # compiled once and cached, unlike a literal multi-row `.values([...])`).
            stmt_ins = (
                dialect.insert(EngageEnrollment)
                .on_conflict_do_nothing(index_elements=["campaign_id", "contact_id"])
                .returning(EngageEnrollment.contact_id)
            )
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
            inserted = len((await session.execute(stmt_ins, params)).all())
            # Enrolled by someone else between our read and our insert.
            reasons["already_enrolled"] += len(eligible) - inserted

        finished = len(rows) < size
        values: dict[str, Any] = {
            "processed": Job.processed + len(rows),
            "enrolled": Job.enrolled + inserted,
            "skipped": Job.skipped + (len(rows) - inserted),
            "skipped_reasons": reasons,
            "updated_at": now,
        }
        if rows:
            values["cursor"] = rows[-1].id
        if finished:
            values.update(
                status="completed",
                completed_at=now,
                worker_id=None,
                lease_expires_at=None,
                # A dynamic list may have changed since the job was queued.
                total=Job.processed + len(rows),
            )
        await session.execute(
            update(Job)
            .where(Job.id == job_id)
            .values(**values)
            .execution_options(synchronize_session=False)
        )
        await session.commit()
    return len(rows), finished


async def _audience(session: AsyncSession, job: EngageEnrollmentJob) -> Any:
    """The job's contacts with the flags that decide a skip, as one statement."""
    suppressed = exists().where(
        in_organization(EngageSuppression, job),
        # The parsed address on both sides (contract §12), one indexed equality.
        EngageSuppression.email == Contact.email_mailbox,
    )
    enrolled = exists().where(
        and_(
            EngageEnrollment.campaign_id == job.campaign_id,
            EngageEnrollment.contact_id == Contact.id,
        )
    )
    columns = (
        Contact.id,
        Contact.email,
        suppressed.label("suppressed"),
        enrolled.label("enrolled"),
    )
    if job.list_id is not None:
        lst = await session.get(EngageList, job.list_id)
        if lst is None:
            return None
        return audience_of_list(lst, *columns)
    ids = [uuid.UUID(str(c)) for c in job.contact_ids or []]
    return audience_of_ids(job.organization_id, ids, *columns)


async def _release(ctx: WorkerContext, job_id: uuid.UUID) -> None:
    """A worker shutting down hands its job back at once instead of letting the lease run out."""
    async with ctx.sessionmaker() as session:
        await session.execute(
            update(Job)
            .where(Job.id == job_id, Job.worker_id == ctx.worker_id)
            .values(worker_id=None, lease_expires_at=None)
            .execution_options(synchronize_session=False)
        )
        await session.commit()


async def _fail(ctx: WorkerContext, job_id: uuid.UUID, exc: Exception) -> None:
    """Hand the job back for a retry from its cursor, or mark it failed after MAX_ATTEMPTS.
    The error is recorded without internals (they go to the log)."""
    now = utcnow()
    async with ctx.sessionmaker() as session:
        job = (
            await session.execute(
                select(Job).where(Job.id == job_id, Job.worker_id == ctx.worker_id)
            )
        ).scalar_one_or_none()
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
        await session.commit()
