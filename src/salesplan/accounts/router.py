"""Accounts (contract §7): CRUD, archive, bulk create, the account's buying groups."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.accounts import descriptions as text
from salesplan.accounts import service
from salesplan.accounts.schemas import (
    AccountIn,
    AccountOut,
    AccountPatch,
    BulkAccountsIn,
    BulkAccountsOut,
)
from salesplan.auth.dependencies import require
from salesplan.auth.principal import RequestContext
from salesplan.buying_groups import service as groups
from salesplan.buying_groups.schemas import BuyingGroupOut
from salesplan.db_dependencies import SessionDep, unit_of_work
from salesplan.kit.list_query import CursorCodecDep, UpdatedSince, list_params
from salesplan.kit.pagination import ListParams
from salesplan.kit.responses import CONDITIONAL_READ, json_response, revalidated_json
from salesplan.kit.routes import Records
from salesplan.kit.schemas import ListResponse, QueryText
from salesplan.kit.tools import DELETE_NOTE, as_tool, deleted

router = APIRouter(tags=["accounts"])

Read = Annotated[RequestContext, require("accounts:read", "accounts")]
Write = Annotated[RequestContext, require("accounts:write", "accounts")]
Delete = Annotated[RequestContext, require("accounts:delete", "accounts")]
Params = Annotated[ListParams, list_params(("createdAt", "updatedAt", "name"))]


AccountList = ListResponse[AccountOut]


@router.get(
    "",
    operation_id="listAccounts",
    openapi_extra=CONDITIONAL_READ,
    response_model=AccountList,
    summary="List accounts",
    description=text.LIST_ACCOUNTS,
)
@as_tool(docs=text.LIST_ACCOUNTS_ARGS)
async def list_accounts(
    ctx: Read,
    codec: CursorCodecDep,
    params: Params,
    request: Request,
    include_archived: Annotated[bool, Query(alias="includeArchived")] = False,
    crm_id: Annotated[QueryText | None, Query(alias="crmId")] = None,
    owner_id: Annotated[uuid.UUID | None, Query(alias="ownerId")] = None,
    updated_since: UpdatedSince = None,
) -> Response:
    """List accounts."""
    async with unit_of_work(request) as uow:
        items, meta = await service.list_accounts(
            await uow.reader(),
            ctx,
            params,
            codec,
            include_archived=include_archived,
            crm_id=crm_id,
            owner_id=owner_id,
            updated_since=updated_since,
        )
    # Wire dicts built from rows, serialized once by orjson; ETag of the page's bytes.
    body = {"data": items, "pagination": meta.model_dump(by_alias=True)}
    return revalidated_json(body, request.headers.get("if-none-match"))


RECORDS = Records[AsyncSession, RequestContext](
    router, __name__, AccountOut, Read, Write, Delete, SessionDep
)
RECORDS.create_route(
    "",
    "createAccount",
    "Create an account (and its default buying group).",
    AccountIn,
    service.create_account,
    summary="Create an account",
    description=text.CREATE_ACCOUNT,
    tool=as_tool(docs=text.CREATE_ACCOUNT_ARGS),
)


@router.post(
    "/bulk",
    operation_id="bulkCreateAccounts",
    status_code=207,
    response_model=BulkAccountsOut,
    summary="Create many accounts",
    description=text.BULK_CREATE_ACCOUNTS,
)
@as_tool(docs=text.BULK_CREATE_ACCOUNTS_ARGS)
async def bulk_create_accounts(body: BulkAccountsIn, ctx: Write, session: SessionDep) -> Response:
    """Create up to 1000 accounts; one result per row."""
    result = await service.bulk_create_accounts(session, ctx, body.accounts)
    return json_response(result, 207)


@router.get(
    "/{accountId}",
    operation_id="getAccount",
    openapi_extra=CONDITIONAL_READ,
    response_model=AccountOut,
    summary="Read an account",
    description=text.GET_ACCOUNT,
)
@as_tool(docs=text.GET_ACCOUNT_ARGS)
async def get_account(accountId: uuid.UUID, ctx: Read, request: Request) -> Response:
    """Read one account."""
    # One statement on a pooled connection; ETag of the body, If-None-Match → 304.
    async with unit_of_work(request) as uow:
        account = await service.read_account(await uow.reader(), ctx, accountId)
    return revalidated_json(account, request.headers.get("if-none-match"))


RECORDS.write_if_match_route(
    "PUT",
    "/{accountId}",
    "updateAccount",
    """Replace an account. An `If-Match` naming getAccount's ETag is honoured: no longer
    current → 412 `precondition_failed`, nothing changed.""",
    AccountIn,
    service.replace_account,
    summary="Replace an account",
    description=text.UPDATE_ACCOUNT,
    tool=as_tool(docs=text.UPDATE_ACCOUNT_ARGS, brief=text.UPDATE_ACCOUNT_BRIEF),
)
RECORDS.write_if_match_route(
    "PATCH",
    "/{accountId}",
    "patchAccount",
    "Change the fields sent (`If-Match` honoured as on updateAccount).",
    AccountPatch,
    service.patch_account,
)
RECORDS.delete_if_match_route(
    "/{accountId}",
    "deleteAccount",
    "Archive an account (`If-Match` honoured as on updateAccount).",
    service.delete_account,
    summary="Delete (archive) an account",
    description=text.DELETE_ACCOUNT,
    tool=as_tool(
        docs=text.DELETE_ACCOUNT_ARGS,
        note=DELETE_NOTE.format("accountId"),
        result=deleted("accountId"),
    ),
)


@router.get(
    "/{accountId}/buying-groups",
    operation_id="listAccountBuyingGroups",
    response_model=ListResponse[BuyingGroupOut],
    tags=["buying-groups"],
    summary="List an account's buying groups",
    description=text.LIST_ACCOUNT_BUYING_GROUPS,
)
@as_tool(docs=text.LIST_ACCOUNT_BUYING_GROUPS_ARGS)
async def list_account_buying_groups(
    accountId: uuid.UUID,
    ctx: Read,
    session: SessionDep,
    codec: CursorCodecDep,
    params: Params,
    include_archived: Annotated[bool, Query(alias="includeArchived")] = False,
) -> ListResponse[BuyingGroupOut]:
    """List the buying groups of an account."""
    await service.get_account(session, ctx, accountId)
    items, meta = await groups.list_buying_groups(
        session, ctx, params, codec, account_id=accountId, include_archived=include_archived
    )
    return ListResponse(data=items, pagination=meta)
