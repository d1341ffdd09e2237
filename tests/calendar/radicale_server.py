"""A real Radicale CalDAV server for the calendar tests: a subprocess on a free loopback port,
with its own storage folder and htpasswd users (plain text: test-only)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

USERS = {"alice": "alice-pass", "bob": "bob-pass"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Radicale:
    process: subprocess.Popen[bytes]
    base_url: str

    def auth(self, user: str = "alice") -> tuple[str, str]:
        return user, USERS[user]

    def new_calendar(self, user: str = "alice") -> str:
        """A fresh calendar collection of `user`; answers its URL."""
        url = f"{self.base_url}/{user}/{uuid.uuid4().hex}/"
        body = (
            '<?xml version="1.0" encoding="utf-8"?><c:mkcalendar xmlns:d="DAV:" '
            'xmlns:c="urn:ietf:params:xml:ns:caldav"><d:set><d:prop>'
            "<d:displayname>Work</d:displayname></d:prop></d:set></c:mkcalendar>"
        )
        r = httpx.request("MKCALENDAR", url, content=body, auth=self.auth(user))
        assert r.status_code == 201, r.text
        return url

    def put_event(
        self, calendar_url: str, ics: str, name: str | None = None, user: str = "alice"
    ) -> str:
        href = f"{calendar_url}{name or uuid.uuid4().hex}.ics"
        r = httpx.put(
            href, content=ics, auth=self.auth(user), headers={"Content-Type": "text/calendar"}
        )
        assert r.status_code in (201, 204), r.text
        return href

    def get(self, href: str, user: str = "alice") -> httpx.Response:
        return httpx.get(href, auth=self.auth(user))

    def delete(self, href: str, user: str = "alice") -> None:
        r = httpx.delete(href, auth=self.auth(user))
        assert r.status_code in (200, 204), r.text


def start_radicale(folder: Path) -> Radicale:
    folder.mkdir(parents=True, exist_ok=True)
    users = folder / "users"
    users.write_text("".join(f"{u}:{p}\n" for u, p in USERS.items()))
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "radicale",
            "--config",
            "",
            "--server-hosts",
            f"127.0.0.1:{port}",
            "--storage-filesystem-folder",
            str(folder / "collections"),
            "--auth-type",
            "htpasswd",
            "--auth-htpasswd-filename",
            str(users),
            "--auth-htpasswd-encryption",
            "plain",
            "--rights-type",
            "owner_only",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(base + "/.web/", timeout=1)
            return Radicale(process, base)
        except httpx.TransportError:
            if process.poll() is not None:
                raise RuntimeError("radicale exited at start-up") from None
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("radicale did not start")


def ics_event(
    uid: str | None = None,
    *,
    title: str = "Meeting",
    start: datetime | None = None,
    minutes: int = 30,
    attendees: tuple[str, ...] = (),
    rrule: str | None = None,
    description: str | None = None,
) -> str:
    start = start or (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0)
    end = start + timedelta(minutes=minutes)
    fmt = "%Y%m%dT%H%M%SZ"
    lines = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        "PRODID:-//salesplan tests//EN",
        "BEGIN:VEVENT",
        f"UID:{uid or uuid.uuid4()}",
        f"DTSTAMP:{datetime.now(UTC).strftime(fmt)}",
        f"DTSTART:{start.strftime(fmt)}",
        f"DTEND:{end.strftime(fmt)}",
        f"SUMMARY:{title}",
    ]
    if description:
        lines.append(f"DESCRIPTION:{description}")
    if rrule:
        lines.append(f"RRULE:{rrule}")
    lines += [f"ATTENDEE;CN={a.split('@')[0]}:mailto:{a}" for a in attendees]
    lines += ["END:VEVENT", "END:VCALENDAR", ""]
    return "\r\n".join(lines)
