"""A catalog an agent can afford (contract §9, 2026-11-27): `tools/list` for every tool costs at
most 100 KB of JSON, the `core` toolset at most 40 KB. The schemas say what a value is, not
why: the why is in each tool's description, in the argument descriptions that are the tool's
own, and once in the server's instructions (pagination, incremental sync, `headers`).

- Output schemas (`compact_output`) keep types (`null` where a value may be null), enums,
  `properties`, `items`, `$ref`: no titles, descriptions, examples, defaults, formats, patterns,
  bounds or `required` (every field of an answer is present; the tool's description names them). A component the schema
  uses more than once (or within itself) is defined once in the schema's `$defs` and referred to.
- Input schemas (`compact_input`) keep every argument's description, but no titles, no `null`
  alternatives (an optional argument reads as its type; `null` is still accepted), and no
  patterns or bounds that only guard the server (no NUL, not blank, numbers within 64 bits,
  lengths, which the descriptions say where they matter): the server checks them all and
  answers a 400 located on the argument."""

from __future__ import annotations

from collections import Counter
from typing import Any

from salesplan.kit.schemas import NO_NUL_PATTERN, NOT_BLANK_PATTERN

REF_PREFIX = "#/components/schemas/"
DEFS_PREFIX = "#/$defs/"
# Components every list shares, said once in the server's instructions: only their type here.
SUMMARIZED: dict[str, dict[str, Any]] = {"PaginationMeta": {"type": "object"}}

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


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
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


def _output_node(node: Any) -> Any:
    if isinstance(node, list):
        return [_output_node(item) for item in node]
    if not isinstance(node, dict):
        return node
    kept: dict[str, Any] = {}
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


def _references(
    node: Any, counts: Counter[str], components: dict[str, Any], seen: set[str]
) -> None:
    if isinstance(node, list):
        for item in node:
            _references(item, counts, components, seen)
        return
    if not isinstance(node, dict):
        return
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(REF_PREFIX):
        name = ref.removeprefix(REF_PREFIX)
        counts[name] += 1
        if name not in seen:
            seen.add(name)
            _references(components[name], counts, components, seen)
    for key, value in node.items():
        if key != "$ref":
            _references(value, counts, components, seen)


def compact_output(schema: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    """`schema` (an OpenAPI response schema) made standalone and compact: a component referred to
    once is inlined; one referred to more than once, or within itself, is defined once in
    `$defs` and referred to as `#/$defs/<name>`."""
    counts: Counter[str] = Counter()
    _references(schema, counts, components, set(SUMMARIZED))
    shared = {name for name, n in counts.items() if n > 1}
    defs: dict[str, Any] = {}

    def resolve(node: Any, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [resolve(item, stack) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(REF_PREFIX):
            name = ref.removeprefix(REF_PREFIX)
            siblings = {k: resolve(v, stack) for k, v in node.items() if k != "$ref"}
            if name in SUMMARIZED:
                return {**SUMMARIZED[name], **siblings}
            if name in shared or name in stack:
                if name not in defs:
                    defs[name] = None  # placeholder while it is resolved (recursion)
                    defs[name] = resolve(components[name], (name,))
                return {"$ref": f"{DEFS_PREFIX}{name}", **siblings}
            target = resolve(components[name], (*stack, name))
            return {**target, **siblings} if isinstance(target, dict) else target
        return {key: resolve(value, stack) for key, value in node.items()}

    result: dict[str, Any] = resolve(schema, ())
    if defs:
        result["$defs"] = {**result.get("$defs", {}), **dict(sorted(defs.items()))}
    compact: dict[str, Any] = _output_node(result)
    return compact


def _input_node(node: Any, nested: bool = False) -> Any:
    """`nested`: inside `$defs` (the parts of a body's fields), where only the types stay: what
    they mean is said by the argument that holds them."""
    if isinstance(node, list):
        return [_input_node(item, nested) for item in node]
    if not isinstance(node, dict):
        return node
    node = dict(node)
    if nested:
        node.pop("description", None)
        if node.get("additionalProperties") is False:
            del node["additionalProperties"]
    options = node.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        concrete = [o for o in options if o != {"type": "null"}]
        if len(concrete) == 1:  # optional: reads as its type
            del node["anyOf"]
            node = {**concrete[0], **node}
    if node.get("default", 0) is None:
        del node["default"]
    if node.get("pattern") in _GUARD_PATTERNS:
        del node["pattern"]  # no NUL, not blank: the server says so on the argument
    if node.get("maximum") == _NUMBER_GUARD and node.get("minimum") == -_NUMBER_GUARD:
        del node["maximum"], node["minimum"]
    kept: dict[str, Any] = {}
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


def compact_input(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's input schema without what only a generator or the server needs."""
    compact: dict[str, Any] = _input_node(schema)
    return compact
