"""A catalog an agent can afford (contract §9, 2026-11-27): `tools/list` for every tool costs at
most 100 KB of JSON, the `core` toolset at most 40 KB. The schemas say what a value is, not
why (no prose inside schemas): the why is in each tool's short description and once in the
server's instructions (pagination, incremental sync, `headers`).

- Output schemas (`compact_output`) keep the fields of the resource answered (a list's items,
  the object a one-field wrapper holds; the objects within it read as `{"type": "object"}`),
  and types (`null` where a value may be null), enums,
  `properties`, `items`, `$ref`: no titles, descriptions, examples, defaults, formats, patterns,
  bounds or `required` (every field of an answer is present; the tool's description names them). A component the schema
  uses more than once (or within itself) is defined once in the schema's `$defs` and referred to.
- Input schemas (`compact_input`) keep types, enums, `required` and defaults, but no titles or
  descriptions, no `null`
  alternatives (an optional argument reads as its type; `null` is still accepted), and no
  patterns or bounds that only guard the server (no NUL, not blank, numbers within 64 bits,
  lengths; an e-mail address reads as `format: email`): the server checks them all and
  answers a 400 located on the argument."""

from __future__ import annotations

import json
from collections import Counter

from pydantic.json_schema import JsonSchemaValue

from salesplan.kit.email import EMAIL_PATTERN
from salesplan.kit.schemas import NO_NUL_PATTERN, NOT_BLANK_PATTERN

REF_PREFIX = "#/components/schemas/"
DEFS_PREFIX = "#/$defs/"
# Any JSON value (salesplan.kit.schemas): a free-form object's values, said as `object`.
JSON_VALUE = "JsonValue"
JSON_VALUE_REF = f"{DEFS_PREFIX}{JSON_VALUE}"
# Components every list shares, said once in the server's instructions: only their type here.
SUMMARIZED: dict[str, JsonSchemaValue] = {"PaginationMeta": {"type": "object"}}

# Keywords a schema keeps to say what a value is; an output schema drops everything else.
OUTPUT_KEYWORDS = frozenset(
    {
        "type",
        "enum",
        "const",
        "properties",
        "items",
        "prefixItems",
        "additionalProperties",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "$defs",
    }
)
# What an input schema drops: names for generators and guards the server applies anyway.
INPUT_DROPPED = frozenset(
    {"title", "propertyNames", "examples", "minLength", "maxLength", "multipleOf", "maxItems"}
)
# Bounds beyond which the server refuses a number (64 bits): the server's business.
_NUMBER_GUARD = 9_000_000_000_000_000_000
# The guards of every string (no NUL; not blank where it must not be): the server's business.
_GUARD_PATTERNS = frozenset({NO_NUL_PATTERN, NOT_BLANK_PATTERN})


def _nullable(node: JsonSchemaValue) -> JsonSchemaValue:
    """`anyOf: [X, {"type": "null"}]` of a plain X as `{"type": [X's type, "null"], …}`."""
    options = node.get("anyOf")
    if not isinstance(options, list) or len(options) != 2 or {"type": "null"} not in options:
        return node
    other = next(o for o in options if o != {"type": "null"})
    kind = other.get("type")
    if not isinstance(kind, str) or "$ref" in other:
        return node
    merged = {k: v for k, v in node.items() if k != "anyOf"} | other | {"type": [kind, "null"]}
    if "enum" in merged:
        merged["enum"] = [*merged["enum"], None]
    return merged


def _output_node(node: object) -> object:
    if isinstance(node, list):
        return [_output_node(item) for item in node]
    if not isinstance(node, dict):
        return node
    kept: JsonSchemaValue = {}
    for key, value in node.items():
        if key not in OUTPUT_KEYWORDS:
            continue
        if key in ("properties", "$defs"):
            kept[key] = {name: _output_node(sub) for name, sub in value.items()}
        elif key == "additionalProperties" and isinstance(value, bool):
            continue  # free-form (true, the default) or closed (a body has only its model's)
        else:
            kept[key] = _output_node(value)
    return _nullable(kept)


# How deep an answer's objects keep their fields: the resource's own (a list's items', or the
# one object a wrapper like `{"buyerMap": …}` holds). Objects within it read as
# `{"type": "object"}`: the REST document says the rest (contract §9, 2026-11-27: 40 KB for
# `core`).
MAX_LEVEL = 1
# The fields of a list's envelope, which holds the resources (`pagination` is summarized).
LIST_ENVELOPE = frozenset({"data", "pagination"})


def _is_object(node: JsonSchemaValue) -> bool:
    """An object schema with fields (`properties`) or a map (`additionalProperties`)."""
    return "properties" in node or isinstance(node.get("additionalProperties"), dict)


