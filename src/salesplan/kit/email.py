"""The one e-mail check: something@domain.tld, no whitespace, no NUL, no second @, a top-level
label without a dot. Deliberately loose (delivery is the real test). The same pattern is the JSON
schema of `Email` (kit/fields.py), so a schema-valid address is never refused: it spells
whitespace out (`WHITESPACE`) because Python's `\\s` and ECMA-262's disagree."""

from __future__ import annotations

import re
from collections.abc import Callable
from email.utils import parseaddr
from typing import Any

from salesplan.kit.schemas import WHITESPACE

EMAIL_PATTERN = rf"^[^@{WHITESPACE}\x00]+@[^@{WHITESPACE}\x00]+\.[^@{WHITESPACE}.\x00]+$"
EMAIL = re.compile(EMAIL_PATTERN)


def is_email(value: str) -> bool:
    return EMAIL.match(value) is not None


# RFC 5322 §3.2.3: a local part that is a dot-atom needs no quotes (and is then written bare).
_DOT_ATOM = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*")
_QUOTED_PAIR = re.compile(r"\\(.)")


def mailbox(value: str) -> str:
    """The canonical address `value` names — the one helper every comparison and normalized
    column uses (contract §12): display name, angle brackets, comments and case removed;
    a quoted local part unquoted where RFC 5322 allows it (`"ada1"@x.example` and
    `"ada"."one"@x.example` are `ada1@x.example` and `ada.one@x.example`; `"a b"@x.example`
    keeps its quotes); the domain IDNA-encoded and lower-cased, without a trailing dot. So
    `Opt Out <optout@x.example>`, `"optout"@X.EXAMPLE.` and `OPTOUT@x.example (comment)`
    are all `optout@x.example` — the mailbox SMTP delivers to."""
    address = (parseaddr(value)[1] or value).strip()
    if len(address) > 2 and address[0] == address[-1] == '"' and address.count('"') == 2:
        address = address[1:-1].strip()  # the whole address quoted: `"a@x.example"`
    local, at, domain = address.rpartition("@")
    if not at:
        return address.strip('"').strip().lower()
    return f"{_local_part(local.strip())}@{_domain(domain.strip())}"


def _local_part(local: str) -> str:
    """The local part lower-cased, its quoted words unquoted when the result is a dot-atom,
    else quoted as one (RFC 5322 `quoted-string`, with `\\` and `\"` escaped)."""
    if '"' not in local:
        return local.lower()
    words: list[str] = []
    word: list[str] = []
    quoted = escaped = False
    for char in local:
        if escaped:
            word.append(char)
            escaped = False
        elif quoted and char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == "." and not quoted:
            words.append("".join(word))
            word = []
        else:
            word.append(char)
    words.append("".join(word))
    text = ".".join(words).lower()
    if _DOT_ATOM.fullmatch(text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def smtp_address(value: str) -> str | None:
    """The address as an SMTP envelope and an ASCII header carry it (no SMTPUTF8): the local
    part as written, the domain in IDNA A-labels (`ada@Bücher.example` is
    `ada@xn--bcher-kva.example`). None when that cannot be: a local part that is not ASCII,
    a domain that is not a valid IDNA name."""
    address = (parseaddr(value)[1] or value).strip()
    local, at, domain = address.rpartition("@")
    if not at or not local or not local.isascii():
        return None
    domain = _domain(domain)
    return f"{local}@{domain}" if domain and domain.isascii() else None


def _domain(domain: str) -> str:
    """The domain as DNS compares it: lower-case, IDNA A-labels (`bücher.example` is
    `xn--bcher-kva.example`), no trailing dot. A domain that is not a valid IDNA name (or a
    literal `[…]`) is only lower-cased."""
    domain = domain.rstrip(".").lower()
    if domain.isascii():
        return domain
    try:
        return domain.encode("idna").decode("ascii").lower()  # the standard library's codec
    except UnicodeError:
        return domain


def mailbox_or_none(value: str | None) -> str | None:
    """`mailbox(value)`, or None for no address (what a normalized column holds)."""
    return (mailbox(value) or None) if value else None


def mailbox_default(column: str) -> Callable[[Any], str | None]:
    """A column default (SQLAlchemy, context-sensitive) holding `mailbox` of the row's
    `column`: a normalized copy written with the row, by the ORM and by Core inserts alike,
    so that looking an address up is one indexed equality."""

    def default(context: Any) -> str | None:
        value = context.get_current_parameters().get(column)
        return mailbox_or_none(value) if isinstance(value, str) else None

    return default
