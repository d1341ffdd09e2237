"""What the generated models stand on: the base model, the page of a list, "not modified",
the raw answer and the "not given" marker of optional body properties."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import httpx
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

__all__ = [
    "NOT_GIVEN",
    "ApiObject",
    "NotGiven",
    "NotModified",
    "Page",
    "PaginationMeta",
    "RawResponse",
]

T = TypeVar("T")


class ApiObject(BaseModel):
    """An object of the API: snake_case attributes for its camelCase properties. A property
    the server adds later is kept (`model_extra`), never an error. `_request_id` and `_etag`
    are those of the answer it came from."""

    model_config = ConfigDict(populate_by_name=True, extra="allow", protected_namespaces=())

    _request_id: str | None = PrivateAttr(default=None)
    _etag: str | None = PrivateAttr(default=None)

    def __eq__(self, other: object) -> bool:
        """Equal values are equal objects, whichever answer they came from."""
        if type(self) is not type(other):
            return NotImplemented
        assert isinstance(other, ApiObject)
        return self.__dict__ == other.__dict__ and self.model_extra == other.model_extra

    __hash__ = None  # type: ignore[assignment]

    def to_dict(self) -> dict[str, Any]:
        """Its wire form: camelCase properties, as sent or received, unset ones left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


class PaginationMeta(ApiObject):
    """Where a list stands (the spec's PaginationMeta): page mode has totals; cursor mode has
    `next_cursor` while there is more."""

    has_next_page: bool = Field(alias="hasNextPage")
    total_count: int | None = Field(default=None, alias="totalCount")
    next_cursor: str | None = Field(default=None, alias="nextCursor")
    page: int | None = None
    page_size: int | None = Field(default=None, alias="pageSize")
    total_pages: int | None = Field(default=None, alias="totalPages")


class Page(ApiObject, Generic[T]):
    """One page of a list: `data` and `pagination` (what `.list()` answers)."""

    data: list[T]
    pagination: PaginationMeta


class NotModified:
    """What a conditional read (`if_none_match=`) answers while the ETag is still current."""

    __slots__ = ("etag", "request_id")

    def __init__(self, etag: str | None, request_id: str | None) -> None:
        self.etag = etag
        self.request_id = request_id

    def __repr__(self) -> str:
        return f"NotModified(etag={self.etag!r})"

    def __bool__(self) -> bool:
        return False


class RawResponse(Generic[T]):
    """`client.with_raw_response.<resource>.<method>(…)`: the `httpx.Response` and the parsed
    result (`parse()`)."""

    __slots__ = ("_parsed", "http_response")

    def __init__(self, http_response: httpx.Response, parsed: T) -> None:
        self.http_response = http_response
        self._parsed = parsed

    @property
    def headers(self) -> httpx.Headers:
        return self.http_response.headers

    @property
    def status_code(self) -> int:
        return self.http_response.status_code

    @property
    def request_id(self) -> str | None:
        value = self.http_response.headers.get("x-request-id")
        return None if value is None else str(value)

    def parse(self) -> T:
        return self._parsed


class NotGiven:
    """An optional body property left out (unlike `None`, which sends `null`)."""

    _instance: NotGiven | None = None

    def __new__(cls) -> NotGiven:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "NOT_GIVEN"


NOT_GIVEN = NotGiven()
