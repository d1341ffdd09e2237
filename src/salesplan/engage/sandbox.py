"""The template renderer's child process: renders merge fields in Jinja2's immutable sandbox,
one job at a time, within a time and an output budget (contract §12 "Templates").

It runs as a script of its own (`python -P sandbox.py`, started by `engage.render`'s pool) and
imports only the standard library and Jinja2. A render stops itself when it runs over its time
(SIGALRM between two bytecodes: every template loop is Python code), when its output passes the
budget (counted as it is produced), when one operator would build a string, list or integer
over the budget (`*`, `**`, `+`, `%` are checked before they run), or when the process runs out
of its address space (512 MiB: a filter or method asked for a huge width fails with
MemoryError). What the sandbox cannot stop (a long operation inside C
code) the parent stops by killing this process.

Frames on stdin/stdout: a 4-byte big-endian length, then JSON. A request is
`{"seconds", "limit", "jobs": [{"subject", "body", "html", "context"}]}`; each job is answered
as it finishes, by `{"ok": [subject, body, html, unknownFields]}` or `{"error": reason,
"message": text}` (reason `template_too_expensive` or `template_error`)."""

from __future__ import annotations

import contextlib
import json
import re
import resource
import signal
import struct
import sys
from collections import OrderedDict
from types import FrameType
from typing import Any, BinaryIO

from jinja2 import ChainableUndefined, Template
from jinja2.exceptions import TemplateError
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment

TOO_EXPENSIVE = "template_too_expensive"
TEMPLATE_ERROR = "template_error"
# The address space of this process: an operation asking more fails with MemoryError.
ADDRESS_SPACE = 512 * 1024 * 1024
# Integers in a template: at most this many bits (Python prints at most 4,300 digits).
MAX_INT_BITS = 14_000
# Lists and tuples a template builds by `*` or `+`: at most this many items.
MAX_ITEMS = 100_000


