"""listAccountContacts, getContact, createAccountContact, updateContact (PUT), deleteContact."""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import Field

from salesplan.accounts import service as accounts
from salesplan.contacts import service
from salesplan.contacts.schemas import ContactIn, ContactOut, ContactReplace
from salesplan.kit.schemas import ListResponse
from salesplan.mcp.call import ToolCall
from salesplan.mcp.registry import ListArgs, ToolArgs, deleted, mcp_tool

ACCOUNT_ID = "Id of the account (an `id` from listAccounts)."
CONTACT_ID = "Id of the contact (an `id` from listAccountContacts)."

CONTACT_FIELDS = {
    "firstName": "Given name.",
    "lastName": "Family name.",
    "email": "E-mail address (validated).",
    "title": "Job title, e.g. `VP Engineering`.",
    "phone": "Phone number, free text up to 64 characters.",
    "linkedinUrl": "http(s) URL of the person's LinkedIn profile.",
    "crmId": "The contact's id in the customer's CRM; unique among live contacts of the "
    "organization (a duplicate answers `conflict`).",
}


class ListAccountContactsArgs(ListArgs):
    sortable = ("createdAt", "updatedAt", "lastName", "email")
    docs = {"search": "Case-insensitive substring of the contact's name or e-mail."}

    account_id: uuid.UUID = Field(description=ACCOUNT_ID)
    include_archived: bool = Field(
        default=False, description="true to list archived (deleted) contacts too; default false."
    )


class ContactArgs(ToolArgs):
    contact_id: uuid.UUID = Field(description=CONTACT_ID)


class CreateAccountContactArgs(ToolArgs, ContactIn):
    docs = {"accountId": "Id of the account the contact works for.", **CONTACT_FIELDS}

    account_id: uuid.UUID


class UpdateContactArgs(ToolArgs, ContactReplace):
    docs = {
        "contactId": "Id of the contact to replace.",
        **CONTACT_FIELDS,
        "accountId": "Account the contact belongs to; send another account id of the "
        "organization to move the contact, leave it out to keep the current account.",
    }

    contact_id: uuid.UUID


@mcp_tool(
    "listAccountContacts",
    scope="contacts:read",
    group="contacts",
    args=ListAccountContactsArgs,
    title="List an account's contacts",
    description="""
List the contacts (people) of one account: `{"data": [contact], "pagination"}`, a contact being
`{id, accountId, firstName, lastName, fullName, email, title, phone, linkedinUrl, crmId,
archivedAt, createdAt, updatedAt}`. Use it to find the people at a company (by name or e-mail
with `search`) before placing them on a relationship map or planning outreach. Archived
contacts are left out unless `includeArchived` is true. `sortBy` is createdAt, updatedAt,
lastName or email. An account id of another organization answers `not_found`.
""",
)
async def list_account_contacts(call: ToolCall, args: ListAccountContactsArgs) -> Any:
    await accounts.get_account(call.session, call.ctx, args.account_id)
    items, meta = await service.list_contacts(
        call.session,
        call.ctx,
        args.list_params(),
        call.codec,
        account_id=args.account_id,
        include_archived=args.include_archived,
    )
    return ListResponse(data=[ContactOut.model_validate(c) for c in items], pagination=meta)


@mcp_tool(
    "getContact",
    scope="contacts:read",
    group="contacts",
    args=ContactArgs,
    title="Read a contact",
    description="""
Read one contact by id: `{id, accountId, firstName, lastName, fullName, email, title, phone,
linkedinUrl, crmId, archivedAt, createdAt, updatedAt}`. An archived contact still answers (with
`archivedAt` set); an id of another organization answers `not_found`. Use listAccountContacts
to find a contact id.
""",
)
async def get_contact(call: ToolCall, args: ContactArgs) -> Any:
    return ContactOut.model_validate(
        await service.get_contact(call.session, call.ctx, args.contact_id)
    )


@mcp_tool(
    "createAccountContact",
    scope="contacts:write",
    group="contacts",
    args=CreateAccountContactArgs,
    read_only=False,
    title="Create a contact on an account",
    description="""
Create a contact (a person) working for an account. `accountId` is required; every other field
is optional, but give at least a name or an e-mail so that the contact is recognisable
(`fullName` is derived from the names). Answers the new contact. A `crmId` already used answers
`conflict`; an invalid e-mail or URL answers `validation_error`; an unknown account answers
`not_found`. Check listAccountContacts (`search`) first to avoid duplicates.
""",
)
async def create_account_contact(call: ToolCall, args: CreateAccountContactArgs) -> Any:
    contact = await service.create_contact(
        call.session, call.ctx, args.account_id, args.body(ContactIn)
    )
    return ContactOut.model_validate(contact)


@mcp_tool(
    "updateContact",
    scope="contacts:write",
    group="contacts",
    args=UpdateContactArgs,
    read_only=False,
    destructive=True,
    title="Replace a contact",
    description="""
Replace a contact's fields, like the REST operation updateContact (PUT): EVERY field you do not
send becomes null (except `accountId`, which is kept when left out). To change one field, first
call getContact, then send all the fields you want to keep together with the changed ones.
Send `accountId` to move the contact to another account of the organization. Answers the
contact as stored; a `crmId` used by another live contact answers `conflict`.
""",
)
async def update_contact(call: ToolCall, args: UpdateContactArgs) -> Any:
    contact = await service.replace_contact(
        call.session, call.ctx, args.contact_id, args.body(ContactReplace)
    )
    return ContactOut.model_validate(contact)


@mcp_tool(
    "deleteContact",
    scope="contacts:delete",
    group="contacts",
    args=ContactArgs,
    read_only=False,
    destructive=True,
    title="Delete (archive) a contact",
    description="""
Delete a contact. Deleting archives it: it disappears from listAccountContacts (unless
`includeArchived` is true) but getContact still answers it with `archivedAt` set. Where REST
answers 204 without a body, this tool answers `{"deleted": true, "id": "<contactId>"}`. Only
delete when the user asked for it.
""",
)
async def delete_contact(call: ToolCall, args: ContactArgs) -> Any:
    await service.delete_contact(call.session, call.ctx, args.contact_id)
    return deleted(args.contact_id)
