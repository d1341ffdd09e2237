"""The `search` parameter of the lists (contract §4): a case-insensitive substring of the
name or title, its LIKE wildcards escaped."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement


def like_pattern(term: str) -> str:
    """The LIKE pattern of a substring search, its wildcards escaped (escape character `\\`)."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def contains_ci(column: Any, term: Any) -> ColumnElement[bool]:
    """Case-insensitive substring match, with LIKE wildcards in the term escaped; `term` may
    also be a bind parameter whose value is a `like_pattern`. PostgreSQL renders ILIKE, which
    trigram indexes serve."""
    pattern = like_pattern(term) if isinstance(term, str) else term
    return column.ilike(pattern, escape="\\")
