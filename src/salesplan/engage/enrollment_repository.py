"""Audiences and the enrollment job's statements.

Who is in an audience, as one SQL statement: a MANUAL list's members, a DYNAMIC list's
criteria, or explicit contact ids. Every source selects live contacts of the organization,
ordered by contact id so that readers and the enrollment worker page it by keyset.

The enrollment job (`enrollment.py`) claims its job through `worker/claims.py` and writes each
batch with the statements below: the lease extended only while it is still ours, one INSERT of
the batch's enrollments (ON CONFLICT DO NOTHING), the job's counters and cursor."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    SQLColumnExpression,
    and_,
    case,
    exists,
    false,
    func,
    or_,
    select,
    true,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.kit.fields import stored_instant
from salesplan.kit.scoping import AnyRow, AnySelect, OrgScope, in_organization, scoped
from salesplan.kit.search import contains_ci
from salesplan.models.crm import Contact
from salesplan.models.engage import (
    EngageEnrollment,
    EngageEnrollmentJob,
    EngageList,
    EngageListMember,
    EngageSuppression,
)
from salesplan.worker.claims import claim

Job = EngageEnrollmentJob


def criteria_condition(criteria: dict[str, Any]) -> ColumnElement[bool]:
    """The criteria (camelCase, as stored) as one WHERE clause on `contacts`."""
    conditions: list[ColumnElement[bool]] = []
    if account_ids := criteria.get("accountIds"):
        conditions.append(Contact.account_id.in_(_uuids(account_ids)))
    if isinstance(title := criteria.get("titleContains"), str) and title:
        conditions.append(contains_ci(Contact.title, title))
    if isinstance(domain := criteria.get("emailDomain"), str) and domain:
        escaped = domain.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        conditions.append(func.lower(Contact.email).like(f"%@{escaped}", escape="\\"))
    has_email = criteria.get("hasEmail")
    if has_email is True:
        conditions.append(and_(Contact.email.is_not(None), Contact.email != ""))
    elif has_email is False:
        conditions.append((Contact.email.is_(None)) | (Contact.email == ""))
    if (since := criteria.get("updatedSince")) is not None:
        # Read defensively: a value stored before the Instant rule (or by hand) that names no
        # storable instant matches nobody, so it never widens who is written to.
        instant = stored_instant(since)
        conditions.append(Contact.updated_at >= instant if instant is not None else false())
    return and_(true(), *conditions)


def _uuids(values: object) -> list[uuid.UUID]:
    """The stored account ids that are ids (the others match nothing)."""
    found: list[uuid.UUID] = []
    for value in values if isinstance(values, list) else []:
        try:
            found.append(uuid.UUID(str(value)))
        except ValueError:
            continue
    return found


def audience_of_list(
    lst: EngageList, *columns: SQLColumnExpression[object] | type[Contact]
) -> AnySelect:
    """The list's contacts (live, same organization); `columns` default to the Contact entity."""
    stmt = scoped(select(*(columns or (Contact,))), lst, Contact).where(
        Contact.archived_at.is_(None)
    )
    if lst.type == "DYNAMIC":
        return stmt.where(criteria_condition(lst.criteria or {}))
    return stmt.join(
        EngageListMember,
        and_(EngageListMember.contact_id == Contact.id, EngageListMember.list_id == lst.id),
    )


def audience_of_ids(
    organization_id: uuid.UUID,
    contact_ids: list[uuid.UUID],
    *columns: SQLColumnExpression[object] | type[Contact],
) -> AnySelect:
    return scoped(select(*(columns or (Contact,))), OrgScope(organization_id), Contact).where(
        Contact.archived_at.is_(None),
        Contact.id.in_(contact_ids),
    )


# -- the enrollment job ---------------------------------------------------------------------------


async def claim_job(
    session: AsyncSession, worker_id: str, now: datetime, lease: datetime
) -> uuid.UUID | None:
    """One due job: queued, or running with an expired lease (its worker died), or already
    this worker's; leased to `worker_id` until `lease`."""
    result = await claim(
        session,
        Job,
        due=(
            Job.status.in_(("queued", "running")),
            or_(
                Job.lease_expires_at.is_(None),
                Job.lease_expires_at < now,
                Job.worker_id == worker_id,
            ),
        ),
        order_by=(Job.created_at, Job.id),
        limit=1,
        values={
            "status": "running",
            "worker_id": worker_id,
            "lease_expires_at": lease,
            "started_at": func.coalesce(Job.started_at, now),
            # A worker taking the job (again after a failure, or over from a dead one) counts
            # as an attempt; the same worker continuing it does not.
            "attempts": case((Job.worker_id == worker_id, Job.attempts), else_=Job.attempts + 1),
            "updated_at": now,
        },
        returning=(Job.id,),
    )
    job_id: uuid.UUID | None = result.scalar_one_or_none()
    return job_id


