"""Contacts (contract §7)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Response
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.dependencies import require
from salesplan.auth.principal import RequestContext
from salesplan.contacts import descriptions as text
from salesplan.contacts import service
from salesplan.contacts.schemas import ContactIn, ContactOut, ContactPatch, ContactReplace
from salesplan.db_dependencies import SessionDep
from salesplan.kit.list_query import CursorCodecDep, UpdatedSince, list_params
from salesplan.kit.pagination import ListParams
from salesplan.kit.responses import json_response
from salesplan.kit.routes import Records
from salesplan.kit.schemas import ListResponse, QueryText
from salesplan.kit.tools import DELETE_NOTE, as_tool, deleted

router = APIRouter(tags=["contacts"])

Read = Annotated[RequestContext, require("contacts:read", "contacts")]
Write = Annotated[RequestContext, require("contacts:write", "contacts")]
Delete = Annotated[RequestContext, require("contacts:delete", "contacts")]
Params = Annotated[ListParams, list_params(("createdAt", "updatedAt", "lastName", "email"))]
IncludeArchived = Annotated[bool, Query(alias="includeArchived")]


@router.get(
    "/accounts/{accountId}/contacts",
    operation_id="listAccountContacts",
    response_model=ListResponse[ContactOut],
    summary="List an account's contacts",
    description=text.LIST_ACCOUNT_CONTACTS,
)
@as_tool(docs=text.LIST_ACCOUNT_CONTACTS_ARGS)
async def list_account_contacts(
    accountId: uuid.UUID,
    ctx: Read,
    session: SessionDep,
    codec: CursorCodecDep,
    params: Params,
    include_archived: IncludeArchived = False,
    updated_since: UpdatedSince = None,
) -> Response:
    """List the contacts of an account."""
    items, meta = await service.list_account_contacts(
        session,
        ctx,
        accountId,
        params,
        codec,
        include_archived=include_archived,
        updated_since=updated_since,
    )
    return json_response(
        ListResponse[ContactOut](
            data=[ContactOut.model_validate(c) for c in items], pagination=meta
        )
    )


RECORDS = Records[AsyncSession, RequestContext](
    router, __name__, ContactOut, Read, Write, Delete, SessionDep
)
RECORDS.write_route(
    "POST",
    "/accounts/{accountId}/contacts",
    "createAccountContact",
    "Create a contact of an account.",
    ContactIn,
    service.create_contact,
    status_code=201,
    summary="Create a contact on an account",
    description=text.CREATE_ACCOUNT_CONTACT,
    tool=as_tool(docs=text.CREATE_ACCOUNT_CONTACT_ARGS),
)


@router.get(
    "/contacts",
    operation_id="listContacts",
    response_model=ListResponse[ContactOut],
    summary="List contacts",
    description=text.LIST_CONTACTS,
)
@as_tool(docs=text.LIST_CONTACTS_ARGS)
async def list_contacts(
    ctx: Read,
    session: SessionDep,
    codec: CursorCodecDep,
    params: Params,
    email: Annotated[QueryText | None, Query()] = None,
    account_id: Annotated[uuid.UUID | None, Query(alias="accountId")] = None,
    include_archived: IncludeArchived = False,
    updated_since: UpdatedSince = None,
) -> Response:
    """List contacts."""
    items, meta = await service.list_contacts(
        session,
        ctx,
        params,
        codec,
        account_id=account_id,
        email=email,
        include_archived=include_archived,
        updated_since=updated_since,
    )
    return json_response(
        ListResponse[ContactOut](
            data=[ContactOut.model_validate(c) for c in items], pagination=meta
        )
    )


RECORDS.read_route(
    "/contacts/{contactId}",
    "getContact",
    "Read one contact.",
    service.get_contact,
    summary="Read a contact",
    description=text.GET_CONTACT,
    tool=as_tool(docs=text.GET_CONTACT_ARGS),
)
RECORDS.write_route(
    "PUT",
    "/contacts/{contactId}",
    "updateContact",
    "Replace a contact.",
    ContactReplace,
    service.replace_contact,
    summary="Replace a contact",
    description=text.UPDATE_CONTACT,
    tool=as_tool(docs=text.UPDATE_CONTACT_ARGS, brief=text.UPDATE_CONTACT_BRIEF),
)
RECORDS.write_route(
    "PATCH",
    "/contacts/{contactId}",
    "patchContact",
    "Change the fields sent.",
    ContactPatch,
    service.patch_contact,
)
RECORDS.delete_route(
    "/contacts/{contactId}",
    "deleteContact",
    "Archive a contact.",
    service.delete_contact,
    summary="Delete (archive) a contact",
    description=text.DELETE_CONTACT,
    tool=as_tool(
        docs=text.DELETE_CONTACT_ARGS,
        note=DELETE_NOTE.format("contactId"),
        result=deleted("contactId"),
    ),
)
