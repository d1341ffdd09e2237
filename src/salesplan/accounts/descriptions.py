"""What the operations of this domain do, in words for an agent: the route declarations'
`description` (the OpenAPI document and the MCP tool derived from the route share it), and the
descriptions of tool arguments that the parameters and body fields do not carry."""

from __future__ import annotations

INCLUDE_ARCHIVED = "true to list archived (deleted) rows too; default false."
ACCOUNT_ID = "Id of the account (an `id` from listAccounts)."
ANNUAL_REVENUE = "Annual revenue, a number ≥ 0 with at most 2 decimals."
CRM_ID = (
    "The account's id in the customer's CRM; unique among live accounts of the organization "
    "(a duplicate answers `conflict`)."
)
DESCRIPTION = "Free-text notes about the account (up to 10,000 characters)."
DOMAIN = "The company's web domain, e.g. `acme.com` (used to match e-mail and chat)."
EMPLOYEE_COUNT = "Number of employees, an integer ≥ 0."
INDUSTRY = "Free-text industry, e.g. `Software`."
OWNER_ID = (
    "Id of the user who owns the account (a member of the organization; from "
    "listOrganizationUsers). Left out on create: the calling user (none for an app token)."
)
WEBSITE = "Full http(s) URL of the company's website."

LIST_ACCOUNTS = """
List the organization's accounts (companies you sell to) as `{"data": [account], "pagination"}`;
an account is `{id, name, domain, website, industry, description, crmId, ownerId,
annualRevenue, employeeCount, archivedAt, createdAt, updatedAt}`. Use it to find an account id
by name or domain (`search`), by CRM id (`crmId`) or by owner (`ownerId`); use getAccount when
you already have the id. Archived accounts are left out unless `includeArchived` is true.
`sortBy` is createdAt, updatedAt or name. Pages: `page`/`pageSize`, or `limit` then `cursor` =
`pagination.nextCursor` for the next page. What changed since a date-time: `updatedSince` (rows
with updatedAt at or after it, oldest change first).
"""

GET_ACCOUNT = """
Read one account by id: `{id, name, domain, website, industry, description, crmId, ownerId,
annualRevenue, employeeCount, archivedAt, createdAt, updatedAt}`. An archived account still
answers (with `archivedAt` set). An id of another organization answers `not_found`. To find an
id by name use listAccounts with `search`; for its people use listAccountContacts, for its deals
listOpportunities with `accountId`, for its buying groups listAccountBuyingGroups.
"""

CREATE_ACCOUNT = """
Create one account (a company) and, with it, its default buying group (named
"<name> Default Plan"), which is where account-level plans live. Only `name` is required.
Answers the new account. A `crmId` already used by a live account answers `conflict`; an
`ownerId` that is not a member of the organization answers `unprocessable`. Check with
listAccounts (`search` or `crmId`) first to avoid duplicates; for many accounts at once use
bulkCreateAccounts.
"""

UPDATE_ACCOUNT = """
Replace an account's fields, like the REST operation updateAccount (PUT): EVERY field you do not
send becomes null. To change one field, first call getAccount, then send all the fields you want
to keep (`name` is required) together with the changed ones. Answers the account as stored.
A `crmId` used by another live account answers `conflict`; an `ownerId` that is not a member of
the organization answers `unprocessable`; an unknown id answers `not_found`.
"""

BULK_CREATE_ACCOUNTS = """
Create up to 1000 accounts in one call (each with its default buying group). Each row is
handled on its own: valid rows are created even when others fail. Answers
`{"results": [{"index", "status", "data" | "error"}], "created", "failed"}` where `index` is the
row's position in `accounts`, `status` is 201 (created; `data` is the account), 409 (duplicate
`crmId`), 400 (invalid row) or 422 (unknown `ownerId`), and `error` is `{code, message,
details}`. Prefer it to repeated createAccount calls when importing a list.
"""

DELETE_ACCOUNT = """
Delete an account. Deleting archives it: it disappears from listAccounts (unless
`includeArchived` is true) but getAccount still answers it with `archivedAt` set; deleting an
archived account again is harmless. Only delete when the user asked for it.
"""

LIST_ACCOUNT_BUYING_GROUPS = """
List the buying groups of one account: `{"data": [{id, accountId, name, description, isDefault,
opportunityId, memberContactIds, archivedAt, createdAt, updatedAt}], "pagination"}`. Every
account has one default group (`isDefault: true`, where createPlan with entityType=ACCOUNT puts
account-level plans); other groups are committees for a deal. Call it before createPlan when
the plan belongs on a non-default buying group: pick the group's `id`, then createPlan with
entityType=BUYING_GROUP and that id as `entityId`. An account id of another organization
answers `not_found`. listBuyingGroups does the same across accounts.
"""

LIST_ACCOUNTS_ARGS = {
    "crmId": "Only the account with this CRM id.",
    "includeArchived": INCLUDE_ARCHIVED,
    "ownerId": "Only accounts owned by this user id.",
    "search": "Case-insensitive substring of the account's name or domain.",
}
GET_ACCOUNT_ARGS = {"accountId": ACCOUNT_ID}
ACCOUNT_FIELDS = {
    "annualRevenue": ANNUAL_REVENUE,
    "crmId": CRM_ID,
    "description": DESCRIPTION,
    "domain": DOMAIN,
    "employeeCount": EMPLOYEE_COUNT,
    "industry": INDUSTRY,
    "name": "Company name (required, 1..255 characters).",
    "ownerId": OWNER_ID,
    "website": WEBSITE,
}
CREATE_ACCOUNT_ARGS = ACCOUNT_FIELDS
UPDATE_ACCOUNT_ARGS = {
    "accountId": "Id of the account to replace.",
    **ACCOUNT_FIELDS,
    "name": "Company name (required, 1..255 characters; send the current one to keep it).",
}
BULK_CREATE_ACCOUNTS_ARGS = {
    "accounts": (
        "1..1000 account objects, each with the createAccount fields (`name` required; "
        "`domain`, `website`, `industry`, `description`, `crmId`, `ownerId`, `annualRevenue`, "
        "`employeeCount`). Each row is validated and created on its own."
    )
}
DELETE_ACCOUNT_ARGS = {"accountId": ACCOUNT_ID}
LIST_ACCOUNT_BUYING_GROUPS_ARGS = {
    "accountId": ACCOUNT_ID,
    "includeArchived": INCLUDE_ARCHIVED,
    "search": "Case-insensitive substring of the buying group's name.",
}

# The MCP tool's description (contract §9, 2026-11-27: at most ~200 characters).
UPDATE_ACCOUNT_BRIEF = (
    "Replace an account's fields (PUT): EVERY field you do not send becomes null. To change "
    "one field, call getAccount, then send all the fields you want to keep."
)
