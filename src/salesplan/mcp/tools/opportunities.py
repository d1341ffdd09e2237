"""listOpportunities, getOpportunity, createOpportunity, updateOpportunity (PUT),
deleteOpportunity."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import Field

from salesplan.kit.schemas import ListResponse
from salesplan.mcp.call import ToolCall
from salesplan.mcp.registry import ListArgs, ToolArgs, deleted, mcp_tool
from salesplan.opportunities import service
from salesplan.opportunities.schemas import OpportunityIn, OpportunityOut

OPPORTUNITY_ID = "Id of the opportunity (an `id` from listOpportunities)."

OPPORTUNITY_FIELDS = {
    "accountId": "Id of the account the deal is with (required; from listAccounts).",
    "name": "Name of the deal (required, 1..255 characters), e.g. `Acme 2027 renewal`.",
    "stage": "Free-text sales stage, e.g. `Discovery`, `Proposal`, `Negotiation`.",
    "amount": "Deal value, a number ≥ 0 with at most 2 decimals.",
    "currency": "Three-letter ISO 4217 currency code of `amount`, e.g. `USD`.",
    "closeDate": "Expected (or actual) close date, YYYY-MM-DD.",
    "probability": "Win probability in percent, 0..100.",
    "status": "`open` (default), `won` or `lost`.",
    "ownerId": "Id of the user who owns the deal (a member of the organization).",
    "crmId": "The deal's id in the customer's CRM; unique among live opportunities of the "
    "organization (a duplicate answers `conflict`).",
}


class ListOpportunitiesArgs(ListArgs):
    sortable = ("createdAt", "updatedAt", "name", "closeDate")
    docs = {"search": "Case-insensitive substring of the opportunity's name."}

    account_id: uuid.UUID | None = Field(
        default=None, description="Only the opportunities of this account id."
    )
    stage: str | None = Field(default=None, description="Only opportunities in this stage.")
    include_archived: bool = Field(
        default=False,
        description="true to list archived (deleted) opportunities too; default false.",
    )


class OpportunityArgs(ToolArgs):
    opportunity_id: uuid.UUID = Field(description=OPPORTUNITY_ID)


class CreateOpportunityArgs(ToolArgs, OpportunityIn):
    docs = OPPORTUNITY_FIELDS


class UpdateOpportunityArgs(ToolArgs, OpportunityIn):
    docs = {"opportunityId": "Id of the opportunity to replace.", **OPPORTUNITY_FIELDS}

    opportunity_id: uuid.UUID


@mcp_tool(
    "listOpportunities",
    scope="opportunities:read",
    group="opportunities",
    args=ListOpportunitiesArgs,
    title="List opportunities",
    description="""
List the organization's opportunities (deals): `{"data": [opportunity], "pagination"}`, an
opportunity being `{id, accountId, name, stage, amount, currency, closeDate, probability, status
(open|won|lost), ownerId, crmId, archivedAt, createdAt, updatedAt}`. Filter by account
(`accountId`), by `stage`, or by name (`search`). Archived deals are left out unless
`includeArchived` is true. `sortBy` is createdAt, updatedAt, name or closeDate (e.g.
`sortBy=closeDate` for the pipeline by close date).
""",
)
async def list_opportunities(call: ToolCall, args: ListOpportunitiesArgs) -> Any:
    items, meta = await service.list_opportunities(
        call.session,
        call.ctx,
        args.list_params(),
        call.codec,
        account_id=args.account_id,
        stage=args.stage,
        include_archived=args.include_archived,
    )
    return ListResponse(data=[OpportunityOut.model_validate(o) for o in items], pagination=meta)


@mcp_tool(
    "getOpportunity",
    scope="opportunities:read",
    group="opportunities",
    args=OpportunityArgs,
    title="Read an opportunity",
    description="""
Read one opportunity (deal) by id: `{id, accountId, name, stage, amount, currency, closeDate,
probability, status, ownerId, crmId, archivedAt, createdAt, updatedAt}`. An archived one still
answers (with `archivedAt` set); an id of another organization answers `not_found`. Use
listOpportunities to find an id; listPlans with entityType=OPPORTUNITY and this id lists the
deal's plans.
""",
)
async def get_opportunity(call: ToolCall, args: OpportunityArgs) -> Any:
    opp = await service.get_opportunity(call.session, call.ctx, args.opportunity_id)
    return OpportunityOut.model_validate(opp)


@mcp_tool(
    "createOpportunity",
    scope="opportunities:write",
    group="opportunities",
    args=CreateOpportunityArgs,
    read_only=False,
    title="Create an opportunity",
    description="""
Create an opportunity (a deal) on an account. `accountId` and `name` are required; `status`
defaults to `open`. Answers the new opportunity. An `accountId` or `ownerId` that does not exist
in the organization answers `unprocessable`; a `crmId` already used answers `conflict`.
""",
)
async def create_opportunity(call: ToolCall, args: CreateOpportunityArgs) -> Any:
    opp = await service.create_opportunity(call.session, call.ctx, args.body(OpportunityIn))
    return OpportunityOut.model_validate(opp)


@mcp_tool(
    "updateOpportunity",
    scope="opportunities:write",
    group="opportunities",
    args=UpdateOpportunityArgs,
    read_only=False,
    destructive=True,
    title="Replace an opportunity",
    description="""
Replace an opportunity's fields, like the REST operation updateOpportunity (PUT): EVERY field
you do not send becomes null (`status` becomes `open`). To change one field (e.g. move the stage
or mark it won), first call getOpportunity, then send all the fields you want to keep
(`accountId` and `name` are required) together with the changed ones. Answers the opportunity
as stored.
""",
)
async def update_opportunity(call: ToolCall, args: UpdateOpportunityArgs) -> Any:
    opp = await service.replace_opportunity(
        call.session, call.ctx, args.opportunity_id, args.body(OpportunityIn)
    )
    return OpportunityOut.model_validate(opp)


@mcp_tool(
    "deleteOpportunity",
    scope="opportunities:delete",
    group="opportunities",
    args=OpportunityArgs,
    read_only=False,
    destructive=True,
    title="Delete (archive) an opportunity",
    description="""
Delete an opportunity. Deleting archives it: it disappears from listOpportunities (unless
`includeArchived` is true) but getOpportunity still answers it with `archivedAt` set. Where
REST answers 204 without a body, this tool answers `{"deleted": true, "id": "<opportunityId>"}`.
Only delete when the user asked for it.
""",
)
async def delete_opportunity(call: ToolCall, args: OpportunityArgs) -> Any:
    await service.delete_opportunity(call.session, call.ctx, args.opportunity_id)
    return deleted(args.opportunity_id)
