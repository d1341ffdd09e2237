"""The CalDAV side (RFC 4791, RFC 6578), blocking: callers run it with `call(fn, *args)`, on the
outbound pool (never `asyncio.to_thread`: a slow server must not hold the default executor).

HTTP goes through the `caldav` library's client (authentication, sessions) on a session guarded
by `kit/outbound` (contract §12: public destinations only, checked at every connection, redirects
included; 15 s per request). Errors carry our own texts only — "destination not allowed", "could
not connect to the server", an HTTP status — never the server's body; the library's DEBUG log,
which holds bodies, is silenced. The few requests a sync needs are written here so that a sync
transfers exactly what changed:
- `sync_collection(token)`: the hrefs and ETags changed and the hrefs deleted since `token`;
- `etags_in_window(start, end)`: a calendar-query for hrefs and ETags only (servers without
  sync-collection), compared with the stored ETags by the caller;
- `multiget(hrefs)`: the iCalendar data of the changed hrefs only.
"""

from __future__ import annotations

import logging
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import unquote, urljoin, urlsplit
from xml.sax.saxutils import escape

from caldav import DAVClient
from caldav.lib import error as dav_error
from requests.auth import AuthBase, HTTPBasicAuth

from salesplan.kit import outbound
from salesplan.kit.outbound import OutboundPolicy

NS = {"d": "DAV:", "c": "urn:ietf:params:xml:ns:caldav"}
TIMEOUT_SECONDS = outbound.TIMEOUT_SECONDS
MULTIGET_BATCH = 500
T = TypeVar("T")

# The library logs request and response bodies (and URLs) at DEBUG: never ours to keep.
logging.getLogger("caldav").setLevel(logging.INFO)
dav_error.debug_dump_communication = False


class ProviderFailure(Exception):
    """The server could not be reached or refused; `str()` is our text for it, never the
    provider's own words."""


class AuthFailure(ProviderFailure):
    pass


class DestinationRefused(ProviderFailure):
    """Contract §12: not a public address (nor one SALESPLAN_OUTBOUND_ALLOW re-allows)."""

    def __init__(self) -> None:
        super().__init__(outbound.REFUSED)


class Unreachable(ProviderFailure):
    """Every network failure, alike (no open/closed-port oracle)."""

    def __init__(self) -> None:
        super().__init__(outbound.UNREACHABLE)


async def call(fn: Callable[..., T], *args: Any, organization: object = None) -> T:
    """Run a blocking provider function on the outbound pool, its requests 15 s each, at most
    a few at a time per organization."""
    key = None if organization is None else str(organization)
    try:
        return await outbound.run_blocking(fn, *args, key=key, seconds=TIMEOUT_SECONDS)
    except outbound.DestinationNotAllowed:
        raise DestinationRefused() from None
    except outbound.OutboundError:
        raise Unreachable() from None


class PreconditionFailed(ProviderFailure):
    """If-Match did not match: someone changed the object on the server."""


class SyncTokenInvalid(ProviderFailure):
    pass


@dataclass
class SyncChanges:
    token: str | None
    changed: dict[str, str]  # href -> etag
    deleted: set[str]


# Origins (scheme, host, port) and usernames whose server asked for Basic credentials before.
# Without credentials up front every client's first request is a 401 and a second round trip,
# and servers slow a 401 down on purpose (Radicale: `auth.delay`, 0.5 to 1.5 s): most of an
# incremental sync. Learned from the server's own challenge, never assumed, so credentials are
# never sent in a scheme the server did not ask for.
_BASIC: set[tuple[str, str]] = set()


