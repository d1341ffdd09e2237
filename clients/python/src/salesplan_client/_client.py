"""`Salesplan` and `AsyncSalesplan`: the same surface, every operation a method grouped by tag
(`client.plans.get(plan_id)`, `client.engage.messages.send(…)`)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from types import TracebackType

import httpx

from salesplan_client._base import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    AsyncAPIClient,
    SyncAPIClient,
)
from salesplan_client.resources import (
    AsyncResources,
    AsyncResourcesWithRawResponse,
    Resources,
    ResourcesWithRawResponse,
)


class Salesplan(SyncAPIClient, Resources):
    """A client of the salesplan Integration API.

    `base_url` is the server's origin or its `/api/v1` URL; `api_key` a partner API key
    (`sp_live_…`) or an OAuth access token; `organization_id` the organization of every call
    (`X-Organization-Id`; needed when the key reaches several; each method also takes one).
    Failed calls are retried up to `max_retries` times (see the README); `timeout` is in
    seconds. Pass `http_client` to use your own `httpx.Client` (proxies, transports)."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        organization_id: str | None = None,
        timeout: float | httpx.Timeout | None = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        default_headers: Mapping[str, str] | None = None,
        http_client: httpx.Client | None = None,
    ) -> None:
        SyncAPIClient.__init__(
            self,
            base_url,
            http_client=http_client,
            api_key=api_key,
            organization_id=organization_id,
            timeout=timeout,
            max_retries=max_retries,
            default_headers=default_headers,
        )
        Resources.__init__(self, self)

    @cached_property
    def with_raw_response(self) -> ResourcesWithRawResponse:
        """The same methods, answering a `RawResponse` (the `httpx.Response` and `.parse()`)."""
        return ResourcesWithRawResponse(self)

    def __enter__(self) -> Salesplan:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class AsyncSalesplan(AsyncAPIClient, AsyncResources):
    """`Salesplan` for asyncio: every method is awaited; `list_all` is iterated with
    `async for`."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        organization_id: str | None = None,
        timeout: float | httpx.Timeout | None = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        default_headers: Mapping[str, str] | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        AsyncAPIClient.__init__(
            self,
            base_url,
            http_client=http_client,
            api_key=api_key,
            organization_id=organization_id,
            timeout=timeout,
            max_retries=max_retries,
            default_headers=default_headers,
        )
        AsyncResources.__init__(self, self)

    @cached_property
    def with_raw_response(self) -> AsyncResourcesWithRawResponse:
        """The same methods, answering a `RawResponse` (the `httpx.Response` and `.parse()`)."""
        return AsyncResourcesWithRawResponse(self)

    async def __aenter__(self) -> AsyncSalesplan:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()
