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
- at most `MAX_PARAMETERS` parameters in `Content-Type` and `Content-Disposition`;
- at most `MAX_FIELD_BYTES` bytes in a field (its folded lines included).

The same bounds hold for the header section of every MIME part and of every attached message
(`bound_message`): a part's `Content-Type` of 20,000 parameters held a parser thread 22 s,
40,000 encoded words in a part's filename 67 s. At most `MAX_PARTS` parts are kept (the rest
of the message is dropped) and parts nested deeper than `MAX_DEPTH` are dropped. The bodies are
left as they are (the message is at most 10 MiB, and parsed in a worker thread)."""

from __future__ import annotations

import re

MAX_HEADER_FIELDS = 500
MAX_FIELD_BYTES = 8 * 1024
MAX_ADDRESSES = 100
MAX_ENCODED_WORDS = 100
MAX_IDS = 100
MAX_PARAMETERS = 100
MAX_PARTS = 1000
MAX_DEPTH = 20

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
_CONTENT_TYPE = re.compile(rb"content-type[ \t]*:[ \t]*([!-~]+/[!-:<-~]+)", re.IGNORECASE)
_BOUNDARY = re.compile(
    rb'[; \t]boundary[ \t]*=[ \t]*(?:"([^"\r\n]{1,200})"|([^\s;"]{1,200}))', re.I
)


def bound_message(raw: bytes) -> bytes:
    """`raw` with the header section of the message, of each of its MIME parts and of each
    message attached to it within the bounds above (unchanged when they already are)."""
    return _bound_entity(raw, 0, [MAX_PARTS])


def _bound_entity(raw: bytes, depth: int, parts_left: list[int]) -> bytes:
    if raw[:1] in (b"\r", b"\n"):  # no header section: nothing to bound, no parts
        return raw
    bounded = bound_headers(raw)
    end = _END_OF_HEADERS.search(bounded)
    if end is None:
        return bounded
    head, rest = bounded[: end.start()], bounded[end.start() :]
    found = _CONTENT_TYPE.search(b"\n" + head) if b"ontent-" in head.lower() else None
    kind = found.group(1).lower() if found else b""
    if kind.startswith(b"message/") and kind in (b"message/rfc822", b"message/global"):
        separator = rest[: end.end() - end.start()]
        inner = rest[len(separator) :]
        if depth >= MAX_DEPTH:
            return head + separator
        bounded_inner = _bound_entity(inner, depth + 1, parts_left)
        return bounded if bounded_inner is inner else head + separator + bounded_inner
    if not kind.startswith(b"multipart/"):
        return bounded
    boundary = _BOUNDARY.search(_unfold(head))
    if boundary is None:
        return bounded
    delimiter = re.compile(rb"(\r?\n--" + re.escape(boundary.group(1) or boundary.group(2)) + rb")")
    pieces = delimiter.split(rest)  # body-before, delimiter, segment, delimiter, segment, …
    out, changed = [pieces[0]], False
    for i in range(1, len(pieces), 2):
        segment = pieces[i + 1]
        if segment.startswith(b"--"):  # the close delimiter: the epilogue follows
            out += pieces[i:]
            break
        parts_left[0] -= 1
        if parts_left[0] < 0 or depth >= MAX_DEPTH:  # the rest is dropped
            out += [pieces[i], b"--\r\n"]
            changed = True
            break
        line_end = segment.find(b"\n") + 1
        if line_end == 0:
            out += pieces[i:]
            break
        part = segment[line_end:]
        bounded_part = _bound_entity(part, depth + 1, parts_left)
        changed |= bounded_part is not part
        out += [pieces[i], segment[:line_end], bounded_part]
    return head + b"".join(out) if changed else bounded


def _unfold(head: bytes) -> bytes:
    return head.replace(b"\r\n ", b" ").replace(b"\r\n\t", b" ").replace(b"\n ", b" ")


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
        elif name in (b"content-type", b"content-disposition"):
            bounded = _first_parameters(bounded, MAX_PARAMETERS)
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


def _first_parameters(value: bytes, most: int) -> bytes:
    """The value before its (`most` + 1)-th `;`: the type and its first `most` parameters."""
    if value.count(b";") <= most:
        return value
    at = -1
    for _ in range(most + 1):
        at = value.index(b";", at + 1)
    return value[:at].rstrip()


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
