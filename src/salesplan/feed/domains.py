"""The organization's own domains (contract §12 "Feed visibility and attribution"): the list an
admin sets (`salesplan admin set-integration --own-domains`, the developer-settings page), else
its users' e-mail domains minus the public mailbox providers — a user with a gmail.com address
does not make gmail.com the organization's. Mail among the organization's own people belongs to
no account by domain; a Slack author of an own domain (or a user's own address) writes outbound.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from typing import Any

from sqlalchemy import CompoundSelect, Connection, delete, exists, func, literal, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.errors import NotFound, ValidationFailed
from salesplan.models.feed import FeedOwnDomain
from salesplan.models.identity import Membership, Organization, User

PUBLIC_MAILBOX_PROVIDERS = frozenset(
    {
        "gmail.com",
        "googlemail.com",
        "outlook.com",
        "hotmail.com",
        "live.com",
        "yahoo.com",
        "icloud.com",
        "me.com",
        "aol.com",
        "proton.me",
        "protonmail.com",
        "gmx.com",
        "gmx.de",
        "web.de",
        "mail.com",
        "yandex.ru",
        "qq.com",
    }
)
MAX_OWN_DOMAINS = 100
_DOMAIN = re.compile(r"^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$")


def email_domain(dialect: str, column: Any) -> Any:
    """The lower-cased domain of an e-mail address column, in SQL."""
    if dialect == "postgresql":
        return func.split_part(func.lower(column), "@", 2)
    return func.substr(func.lower(column), func.instr(column, "@") + 1)


def own_domains_query(dialect: str, organization_id: uuid.UUID) -> CompoundSelect:
    """The organization's own domains, in SQL (one statement of the rule): the inbox takes it as
    a subquery, Slack ingestion runs it."""
    explicit = select(FeedOwnDomain.domain).where(FeedOwnDomain.organization_id == organization_id)
    domain = email_domain(dialect, User.email)
    derived = (
        select(domain)
        .join(Membership, Membership.user_id == User.id)
        .where(
            Membership.organization_id == organization_id,
            User.email.contains("@"),
            domain.not_in(sorted(PUBLIC_MAILBOX_PROVIDERS)),
            ~exists(explicit),
        )
    )
    return explicit.union_all(derived)


def is_own_address(conn: Connection, organization_id: uuid.UUID, address: str) -> bool:
    """Whether `address` (lower-cased) is one of the organization's users' or of its own
    domains."""
    member = (
        select(User.id)
        .join(Membership, Membership.user_id == User.id)
        .where(Membership.organization_id == organization_id, func.lower(User.email) == address)
    )
    domain = address.rsplit("@", 1)[-1]
    own = own_domains_query(conn.dialect.name, organization_id).scalar_subquery()
    return bool(conn.execute(select(or_(exists(member), literal(domain).in_(own)))).scalar())


def parse_own_domains(values: str | Iterable[str], field: str = "ownDomains") -> list[str]:
    """`a.com,b.com` (or a list) as lower-cased domains in order, without duplicates; a value
    that is not a domain name is a 400 naming it. An empty list clears the explicit list."""
    parts = values.replace("\n", ",").split(",") if isinstance(values, str) else list(values)
    out: list[str] = []
    for raw in parts:
        domain = str(raw).strip().lower().lstrip("@").rstrip(".")
        if not domain:
            continue
        if not _DOMAIN.match(domain):
            raise ValidationFailed(
                f"Not a domain name: {domain[:100]!r}.",
                details={"field": field, "value": domain[:100], "reason": "invalid_domain"},
            )
        if domain not in out:
            out.append(domain)
    if len(out) > MAX_OWN_DOMAINS:
        raise ValidationFailed(
            f"At most {MAX_OWN_DOMAINS} own domains.",
            details={"field": field, "reason": "too_many_domains"},
        )
    return out


async def explicit_own_domains(session: AsyncSession, organization_id: uuid.UUID) -> list[str]:
    rows = await session.scalars(
        select(FeedOwnDomain.domain)
        .where(FeedOwnDomain.organization_id == organization_id)
        .order_by(FeedOwnDomain.domain)
    )
    return list(rows)


async def set_own_domains(
    session: AsyncSession, organization_id: uuid.UUID, domains: list[str]
) -> list[str]:
    """The organization's explicit own domains become `domains` (already parsed); an empty
    list goes back to its users' domains. Answers the list stored."""
    if await session.get(Organization, organization_id) is None:
        raise NotFound("Organization not found.", details={"id": str(organization_id)})
    await session.execute(
        delete(FeedOwnDomain).where(FeedOwnDomain.organization_id == organization_id)
    )
    session.add_all(FeedOwnDomain(organization_id=organization_id, domain=d) for d in domains)
    await session.flush()
    return sorted(domains)
