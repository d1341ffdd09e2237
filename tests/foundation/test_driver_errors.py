"""Errors of the database driver raised past SQLAlchemy (kit.driver's statements) are told
apart like SQLAlchemy's own: a lost connection or a cancelled statement is the 503 of an
unavailable database, any other error stays a bug (500)."""

from __future__ import annotations

from salesplan.db import database_unavailable
from salesplan.kit.driver import _connection_lost


class ConnectionDoesNotExistError(Exception):
    """Named as asyncpg's."""


class DriverError(Exception):
    def __init__(self, sqlstate: str) -> None:
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


def test_driver_errors_of_an_unavailable_database() -> None:
    for exc in (
        ConnectionDoesNotExistError("closed"),
        DriverError("08006"),
        DriverError("57014"),  # statement_timeout
        ConnectionResetError(),
    ):
        assert database_unavailable(exc), exc
    assert _connection_lost(ConnectionDoesNotExistError("closed"))
    assert _connection_lost(DriverError("08003"))
    assert not _connection_lost(DriverError("57014"))


def test_other_driver_errors_are_not_an_outage() -> None:
    for exc in (DriverError("23505"), DriverError("42P01"), ValueError("bug")):
        assert not database_unavailable(exc), exc
        assert not _connection_lost(exc)