class OverBudget(BaseException):
    """Time or size spent: a BaseException, so that no `except Exception` in a template's code
    path swallows it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


_budget = {"limit": 1024 * 1024}
# The current render's unknown fields and the parent object of each context dict (by id).
_unknown: list[str] = []
_parents: dict[int, str] = {}


def _size(value: object) -> int:
    if isinstance(value, str | bytes | list | tuple):
        return len(value)
    return 0


def _check_binop(op: str, left: object, right: object) -> None:
    """Refuse before computing what would be over the budget."""
    limit = _budget["limit"]
    if op == "**" and isinstance(left, int) and isinstance(right, int) and right > 0:
        if abs(left) > 1 and left.bit_length() * right > MAX_INT_BITS:
            raise OverBudget("an integer in the template is too large")
    elif op == "*":
        for seq, times in ((left, right), (right, left)):
            if isinstance(times, int) and not isinstance(seq, int | float):
                size = _size(seq)
                cap = MAX_ITEMS if isinstance(seq, list | tuple) else limit
                if size * max(times, 0) > cap:
                    raise OverBudget("the template builds a value over its output budget")
        both_int = isinstance(left, int) and isinstance(right, int)
        if both_int and _bits(left) + _bits(right) > MAX_INT_BITS:
            raise OverBudget("an integer in the template is too large")
    elif op == "+":
        cap = MAX_ITEMS if isinstance(left, list | tuple) else limit
        if _size(left) + _size(right) > cap:
            raise OverBudget("the template builds a value over its output budget")
    elif op == "%" and isinstance(left, str):
        # printf-style widths and precisions: `'%999999999s' % 1` is a 1 GB string.
        for width, precision in _PRINTF.findall(left):
            for number in (width, precision):
                if number == "*" or (number and (len(number) > 7 or int(number) > limit)):
                    raise OverBudget("the template builds a value over its output budget")


def _bits(value: object) -> int:
    return value.bit_length() if isinstance(value, int) else 0


_PRINTF = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")


class Sandbox(ImmutableSandboxedEnvironment):
    intercepted_binops = frozenset({"*", "**", "+", "%", "//"})

    def call_binop(self, context: Context, operator_: str, left: object, right: object) -> object:
        _check_binop(operator_, left, right)
        result = super().call_binop(context, operator_, left, right)
        if isinstance(result, str) and len(result) > _budget["limit"]:
            raise OverBudget("the template builds a value over its output budget")
        return result


class Recording(ChainableUndefined):
    """Renders empty; remembers the dotted name that had no value."""

    def __init__(self, hint: Any = None, obj: Any = None, name: Any = None, exc: Any = None):
        super().__init__(hint, obj, name, exc)
        if name is not None:
            parent = _parents.get(id(obj)) if obj is not None else None
            dotted = f"{parent}.{name}" if parent else str(name)
            if isinstance(obj, ChainableUndefined):
                dotted = f"{getattr(obj, '_undefined_name', '?')}.{name}"
            if dotted not in _unknown:
                _unknown.append(dotted)


_ENVS = {html: Sandbox(autoescape=html, undefined=Recording) for html in (False, True)}
_COMPILED: OrderedDict[tuple[str, bool], Template] = OrderedDict()


def _compiled(source: str, html: bool) -> Template:
    key = (source, html)
    found = _COMPILED.get(key)
    if found is None:
        found = _COMPILED[key] = _ENVS[html].from_string(source)
        if len(_COMPILED) > 256:
            _COMPILED.popitem(last=False)
    else:
        _COMPILED.move_to_end(key)
    return found


def _render_one(
    source: str | None, html: bool, values: dict[str, dict[str, object]], spent: list[int]
) -> str | None:
    if source is None:
        return None
    limit = _budget["limit"]
    chunks = []
    for chunk in _compiled(source, html).generate(values):
        spent[0] += len(chunk)
        if spent[0] > limit:
            raise OverBudget("the rendered message is over 1 MiB")
        chunks.append(chunk)
    return "".join(chunks)


def render_job(job: dict[str, Any]) -> dict[str, object]:
    """One job, its time already armed by the caller."""
    _unknown.clear()
    context = job["context"]
    values = {
        name: {k: ("" if v is None else v) for k, v in fields.items()}
        for name, fields in context.items()
    }
    _parents.clear()
    _parents.update({id(value): name for name, value in values.items()})
    spent = [0]
    try:
        subject = _render_one(job.get("subject"), False, values, spent)
        body = _render_one(job.get("body"), False, values, spent) or ""
        html = _render_one(job.get("html"), True, values, spent)
        size = sum(len(part.encode()) for part in (subject, body, html) if part)
        if size > _budget["limit"]:
            raise OverBudget("the rendered message is over 1 MiB")
        return {"ok": [subject, body, html, list(_unknown)]}
    except OverBudget as exc:
        return {"error": TOO_EXPENSIVE, "message": exc.message}
    except MemoryError:
        return {"error": TOO_EXPENSIVE, "message": "the template needs too much memory"}
    except RecursionError:
        return {"error": TOO_EXPENSIVE, "message": "the template recurses too deeply"}
    except TemplateError as exc:
        return {"error": TEMPLATE_ERROR, "message": exc.message or type(exc).__name__}
    except Exception as exc:  # anything a template's operation raises (ValueError, …)
        return {"error": TEMPLATE_ERROR, "message": type(exc).__name__}
    finally:
        _unknown.clear()
        _parents.clear()


def _on_alarm(_signum: int, _frame: FrameType | None) -> None:
    raise OverBudget("the template ran over 1 s")


def _read_exactly(stream: BinaryIO, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _write(stream: BinaryIO, payload: dict[str, object]) -> None:
    data = json.dumps(payload).encode()
    stream.write(struct.pack(">I", len(data)) + data)
    stream.flush()


def serve() -> None:
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent's Ctrl-C is the parent's
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        header = _read_exactly(stdin, 4)
        if header is None:
            return  # the parent is gone
        data = _read_exactly(stdin, struct.unpack(">I", header)[0])
        if data is None:
            return
        request = json.loads(data)
        _budget["limit"] = int(request["limit"])
        seconds = float(request["seconds"])
        for job in request["jobs"]:
            try:
                signal.setitimer(signal.ITIMER_REAL, seconds)
                try:
                    answer = render_job(job)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            except OverBudget as exc:  # the alarm rang between the render and disarming it
                answer = {"error": TOO_EXPENSIVE, "message": exc.message}
            _write(stdout, answer)


if __name__ == "__main__":
    serve()
