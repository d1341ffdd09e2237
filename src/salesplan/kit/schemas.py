"""Base schemas: camelCase on the wire, strict request bodies, the list envelope."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_serializer
from pydantic.alias_generators import to_camel


class ApiModel(BaseModel):
    """A response object: camelCase properties, built from attributes or dicts."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, from_attributes=True)


class StrictBody(BaseModel):
    """A request body: camelCase properties, an unknown property is a 400."""

    model_config = ConfigDict(alias_generator=to_camel, extra="forbid", populate_by_name=False)

    def sent(self) -> dict[str, Any]:
        """Only the fields the client sent (for PATCH), by Python name."""
        return self.model_dump(exclude_unset=True)


class PaginationMeta(BaseModel):
    """Spec PaginationMeta (strict): absent properties are omitted, never null."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    has_next_page: bool
    total_count: int | None = Field(default=None, ge=0)
    next_cursor: str | None = None
    page: int | None = Field(default=None, ge=1)
    page_size: int | None = Field(default=None, ge=1)
    total_pages: int | None = Field(default=None, ge=1)

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if v is not None}


T = TypeVar("T")


class ListResponse(BaseModel, Generic[T]):
    """`{"data": [...], "pagination": {...}}`, the shape of every list."""

    data: list[T]
    pagination: PaginationMeta
