"""The transport under both clients: one request per call, built once and sent again on the
retries it allows, its answer parsed into the method's model or raised as a typed error."""

from __future__ import annotations

import asyncio
import contextvars
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from salesplan_client import _retry
from salesplan_client._encode import form_body, json_body, query_params
from salesplan_client._errors import APIConnectionError, APITimeoutError, error_from_response
from salesplan_client._models import ApiObject, NotModified, Page, RawResponse
from salesplan_client._version import __version__

T = TypeVar("T")
API_PREFIX = "/api/v1"
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RETRIES = 3

# Set by `with_raw_response` around one call: the call answers a RawResponse instead.
RAW_RESPONSE: contextvars.ContextVar[bool] = contextvars.ContextVar("raw_response", default=False)


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation of the document (the generated method table holds one per operationId)."""

    id: str
    method: str
    path: str
    body: Literal["json", "form"] | None = None
    # The API requires an Idempotency-Key (Engage sends, campaign start): one is made when
    # the caller gives none, and the same one goes with every retry of the call.
    idempotency_key: bool = False


Cast = type[Any] | None


def origin_of(base_url: str) -> str:
    """The server's origin from `base_url`, which may be the origin or the `/api/v1` URL."""
    url = base_url.rstrip("/")
    return url.removesuffix(API_PREFIX) if url.endswith(API_PREFIX) else url


