"""Engage lists: MANUAL lists of contacts and DYNAMIC lists of criteria evaluated at read
time, and their members. The statements are `engage.repository`'s."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.engage.repository import ListRepository, missing_accounts, missing_contacts
from salesplan.engage.schemas import ListIn, ListPatch
from salesplan.errors import Unprocessable, ValidationFailed
from salesplan.kit.clock import utcnow
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.patch import reject_nulls
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import TenantScope
from salesplan.models.engage import EngageList


async def list_lists(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    type: str | None,
    include_archived: bool,
) -> tuple[list[EngageList], PaginationMeta]:
    return await ListRepository(session, ctx).page(
        params, codec, type=type, include_archived=include_archived
    )


async def get_list(session: AsyncSession, ctx: RequestContext, list_id: uuid.UUID) -> EngageList:
    return await ListRepository(session, ctx).get(list_id)


async def _check_criteria_accounts(
    session: AsyncSession, ctx: RequestContext, criteria: dict[str, Any] | None
) -> None:
    ids = {uuid.UUID(str(a)) for a in (criteria or {}).get("accountIds") or []}
    if not ids:
        return
    missing = await missing_accounts(session, ctx, ids)
    if missing:
        raise Unprocessable(
            "criteria.accountIds names accounts that do not exist in the organization.",
            details={"field": "criteria.accountIds", "ids": sorted(str(m) for m in missing)},
        )


async def check_contacts(
    session: AsyncSession, ctx: TenantScope, contact_ids: set[uuid.UUID], field: str
) -> None:
    """Every id is a live contact of the organization, else a 422 naming (up to 100 of) them."""
    missing = await missing_contacts(session, ctx, contact_ids)
    if missing:
        raise Unprocessable(
            f"{len(missing)} contact(s) do not exist in the organization.",
            details={"field": field, "ids": [str(m) for m in missing[:100]]},
        )


async def create_list(session: AsyncSession, ctx: RequestContext, data: ListIn) -> EngageList:
    criteria = data.criteria.wire() if data.criteria else None
    await _check_criteria_accounts(session, ctx, criteria)
    lst = EngageList(
        name=data.name, description=data.description, type=data.type, criteria=criteria
    )
    return await ListRepository(session, ctx).insert(lst)


async def update_list(
    session: AsyncSession, ctx: RequestContext, list_id: uuid.UUID, data: ListPatch
) -> EngageList:
    sent = data.sent()
    reject_nulls(sent, ("name",))
    lists = ListRepository(session, ctx)
    lst = await lists.get(list_id)
    if "criteria" in sent:
        if lst.type != "DYNAMIC":
            raise Unprocessable("Only a DYNAMIC list has criteria.", details={"field": "criteria"})
        if data.criteria is None:
            raise ValidationFailed.at(["body", "criteria"], "This field may not be null.")
        sent["criteria"] = data.criteria.wire()
        await _check_criteria_accounts(session, ctx, sent["criteria"])
    return await lists.update(lst, sent)


async def archive_list(session: AsyncSession, ctx: RequestContext, list_id: uuid.UUID) -> None:
    lists = ListRepository(session, ctx)
    await lists.archive(await lists.get(list_id))


async def list_members(
    session: AsyncSession,
    ctx: RequestContext,
    list_id: uuid.UUID,
    params: ListParams,
    codec: CursorCodec,
) -> tuple[list[dict[str, Any]], PaginationMeta]:
    """Keyset by contact id (cursor mode); a DYNAMIC list's are evaluated now."""
    lists = ListRepository(session, ctx)
    return await lists.members(await lists.get(list_id), params, codec)


async def _manual_list(lists: ListRepository, list_id: uuid.UUID) -> EngageList:
    lst = await lists.get(list_id)
    if lst.type == "DYNAMIC":
        raise Unprocessable(
            "A DYNAMIC list's members come from its criteria; they cannot be changed.",
            details={"reason": "dynamic_list"},
        )
    return lst


async def add_members(
    session: AsyncSession, ctx: RequestContext, list_id: uuid.UUID, contact_ids: list[uuid.UUID]
) -> dict[str, int]:
    lists = ListRepository(session, ctx)
    lst = await _manual_list(lists, list_id)
    wanted = set(contact_ids)
    await check_contacts(session, ctx, wanted, "contactIds")
    now = utcnow()
    added = await lists.add_members(lst, sorted(wanted), now)
    await lists.update(lst, {"updated_at": now})
    return {"added": added, "skipped": len(contact_ids) - added}


async def remove_member(
    session: AsyncSession, ctx: RequestContext, list_id: uuid.UUID, contact_id: uuid.UUID
) -> None:
    lists = ListRepository(session, ctx)
    lst = await _manual_list(lists, list_id)
    member = await lists.member(lst, contact_id)
    if member is not None:
        await lists.remove_member(member)
        await lists.update(lst, {"updated_at": utcnow()})
