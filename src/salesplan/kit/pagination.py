"""Pagination written once (contract §4): page mode with totals, and keyset cursor mode with
signed opaque cursors bound to their sort. Every list uses `ListParams` and `paginate`.

The FastAPI side of a list (the `list_params` dependency, `UpdatedSince`, `CursorCodecDep`)
lives in `kit/list_query.py` and is importable from here too (module `__getattr__`), so that
what needs only the pagination (a repository run by a CLI command) does not import FastAPI."""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Literal

import orjson
from sqlalchemy import BigInteger, ColumnElement, Integer, Select, bindparam, func, select, tuple_
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from salesplan.errors import ValidationFailed
from salesplan.kit.driver import DriverStatement
from salesplan.kit.schemas import PaginationMeta
from salesplan.kit.scoping import AnyRow, AnySelect, SqlColumn

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.types import Scope

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 200


@dataclass(frozen=True, slots=True)
class ListParams:
    mode: Literal["page", "cursor"]
    page: int
    page_size: int
    cursor: str | None
    sort_by: str
    order: Literal["asc", "desc"]
    search: str | None
    sort_given: bool = False  # sortBy was sent (else `sort_by` is the list's default)


def page_request(
    limit: int | None, cursor: str | None, page: int | None, page_size: int | None
) -> tuple[str | None, int | None, int | None]:
    """`cursor`, `page` and `pageSize` as they decide the mode (contract §4): an empty
    `cursor=` is no cursor; beside `limit` or a cursor, `page=1` and `pageSize=50` (the declared
    defaults a generated client sends with every call) are as if absent; any other page or
    size beside a cursor is a 400."""
    cursor = cursor or None
    if cursor is not None or limit is not None:
        page = None if page == 1 else page
        page_size = None if page_size == DEFAULT_PAGE_SIZE else page_size
    if cursor is not None and (page is not None or page_size is not None):
        where = "page" if page is not None else "pageSize"
        raise ValidationFailed.at(["query", "cursor"], f"cursor cannot be combined with {where}.")
    return cursor, page, page_size


def parse_list_params(
    allowed: Sequence[str],
    default: str,
    *,
    limit: int | None = None,
    cursor: str | None = None,
    page: int | None = None,
    page_size: int | None = None,
    sort_by: str | None = None,
    order: Literal["asc", "desc"] = "asc",
    search: str | None = None,
) -> ListParams:
    """The list's parameters from the query's (already type-checked) values, or a 400. An
    empty `cursor=` is no cursor (a client that fills every parameter of a template)."""
    if sort_by is not None and sort_by not in allowed:
        raise ValidationFailed.at(
            ["query", "sortBy"], f"sortBy must be one of: {', '.join(allowed)}."
        )
    cursor, page, page_size = page_request(limit, cursor, page, page_size)
    cursor_mode = cursor is not None or (limit is not None and page is None and page_size is None)
    size = (limit if cursor_mode else page_size) or page_size or limit or DEFAULT_PAGE_SIZE
    return ListParams(
        mode="cursor" if cursor_mode else "page",
        page=page or 1,
        page_size=size,
        cursor=cursor or None,
        sort_by=sort_by or default,
        order=order,
        search=search.strip() if search and search.strip() else None,
        sort_given=sort_by is not None,
    )


def changed_since(params: ListParams, updated_since: datetime | None) -> ListParams:
    """The list's parameters for an `updatedSince` query: without `sortBy`, sorted by
    `updatedAt` (the order asked, ascending by default; ties by id, as every sort), so that a
    poller can take the last row's `updatedAt` as its next `updatedSince`."""
    if updated_since is None or params.sort_given:
        return params
    return replace(params, sort_by="updatedAt")