class BaseClient:
    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None,
        organization_id: str | None,
        timeout: float | httpx.Timeout | None,
        max_retries: int,
        default_headers: Mapping[str, str] | None,
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more.")
        self.base_url = origin_of(base_url)
        self.api_key = api_key
        self.organization_id = organization_id
        self.timeout = timeout
        self.max_retries = max_retries
        headers = {"Accept": "application/json", "User-Agent": f"salesplan-client/{__version__}"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        if organization_id:
            headers["X-Organization-Id"] = str(organization_id)
        # A plain dict (an httpx.Headers per call costs more than the rest of the call's own
        # work); names as the generated methods spell them, others merged case-insensitively.
        self._headers = _merged(headers, default_headers)

    def _build(
        self,
        client: httpx.Client | httpx.AsyncClient,
        op: Operation,
        path: Mapping[str, Any],
        query: Mapping[str, Any],
        headers: Mapping[str, Any],
        body: Mapping[str, Any] | None,
        extra_headers: Mapping[str, str] | None,
        timeout: float | httpx.Timeout | None,
    ) -> tuple[httpx.Request, bool]:
        """The request, and whether it may be sent again (contract §17: GET, HEAD, PUT and
        DELETE always; POST and PATCH only with an Idempotency-Key)."""
        url = self.base_url + (
            op.path.format_map({name: quote(str(value), safe="") for name, value in path.items()})
            if path
            else op.path
        )
        sent = self._headers.copy()
        for name, value in headers.items():
            if value is not None:
                sent[name] = str(value)
        if extra_headers:
            sent = _merged(sent, extra_headers)
        keyed = "Idempotency-Key" in sent or (
            extra_headers is not None and any(k.lower() == "idempotency-key" for k in sent)
        )
        if op.idempotency_key and not keyed:
            sent["Idempotency-Key"] = str(uuid.uuid4())
            keyed = True
        content: bytes | None = None
        data: dict[str, str] | None = None
        if op.body == "json" and body is not None:
            content = json_body(body)
            sent["Content-Type"] = "application/json"
        elif op.body == "form" and body is not None:
            data = form_body(body)
        params = query_params(query) if query else None
        request = client.build_request(
            op.method,
            url,
            params=params or None,
            headers=sent,
            content=content,
            data=data,
            timeout=self.timeout if timeout is None else timeout,
        )
        return request, keyed or op.method in _retry.IDEMPOTENT_METHODS

    def _delay(self, retry: bool, attempt: int, response: httpx.Response | None) -> float | None:
        """Seconds before trying again after this answer (None: no answer), or None to stop."""
        if not retry or attempt >= self.max_retries:
            return None
        return _retry.delay_after(attempt, response)

    def _answer(self, response: httpx.Response, cast_to: Cast) -> Any:
        """The call's result (or its RawResponse), or the typed error."""
        status = response.status_code
        if status == 304:
            result: Any = NotModified(response.headers.get("etag"), _request_id(response))
        elif cast_to is httpx.Response and status < 400:
            result = response
        elif status >= 300:
            raise error_from_response(response)
        elif cast_to is None or status == 204 or not response.content:
            result = None
        else:
            result = _parse(cast_to, response)
        return RawResponse(response, result) if RAW_RESPONSE.get() else result


def _merged(headers: Mapping[str, str], more: Mapping[str, str] | None) -> dict[str, str]:
    """`headers` with `more` over them, names compared without case."""
    out = dict(headers)
    for name, value in (more or {}).items():
        for existing in [k for k in out if k.lower() == name.lower()]:
            del out[existing]
        out[name] = value
    return out


def _request_id(response: httpx.Response) -> str | None:
    value = response.headers.get("x-request-id")
    return None if value is None else str(value)


def _parse(cast_to: type[Any], response: httpx.Response) -> Any:
    if isinstance(cast_to, type) and issubclass(cast_to, BaseModel):
        result = cast_to.model_validate_json(response.content)
        if isinstance(result, ApiObject):
            result._request_id = _request_id(response)
            result._etag = response.headers.get("etag")
        return result
    return response.json()


class SyncAPIClient(BaseClient):
    def __init__(self, base_url: str, *, http_client: httpx.Client | None, **options: Any) -> None:
        super().__init__(base_url, **options)
        self._http = http_client or httpx.Client(follow_redirects=False)
        self._owns_http = http_client is None

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def request(
        self,
        op: Operation,
        cast_to: Cast,
        *,
        path: Mapping[str, Any] | None = None,
        query: Mapping[str, Any] | None = None,
        headers: Mapping[str, Any] | None = None,
        body: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = None,
    ) -> Any:
        request, retry = self._build(
            self._http, op, path or {}, query or {}, headers or {}, body, extra_headers, timeout
        )
        attempt = 0
        while True:
            try:
                response = self._http.send(request)
            except httpx.TransportError as exc:
                delay = self._delay(retry, attempt, None)
                if delay is None:
                    raise _connection_error(exc, request) from exc
            else:
                delay = self._delay(retry, attempt, response)
                if delay is None:
                    return self._answer(response, cast_to)
                response.close()
            time.sleep(delay)
            attempt += 1

    def iterate(
        self,
        op: Operation,
        cast_to: type[Page[T]],
        *,
        query: Mapping[str, Any],
        limit: int,
        **options: Any,
    ) -> Iterator[T]:
        """Every row of a list in cursor mode (never page mode), following `nextCursor`."""
        params = {**query, "limit": limit}
        while True:
            page: Page[T] = self.request(op, cast_to, query=params, **options)
            yield from page.data
            cursor = page.pagination.next_cursor
            if not page.pagination.has_next_page or not cursor:
                return
            params = {**params, "cursor": cursor}


class AsyncAPIClient(BaseClient):
    def __init__(
        self, base_url: str, *, http_client: httpx.AsyncClient | None, **options: Any
    ) -> None:
        super().__init__(base_url, **options)
        self._http = http_client or httpx.AsyncClient(follow_redirects=False)
        self._owns_http = http_client is None

    async def close(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def request(
        self,
        op: Operation,
        cast_to: Cast,
        *,
        path: Mapping[str, Any] | None = None,
        query: Mapping[str, Any] | None = None,
        headers: Mapping[str, Any] | None = None,
        body: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = None,
    ) -> Any:
        request, retry = self._build(
            self._http, op, path or {}, query or {}, headers or {}, body, extra_headers, timeout
        )
        attempt = 0
        while True:
            try:
                response = await self._http.send(request)
            except httpx.TransportError as exc:
                delay = self._delay(retry, attempt, None)
                if delay is None:
                    raise _connection_error(exc, request) from exc
            else:
                delay = self._delay(retry, attempt, response)
                if delay is None:
                    return self._answer(response, cast_to)
                await response.aclose()
            await asyncio.sleep(delay)
            attempt += 1

    async def iterate(
        self,
        op: Operation,
        cast_to: type[Page[T]],
        *,
        query: Mapping[str, Any],
        limit: int,
        **options: Any,
    ) -> AsyncIterator[T]:
        """Every row of a list in cursor mode (never page mode), following `nextCursor`."""
        params = {**query, "limit": limit}
        while True:
            page: Page[T] = await self.request(op, cast_to, query=params, **options)
            for row in page.data:
                yield row
            cursor = page.pagination.next_cursor
            if not page.pagination.has_next_page or not cursor:
                return
            params = {**params, "cursor": cursor}


def _connection_error(exc: httpx.TransportError, request: httpx.Request) -> APIConnectionError:
    if isinstance(exc, httpx.TimeoutException):
        return APITimeoutError(request=request)
    return APIConnectionError(f"Connection error: {exc}", request=request)
