"""Rules every CRM record shares: field types with their validation, archiving, `crmId`
conflicts, and references to other rows in the body (a missing one is a 422 naming the field)."""

from __future__ import annotations

import math
import uuid
from decimal import Decimal
from typing import Annotated, Any, TypeVar
from urllib.parse import urlsplit

from pydantic import AfterValidator, BeforeValidator, Field, StringConstraints, WithJsonSchema
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from salesplan.auth.principal import RequestContext
from salesplan.errors import Unprocessable
from salesplan.kit.clock import utcnow
from salesplan.kit.email import EMAIL_PATTERN as EMAIL_PATTERN
from salesplan.kit.email import is_email
from salesplan.kit.patch import reject_nulls as reject_nulls  # the one PATCH null check
from salesplan.kit.repository import flush_or_conflict as flush_or_conflict
from salesplan.kit.scoping import scoped
from salesplan.models.crm import Account
from salesplan.models.identity import Membership

T = TypeVar("T")


def _email(value: str) -> str:
    value = value.strip()
    if not is_email(value):
        raise ValueError("Not a valid e-mail address.")
    return value


def _url(value: str) -> str:
    value = value.strip()
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc or " " in value:
        raise ValueError("Not a valid http(s) URL.")
    return value


Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=255)]
Text = Annotated[str, StringConstraints(max_length=10_000)]
Short = Annotated[str, StringConstraints(strip_whitespace=True, max_length=255)]
# The patterns document what the validators accept (a schema-valid value is never refused).
Email = Annotated[
    str,
    StringConstraints(max_length=320),
    AfterValidator(_email),
    WithJsonSchema({"type": "string", "maxLength": 320, "pattern": EMAIL_PATTERN}),
]
Url = Annotated[
    str,
    StringConstraints(max_length=2048),
    AfterValidator(_url),
    WithJsonSchema(
        {
            "type": "string",
            "maxLength": 2048,
            "pattern": r"^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?([/?#][^\s\x00]*)?$",
        }
    ),
]
CrmId = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=255)]
MONEY_PATTERN = r"^[0-9]{1,18}(\.[0-9]{1,2})?$"


def _cents(value: Any) -> Any:
    """A JSON number that is a whole number of cents up to binary noise (0.57 arrives as
    0.5700000000000001 when computed) is that number of cents."""
    if isinstance(value, float) and math.isfinite(value):
        cents = round(value * 100)
        if abs(value * 100 - cents) <= 1e-6 * max(1.0, abs(value)):
            return Decimal(cents).scaleb(-2)
    return value


Money = Annotated[
    Decimal,
    BeforeValidator(_cents),
    Field(ge=0, max_digits=20, decimal_places=2),
    WithJsonSchema(
        {
            "anyOf": [
                {
                    "type": "number",
                    "minimum": 0,
                    "maximum": 1e15,
                    "multipleOf": 0.01,
                },
                {"type": "string", "pattern": MONEY_PATTERN},
            ],
            "description": "Non-negative, at most 2 decimals: a string of at most 18 digits "
            "before the point, or a JSON number up to 1e15 (binary noise is rounded to cents).",
        }
    ),
]
Count = Annotated[int, Field(ge=0, le=2_147_483_647)]


def money_out(value: Decimal | None) -> float | None:
    return None if value is None else float(value)


def apply(row: Any, fields: dict[str, Any]) -> None:
    for name, value in fields.items():
        setattr(row, name, value)


def archive(row: Any) -> None:
    """DELETE archives; archiving an archived row changes nothing (a second DELETE is a 204)."""
    if row.archived_at is None:
        row.archived_at = utcnow()


async def check_owner(
    session: AsyncSession, ctx: RequestContext, owner_id: uuid.UUID | None
) -> None:
    """`ownerId` must be a user of the organization."""
    if owner_id is None:
        return
    stmt = scoped(select(Membership.id).where(Membership.user_id == owner_id), ctx)
    if (await session.execute(stmt)).first() is None:
        raise Unprocessable(
            "ownerId is not a user of the organization.",
            details={"field": "ownerId", "id": str(owner_id)},
        )


async def referenced(
    session: AsyncSession,
    model: type[T],
    ctx: RequestContext,
    object_id: uuid.UUID,
    field: str,
    *,
    live: bool = True,
) -> T:
    """A row named in a request body: missing (or archived) → 422 with `details.field`."""
    stmt = scoped(select(model).where(model.id == object_id), ctx, model)  # type: ignore[attr-defined]
    if live and hasattr(model, "archived_at"):
        stmt = stmt.where(model.archived_at.is_(None))  # type: ignore[attr-defined]
    row = (await session.execute(stmt)).scalar_one_or_none()
    if row is None:
        name = getattr(model, "__display_name__", model.__name__)
        raise Unprocessable(
            f"{name} {object_id} does not exist in the organization.",
            details={"field": field, "id": str(object_id)},
        )
    return row


async def referenced_account(
    session: AsyncSession, ctx: RequestContext, account_id: uuid.UUID, field: str = "accountId"
) -> Account:
    return await referenced(session, Account, ctx, account_id, field)
