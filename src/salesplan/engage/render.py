"""Merge fields in Jinja2's sandbox: a template sees plain dicts of strings (never our objects),
cannot call into Python, and an unknown field renders empty and is reported.

A render runs in a child process of a small pool (`sandbox.py`), never on the event loop, and
within a budget (contract §12 "Templates"): 1 s and 1 MiB of output. The child stops a render
that runs over (a Python-level alarm, size checks); one that it cannot stop (a long operation in
C) the pool stops by killing the child after the grace below and starting another. Either way
the answer is a 422 `unprocessable` with `details.reason` `template_too_expensive` (time or
size) or `template_error` (any other error), or, at send, a `failed` message with that reason
as its `lastError`."""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import select
import struct
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from jinja2 import TemplateSyntaxError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from salesplan.engage.sandbox import TEMPLATE_ERROR, TOO_EXPENSIVE
from salesplan.errors import Unprocessable, ValidationFailed

log = logging.getLogger("salesplan.engage.render")

_TEXT_ENV = ImmutableSandboxedEnvironment(autoescape=False)

MAX_SECONDS = 1.0
MAX_OUTPUT_BYTES = 1024 * 1024
# How long past MAX_SECONDS the pool waits for a child's answer before it kills the child.
GRACE_SECONDS = 0.5
# Child processes (renders at once); more renders wait for one, off the event loop.
PROCESSES = max(1, min(4, os.cpu_count() or 1))


def check_syntax(source: str | None, field: str) -> None:
    """A template that does not parse is a 400 naming the field."""
    if source is None:
        return
    try:
        _TEXT_ENV.parse(source)
    except TemplateSyntaxError as exc:
        raise ValidationFailed.at(
            ["body", field], f"Template syntax error on line {exc.lineno}: {exc.message}"
        ) from None


@dataclass
class Rendered:
    subject: str | None
    body: str
    body_html: str | None
    unknown_fields: list[str]


def merge_context(
    contact: Any, account: Any | None, sender: Any | None, organization: Any | None
) -> dict[str, dict[str, object]]:
    """What `{{ contact.firstName }}`, `{{ account.name }}`, `{{ sender.fullName }}` … see."""
    return {
        "contact": {
            "firstName": contact.first_name,
            "lastName": contact.last_name,
            "fullName": contact.full_name,
            "email": contact.email,
            "title": contact.title,
            "phone": contact.phone,
            "linkedinUrl": contact.linkedin_url,
        },
        "account": {
            "name": account.name if account else None,
            "domain": account.domain if account else None,
            "website": account.website if account else None,
            "industry": account.industry if account else None,
        },
        "sender": {
            "fullName": sender.full_name if sender else None,
            "email": sender.email if sender else None,
        },
        "organization": {"name": organization.name if organization else None},
    }


@dataclass
class RenderFailure:
    """Why a render stopped: `reason` is template_too_expensive or template_error."""

    reason: str
    message: str

    def error(self) -> Unprocessable:
        if self.reason == TOO_EXPENSIVE:
            text = f"The template is too expensive to render: {self.message}."
        else:
            text = f"The template cannot be rendered: {self.message}"
        return Unprocessable(text, details={"reason": self.reason})


@dataclass(frozen=True)
class Job:
    subject: str | None
    body: str
    body_html: str | None
    context: dict[str, dict[str, object]]