def _is_envelope(schema: JsonSchemaValue, components: dict[str, JsonSchemaValue]) -> bool:
    """A list's `{data, pagination}`, or an object of one field that wraps the resource."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(REF_PREFIX):
        schema = components[ref.removeprefix(REF_PREFIX)]
    fields = set(schema.get("properties", {}))
    return len(fields) == 1 or (bool(fields) and fields <= LIST_ENVELOPE)


def _references(
    node: object,
    counts: Counter[str],
    components: dict[str, JsonSchemaValue],
    seen: set[str],
    level: int = 0,
) -> None:
    """Count the references to each component within `MAX_LEVEL` (what the answer keeps)."""
    if isinstance(node, list):
        for item in node:
            _references(item, counts, components, seen, level)
        return
    if not isinstance(node, dict):
        return
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(REF_PREFIX):
        name = ref.removeprefix(REF_PREFIX)
        if level >= MAX_LEVEL and _is_object(components[name]):
            return
        counts[name] += 1
        if name not in seen:
            seen.add(name)
            _references(components[name], counts, components, seen, level)
    if _is_object(node):
        if level >= MAX_LEVEL:
            return
        level += 1
    for key, value in node.items():
        if key != "$ref":
            _references(value, counts, components, seen, level)


def compact_output(
    schema: JsonSchemaValue, components: dict[str, JsonSchemaValue]
) -> JsonSchemaValue:
    """`schema` (an OpenAPI response schema) made standalone and compact: objects deeper than
    `MAX_LEVEL` (an envelope not counted) read as `{"type": "object"}`; a component referred to once is inlined; one
    referred to more than once, or within itself, is defined once in `$defs` and referred to as
    `#/$defs/<name>`."""
    start = -1 if _is_envelope(schema, components) else 0
    counts: Counter[str] = Counter()
    _references(schema, counts, components, set(SUMMARIZED), start)
    shared = {name for name, n in counts.items() if n > 1}
    defs: dict[str, object] = {}

    def resolve(node: object, stack: tuple[str, ...], level: int) -> object:
        if isinstance(node, list):
            return [resolve(item, stack, level) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(REF_PREFIX):
            name = ref.removeprefix(REF_PREFIX)
            siblings = {k: resolve(v, stack, level) for k, v in node.items() if k != "$ref"}
            if name in SUMMARIZED:
                return {**SUMMARIZED[name], **siblings}
            if level >= MAX_LEVEL and _is_object(components[name]):
                return {"type": "object", **siblings}
            if name in shared or name in stack:
                if name not in defs:
                    defs[name] = None  # placeholder while it is resolved (recursion)
                    defs[name] = resolve(components[name], (name,), level)
                return {"$ref": f"{DEFS_PREFIX}{name}", **siblings}
            target = resolve(components[name], (*stack, name), level)
            return {**target, **siblings} if isinstance(target, dict) else target
        if _is_object(node):
            if level >= MAX_LEVEL:
                return {"type": node.get("type", "object")}
            level += 1
        return {key: resolve(value, stack, level) for key, value in node.items()}

    result = resolve(schema, (), start)
    assert isinstance(result, dict)  # an object schema resolves to an object
    if defs:
        result["$defs"] = {**result.get("$defs", {}), **dict(sorted(defs.items()))}
    compact = _output_node(result)
    assert isinstance(compact, dict)
    return compact


def _input_node(node: object, nested: bool = False) -> object:
    """`nested`: inside `$defs` (the parts of a body's fields), which are open objects."""
    if isinstance(node, list):
        return [_input_node(item, nested) for item in node]
    if not isinstance(node, dict):
        return node
    node = dict(node)
    if nested and node.get("additionalProperties") is False:
        del node["additionalProperties"]
    options = node.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        concrete = [o for o in options if o != {"type": "null"}]
        if len(concrete) == 1:  # optional: reads as its type
            del node["anyOf"]
            node = {**concrete[0], **node}
    node.pop("description", None)  # no prose inside schemas: the tool's description says it
    if node.get("default", 0) is None:
        del node["default"]
    if node.get("pattern") == EMAIL_PATTERN:  # what it is, in JSON Schema's word for it
        del node["pattern"]
        node["format"] = "email"
    if node.get("pattern") in _GUARD_PATTERNS:
        del node["pattern"]  # no NUL, not blank: the server says so on the argument
    if node.get("maximum") == _NUMBER_GUARD and node.get("minimum") == -_NUMBER_GUARD:
        del node["maximum"], node["minimum"]
    kept: JsonSchemaValue = {}
    for key, value in node.items():
        if key in INPUT_DROPPED:
            continue
        if key == "properties":
            kept[key] = {name: _input_node(sub, nested) for name, sub in value.items()}
        elif key == "$defs":
            kept[key] = {name: _input_node(sub, True) for name, sub in value.items()}
        else:
            kept[key] = _input_node(value, nested)
    return kept


def _free_form(node: object) -> object:
    """A free-form JSON object (`additionalProperties: JsonValue`) as `{"type": "object"}`."""
    if isinstance(node, list):
        return [_free_form(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        key: _free_form(value)
        for key, value in node.items()
        if not (key == "additionalProperties" and value == {"$ref": JSON_VALUE_REF})
    }


def compact_input(schema: JsonSchemaValue) -> JsonSchemaValue:
    """A tool's input schema without what only a generator or the server needs."""
    compact = _free_form(_input_node(schema))
    assert isinstance(compact, dict)  # an object schema stays an object
    defs = compact.get("$defs", {})
    if JSON_VALUE in defs and JSON_VALUE_REF not in json.dumps({**compact, "$defs": {}}):
        del defs[JSON_VALUE]  # used by the free-form objects only
    return compact
