"""What the operations of this domain do, in words for an agent: the route declarations'
`description` (the OpenAPI document and the MCP tool derived from the route share it), and the
descriptions of tool arguments that the parameters and body fields do not carry."""

from __future__ import annotations

CONTACT_ID = "Id of the contact (an `id` from listAccountContacts)."
CRM_ID = (
    "The contact's id in the customer's CRM; unique among live contacts of the organization "
    "(a duplicate answers `conflict`)."
)
EMAIL = "E-mail address (validated)."
FIRST_NAME = "Given name."
LAST_NAME = "Family name."
LINKEDIN_URL = "http(s) URL of the person's LinkedIn profile."
PHONE = "Phone number, free text up to 64 characters."
TITLE = "Job title, e.g. `VP Engineering`."

LIST_ACCOUNT_CONTACTS = """
List the contacts (people) of one account: `{"data": [contact], "pagination"}`, a contact being
`{id, accountId, firstName, lastName, fullName, email, title, phone, linkedinUrl, crmId,
archivedAt, createdAt, updatedAt}`. Use it to find the people at a company (by name or e-mail
with `search`) before placing them on a relationship map or planning outreach. Archived
contacts are left out unless `includeArchived` is true. `sortBy` is createdAt, updatedAt,
lastName or email. An account id of another organization answers `not_found`. What changed
since a date-time: `updatedSince` (rows with updatedAt at or after it, oldest change first).
"""

LIST_CONTACTS = """
List the organization's contacts (people) across accounts, as `{"data": [contact],
"pagination"}`. Filter by `email` (compared as parsed) or `accountId`; `search` matches names
and e-mail. Archived contacts only with `includeArchived`. For incremental sync use
`updatedSince` with `limit`/`cursor`.
"""

GET_CONTACT = """
Read one contact by id: `{id, accountId, firstName, lastName, fullName, email, title, phone,
linkedinUrl, crmId, archivedAt, createdAt, updatedAt}`. An archived contact still answers (with
`archivedAt` set); an id of another organization answers `not_found`. Use listAccountContacts
to find a contact id.
"""

CREATE_ACCOUNT_CONTACT = """
Create a contact (a person) working for an account. `accountId` is required; every other field
is optional, but give at least a name or an e-mail so that the contact is recognisable
(`fullName` is derived from the names). Answers the new contact. A `crmId` already used answers
`conflict`; an invalid e-mail or URL answers `validation_error`; an unknown account answers
`not_found`. Check listAccountContacts (`search`) first to avoid duplicates.
"""

UPDATE_CONTACT = """
Replace a contact's fields, like the REST operation updateContact (PUT): EVERY field you do not
send becomes null (except `accountId`, which is kept when left out). To change one field, first
call getContact, then send all the fields you want to keep together with the changed ones.
Send `accountId` to move the contact to another account of the organization. Answers the
contact as stored; a `crmId` used by another live contact answers `conflict`.
"""

DELETE_CONTACT = """
Delete a contact. Deleting archives it: it disappears from listAccountContacts (unless
`includeArchived` is true) but getContact still answers it with `archivedAt` set. Only
delete when the user asked for it.
"""

LIST_ACCOUNT_CONTACTS_ARGS = {
    "accountId": "Id of the account (an `id` from listAccounts).",
    "includeArchived": "true to list archived (deleted) contacts too; default false.",
    "search": "Case-insensitive substring of the contact's name or e-mail.",
}
LIST_CONTACTS_ARGS = {
    "email": "Only the contacts with this e-mail address.",
    "accountId": "Only the contacts of this account.",
    "includeArchived": "true to list archived (deleted) contacts too.",
    "search": "Case-insensitive substring of the name or e-mail.",
}
GET_CONTACT_ARGS = {"contactId": CONTACT_ID}
CONTACT_FIELDS = {
    "firstName": FIRST_NAME,
    "lastName": LAST_NAME,
    "email": EMAIL,
    "title": TITLE,
    "phone": PHONE,
    "linkedinUrl": LINKEDIN_URL,
    "crmId": CRM_ID,
    "timeZone": (
        "The contact's IANA time zone (e.g. Europe/Paris): campaigns whose send window says "
        '"contact" send inside the window in this zone.'
    ),
}
CREATE_ACCOUNT_CONTACT_ARGS = {
    "accountId": "Id of the account the contact works for.",
    **CONTACT_FIELDS,
}
UPDATE_CONTACT_ARGS = {
    "contactId": "Id of the contact to replace.",
    **CONTACT_FIELDS,
    "accountId": (
        "Account the contact belongs to; send another account id of the organization to move "
        "the contact, leave it out to keep the current account."
    ),
}
DELETE_CONTACT_ARGS = {"contactId": CONTACT_ID}

# The MCP tool's description (contract §9, 2026-11-27: at most ~200 characters).
UPDATE_CONTACT_BRIEF = (
    "Replace a contact's fields (PUT): EVERY field you do not send becomes null (`accountId` "
    "is kept). To change one field, call getContact, then send all the fields you want to "
    "keep."
)
