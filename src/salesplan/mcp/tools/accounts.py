"""listAccounts, getAccount, createAccount, updateAccount (PUT), bulkCreateAccounts,
deleteAccount, and the buying-group reads listAccountBuyingGroups and listBuyingGroups."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import Field

from salesplan.accounts import service
from salesplan.accounts.schemas import AccountIn, AccountOut, BulkAccountsIn
from salesplan.buying_groups import service as groups
from salesplan.kit.schemas import ListResponse
from salesplan.mcp.call import ToolCall
from salesplan.mcp.registry import ListArgs, ToolArgs, deleted, mcp_tool

ACCOUNT_ID = "Id of the account (an `id` from listAccounts)."
INCLUDE_ARCHIVED = "true to list archived (deleted) rows too; default false."

ACCOUNT_FIELDS = {
    "name": "Company name (required, 1..255 characters).",
    "domain": "The company's web domain, e.g. `acme.com` (used to match e-mail and chat).",
    "website": "Full http(s) URL of the company's website.",
    "industry": "Free-text industry, e.g. `Software`.",
    "description": "Free-text notes about the account (up to 10,000 characters).",
    "crmId": "The account's id in the customer's CRM; unique among live accounts of the "
    "organization (a duplicate answers `conflict`).",
    "ownerId": "Id of the user who owns the account (a member of the organization; from "
    "listOrganizationUsers).",
    "annualRevenue": "Annual revenue, a number ≥ 0 with at most 2 decimals.",
    "employeeCount": "Number of employees, an integer ≥ 0.",
}


class ListAccountsArgs(ListArgs):
    sortable = ("createdAt", "updatedAt", "name")
    docs = {"search": "Case-insensitive substring of the account's name or domain."}

    include_archived: bool = Field(default=False, description=INCLUDE_ARCHIVED)
    crm_id: str | None = Field(default=None, description="Only the account with this CRM id.")
    owner_id: uuid.UUID | None = Field(
        default=None, description="Only accounts owned by this user id."
    )


class AccountArgs(ToolArgs):
    account_id: uuid.UUID = Field(description=ACCOUNT_ID)


class CreateAccountArgs(ToolArgs, AccountIn):
    docs = ACCOUNT_FIELDS


class UpdateAccountArgs(ToolArgs, AccountIn):
    docs = {
        "accountId": "Id of the account to replace.",
        **ACCOUNT_FIELDS,
        "name": "Company name (required, 1..255 characters; send the current one to keep it).",
    }

    account_id: uuid.UUID


class BulkCreateAccountsArgs(ToolArgs, BulkAccountsIn):
    docs = {
        "accounts": "1..1000 account objects, each with the createAccount fields "
        "(`name` required; `domain`, `website`, `industry`, `description`, `crmId`, `ownerId`, "
        "`annualRevenue`, `employeeCount`). Each row is validated and created on its own."
    }


class ListAccountBuyingGroupsArgs(ListArgs):
    sortable = ("createdAt", "updatedAt", "name")
    docs = {"search": "Case-insensitive substring of the buying group's name."}

    account_id: uuid.UUID = Field(description=ACCOUNT_ID)
    include_archived: bool = Field(default=False, description=INCLUDE_ARCHIVED)


class ListBuyingGroupsArgs(ListArgs):
    sortable = ("createdAt", "updatedAt", "name")
    docs = {"search": "Case-insensitive substring of the buying group's name."}

    account_id: uuid.UUID | None = Field(
        default=None, description="Only the buying groups of this account id."
    )
    include_archived: bool = Field(default=False, description=INCLUDE_ARCHIVED)


@mcp_tool(
    "listAccounts",
    scope="accounts:read",
    group="accounts",
    args=ListAccountsArgs,
    title="List accounts",
    description="""
List the organization's accounts (companies you sell to) as `{"data": [account], "pagination"}`;
an account is `{id, name, domain, website, industry, description, crmId, ownerId,
annualRevenue, employeeCount, archivedAt, createdAt, updatedAt}`. Use it to find an account id
by name or domain (`search`), by CRM id (`crmId`) or by owner (`ownerId`); use getAccount when
you already have the id. Archived accounts are left out unless `includeArchived` is true.
`sortBy` is createdAt, updatedAt or name. Pages: `page`/`pageSize`, or `limit` then `cursor` =
`pagination.nextCursor` for the next page.
""",
)
async def list_accounts(call: ToolCall, args: ListAccountsArgs) -> Any:
    items, meta = await service.list_accounts(
        call.session,
        call.ctx,
        args.list_params(),
        call.codec,
        include_archived=args.include_archived,
        crm_id=args.crm_id,
        owner_id=args.owner_id,
    )
    return ListResponse(data=[AccountOut.model_validate(a) for a in items], pagination=meta)


@mcp_tool(
    "getAccount",
    scope="accounts:read",
    group="accounts",
    args=AccountArgs,
    title="Read an account",
    description="""
Read one account by id: `{id, name, domain, website, industry, description, crmId, ownerId,
annualRevenue, employeeCount, archivedAt, createdAt, updatedAt}`. An archived account still
answers (with `archivedAt` set). An id of another organization answers `not_found`. To find an
id by name use listAccounts with `search`; for its people use listAccountContacts, for its deals
listOpportunities with `accountId`, for its buying groups listAccountBuyingGroups.
""",
)
async def get_account(call: ToolCall, args: AccountArgs) -> Any:
    return AccountOut.model_validate(
        await service.read_account(call.session, call.ctx, args.account_id)
    )


@mcp_tool(
    "createAccount",
    scope="accounts:write",
    group="accounts",
    args=CreateAccountArgs,
    read_only=False,
    title="Create an account",
    description="""
