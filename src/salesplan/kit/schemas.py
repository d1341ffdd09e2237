"""Base schemas: camelCase on the wire, strict request bodies, the list envelope."""

from __future__ import annotations

import math
from typing import Annotated, Any, ClassVar, Generic, TypeVar, Union

import orjson
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema
from typing_extensions import TypeAliasType


class ApiModel(BaseModel):
    """A response object: camelCase properties, built from attributes or dicts."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, from_attributes=True)


class StrictBody(BaseModel):
    """A request body: camelCase properties, an unknown property is a 400.

    Its JSON schema (OpenAPI, MCP tool input) says what `_storable` enforces: no string may hold
    NUL, a non-empty string must hold more than whitespace, numbers are within 64 bits; and the
    properties named in `not_null` (PATCH: may be left out, never null) do not admit null."""

    model_config = ConfigDict(
        alias_generator=to_camel, extra="forbid", populate_by_name=False, allow_inf_nan=False
    )
    not_null: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        json_schema = handler(core_schema)
        target = handler.resolve_ref_schema(json_schema)
        properties = target.get("properties", {})
        for name in cls.not_null:
            field = cls.model_fields[name]
            alias = field.alias or name
            if alias in properties:
                properties[alias] = _without_null(properties[alias])
        for prop in properties.values():
            storable_schema(prop)
        return json_schema

    @model_validator(mode="before")
    @classmethod
    def _storable(cls, data: object) -> object:
        """Every string without NUL, every integer within 64 bits, every number finite, in the
        whole body (free-form objects included), whatever the field's own type says."""
        check_json_value(data)
        return data

    def sent(self) -> dict[str, Any]:
        """Only the fields the client sent (for PATCH), by Python name."""
        return self.model_dump(exclude_unset=True)


class SeedObject(ApiModel):
    """A response object of the spec's field tables (contract §1: seed objects are exact): no
    other property (`additionalProperties: false`); a field the table marks optional has a
    default, so that it is not `required`. The renderers answer every property anyway; the
    default is not published (it would be a value the server never sends)."""

    model_config = ConfigDict(extra="forbid")

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        json_schema = handler(core_schema)
        target = handler.resolve_ref_schema(json_schema)
        for prop in target.get("properties", {}).values():
            prop.pop("default", None)
        return json_schema


class PaginationMeta(BaseModel):
    """Where a list stands (spec PaginationMeta): absent properties are omitted, never null."""

    # Its JSON schema is the spec's object in both modes (`__get_pydantic_json_schema__`):
    # the serializer would otherwise publish it as a free-form object (its return type), and
    # the fields' `None` as nullable.

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    has_next_page: bool
    total_count: int | None = Field(default=None, ge=0)
    next_cursor: str | None = None
    page: int | None = Field(default=None, ge=1)
    page_size: int | None = Field(default=None, ge=1)
    total_pages: int | None = Field(default=None, ge=1)

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        return {k: v for k, v in data.items() if v is not None}

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        json_schema = handler(core_schema)
        target = handler.resolve_ref_schema(json_schema)
        if handler.mode == "serialization":
            exact = cls.model_json_schema(mode="validation")
            target.clear()
            target.update(exact)
            return json_schema
        for prop in target.get("properties", {}).values():
            prop.pop("default", None)
            options = prop.pop("anyOf", None)
            if options is not None:
                prop.update(next(o for o in options if o.get("type") != "null"))
            if isinstance(prop.get("minimum"), float):
                prop["minimum"] = int(prop["minimum"])
        return json_schema


# --- bounds every value written must respect (one place, used by every body and query) ------

INT32_MAX = 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
MAX_FREE_FORM_DEPTH = 32
MAX_FREE_FORM_BYTES = 256 * 1024

# Whitespace as Python's str.strip() and pydantic's strip_whitespace both see it (the union),
# spelled so that ECMA-262 (JSON Schema) and Python read the same class.
WHITESPACE = r"\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
NO_NUL_PATTERN = r"^[^\x00]*$"
"""Any string PostgreSQL can store."""
NOT_BLANK_PATTERN = rf"^[^\x00]*[^{WHITESPACE}\x00][^\x00]*$"
"""A string holding more than whitespace (what a stripped `min_length=1` accepts), no NUL."""

Int32 = Annotated[int, Field(ge=-(2**31), le=INT32_MAX)]
"""An integer stored in an INTEGER column."""
NonNegativeInt32 = Annotated[int, Field(ge=0, le=INT32_MAX)]


