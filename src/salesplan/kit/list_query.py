"""The FastAPI side of a list (contract §4): the `list_params` dependency parsing `limit`,
`cursor`, `page`, `pageSize`, `sortBy`, `order` and `search`, the `updatedSince` parameter and
the request's cursor codec. Kept apart from `kit/pagination.py` (which re-exports these names)
so that the pagination itself imports no FastAPI: a CLI command that lists through a
repository starts without it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from fastapi import Depends, Query, Request

from salesplan.kit.fields import Instant
from salesplan.kit.pagination import (
    MAX_PAGE_SIZE,
    CursorCodec,
    ListParams,
    parse_list_params,
)
from salesplan.kit.schemas import INT32_MAX, QueryText


def list_params(sortable: Sequence[str], default: str = "createdAt") -> Any:
    """A dependency parsing `limit`, `cursor`, `page`, `pageSize`, `sortBy`, `order`, `search`."""
    allowed = tuple(sortable)

    # async: FastAPI runs a plain `def` dependency in a worker thread (a thread hand-off per
    # request, ~0.1-1 ms on a busy machine); this one only parses.
    async def dependency(
        limit: Annotated[int | None, Query(ge=1, le=MAX_PAGE_SIZE)] = None,
        cursor: Annotated[
            QueryText | None,
            Query(
                description="Opaque: only a `nextCursor` this list answered is valid, with the "
                "same sortBy and order and without page."
            ),
        ] = None,
        page: Annotated[int | None, Query(ge=1, le=INT32_MAX)] = None,
        page_size: Annotated[int | None, Query(alias="pageSize", ge=1, le=MAX_PAGE_SIZE)] = None,
        sort_by: Annotated[str | None, Query(alias="sortBy")] = None,
        order: Annotated[Literal["asc", "desc"], Query()] = "asc",
        search: Annotated[QueryText | None, Query()] = None,
    ) -> ListParams:
        return parse_list_params(
            allowed,
            default,
            limit=limit,
            cursor=cursor,
            page=page,
            page_size=page_size,
            sort_by=sort_by,
            order=order,
            search=search,
        )

    # The enum documents exactly what the check above accepts, so that the OpenAPI document
    # agrees with the server (a schema-valid sortBy is never refused). Set as an object, not
    # written in the signature: string annotations cannot see this closure's `allowed`.
    dependency.__annotations__["sort_by"] = Annotated[
        str | None, Query(alias="sortBy", json_schema_extra={"enum": list(allowed)})
    ]
    # Read by the MCP tool derived from a list route (its `sortBy` enum and default).
    vars(dependency).update(sortable=allowed, default_sort=default)
    return Depends(dependency)


UPDATED_SINCE = (
    "Incremental sync: only rows whose `updatedAt` is at or after this instant (>=), "
    "an RFC 3339 date-time with its offset (`2026-11-25T09:00:00Z`; none, a date alone or a "
    "number → 400). Every change to a row (create, update, archive, restore) moves its "
    "`updatedAt`. Without `sortBy` the list is then sorted by `updatedAt` ascending, ties by "
    "`id`: page through by cursor (`limit`, then `cursor`; a row changed meanwhile comes "
    "again at the end, none is skipped) and pass the last row's `updatedAt` as the next "
    "`updatedSince` (that row comes back once more; skip what you already hold at the same "
    "`updatedAt`). Add `includeArchived=true` to learn of deletions (archived rows)."
)

UpdatedSince = Annotated[Instant | None, Query(alias="updatedSince", description=UPDATED_SINCE)]
"""The `updatedSince` query parameter of the lists a client syncs from (accounts, contacts,
opportunities, leads, plans)."""


async def cursor_codec(request: Request) -> CursorCodec:
    codec: CursorCodec = request.app.state.cursor_codec
    return codec.for_request(request)


CursorCodecDep = Annotated[CursorCodec, Depends(cursor_codec)]