def _origin(url: str, username: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower(), username


def _known_auth(url: str, username: str, password: str) -> AuthBase | None:
    return HTTPBasicAuth(username, password) if _origin(url, username) in _BASIC else None


def _href_path(href: str) -> str:
    return unquote(urlsplit(href).path)


def _fmt(value: datetime) -> str:
    return value.strftime("%Y%m%dT%H%M%SZ")


class CalDAVCalendar:
    def __init__(self, url: str, username: str, password: str, policy: OutboundPolicy) -> None:
        self.url = url if url.endswith("/") else url + "/"
        self.username = username
        try:
            scheme = urlsplit(self.url).scheme
        except ValueError:  # e.g. an unclosed IPv6 bracket
            scheme = ""
        if scheme not in ("http", "https"):
            raise ProviderFailure("invalid calendar URL")
        try:
            self.preset_auth = _known_auth(self.url, username, password)
            self.client = DAVClient(
                url=self.url,
                username=username,
                password=password,
                auth=self.preset_auth,
                timeout=TIMEOUT_SECONDS,
            )
        except Exception:  # a malformed URL
            raise ProviderFailure("invalid calendar URL") from None
        outbound.guard_session(self.client.session, policy)

    def _request(
        self, url: str, method: str, body: str = "", headers: dict[str, str] | None = None
    ) -> Any:
        try:
            with outbound.deadline(TIMEOUT_SECONDS):
                response = self.client.request(url, method, body, headers or {})
        except dav_error.AuthorizationError:
            if self.preset_auth is not None:  # the server changed its mind: ask it again
                _BASIC.discard(_origin(self.url, self.username))
                self.preset_auth = self.client.auth = None
                return self._request(url, method, body, headers)
            raise AuthFailure("the server rejected the username or password") from None
        except outbound.DestinationNotAllowed:
            raise DestinationRefused() from None
        except dav_error.DAVError as exc:
            raise ProviderFailure(f"CalDAV error: {type(exc).__name__}") from None
        except Exception:  # connection refused, DNS, TLS, timeout: all alike
            raise Unreachable() from None
        if isinstance(self.client.auth, HTTPBasicAuth) and response.status not in (401, 403):
            _BASIC.add(_origin(self.url, self.username))
        return response

    def _xml(self, url: str, method: str, body: str, depth: str) -> ET.Element:
        headers = {"Content-Type": 'application/xml; charset="utf-8"'}
        if depth:
            headers["Depth"] = depth
        resp = self._request(url, method, body, headers)
        if resp.status == 404:
            raise ProviderFailure("the calendar URL was not found on the server (404)")
        if resp.status in (403, 409) and "sync-collection" in body:
            raise SyncTokenInvalid("the server no longer accepts the sync token")
        if resp.status not in (200, 207):
            raise ProviderFailure(f"the server answered {method} with HTTP {resp.status}")
        try:
            return ET.fromstring(resp.raw.encode() if isinstance(resp.raw, str) else resp.raw)
        except ET.ParseError:
            raise ProviderFailure("the server answered with malformed XML") from None

    # -- connection check ------------------------------------------------------------------

    def check(self) -> bool:
        """Whether the URL is a calendar collection the credentials may read; raises otherwise.
        Answers whether the collection offers sync-collection (RFC 6578)."""
        body = (
            '<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:" '
            'xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:resourcetype/>'
            "<d:supported-report-set/><d:sync-token/></d:prop></d:propfind>"
        )
        root = self._xml(self.url, "PROPFIND", body, "0")
        if root.find(".//d:resourcetype/c:calendar", NS) is None:
            raise ProviderFailure("the URL is not a CalDAV calendar collection")
        token = root.find(".//d:sync-token", NS)
        return token is not None and bool((token.text or "").strip())

    # -- reads -----------------------------------------------------------------------------

    def sync_collection(self, token: str | None) -> SyncChanges:
        body = (
            '<?xml version="1.0" encoding="utf-8"?><d:sync-collection xmlns:d="DAV:">'
            f"<d:sync-token>{escape(token or '')}</d:sync-token><d:sync-level>1</d:sync-level>"
            "<d:prop><d:getetag/></d:prop></d:sync-collection>"
        )
        try:
            root = self._xml(self.url, "REPORT", body, "")
        except AuthFailure:
            # A server refuses a token it no longer knows with 403 `valid-sync-token` (RFC 6578
            # §3.2), which the client reports as refused credentials: the caller lists again
            # without a token (and a real credential failure then fails that listing).
            if token:
                raise SyncTokenInvalid("the server no longer accepts the sync token") from None
            raise
        changed: dict[str, str] = {}
        deleted: set[str] = set()
        base = _href_path(self.url)
        for resp in root.findall("d:response", NS):
            href = _href_path(resp.findtext("d:href", "", NS))
            if href == base or not href:
                continue
            status = resp.findtext("d:status", "", NS)
            if " 404" in status:
                deleted.add(href)
                continue
            etag = resp.findtext(".//d:getetag", "", NS)
            if etag:
                changed[href] = etag
        new_token = root.findtext("d:sync-token", None, NS)
        return SyncChanges(new_token, changed, deleted)

    def etags_in_window(self, start: datetime, end: datetime) -> dict[str, str]:
        body = (
            '<?xml version="1.0" encoding="utf-8"?><c:calendar-query xmlns:d="DAV:" '
            'xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/></d:prop>'
            '<c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT">'
            f'<c:time-range start="{_fmt(start)}" end="{_fmt(end)}"/>'
            "</c:comp-filter></c:comp-filter></c:filter></c:calendar-query>"
        )
        root = self._xml(self.url, "REPORT", body, "1")
        out: dict[str, str] = {}
        for resp in root.findall("d:response", NS):
            href = _href_path(resp.findtext("d:href", "", NS))
            etag = resp.findtext(".//d:getetag", "", NS)
            if href and etag:
                out[href] = etag
        return out

    def multiget(self, hrefs: list[str]) -> dict[str, tuple[str, str]]:
        """href -> (etag, iCalendar text) for the hrefs that still exist."""
        out: dict[str, tuple[str, str]] = {}
        for i in range(0, len(hrefs), MULTIGET_BATCH):
            chunk = hrefs[i : i + MULTIGET_BATCH]
            body = (
                '<?xml version="1.0" encoding="utf-8"?><c:calendar-multiget xmlns:d="DAV:" '
                'xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/>'
                "<c:calendar-data/></d:prop>"
                + "".join(f"<d:href>{escape(h)}</d:href>" for h in chunk)
                + "</c:calendar-multiget>"
            )
            root = self._xml(self.url, "REPORT", body, "1")
            for resp in root.findall("d:response", NS):
                href = _href_path(resp.findtext("d:href", "", NS))
                data = resp.findtext(".//c:calendar-data", None, NS)
                etag = resp.findtext(".//d:getetag", "", NS)
                if href and data:
                    out[href] = (etag, data)
        return out

    def get(self, href: str) -> tuple[str, str] | None:
        resp = self._request(urljoin(self.url, href), "GET")
        if resp.status == 404:
            return None
        if resp.status != 200:
            raise ProviderFailure(f"the server answered GET with HTTP {resp.status}")
        return resp.headers.get("ETag", ""), resp.raw

    # -- writes ----------------------------------------------------------------------------

    def put(self, href: str, ics: str, if_match: str | None) -> str | None:
        """Store `ics` at `href` only if its ETag is still `if_match`; answers the new ETag."""
        headers = {"Content-Type": "text/calendar; charset=utf-8"}
        if if_match:
            headers["If-Match"] = if_match
        resp = self._request(urljoin(self.url, href), "PUT", ics, headers)
        if resp.status == 412:
            raise PreconditionFailed("the event changed on the calendar server")
        if resp.status not in (200, 201, 204):
            raise ProviderFailure(f"the server answered PUT with HTTP {resp.status}")
        etag: str | None = resp.headers.get("ETag")
        return etag
