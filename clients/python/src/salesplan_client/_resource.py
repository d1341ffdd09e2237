"""What the generated resource classes stand on: their client, and the `with_raw_response`
wrappers (the same method, answering a RawResponse)."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar, cast

from salesplan_client._base import RAW_RESPONSE, AsyncAPIClient, SyncAPIClient
from salesplan_client._models import RawResponse

P = ParamSpec("P")
R = TypeVar("R")


class SyncResource:
    def __init__(self, client: SyncAPIClient) -> None:
        self._client = client


class AsyncResource:
    def __init__(self, client: AsyncAPIClient) -> None:
        self._client = client


def to_raw(method: Callable[P, R]) -> Callable[P, RawResponse[R]]:
    @functools.wraps(method)
    def raw(*args: P.args, **kwargs: P.kwargs) -> RawResponse[R]:
        token = RAW_RESPONSE.set(True)
        try:
            return cast(RawResponse[R], method(*args, **kwargs))
        finally:
            RAW_RESPONSE.reset(token)

    return raw


def to_raw_async(method: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[RawResponse[R]]]:
    @functools.wraps(method)
    async def raw(*args: P.args, **kwargs: P.kwargs) -> RawResponse[R]:
        token = RAW_RESPONSE.set(True)
        try:
            return cast(RawResponse[R], await method(*args, **kwargs))
        finally:
            RAW_RESPONSE.reset(token)

    return raw
