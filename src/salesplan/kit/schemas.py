"""Base schemas: camelCase on the wire, strict request bodies, the list envelope."""

from __future__ import annotations

import math
from typing import Annotated, Any, Generic, TypeVar

import orjson
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_serializer, model_validator
from pydantic.alias_generators import to_camel


class ApiModel(BaseModel):
    """A response object: camelCase properties, built from attributes or dicts."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, from_attributes=True)


class StrictBody(BaseModel):
    """A request body: camelCase properties, an unknown property is a 400."""

    model_config = ConfigDict(
        alias_generator=to_camel, extra="forbid", populate_by_name=False, allow_inf_nan=False
    )

    @model_validator(mode="before")
    @classmethod
    def _storable(cls, data: Any) -> Any:
        """Every string without NUL, every integer within 64 bits, every number finite, in the
        whole body (free-form objects included), whatever the field's own type says."""
        check_json_value(data)
        return data

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


# --- bounds every value written must respect (one place, used by every body and query) ------

INT32_MAX = 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
MAX_FREE_FORM_DEPTH = 32
MAX_FREE_FORM_BYTES = 256 * 1024

Int32 = Annotated[int, Field(ge=-(2**31), le=INT32_MAX)]
"""An integer stored in an INTEGER column."""
NonNegativeInt32 = Annotated[int, Field(ge=0, le=INT32_MAX)]


def _where(path: list[str | int]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def check_json_value(value: Any, *, max_depth: int | None = None) -> None:
    """Raise ValueError unless `value` is storable as JSON by both engines and renderable:
    no NUL character in a string or key (PostgreSQL refuses it), integers within 64 bits,
    finite numbers only, JSON types only, nesting at most `max_depth` deep. Iterative, so a
    hostile depth cannot exhaust the stack."""
    stack: list[tuple[Any, list[str | int]]] = [(value, [])]
    while stack:
        item, path = stack.pop()
        if max_depth is not None and len(path) > max_depth:
            raise ValueError(f"Nested deeper than {max_depth} levels at {_where(path)}.")
        if isinstance(item, str):
            if "\x00" in item:
                raise ValueError(f"NUL characters are not allowed (at {_where(path) or 'value'}).")
        elif isinstance(item, bool) or item is None:
            continue
        elif isinstance(item, int):
            if not INT64_MIN <= item <= INT64_MAX:
                raise ValueError(f"Integer out of range (at {_where(path) or 'value'}).")
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise ValueError(f"Numbers must be finite (at {_where(path) or 'value'}).")
        elif isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    raise ValueError(f"Keys must be strings (at {_where(path) or 'value'}).")
                if "\x00" in key:
                    raise ValueError(f"NUL characters are not allowed (at {_where(path)} keys).")
                stack.append((child, [*path, key]))
        elif isinstance(item, list | tuple):
            stack.extend((child, [*path, i]) for i, child in enumerate(item))
        elif max_depth is not None:
            raise ValueError(f"Not a JSON value (at {_where(path) or 'value'}).")


def _free_form(value: Any) -> Any:
    check_json_value(value, max_depth=MAX_FREE_FORM_DEPTH)
    if len(orjson.dumps(value)) > MAX_FREE_FORM_BYTES:
        raise ValueError(f"Larger than {MAX_FREE_FORM_BYTES} bytes once encoded as JSON.")
    return value


FreeForm = Annotated[dict[str, Any], AfterValidator(_free_form)]
"""A free-form JSON object stored as is: bounded depth and size, finite numbers, JSON types."""


def _no_nul(value: str | None) -> str | None:
    if value is not None and "\x00" in value:
        raise ValueError("NUL characters are not allowed.")
    return value


QueryText = Annotated[str, AfterValidator(_no_nul)]
"""A text query parameter (PostgreSQL refuses NUL characters)."""


T = TypeVar("T")


class ListResponse(BaseModel, Generic[T]):
    """`{"data": [...], "pagination": {...}}`, the shape of every list."""

    data: list[T]
    pagination: PaginationMeta