class CursorCodec:
    """Opaque cursors: the last row's sort value and id, with the sort, the list (its path)
    and the organization they belong to, signed so that a tampered or foreign cursor is a 400.
    """

    def __init__(self, key: bytes) -> None:
        self._key = hashlib.sha256(b"cursor:" + key).digest()
        self._binding: Callable[[], str] = str

    def _bound(self, binding: Callable[[], str]) -> CursorCodec:
        bound = CursorCodec.__new__(CursorCodec)
        bound._key, bound._binding = self._key, binding
        return bound

    def for_request(self, request: Request) -> CursorCodec:
        """This codec bound to the request's list (its path) and organization, read when a
        cursor is made or checked: after the auth dependency has resolved the organization."""

        scope = request.scope

        def binding() -> str:
            org = scope.get("state", {}).get("organization_id", "")
            return f"{_url_path(scope).rstrip('/')}\n{org}"

        return self._bound(binding)

    def _list(self) -> str:
        return _b64(hashlib.sha256(self._binding().encode()).digest()[:12])

    def _sign(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()[:16]

    def encode(self, sort_by: str, order: str, value: object, row_id: uuid.UUID) -> str:
        if isinstance(value, datetime):
            wire: object = {"dt": value.isoformat()}
        elif isinstance(value, date):
            wire = {"d": value.isoformat()}
        elif isinstance(value, uuid.UUID):
            wire = {"u": str(value)}
        else:
            wire = value
        payload = orjson.dumps(
            {"s": sort_by, "o": order, "l": self._list(), "v": wire, "i": str(row_id)}
        )
        return _b64(payload) + "." + _b64(self._sign(payload))

    def decode(self, cursor: str, sort_by: str, order: str) -> tuple[object, uuid.UUID]:
        bad = ValidationFailed.at(["query", "cursor"], "The cursor is invalid for this list.")
        try:
            body, _, sig = cursor.partition(".")
            payload = _unb64(body)
            if not hmac.compare_digest(self._sign(payload), _unb64(sig)):
                raise bad
            data = orjson.loads(payload)
            if data["s"] != sort_by or data["o"] != order or data.get("l") != self._list():
                raise bad
            value = data["v"]
            if isinstance(value, dict):
                if "dt" in value:
                    value = datetime.fromisoformat(value["dt"])
                elif "d" in value:
                    value = date.fromisoformat(value["d"])
                elif "u" in value:
                    value = uuid.UUID(value["u"])
            return value, uuid.UUID(data["i"])
        except ValidationFailed:
            raise
        except Exception:
            raise bad from None


def _url_path(scope: Scope) -> str:
    """`request.url.path` without building the URL: Starlette's escaping of the scope's path."""
    return str(scope["path"]).replace("?", "%3F").replace("#", "%23").replace("\\", "%5C")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


_SORT_KEY = "_sort_key"
_SORT_ID = "_sort_id"
_TOTAL = "_total"


async def paginate(
    db: AsyncSession | AsyncConnection,
    stmt: AnySelect,
    params: ListParams,
    *,
    sort_columns: Mapping[str, SqlColumn],
    id_column: SqlColumn,
    codec: CursorCodec,
    scalars: bool = False,
    bound: Mapping[str, object] | None = None,
) -> tuple[list[Any], PaginationMeta]:
    """Run `stmt` (already filtered and scoped) for one page.

    Rows come back as selected (entities when `scalars`, else Row objects whose mapping holds
    the selected columns), with the sort key, the id and in page mode the total after the
    selected columns. Keyset in cursor mode, never OFFSET; totals in page mode, in the same
    statement as the rows when the page has any.

    A sort key that may be NULL (a contact's `lastName`) sorts as the largest value on both
    engines: last in ascending order, first in descending order (PostgreSQL's own order, and
    its index order; SQLite is told `NULLS LAST`/`NULLS FIRST`, which its index serves too). A
    keyset page stays one index range: the rows after a cursor are the rest of its section
    (the rows with a value, or the NULL ones by id) and, when that section ends within the
    page, the start of the next section, read by a second statement (`_Keyset`).

    `bound`: `stmt` is built once for its shape and kept (a module-level or cached statement
    whose values are bind parameters, e.g. `scoped_by_parameter`), and `bound` holds those
    values. The page's statements derived from it are then built once too and reused: on the
    hot lists building the statements cost about as much CPU as running them.
    """
    sort_col = sort_columns[params.sort_by]
    desc = params.order == "desc"
    values: dict[str, object] = {} if bound is None else dict(bound)
    keyset = _Keyset.FIRST
    if params.mode == "cursor" and params.cursor is not None:
        after_value, values["_after_id"] = codec.decode(params.cursor, params.sort_by, params.order)
        if after_value is None and _nullable(sort_col, id_column):
            keyset = _Keyset.AFTER_NULL
        else:
            keyset, values["_after_value"] = _Keyset.AFTER, after_value
    page = _page(stmt, params, sort_col, id_column, desc, keyset, cached=bound is not None)
    # Built once and run on a plain connection for rows (not entities): straight on the driver
    # (kit/driver.py).
    on_driver = isinstance(db, AsyncConnection) and not scalars
    size = params.page_size

    if params.mode == "cursor":
        values["_limit"] = size + 1
        rows = list(await page.fetch(db, values, on_driver))
        if len(rows) <= size and _section_ends(sort_col, id_column, desc, keyset):
            # The rows with a value (ascending) or the NULL ones (descending) ended within the
            # page: the page goes on with the other section from its start.
            rest = _page(stmt, params, sort_col, id_column, desc, _Keyset.REST, cached=True)
            values["_limit"] = size + 1 - len(rows)
            rows += await rest.fetch(db, values, on_driver)
        has_next = len(rows) > size
        rows = rows[:size]
        next_cursor = None
        if has_next and rows:
            # The sort key and the id are the last two columns (`_page_statements`).
            next_cursor = codec.encode(params.sort_by, params.order, rows[-1][-2], rows[-1][-1])
        meta = PaginationMeta(has_next_page=has_next, next_cursor=next_cursor, page_size=size)
    else:
        offset = (params.page - 1) * size
        values["_limit"], values["_offset"] = size, offset
        rows = list(await page.fetch(db, values, on_driver))
        # The total is the rows' last column; a page without rows (an empty list, or past
        # its end) counts on its own.
        total = int(rows[0][-1]) if rows else await page.total(db, values, on_driver)
        total_pages = max(1, math.ceil(total / size))
        meta = PaginationMeta(
            has_next_page=offset + len(rows) < total,
            total_count=total,
            page=params.page,
            page_size=size,
            total_pages=total_pages,
        )
    items = [row[0] for row in rows] if scalars else list(rows)
    return items, meta


class _Keyset:
    """Where a cursor page starts (`_page_statements`)."""

    FIRST = "first"  # the list's start: no cursor
    AFTER = "after"  # after a cursor whose sort value is set: (key, id) past it
    AFTER_NULL = "after_null"  # after a cursor whose sort value is NULL: NULL key, id past it
    REST = "rest"  # the start of the section after the cursor's (NULL keys, or set ones)


def _nullable(sort_col: SqlColumn, id_column: SqlColumn) -> bool:
    return sort_col is not id_column and bool(getattr(sort_col, "nullable", False))


def _section_ends(sort_col: SqlColumn, id_column: SqlColumn, desc: bool, keyset: str) -> bool:
    """Whether the rows after the cursor, as `keyset` reads them, can be followed by another
    section: ascending, the NULL keys come after the set ones; descending, before them."""
    if not _nullable(sort_col, id_column):
        return False
    return keyset == (_Keyset.AFTER_NULL if desc else _Keyset.AFTER)


def _page(
    stmt: AnySelect,
    params: ListParams,
    sort_col: SqlColumn,
    id_column: SqlColumn,
    desc: bool,
    keyset: str,
    *,
    cached: bool,
) -> _Page:
    """The page's statements: built once per (statement, sort, order, mode, keyset) for a
    long-lived `stmt` (`cached`), else built now."""
    if not cached:
        return _Page(*_page_statements(stmt, sort_col, id_column, desc, params.mode, keyset), None)
    key = (id(stmt), params.sort_by, desc, params.mode, keyset)
    found = _DERIVED.get(key)
    if found is None or found[0] is not stmt:
        built = _page_statements(stmt, sort_col, id_column, desc, params.mode, keyset)
        found = _DERIVED[key] = (
            stmt,
            _Page(*built, (DriverStatement(built[0]), DriverStatement(built[1]))),
        )
    return found[1]


@dataclass(frozen=True, slots=True)
class _Page:
    """A list's rows and count statements; for statements built once (`bound`) also on the
    driver."""

    rows: AnySelect
    count: Select[int]
    driver: tuple[DriverStatement, DriverStatement] | None

    async def fetch(
        self, db: AsyncSession | AsyncConnection, values: dict[str, object], on_driver: bool
    ) -> Sequence[AnyRow]:
        if on_driver and self.driver is not None:
            return await self.driver[0].fetch(db, values)
        return (await db.execute(self.rows, values)).all()

    async def total(
        self, db: AsyncSession | AsyncConnection, values: dict[str, object], on_driver: bool
    ) -> int:
        if on_driver and self.driver is not None:
            return int(await self.driver[1].fetchval(db, values))
        return int((await db.execute(self.count, values)).scalar_one())


# Page statements derived from long-lived statements (`paginate(bound=...)`, and the second
# statement of a page that crosses from one NULL section to the other), by the statement's
# identity, sort, mode and keyset; the statement itself is kept beside them, so its id is never
# reused.
_DERIVED: dict[tuple[int, str, bool, str, str], tuple[AnySelect, _Page]] = {}


def _page_statements(
    stmt: AnySelect,
    sort_col: SqlColumn,
    id_column: SqlColumn,
    desc: bool,
    mode: str,
    keyset: str | bool = _Keyset.FIRST,
) -> tuple[AnySelect, Select[int]]:
    """The rows statement (sorted; `_limit`; `_offset` in page mode; in cursor mode after the
    `_after_*` key as `keyset` says (True: `AFTER`), never an OFFSET) and the count statement
    of a list. The rows statement's last columns: the sort key and the id, and in page mode the
    total. Each is one index range on an index of (organization, sort key, id)."""
    if keyset is True:
        keyset = _Keyset.AFTER
    elif keyset is False:
        keyset = _Keyset.FIRST
    nullable = _nullable(sort_col, id_column)
    key = sort_col.desc() if desc else sort_col.asc()
    if nullable:
        # NULL is the largest key on both engines (PostgreSQL's default, and its index's).
        key = key.nulls_first() if desc else key.nulls_last()
    rows = (
        stmt.add_columns(sort_col.label(_SORT_KEY), id_column.label(_SORT_ID))
        .order_by(None)
        .order_by(key, id_column.desc() if desc else id_column.asc())
    )
    if keyset == _Keyset.AFTER:
        rows = rows.where(_after(sort_col, id_column, desc))
    elif keyset == _Keyset.AFTER_NULL:
        after_id = bindparam("_after_id", type_=id_column.type)
        rows = rows.where(
            sort_col.is_(None), id_column < after_id if desc else id_column > after_id
        )
    elif keyset == _Keyset.REST:
        # Ascending, the NULL keys come after the set ones; descending, the set ones after.
        rows = rows.where(sort_col.is_not(None) if desc else sort_col.is_(None))
    rows = rows.limit(bindparam("_limit", type_=Integer))
    count = select(func.count()).select_from(stmt.order_by(None).subquery())
    if mode == "page":
        # BIGINT: the last page (INT32_MAX) times the page size is past what an INTEGER holds.
        rows = rows.offset(bindparam("_offset", type_=BigInteger))
        # The total beside every row, so that a page that has rows takes one round trip: an
        # uncorrelated scalar subquery, computed once per statement by both databases.
        rows = rows.add_columns(count.scalar_subquery().label(_TOTAL))
    return rows, count


def ordered_part(
    stmt: AnySelect,
    sort_col: SqlColumn,
    id_column: SqlColumn,
    params: ListParams,
) -> AnySelect:
    """One part of a `UNION ALL` that `paginate` pages over, in cursor mode sorted like the
    page, after the cursor's key and limited to the page (the `_after_*` and `_limit`
    parameters `paginate` binds), wrapped as a subquery: each part then stops early on its own
    index instead of the union being collected whole and sorted. In page mode the part is
    unchanged (the total counts every row)."""
    if params.mode != "cursor":
        return stmt
    desc = params.order == "desc"
    ordering = (sort_col.desc(), id_column.desc()) if desc else (sort_col.asc(), id_column.asc())
    part = stmt.order_by(*ordering).limit(bindparam("_limit", type_=Integer))
    if params.cursor is not None:
        part = part.where(_after(sort_col, id_column, desc))
    return select(part.subquery())


def _after(sort_col: SqlColumn, id_col: SqlColumn, desc: bool) -> ColumnElement[bool]:
    """After the cursor's key: parameters `_after_value` (the sort column's) and `_after_id`."""
    v = bindparam("_after_value", type_=sort_col.type)
    i = bindparam("_after_id", type_=id_col.type)
    if sort_col is id_col:
        return id_col < i if desc else id_col > i
    if desc:
        return tuple_(sort_col, id_col) < tuple_(v, i)
    return tuple_(sort_col, id_col) > tuple_(v, i)
