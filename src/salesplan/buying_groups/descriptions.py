"""What the operations of this domain do, in words for an agent: the route declarations'
`description` (the OpenAPI document and the MCP tool derived from the route share it), and the
descriptions of tool arguments that the parameters and body fields do not carry."""

from __future__ import annotations

LIST_BUYING_GROUPS = """
List the organization's buying groups, optionally of one account (`accountId`):
`{"data": [{id, accountId, name, description, isDefault, opportunityId, memberContactIds,
archivedAt, createdAt, updatedAt}], "pagination"}`. Use it to find a buying group id by name
(`search`) before createPlan with entityType=BUYING_GROUP (a plan on the account's default group
needs no look-up: use entityType=ACCOUNT with the account id), or before
upsertRelationshipMapContact with `buyingGroupId`. `memberContactIds` are contact ids
(getContact).
"""

LIST_BUYING_GROUPS_ARGS = {
    "accountId": "Only the buying groups of this account id.",
    "includeArchived": "true to list archived (deleted) rows too; default false.",
    "search": "Case-insensitive substring of the buying group's name.",
}
