"""What the operations of this domain do, in words for an agent: the route declarations'
`description` (the OpenAPI document and the MCP tool derived from the route share it), and the
descriptions of tool arguments that the parameters and body fields do not carry."""

from __future__ import annotations

OPPORTUNITY_ID = "Id of the opportunity (an `id` from listOpportunities)."
ACCOUNT_ID = "Id of the account the deal is with (required; from listAccounts)."
AMOUNT = "Deal value, a number ≥ 0 with at most 2 decimals."
CLOSE_DATE = "Expected (or actual) close date, YYYY-MM-DD."
CRM_ID = (
    "The deal's id in the customer's CRM; unique among live opportunities of the organization "
    "(a duplicate answers `conflict`)."
)
CURRENCY = "Three-letter ISO 4217 currency code of `amount`, e.g. `USD`."
NAME = "Name of the deal (required, 1..255 characters), e.g. `Acme 2027 renewal`."
OWNER_ID = "Id of the user who owns the deal (a member of the organization)."
PROBABILITY = "Win probability in percent, 0..100."
STAGE = "Free-text sales stage, e.g. `Discovery`, `Proposal`, `Negotiation`."
STATUS = "`open` (default), `won` or `lost`."

LIST_OPPORTUNITIES = """
List the organization's opportunities (deals): `{"data": [opportunity], "pagination"}`, an
opportunity being `{id, accountId, name, stage, amount, currency, closeDate, probability, status
(open|won|lost), ownerId, crmId, archivedAt, createdAt, updatedAt}`. Filter by account
(`accountId`), by `stage`, or by name (`search`). Archived deals are left out unless
`includeArchived` is true. `sortBy` is createdAt, updatedAt, name or closeDate (e.g.
`sortBy=closeDate` for the pipeline by close date). What changed since a date-time:
`updatedSince` (rows with updatedAt at or after it, oldest change first).
"""

GET_OPPORTUNITY = """
Read one opportunity (deal) by id: `{id, accountId, name, stage, amount, currency, closeDate,
probability, status, ownerId, crmId, archivedAt, createdAt, updatedAt}`. An archived one still
answers (with `archivedAt` set); an id of another organization answers `not_found`. Use
listOpportunities to find an id; listPlans with entityType=OPPORTUNITY and this id lists the
deal's plans.
"""

CREATE_OPPORTUNITY = """
Create an opportunity (a deal) on an account. `accountId` and `name` are required; `status`
defaults to `open`. Answers the new opportunity. An `accountId` or `ownerId` that does not exist
in the organization answers `unprocessable`; a `crmId` already used answers `conflict`.
"""

UPDATE_OPPORTUNITY = """
Replace an opportunity's fields, like the REST operation updateOpportunity (PUT): EVERY field
you do not send becomes null (`status` becomes `open`). To change one field (e.g. move the stage
or mark it won), first call getOpportunity, then send all the fields you want to keep
(`accountId` and `name` are required) together with the changed ones. Answers the opportunity
as stored.
"""

DELETE_OPPORTUNITY = """
Delete an opportunity. Deleting archives it: it disappears from listOpportunities (unless
`includeArchived` is true) but getOpportunity still answers it with `archivedAt` set.
Only delete when the user asked for it.
"""

LIST_OPPORTUNITIES_ARGS = {
    "accountId": "Only the opportunities of this account id.",
    "includeArchived": "true to list archived (deleted) opportunities too; default false.",
    "search": "Case-insensitive substring of the opportunity's name.",
    "stage": "Only opportunities in this stage.",
}
GET_OPPORTUNITY_ARGS = {"opportunityId": OPPORTUNITY_ID}
OPPORTUNITY_FIELDS = {
    "accountId": ACCOUNT_ID,
    "amount": AMOUNT,
    "closeDate": CLOSE_DATE,
    "crmId": CRM_ID,
    "currency": CURRENCY,
    "name": NAME,
    "ownerId": OWNER_ID,
    "probability": PROBABILITY,
    "stage": STAGE,
    "status": STATUS,
}
CREATE_OPPORTUNITY_ARGS = OPPORTUNITY_FIELDS
UPDATE_OPPORTUNITY_ARGS = {
    "opportunityId": "Id of the opportunity to replace.",
    **OPPORTUNITY_FIELDS,
}
DELETE_OPPORTUNITY_ARGS = {"opportunityId": OPPORTUNITY_ID}

# The MCP tool's description (contract §9, 2026-11-27: at most ~200 characters).
UPDATE_OPPORTUNITY_BRIEF = (
    "Replace an opportunity's fields (PUT): EVERY field you do not send becomes null "
    "(`status` becomes open). To change one, call getOpportunity, then send all the fields to "
    "keep."
)