def _where(path: list[str | int]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def check_json_value(value: object, *, max_depth: int | None = None) -> None:
    """Raise ValueError unless `value` is storable as JSON by both engines and renderable:
    no NUL character in a string or key (PostgreSQL refuses it), integers within 64 bits,
    finite numbers only, JSON types only, nesting at most `max_depth` deep. Iterative, so a
    hostile depth cannot exhaust the stack."""
    stack: list[tuple[object, list[str | int]]] = [(value, [])]
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


J = TypeVar("J")


def _free_form(value: J) -> J:
    check_json_value(value, max_depth=MAX_FREE_FORM_DEPTH)
    if len(orjson.dumps(value)) > MAX_FREE_FORM_BYTES:
        raise ValueError(f"Larger than {MAX_FREE_FORM_BYTES} bytes once encoded as JSON.")
    return value


# --- cross-field rules, spelled in JSON Schema (model_config json_schema_extra) -------------


def present(*names: str, **schemas: JsonSchemaValue) -> JsonSchemaValue:
    """Every property named is sent and not null (narrowed further by `schemas`)."""
    properties: JsonSchemaValue = {name: {"not": {"type": "null"}} for name in names}
    for name, schema in schemas.items():
        properties[name] = {"not": {"type": "null"}, **schema}
    return {"required": [*names, *schemas], "properties": properties}


def equals(**values: object) -> JsonSchemaValue:
    """Every property named is sent with this value (an `if`)."""
    return {
        "required": list(values),
        "properties": {name: {"const": value} for name, value in values.items()},
    }


ABSENT_OR_NULL: JsonSchemaValue = {"type": "null"}


def _without_null(schema: JsonSchemaValue) -> JsonSchemaValue:
    branches = schema.get("anyOf")
    if not branches:
        return schema
    kept = [branch for branch in branches if branch != {"type": "null"}]
    rest = {key: value for key, value in schema.items() if key != "anyOf"}
    if len(kept) == 1:
        return {**kept[0], **rest}
    return {**rest, "anyOf": kept}


def storable_schema(schema: object) -> None:
    """Narrow a JSON schema in place to what `check_json_value` accepts: a string without a
    pattern, format or enum gets one that excludes NUL (and blanks, if it must not be empty);
    an unbounded number or integer gets the 64-bit bounds. `$ref`s are left alone (every
    StrictBody narrows its own)."""
    if not isinstance(schema, dict) or "$ref" in schema:
        return
    kind = schema.get("type")
    if kind == "string" and not {"pattern", "format", "enum", "const"} & schema.keys():
        blank_ok = schema.get("minLength", 0) == 0
        schema["pattern"] = NO_NUL_PATTERN if blank_ok else NOT_BLANK_PATTERN
    elif kind == "integer" and "enum" not in schema:
        schema.setdefault("minimum", INT64_MIN)
        schema.setdefault("maximum", INT64_MAX)
    elif kind == "number" and "enum" not in schema:
        schema.setdefault("minimum", -NUMBER_BOUND)
        schema.setdefault("maximum", NUMBER_BOUND)
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for branch in schema.get(key, []):
            storable_schema(branch)
    for key in ("items", "additionalProperties", "not"):
        storable_schema(schema.get(key))
    for prop in schema.get("properties", {}).values():
        storable_schema(prop)


class _ObjectKeys:
    """An object's keys hold no NUL (`propertyNames`), its values are JSON values."""

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        json_schema = handler(core_schema)
        json_schema["propertyNames"] = {"pattern": NO_NUL_PATTERN}
        return json_schema


NUMBER_BOUND = 9 * 10**18
"""A JSON number (integer or not) within ±NUMBER_BOUND is stored as is: an integer literal
beyond 64 bits is refused, and no double near 2**63 is exactly representable as a bound."""


class _Bounded:
    """A JSON number within 64 bits (an integer beyond is refused, see check_json_value)."""

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {**handler(core_schema), "minimum": -NUMBER_BOUND, "maximum": NUMBER_BOUND}


JsonValue = TypeAliasType(  # type: ignore[misc]
    "JsonValue",
    Union[  # noqa: UP007 (a recursive alias needs the Union spelling)
        Annotated[str, Field(pattern=NO_NUL_PATTERN)],
        Annotated[float, _Bounded()],
        bool,
        list["JsonValue"],  # type: ignore[misc]
        Annotated[dict[str, "JsonValue"], _ObjectKeys()],  # type: ignore[misc]
        None,
    ],
)
"""The JSON schema of what `check_json_value` accepts (used for documentation only)."""
_JSON_VALUE = TypeAdapter(JsonValue)
_JSON_OBJECT = TypeAdapter(Annotated[dict[str, JsonValue], _ObjectKeys()])


class _DocumentedAs:
    """Document a value (validated as `Any`/`dict`) with another type's JSON schema."""

    def __init__(self, adapter: TypeAdapter[Any], description: str | None = None) -> None:
        self.adapter, self.description = adapter, description

    def __get_pydantic_json_schema__(
        self, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        json_schema = handler(self.adapter.core_schema)
        if self.description:
            json_schema = {**json_schema, "description": self.description}
        return json_schema


FreeForm = Annotated[
    dict[str, Any],
    AfterValidator(_free_form),
    _DocumentedAs(
        _JSON_OBJECT,
        f"A free-form JSON object: at most {MAX_FREE_FORM_DEPTH} levels deep and "
        f"{MAX_FREE_FORM_BYTES // 1024} KiB once encoded, no NUL, numbers within 64 bits.",
    ),
]
"""A free-form JSON object stored as is: bounded depth and size, finite numbers, JSON types."""

AnyJson = Annotated[Any, _DocumentedAs(_JSON_VALUE)]
"""Any JSON value the body walk accepts."""

BulkRow = Annotated[
    dict[str, Any],
    _DocumentedAs(
        _JSON_OBJECT,
        "One row, validated on its own: an invalid row is that row's 400 result, the others are "
        "created.",
    ),
]
"""A row of a bulk create: a JSON object, validated later one by one. An item that is not an
object is not a row: the whole request is the usual 400 validation_error."""


def _no_nul(value: str | None) -> str | None:
    if value is not None and "\x00" in value:
        raise ValueError("NUL characters are not allowed.")
    return value


QueryText = Annotated[
    str, AfterValidator(_no_nul), Field(json_schema_extra={"pattern": NO_NUL_PATTERN})
]
"""A text query parameter (PostgreSQL refuses NUL characters)."""


T = TypeVar("T")


class ListResponse(BaseModel, Generic[T]):
    """`{"data": [...], "pagination": {...}}`, the shape of every list."""

    data: list[T]
    pagination: PaginationMeta