async def extend_lease(
    session: AsyncSession, job_id: uuid.UUID, worker_id: str, lease: datetime
) -> bool:
    """Take the job row's write lock and prove the lease is still ours (then extended)."""
    owned = await session.execute(
        update(Job)
        .where(Job.id == job_id, Job.worker_id == worker_id, Job.status == "running")
        .values(lease_expires_at=lease)
        .returning(Job.id)
        .execution_options(synchronize_session=False)
    )
    return owned.scalar_one_or_none() is not None


async def job(session: AsyncSession, job_id: uuid.UUID) -> EngageEnrollmentJob:
    found: EngageEnrollmentJob = (
        await session.execute(select(Job).where(Job.id == job_id))
    ).scalar_one()
    return found


async def job_of_worker(
    session: AsyncSession, job_id: uuid.UUID, worker_id: str
) -> EngageEnrollmentJob | None:
    """The job, if `worker_id` still holds it."""
    found: EngageEnrollmentJob | None = (
        await session.execute(select(Job).where(Job.id == job_id, Job.worker_id == worker_id))
    ).scalar_one_or_none()
    return found


async def next_contacts(session: AsyncSession, job: EngageEnrollmentJob, size: int) -> list[AnyRow]:
    """The job's next `size` contacts after its cursor (by id), each with the flags that
    decide a skip: (id, email, suppressed, enrolled). Empty when its list is gone."""
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
            return []
        stmt = audience_of_list(lst, *columns)
    else:
        ids = [uuid.UUID(str(c)) for c in job.contact_ids or []]
        stmt = audience_of_ids(job.organization_id, ids, *columns)
    if job.cursor is not None:
        stmt = stmt.where(Contact.id > job.cursor)
    return list((await session.execute(stmt.order_by(Contact.id).limit(size))).all())


async def insert_enrollments(session: AsyncSession, rows: list[dict[str, object]]) -> int:
    """One INSERT … VALUES (…), (…) … of the whole batch (SQLAlchemy's "insertmanyvalues":
    compiled once and cached, unlike a literal multi-row `.values([...])`); contacts already
    in the campaign are left alone. Answers how many were inserted."""
    postgres = session.get_bind().dialect.name == "postgresql"
    stmt = (
        (postgresql.insert if postgres else sqlite.insert)(EngageEnrollment)
        .on_conflict_do_nothing(index_elements=["campaign_id", "contact_id"])
        .returning(EngageEnrollment.contact_id)
    )
    return len((await session.execute(stmt, rows)).all())


async def record_batch(
    session: AsyncSession,
    job_id: uuid.UUID,
    *,
    processed: int,
    inserted: int,
    reasons: dict[str, int],
    cursor: uuid.UUID | None,
    finished: bool,
    now: datetime,
) -> None:
    """The job's counters and cursor after a batch; a finished job is `completed` (its total
    what it processed: a dynamic list may have changed since the job was queued)."""
    values: dict[str, object] = {
        "processed": Job.processed + processed,
        "enrolled": Job.enrolled + inserted,
        "skipped": Job.skipped + (processed - inserted),
        "skipped_reasons": reasons,
        "updated_at": now,
    }
    if cursor is not None:
        values["cursor"] = cursor
    if finished:
        values.update(
            status="completed",
            completed_at=now,
            worker_id=None,
            lease_expires_at=None,
            total=Job.processed + processed,
        )
    await session.execute(
        update(Job)
        .where(Job.id == job_id)
        .values(**values)
        .execution_options(synchronize_session=False)
    )


async def release_job(session: AsyncSession, job_id: uuid.UUID, worker_id: str) -> None:
    """Hand the job back (its lease ends now) if `worker_id` still holds it."""
    await session.execute(
        update(Job)
        .where(Job.id == job_id, Job.worker_id == worker_id)
        .values(worker_id=None, lease_expires_at=None)
        .execution_options(synchronize_session=False)
    )