class _Child:
    """One sandbox process, talked to in frames over its pipes (sandbox.py)."""

    def __init__(self) -> None:
        script = Path(__file__).with_name("sandbox.py")
        # -P: the script's folder is not put on sys.path (its modules are not the stdlib's).
        self.process = subprocess.Popen(
            [sys.executable, "-P", str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
            close_fds=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin = self.process.stdin
        self.fd = self.process.stdout.fileno()
        self.buffer = b""

    def send(self, payload: dict[str, object]) -> None:
        data = orjson.dumps(payload)
        view = memoryview(struct.pack(">I", len(data)) + data)
        while view:
            view = view[os.write(self.stdin.fileno(), view) :]

    def receive(self, deadline: float) -> dict[str, Any] | None:
        """The next answer, or None when none came before `deadline` (monotonic)."""
        while True:
            if len(self.buffer) >= 4:
                size = struct.unpack(">I", self.buffer[:4])[0]
                if len(self.buffer) >= 4 + size:
                    frame, self.buffer = self.buffer[4 : 4 + size], self.buffer[4 + size :]
                    answer: dict[str, Any] = orjson.loads(frame)
                    return answer
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return None  # the child died
            self.buffer += chunk

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


class RenderPool:
    """A few sandbox processes, each rendering one batch at a time, driven from as many threads
    (never the event loop). A child that does not answer in time is killed and replaced."""

    def __init__(self, processes: int = PROCESSES) -> None:
        self._executor = ThreadPoolExecutor(processes, thread_name_prefix="salesplan-render")
        self._idle: queue.SimpleQueue[_Child] = queue.SimpleQueue()
        self._lock = threading.Lock()

    async def run(self, jobs: list[Job]) -> list[Rendered | RenderFailure]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._run, jobs)

    def _take(self) -> _Child:
        while True:
            try:
                child = self._idle.get_nowait()
            except queue.Empty:
                return _Child()
            if child.process.poll() is None:
                return child

    def _run(self, jobs: list[Job]) -> list[Rendered | RenderFailure]:
        results: list[Rendered | RenderFailure] = []
        while len(results) < len(jobs):
            child = self._take()
            pending = jobs[len(results) :]
            try:
                child.send(
                    {
                        "seconds": MAX_SECONDS,
                        "limit": MAX_OUTPUT_BYTES,
                        "jobs": [
                            {
                                "subject": job.subject,
                                "body": job.body,
                                "html": job.body_html,
                                "context": job.context,
                            }
                            for job in pending
                        ],
                    }
                )
            except OSError:
                child.kill()
                continue  # it died meanwhile: the next child takes the jobs
            for _ in pending:
                answer = child.receive(time.monotonic() + MAX_SECONDS + GRACE_SECONDS)
                if answer is None:
                    # Stuck in C code (or dead): stop it; the next child renders the rest.
                    log.warning("template render stopped: the sandbox process did not answer")
                    child.kill()
                    results.append(RenderFailure(TOO_EXPENSIVE, "it ran over 1 s"))
                    break
                results.append(_result(answer))
            else:
                self._idle.put(child)
        return results


def _result(answer: dict[str, Any]) -> Rendered | RenderFailure:
    if "ok" in answer:
        subject, body, body_html, unknown = answer["ok"]
        return Rendered(subject=subject, body=body, body_html=body_html, unknown_fields=unknown)
    reason = answer.get("error")
    return RenderFailure(
        reason if reason in (TOO_EXPENSIVE, TEMPLATE_ERROR) else TEMPLATE_ERROR,
        str(answer.get("message") or "error"),
    )


_pool: RenderPool | None = None
_pool_lock = threading.Lock()


def pool() -> RenderPool:
    """The process's render pool, started at its first render."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = RenderPool()
        return _pool


async def render_many(jobs: list[Job]) -> list[Rendered | RenderFailure]:
    """Each job rendered, in order: its Rendered, or why it stopped."""
    if not jobs:
        return []
    return await pool().run(jobs)


async def render(
    subject: str | None,
    body: str,
    body_html: str | None,
    context: dict[str, dict[str, object]],
) -> Rendered:
    """One render; a 422 (`RenderFailure.error`) when it stops."""
    (result,) = await render_many([Job(subject, body, body_html, context)])
    if isinstance(result, RenderFailure):
        raise result.error()
    return result


async def check_renders(
    subject: str | None, body: str | None, body_html: str | None, *, unparsed_passes: bool = False
) -> None:
    """A template about to be stored renders within its budget for a contact with no values
    (a send to a bare address): else the 422 of its render (contract §12, create and update).
    With `unparsed_passes` (a draft, which may be stored unfinished) a text that does not parse
    is not rendered."""
    if unparsed_passes:
        try:
            for source in (subject, body, body_html):
                if source is not None:
                    _TEXT_ENV.parse(source)
        except TemplateSyntaxError:
            return
    context = merge_context(_Blank(), None, None, None)
    await render(subject, body or "", body_html, context)


class _Blank:
    first_name = last_name = full_name = email = title = phone = linkedin_url = None
