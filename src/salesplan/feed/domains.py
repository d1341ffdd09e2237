"""The organization's own domains (contract §12 "Feed visibility and attribution"): the list an
admin sets (`salesplan admin set-integration --own-domains`, the developer-settings page), else
its users' e-mail domains minus the public mailbox providers — a user with a gmail.com address
does not make gmail.com the organization's. Mail among the organization's own people belongs to
no account by domain; a Slack author of an own domain (or a user's own address) writes outbound.

The rule's data and parsing; its statements are in `feed/repository.py`, setting the list in
`feed/service.py`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from salesplan.errors import ValidationFailed

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
