"""The suppression list on the API (contract §14): listEngageSuppressions shows what was
suppressed and why; deleteEngageSuppression lets an admin lift one. Addresses are compared as
kit.email.mailbox parses them (contract §12), in the path and in the `address` filter alike."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.engage.delivery.events import SuppressionDeleted
from salesplan.engage.delivery.schemas import SuppressionOut
from salesplan.engage.repository import SuppressionRepository
from salesplan.errors import NotFound
from salesplan.kit.email import mailbox
from salesplan.kit.events import emit
from salesplan.kit.pagination import CursorCodec, ListParams
from salesplan.kit.schemas import PaginationMeta
from salesplan.models.engage import EngageSuppression
from salesplan.organizations.admin import require_admin


async def list_suppressions(
    session: AsyncSession,
    ctx: RequestContext,
    params: ListParams,
    codec: CursorCodec,
    *,
    address: str | None,
    reason: str | None,
) -> tuple[list[EngageSuppression], PaginationMeta]:
    return await SuppressionRepository(session, ctx).page(
        params, codec, email=mailbox(address) if address else None, reason=reason
    )


async def delete_suppression(session: AsyncSession, ctx: RequestContext, address: str) -> None:
    """Lift the suppression of `address` in the organization: it may be written to again
    (sequences it stopped stay stopped). Unknown here (or another organization's) → 404."""
    await require_admin(session, ctx, "Only an admin of the organization can lift a suppression.")
    suppressions = SuppressionRepository(session, ctx)
    row = await suppressions.by_address(mailbox(address))
    if row is None:
        raise NotFound("Suppression not found.", details={"address": address})
    # Rendered now: the row is gone when the unit of work's handlers run.
    was = SuppressionOut.model_validate(row).model_dump(mode="json", by_alias=True)
    await suppressions.delete(row)
    emit(session, SuppressionDeleted(ctx.organization_id, was))
