"""Bounds on an inbound message's header section, applied to its bytes before the e-mail
parser sees them (contract §12, "every user-controlled parse is bounded").

The standard library's header parser is slow on huge structured headers: 25,000 addresses in
`From:` or 40,000 encoded words in `Subject:` took it 15 to 130 s. So the header section is
rewritten first, in one linear pass, and a message over a bound is **stored truncated**
(contract §12: "stored best effort"), never refused for it:

- at most `MAX_HEADER_FIELDS` fields (the rest of the header section is dropped);
- at most `MAX_IDS` message ids in `References` (its newest, the last) and `In-Reply-To`
  (its first): the ids are all that is read of them;
- at most `MAX_ADDRESSES` addresses in an address field (`From`, `To`, `Cc`, …);
- at most `MAX_ENCODED_WORDS` RFC 2047 encoded words (`=?…?=`) in a field;
- at most `MAX_FIELD_BYTES` bytes in a field (its folded lines included).

The body is left as it is (it is at most 10 MiB, and parsed in a worker thread)."""

from __future__ import annotations

import re

MAX_HEADER_FIELDS = 500
MAX_FIELD_BYTES = 8 * 1024
MAX_ADDRESSES = 100
MAX_ENCODED_WORDS = 100
MAX_IDS = 100

ADDRESS_FIELDS = frozenset(
    {
        b"from",
        b"to",
        b"cc",
        b"bcc",
        b"reply-to",
        b"sender",
        b"resent-from",
        b"resent-to",
        b"resent-cc",
        b"resent-bcc",
        b"resent-sender",
        b"return-path",
        b"delivered-to",
        b"disposition-notification-to",
    }
)
_MSGID = re.compile(rb"<[^<>\s]+>")
_ENCODED_WORD = re.compile(rb"=\?")
_END_OF_HEADERS = re.compile(rb"\r?\n\r?\n")
_NAME = re.compile(rb"([!-9;-~]+)[ \t]*:")


def bound_headers(raw: bytes) -> bytes:
    """`raw` with its header section within the bounds above (unchanged when it already is)."""
    end = _END_OF_HEADERS.search(raw)
    head, rest = (raw[: end.start()], raw[end.start() :]) if end else (raw, b"")
    fields = _fields(head)
    bounded = [_bound_field(field) for field in fields[:MAX_HEADER_FIELDS]]
    if len(bounded) == len(fields) and all(a is b for a, b in zip(bounded, fields, strict=True)):
        return raw
    return b"\r\n".join(bounded) + rest


def _fields(head: bytes) -> list[bytes]:
    """The header section's fields, each with its continuation lines (line breaks as CRLF,
    without the last one)."""
    fields: list[list[bytes]] = []
    for line in head.split(b"\n"):
        line = line.removesuffix(b"\r")
        if line[:1] in (b" ", b"\t") and fields:
            fields[-1].append(line)
        else:
            fields.append([line])
    return [b"\r\n".join(lines) for lines in fields]


def _bound_field(field: bytes) -> bytes:
    """The field within its bounds (the same object when it already is)."""
    found = _NAME.match(field)
    if found is None:
        return field[:MAX_FIELD_BYTES] if len(field) > MAX_FIELD_BYTES else field
    name, value = found.group(1).lower(), field[found.end() :]
    bounded = value
    if name in (b"references", b"in-reply-to"):
        if len(value) > 1024 or value.count(b"<") > MAX_IDS:
            ids = _MSGID.findall(value)
            kept = ids[-MAX_IDS:] if name == b"references" else ids[:MAX_IDS]
            bounded = b" " + b" ".join(kept)
    else:  # cut first: the scans below then read at most MAX_FIELD_BYTES
        if len(bounded) > MAX_FIELD_BYTES:
            bounded = _cut(bounded, MAX_FIELD_BYTES)
        if name in ADDRESS_FIELDS:
            bounded = _first_addresses(bounded, MAX_ADDRESSES)
        bounded = _first_encoded_words(bounded, MAX_ENCODED_WORDS)
    if bounded is value:
        return field
    return field[: found.end()] + bounded


def _first_addresses(value: bytes, most: int) -> bytes:
    """The value up to its `most`-th top-level comma (one outside quotes, comments and angle
    brackets): its first `most` addresses."""
    if value.count(b",") < most:
        return value
    quoted = escaped = False
    depth = angle = 0
    commas = 0
    for i, byte in enumerate(value):
        if escaped:
            escaped = False
        elif byte == 0x5C:  # backslash
            escaped = quoted or depth > 0
        elif quoted:
            quoted = byte != 0x22
        elif byte == 0x22:
            quoted = True
        elif byte == 0x28:  # (
            depth += 1
        elif byte == 0x29 and depth:
            depth -= 1
        elif depth:
            continue
        elif byte == 0x3C:  # <
            angle += 1
        elif byte == 0x3E and angle:
            angle -= 1
        elif byte == 0x2C and not angle:  # ,
            commas += 1
            if commas == most:
                return value[:i]
    return value


def _first_encoded_words(value: bytes, most: int) -> bytes:
    """The value before its (`most` + 1)-th encoded word."""
    if value.count(b"=?") <= most:
        return value
    for count, found in enumerate(_ENCODED_WORD.finditer(value)):
        if count == most:
            return value[: found.start()].rstrip()
    return value


def _cut(value: bytes, size: int) -> bytes:
    """The first `size` bytes, cut at the last whitespace before them when there is one (so
    that no word is cut in two), without a trailing line break."""
    head = value[:size]
    space = max(head.rfind(b" "), head.rfind(b"\t"))
    if space > size // 2:
        head = head[:space]
    return head.rstrip(b"\r\n")
