"""The suppression list on the API (contract §14): listEngageSuppressions shows what was
suppressed and why; bulkCreateEngageSuppressions lets an admin import opt-outs from another
system; deleteEngageSuppression lets an admin lift one. Addresses are compared as
kit.email.mailbox parses them (contract §12), in the path, the body and the `address` filter."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.engage.delivery import inbound
from salesplan.engage.delivery.events import SuppressionDeleted
from salesplan.engage.delivery.schemas import SuppressionOut
from salesplan.engage.repository import SuppressionRepository
from salesplan.errors import NotFound
from salesplan.kit.email import is_email, mailbox
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


def _invalid(index: int, address: str) -> dict[str, object]:
    message = "Not an e-mail address."
    location: list[str | int] = ["body", "addresses", index]
    error = {
        "code": "validation_error",
        "message": message,
        "details": {"errors": [{"location": location, "message": message}]},
    }
    return {"index": index, "address": address, "status": 400, "error": error}


async def import_suppressions(
    session: AsyncSession, ctx: RequestContext, addresses: list[str], reason: str
) -> dict[str, object]:
    """Suppress each address (admins only), through the one suppression path
    (`inbound.suppress`: the first reason stays, sequences writing to it stop). One result per
    address: 201 suppressed now, 200 already suppressed (its entry as it is), 400 not an
    address. Answers `{"results", "created", "failed"}`."""
    await require_admin(session, ctx, "Only an admin of the organization can import suppressions.")
    parsed = [mailbox(a) for a in addresses]
    valid = [p for p in parsed if is_email(p)]
    suppressions = SuppressionRepository(session, ctx)
    before = await suppressions.by_addresses(set(valid))
    new: list[str] = []
    for address in dict.fromkeys(valid):  # once each, in order
        if address not in before:
            await inbound.suppress(session, ctx.organization_id, address, reason)
            new.append(address)
    rows = {**before, **await suppressions.by_addresses(new)}
    results: list[dict[str, object]] = []
    created: set[str] = set()
    for index, (given, address) in enumerate(zip(addresses, parsed, strict=True)):
        row = rows.get(address) if is_email(address) else None
        if row is None:
            results.append(_invalid(index, given))
            continue
        first = address not in before and address not in created
        created.add(address)
        data = SuppressionOut.model_validate(row).model_dump(mode="json", by_alias=True)
        results.append(
            {"index": index, "address": given, "status": 201 if first else 200, "data": data}
        )
    failed = sum(1 for r in results if r["status"] == 400)
    return {"results": results, "created": len(new), "failed": failed}
