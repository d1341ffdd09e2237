"""What the logs may not hold (contract §12, "Logs"): the signature of a tracking or unsubscribe
link (`/t/o/{id}/{signature}.gif`, `/t/c/{id}/{signature}?u=…`, `/t/u/{id}/{signature}`) is a
capability: whoever reads it can count opens and clicks or unsubscribe the recipient. So is a
buyer room's link token (`/rooms/{token}…`, contract §16): whoever reads it may ask for a code.
The access log names the path with the secret replaced (`redact_path`); `install()` puts the
filter on the access loggers of uvicorn and granian in the served process."""

from __future__ import annotations

import logging
import re

REDACTED = "[redacted]"
# A signed link's path: its kind, the message id, then the signature (and `.gif` for the pixel).
_SIGNED = re.compile(r"^(/t/[^/?]*/[^/?]*/)[^/?]*?(\.gif)?(?=$|[/?])")
_ROOM = re.compile(r"^(/rooms/)[^/?]+")


def redact_path(path: str) -> str:
    """`path` (with or without its query) with a tracking link's signature, or a room link's
    token, replaced."""
    if path.startswith("/rooms/"):
        return _ROOM.sub(lambda m: f"{m.group(1)}{REDACTED}", path, count=1)
    if not path.startswith("/t/"):
        return path
    return _SIGNED.sub(lambda m: f"{m.group(1)}{REDACTED}{m.group(2) or ''}", path, count=1)


class RedactSignatures(logging.Filter):
    """For uvicorn's access log records, `args` = (client, method, full path, version, status),
    and granian's, `args` = {"path": …, "query_string": …, …}: the path (granian's with its
    query put back, as uvicorn logs it) with any signature redacted."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            redacted = redact_path(args[2])
            if redacted != args[2]:
                record.args = (*args[:2], redacted, *args[3:])
        elif isinstance(args, dict) and isinstance(args.get("path"), str):
            query = args.get("query_string") or ""
            path = f"{args['path']}?{query}" if query else args["path"]
            record.args = args | {"path": redact_path(path)}
        return True


ACCESS_LOGGERS = ("uvicorn.access", "granian.access")


def install() -> None:
    """Add the filter to each access logger (once)."""
    for name in ACCESS_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RedactSignatures) for f in logger.filters):
            logger.addFilter(RedactSignatures())
