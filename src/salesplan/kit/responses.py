"""The one response style of the API: a route returns `json_response(body)` (or a bare
`Response(status_code=204)`).

Why this one: the body is serialized once. A route that returns a pydantic model makes FastAPI
validate it against `response_model` a second time before serializing it; `JSONResponse` goes
through the standard library's `json`. Here a model is dumped by its own (Rust) serializer with
its wire aliases, and anything else (dicts and lists built from rows) by orjson. The declared
`response_model` still documents the body in OpenAPI and gives the MCP tool its result."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping

import orjson
from pydantic import BaseModel
from starlette.responses import Response

_OPTIONS = orjson.OPT_UTC_Z | orjson.OPT_NAIVE_UTC


def _default(value: object) -> object:
    # asyncpg answers its own UUID class, Decimal columns answer Decimal: both as their text;
    # a model nested in a dict as its wire form.
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    return str(value)


def json_bytes(body: object) -> bytes:
    if isinstance(body, BaseModel):
        return body.model_dump_json(by_alias=True).encode()
    return orjson.dumps(body, option=_OPTIONS, default=_default)


def json_response(
    body: object, status_code: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    return Response(
        json_bytes(body),
        status_code=status_code,
        headers=dict(headers) if headers else None,
        media_type="application/json",
    )


def entity_tag(body: bytes) -> str:
    """A strong ETag naming these exact bytes: any change of the body, whatever made it,
    changes the tag (nothing to bump, nothing to invalidate)."""
    return '"' + hashlib.blake2b(body, digest_size=16).hexdigest() + '"'


def tag_matches(if_none_match: str | None, tag: str) -> bool:
    """RFC 9110 §13.1.2: `*`, or any listed tag equal under the weak comparison."""
    if not if_none_match:
        return False
    if if_none_match.strip() == "*":
        return True
    wanted = tag.removeprefix("W/")
    return any(part.strip().removeprefix("W/") == wanted for part in if_none_match.split(","))


def if_match_holds(if_match: str, tag: str) -> bool:
    """RFC 9110 §13.1.1: `*` (the resource exists), or a listed tag equal to `tag` under the
    strong comparison (a weak tag never matches)."""
    if if_match.strip() == "*":
        return True
    return any(part.strip() == tag for part in if_match.split(",")) and not tag.startswith("W/")


IF_MATCH: dict[int | str, dict[str, object]] = {
    412: {
        "description": "`If-Match` names a version of the resource that is no longer "
        "current (RFC 9110 §13.1.1); nothing changed."
    }
}
"""The `responses` of a write that honours If-Match (the ETag a read of the resource answered)."""

_ETAG_HEADER = {
    "description": "A strong ETag of the body: send it back as If-None-Match.",
    "schema": {"type": "string"},
}
CONDITIONAL_READ: dict[str, object] = {
    "parameters": [
        {
            "name": "If-None-Match",
            "in": "header",
            "required": False,
            "schema": {"type": "string", "pattern": r"^[^\x00]*$"},
            "description": "An ETag this read answered before: while it is still current, "
            "the answer is 304 without a body.",
        }
    ],
    "responses": {
        "200": {"headers": {"ETag": _ETAG_HEADER}},
        "304": {
            "description": "Not modified: the ETag named in If-None-Match is current.",
            "headers": {"ETag": _ETAG_HEADER},
        },
    },
}
"""The `openapi_extra` of a route answered by `revalidated_json` (or its own ETag): documents
If-None-Match, the ETag header and the 304, so that clients know the read is conditional."""


def revalidated_json(body: object, if_none_match: str | None) -> Response:
    """`json_response(body)` with an ETag of its bytes; a 304 without a body when the client's
    If-None-Match already names them (a read whose rows are cheap to fetch again, where the
    saving is the transfer and the client's parsing)."""
    content = json_bytes(body)
    tag = entity_tag(content)
    if tag_matches(if_none_match, tag):
        return Response(status_code=304, headers={"ETag": tag})
    return Response(content, headers={"ETag": tag}, media_type="application/json")


def page_response(
    model: type[BaseModel], rows: Iterable[object], pagination: BaseModel
) -> Response:
    """A list's `{"data": [...], "pagination": {...}}`, each row (an ORM row or a dict) read
    through `model` and written in its wire form."""
    return json_response(
        {"data": [model.model_validate(r) for r in rows], "pagination": pagination}
    )
