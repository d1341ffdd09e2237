"""Organization context: X-Organization-Id and its aliases (contract §3)."""

from __future__ import annotations

import uuid

from starlette.requests import Request

from salesplan.auth.principal import Principal
from salesplan.errors import Forbidden, OrganizationRequired, ValidationFailed

HEADER_NAMES = ("x-organization-id", "x-subscriber-id")
QUERY_NAMES = ("organizationId", "subscriberId")


def requested_organization(request: Request) -> str | None:
    """The raw organization value the client named (for the rate-limit bucket), if any."""
    for name in HEADER_NAMES:
        value = request.headers.get(name)
        if value:
            return value.strip()
    for name in QUERY_NAMES:
        value = request.query_params.get(name)
        if value:
            return value.strip()
    return None


def parse_organization_id(raw: object, location: list[str | int]) -> uuid.UUID | None:
    """One named organization value: absent or blank is None; else it must be a UUID (a 400 at
    `location`, which each transport words its own way)."""
    if raw is None or (isinstance(raw, str) and raw.strip() == ""):
        return None
    try:
        return uuid.UUID(str(raw).strip())
    except ValueError:
        raise ValidationFailed.at(location, "Organization id must be a UUID.") from None


def named_organization(request: Request) -> uuid.UUID | None:
    """Every place an organization may be named must agree; each must be a UUID (a header
    sent empty too: a 400)."""
    named: dict[uuid.UUID, None] = {}
    for name in HEADER_NAMES:
        # A header sent empty names no organization but is not its absence (issue 38): a
        # client that meant to name one learns so, instead of landing in a default one.
        value = request.headers.get(name)
        if value is not None and not value.strip():
            raise ValidationFailed.at(
                ["header", name], "Organization id must be a UUID, not empty."
            )
    for location, source, names in (
        ("header", request.headers, HEADER_NAMES),
        ("query", request.query_params, QUERY_NAMES),
    ):
        for name in names:
            found = parse_organization_id(source.get(name), [location, name])
            if found is not None:
                named.setdefault(found, None)
    if len(named) > 1:
        raise ValidationFailed(
            "The organization values in the request disagree.",
            details={"organizationIds": [str(o) for o in named]},
        )
    return next(iter(named), None)


def resolve_organization(
    principal: Principal, named: uuid.UUID | None, *, required_message: str | None = None
) -> uuid.UUID:
    """The organization of a call (contract §3): the named one if reachable (else 403); none
    named and one reachable → that one; several → 400 `organization_required`, whose message
    (`required_message`) tells the caller how its transport names one."""
    if named is not None:
        if named not in principal.organization_ids:
            raise Forbidden(
                "The token has no access to this organization.",
                details={"organizationId": str(named), "reason": "organization_not_accessible"},
            )
        return named
    if len(principal.organization_ids) == 1:
        return next(iter(principal.organization_ids))
    if not principal.organization_ids:
        raise Forbidden(
            "The token has no access to any organization.",
            details={"reason": "no_organization"},
        )
    raise OrganizationRequired(
        required_message,
        details={"organizationIds": sorted(str(o) for o in principal.organization_ids)},
    )
