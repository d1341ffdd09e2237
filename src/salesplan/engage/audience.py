"""Who is in an audience, as one SQL statement: a MANUAL list's members, a DYNAMIC list's
criteria, or explicit contact ids. Every source selects live contacts of the organization,
ordered by contact id so that readers and the enrollment worker page it by keyset."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, func, select, true

from salesplan.kit.pagination import contains_ci
from salesplan.kit.scoping import OrgScope, scoped
from salesplan.models.crm import Contact
from salesplan.models.engage import EngageList, EngageListMember


def criteria_condition(criteria: dict[str, Any]) -> ColumnElement[bool]:
    """The criteria (camelCase, as stored) as one WHERE clause on `contacts`."""
    conditions: list[ColumnElement[bool]] = []
    if account_ids := criteria.get("accountIds"):
        conditions.append(Contact.account_id.in_([uuid.UUID(str(a)) for a in account_ids]))
    if title := criteria.get("titleContains"):
        conditions.append(contains_ci(Contact.title, title))
    if domain := criteria.get("emailDomain"):
        escaped = domain.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        conditions.append(func.lower(Contact.email).like(f"%@{escaped}", escape="\\"))
    has_email = criteria.get("hasEmail")
    if has_email is True:
        conditions.append(and_(Contact.email.is_not(None), Contact.email != ""))
    elif has_email is False:
        conditions.append((Contact.email.is_(None)) | (Contact.email == ""))
    if since := criteria.get("updatedSince"):
        value = since if isinstance(since, datetime) else datetime.fromisoformat(since)
        conditions.append(Contact.updated_at >= value)
    return and_(true(), *conditions)


def audience_of_list(lst: EngageList, *columns: Any) -> Select:  # type: ignore[type-arg]
    """The list's contacts (live, same organization); `columns` default to the Contact entity."""
    stmt = scoped(select(*(columns or (Contact,))), lst, Contact).where(
        Contact.archived_at.is_(None)
    )
    if lst.type == "DYNAMIC":
        return stmt.where(criteria_condition(lst.criteria or {}))
    return stmt.join(
        EngageListMember,
        and_(EngageListMember.contact_id == Contact.id, EngageListMember.list_id == lst.id),
    )


def audience_of_ids(
    organization_id: uuid.UUID, contact_ids: list[uuid.UUID], *columns: Any
) -> Select:  # type: ignore[type-arg]
    return scoped(select(*(columns or (Contact,))), OrgScope(organization_id), Contact).where(
        Contact.archived_at.is_(None),
        Contact.id.in_(contact_ids),
    )
