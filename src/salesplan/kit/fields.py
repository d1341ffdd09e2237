"""The field types of CRM request bodies, with their validation and the JSON schema that says
what the validators accept (a schema-valid value is never refused): names, texts, e-mail
addresses, URLs, `crmId`s, money, counts, dates."""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BeforeValidator,
    Field,
    PlainSerializer,
    StringConstraints,
    WithJsonSchema,
)

from salesplan.kit.email import EMAIL_PATTERN as EMAIL_PATTERN
from salesplan.kit.email import is_email


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
# A host name: dot-separated labels of letters (any script), digits, `-` and `_`, a label
# neither starting nor ending with `-`; no spaces, no punctuation (`not a domain!!`).
_LABEL = r"[A-Za-z0-9_\u00a1-\uffff](?:[A-Za-z0-9_\u00a1-\uffff-]{0,61}[A-Za-z0-9_\u00a1-\uffff])?"
DOMAIN_PATTERN = rf"^(?:{_LABEL}\.)+{_LABEL}$"
_DOMAIN = re.compile(DOMAIN_PATTERN)


def _domain(value: str) -> str:
    if not _DOMAIN.fullmatch(value):
        raise ValueError("Not a domain name (such as example.com).")
    return value


Domain = Annotated[
    str,
    StringConstraints(strip_whitespace=True, max_length=253),
    AfterValidator(_domain),
    WithJsonSchema({"type": "string", "maxLength": 253, "pattern": DOMAIN_PATTERN}),
]
CrmId = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=255)]
MONEY_PATTERN = r"^[0-9]{1,18}(\.[0-9]{1,2})?$"


def _cents(value: object) -> object:
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
                    "format": "decimal",
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

_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _iso_date(value: object) -> object:
    """Only `YYYY-MM-DD` (contract §1): pydantic's lax `date` also takes a number, or a string
    of one, as Unix seconds (`to=0` was 1970-01-01) and a date-time whose time is midnight."""
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    if isinstance(value, str) and _ISO_DATE.fullmatch(value):
        return value  # parsed by pydantic: a day that does not exist is still refused
    raise ValueError("Must be a date in the form YYYY-MM-DD.")


Date = Annotated[date, BeforeValidator(_iso_date)]
"""A calendar date, in queries and bodies: `YYYY-MM-DD` and nothing else."""

_NUMBER = re.compile(r"\s*[-+]?[0-9]+(\.[0-9]*)?\s*")


def _not_seconds(value: object) -> object:
    """pydantic's lax `datetime` reads a number, or a string of one, as Unix seconds (`from=0`
    was 1970-01-01): a date-time is written as one (contract §12: real dates only)."""
    if isinstance(value, int | float) or (isinstance(value, str) and _NUMBER.fullmatch(value)):
        raise ValueError("Must be an ISO 8601 date-time, e.g. 2026-11-25T09:00:00Z.")
    return value


# The instants a date-time input may name: those a UTC datetime holds (Python's and the
# columns'). Beyond them a valid date-time (`0001-01-01T00:00:00+14:00` is in year 0 in UTC)
# is a 400 where it is read, not an OverflowError (a 500) where it is bound or compared.
EARLIEST_INSTANT = datetime.min.replace(tzinfo=UTC)
LATEST_INSTANT = datetime.max.replace(tzinfo=UTC)
OUT_OF_RANGE = "The date-time is out of range: in UTC it must fall in years 1 to 9999."


def in_range(value: datetime) -> datetime | None:
    """The instant in UTC, or None when it is out of range (or has no offset)."""
    if value.tzinfo is None or value.utcoffset() is None:
        return None
    try:
        instant = value.astimezone(UTC)
    except OverflowError:
        return None
    return instant if EARLIEST_INSTANT <= instant <= LATEST_INSTANT else None


def _in_utc(value: datetime) -> datetime:
    instant = in_range(value)
    if instant is None:
        raise ValueError(OUT_OF_RANGE)
    return instant


Instant = Annotated[AwareDatetime, BeforeValidator(_not_seconds), AfterValidator(_in_utc)]
"""The one date-time type of every input, body or query: RFC 3339 text with its offset (`Z` or
`±hh:mm`; a date-time without one, a date alone or a number of seconds is a 400), within
EARLIEST_INSTANT and LATEST_INSTANT (else a 400), answered in UTC."""


def stored_instant(value: object) -> datetime | None:
    """A date-time read back from stored JSON (a DYNAMIC list's criteria), defensively: the
    instant in UTC, or None for anything that is not an Instant (a value stored before the
    rule, or by hand)."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    return in_range(value) if isinstance(value, datetime) else None


def money_out(value: Decimal | None) -> float | None:
    return None if value is None else float(value)


MoneyOut = Annotated[
    Any,
    PlainSerializer(money_out, return_type=float | None),
    WithJsonSchema(
        {
            "anyOf": [{"type": "number", "format": "decimal"}, {"type": "null"}],
            "description": "An amount of money: a JSON number whose text is the amount in "
            "decimal (`1234.5`), exact to the cent below 10^13 (15 significant digits); read "
            "it as a decimal, not a binary float (`format: decimal`).",
        }
    ),
]
"""Money in a response: a JSON number (the wire format since 1.0), documented as a decimal so
that a client can keep it exact (the Python client reads it as `Decimal`)."""