Create one account (a company) and, with it, its default buying group (named
"<name> Default Plan"), which is where account-level plans live. Only `name` is required.
Answers the new account. A `crmId` already used by a live account answers `conflict`; an
`ownerId` that is not a member of the organization answers `unprocessable`. Check with
listAccounts (`search` or `crmId`) first to avoid duplicates; for many accounts at once use
bulkCreateAccounts.
""",
)
async def create_account(call: ToolCall, args: CreateAccountArgs) -> Any:
    account = await service.create_account(call.session, call.ctx, args.body(AccountIn))
    return AccountOut.model_validate(account)


@mcp_tool(
    "updateAccount",
    scope="accounts:write",
    group="accounts",
    args=UpdateAccountArgs,
    read_only=False,
    destructive=True,
    title="Replace an account",
    description="""
Replace an account's fields, like the REST operation updateAccount (PUT): EVERY field you do not
send becomes null. To change one field, first call getAccount, then send all the fields you want
to keep (`name` is required) together with the changed ones. Answers the account as stored.
A `crmId` used by another live account answers `conflict`; an `ownerId` that is not a member of
the organization answers `unprocessable`; an unknown id answers `not_found`.
""",
)
async def update_account(call: ToolCall, args: UpdateAccountArgs) -> Any:
    account = await service.replace_account(
        call.session, call.ctx, args.account_id, args.body(AccountIn)
    )
    return AccountOut.model_validate(account)


@mcp_tool(
    "bulkCreateAccounts",
    scope="accounts:write",
    group="accounts",
    args=BulkCreateAccountsArgs,
    read_only=False,
    title="Create many accounts",
    description="""
Create up to 1000 accounts in one call (each with its default buying group). Each row is
handled on its own: valid rows are created even when others fail. Answers
`{"results": [{"index", "status", "data" | "error"}], "created", "failed"}` where `index` is the
row's position in `accounts`, `status` is 201 (created; `data` is the account), 409 (duplicate
`crmId`), 400 (invalid row) or 422 (unknown `ownerId`), and `error` is `{code, message,
details}`. Prefer it to repeated createAccount calls when importing a list.
""",
)
async def bulk_create_accounts(call: ToolCall, args: BulkCreateAccountsArgs) -> Any:
    body = args.body(BulkAccountsIn)
    return await service.bulk_create_accounts(call.session, call.ctx, body.accounts)


@mcp_tool(
    "deleteAccount",
    scope="accounts:delete",
    group="accounts",
    args=AccountArgs,
    read_only=False,
    destructive=True,
    title="Delete (archive) an account",
    description="""
Delete an account. Deleting archives it: it disappears from listAccounts (unless
`includeArchived` is true) but getAccount still answers it with `archivedAt` set; deleting an
archived account again is harmless. Where REST answers 204 without a body, this tool answers
`{"deleted": true, "id": "<accountId>"}`. Only delete when the user asked for it.
""",
)
async def delete_account(call: ToolCall, args: AccountArgs) -> Any:
    await service.delete_account(call.session, call.ctx, args.account_id)
    return deleted(args.account_id)


@mcp_tool(
    "listAccountBuyingGroups",
    scope="accounts:read",
    group="accounts",
    args=ListAccountBuyingGroupsArgs,
    title="List an account's buying groups",
    description="""
List the buying groups of one account: `{"data": [{id, accountId, name, description, isDefault,
opportunityId, memberContactIds, archivedAt, createdAt, updatedAt}], "pagination"}`. Every
account has one default group (`isDefault: true`, where createPlan with entityType=ACCOUNT puts
account-level plans); other groups are committees for a deal. Call it before createPlan when
the plan belongs on a non-default buying group: pick the group's `id`, then createPlan with
entityType=BUYING_GROUP and that id as `entityId`. An account id of another organization
answers `not_found`. listBuyingGroups does the same across accounts.
""",
)
async def list_account_buying_groups(call: ToolCall, args: ListAccountBuyingGroupsArgs) -> Any:
    await service.get_account(call.session, call.ctx, args.account_id)
    items, meta = await groups.list_buying_groups(
        call.session,
        call.ctx,
        args.list_params(),
        call.codec,
        account_id=args.account_id,
        include_archived=args.include_archived,
    )
    return ListResponse(data=items, pagination=meta)


@mcp_tool(
    "listBuyingGroups",
    scope="accounts:read",
    group="accounts",
    args=ListBuyingGroupsArgs,
    title="List buying groups",
    description="""
List the organization's buying groups, optionally of one account (`accountId`):
`{"data": [{id, accountId, name, description, isDefault, opportunityId, memberContactIds,
archivedAt, createdAt, updatedAt}], "pagination"}`. Use it to find a buying group id by name
(`search`) before createPlan with entityType=BUYING_GROUP (a plan on the account's default group
needs no look-up: use entityType=ACCOUNT with the account id), or before
upsertRelationshipMapContact with `buyingGroupId`. `memberContactIds` are contact ids
(getContact).
""",
)
async def list_buying_groups(call: ToolCall, args: ListBuyingGroupsArgs) -> Any:
    items, meta = await groups.list_buying_groups(
        call.session,
        call.ctx,
        args.list_params(),
        call.codec,
        account_id=args.account_id,
        include_archived=args.include_archived,
    )
    return ListResponse(data=items, pagination=meta)
