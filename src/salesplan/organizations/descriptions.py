"""What the operations of this domain do, in words for an agent: the route declarations'
`description` (the OpenAPI document and the MCP tool derived from the route share it), and the
descriptions of tool arguments that the parameters and body fields do not carry."""

from __future__ import annotations

ORGANIZATION_ID = "Id of the organization (an `id` from listOrganizations)."

LIST_ORGANIZATIONS = """
List the organizations (workspaces, also called subscribers) this token can reach, as
`{"data": [{id, name, slug, createdAt, updatedAt}], "pagination": {...}}`. Call this first:
every CRM and plan tool works inside one organization. When more than one is listed, call
setActiveOrganization with the one the user means (or pass `headers.xOrganizationId` on each
call); with exactly one, it is used automatically. `search` matches the name; `sortBy` is
createdAt, updatedAt or name. Pages: `page`/`pageSize`, or `limit` then `cursor` =
`pagination.nextCursor` for the next page.
"""

GET_ORGANIZATION = """
Read one organization by id: `{id, name, slug, createdAt, updatedAt}`. Use it to confirm an
organization id the user gave you; to find an id by name use listOrganizations with `search`.
An organization this token cannot reach answers `not_found`. It does not change which
organization later calls use (that is setActiveOrganization).
"""

LIST_ORGANIZATION_USERS = """
List the users (members) of one organization with their role (admin, member or consultant):
`{"data": [{id, email, fullName, role}], "pagination": {...}}`. Use it to find a user id for
owner or assignee fields (account ownerId, task assignedToId) or to see who is on the team.
`organizationId` is required (from listOrganizations); `search` matches the name or e-mail;
`sortBy` is createdAt, email or fullName.
"""

GET_ORGANIZATION_ARGS = {"organizationId": ORGANIZATION_ID}
LIST_ORGANIZATION_USERS_ARGS = {"organizationId": ORGANIZATION_ID}

# The MCP tool's description (contract §9, 2026-11-27: at most ~200 characters).
LIST_ORGANIZATIONS_BRIEF = (
    "List the organizations (workspaces) this token can reach. With several, call "
    "setActiveOrganization once, or pass `headers.xOrganizationId` on each call."
)
