"""The HTTP server `salesplan serve` runs the app under: granian (its Rust HTTP stack; the
default, measured faster end to end on the hot routes: bench/servers.py) or uvicorn
(`--server uvicorn`, or SALESPLAN_SERVER=uvicorn). Either way: `workers` processes each running
`create_served_app`, the access log at INFO (signed links' signatures redacted: accesslog.py),
graceful shutdown on SIGTERM/SIGINT (requests in flight answered, the app's lifespan closed), and
no proxy header believed by the server: the app reads X-Forwarded-* from SALESPLAN_TRUSTED_PROXIES
only. Each server is imported only when it runs."""

from __future__ import annotations

from typing import Literal

Server = Literal["granian", "uvicorn"]
SERVERS: tuple[Server, ...] = ("granian", "uvicorn")
APP = "salesplan.app:create_served_app"
# uvicorn's access line (`client - "METHOD path?query HTTP/1.1" status`); accesslog.py puts the
# query on the path and redacts it before the line is formatted.
GRANIAN_ACCESS_FORMAT = '%(addr)s - "%(method)s %(path)s %(protocol)s" %(status)d'


def run(server: Server, *, host: str, port: int, workers: int, log_level: str) -> None:
    """Serve until stopped."""
    if server == "uvicorn":
        _uvicorn(host, port, workers, log_level)
    else:
        _granian(host, port, workers, log_level)


def _uvicorn(host: str, port: int, workers: int, log_level: str) -> None:
    import uvicorn

    uvicorn.run(
        APP,
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=log_level,
        proxy_headers=False,  # the app's own, from SALESPLAN_TRUSTED_PROXIES only
    )


def _granian(host: str, port: int, workers: int, log_level: str) -> None:
    from granian import Granian
    from granian.constants import Interfaces
    from granian.log import LogLevels

    level = LogLevels(log_level.lower())
    Granian(
        APP,
        factory=True,
        address=host,
        port=port,
        interface=Interfaces.ASGI,  # with the lifespan (the in-process worker, gc.freeze)
        workers=workers,
        respawn_failed_workers=True,  # as uvicorn's supervisor: a worker that dies comes back
        websockets=False,
        log_level=level,
        log_access=level in (LogLevels.info, LogLevels.debug, LogLevels.notset),
        log_access_format=GRANIAN_ACCESS_FORMAT,
    ).serve()
