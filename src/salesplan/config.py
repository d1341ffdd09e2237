"""Settings: one class, read from `SALESPLAN_*` environment variables or a `.env` file."""

from __future__ import annotations

import secrets
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from salesplan.kit.outbound_policy import parse_networks


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="SALESPLAN_", env_file=".env", extra="ignore", frozen=False
    )

    # The embedded database and the generated secret live in `data_dir` (§15): the same folder
    # whatever the current directory, created on first use. An unset (or empty) database_url
    # is the SQLite file `salesplan.db` there.
    data_dir: Path = Path("~/.local/share/salesplan")
    database_url: str = ""
    redis_url: str | None = None
    # Every Redis key starts with this (several deployments or test runs can share one Redis).
    redis_prefix: str = "salesplan:"
    public_url: str = "http://127.0.0.1:8000"
    secret_key: str | None = None
    rate_limits: dict[str, dict[str, int | None]] = Field(default_factory=dict)
    rate_limits_enabled: bool = True
    ip_rate_limit_per_minute: int = 30
    # Tracking links (`/t/…`: open pixels, clicks, unsubscribe) per client IP and minute: higher
    # than the OAuth endpoints' (mail providers fetch pixels through a few proxy addresses).
    tracking_rate_limit_per_minute: int = 600
    # Comma-separated IPs or networks of reverse proxies whose X-Forwarded-For/-Proto are
    # believed (per-IP limits). Empty: forwarded headers are ignored, the peer is the client.
    trusted_proxies: str = ""
    # Comma-separated CIDRs that requests made on a user's behalf (Slack, CalDAV, webhooks) may
    # reach although not public (contract §12); link-local never. Empty: only public addresses,
    # plus 127.0.0.0/8 and ::1 when the public URL's host is loopback.
    outbound_allow: str = ""
    smtp_host: str | None = None
    smtp_port: int = 25
    smtp_username: str | None = None
    smtp_password: str | None = None
    smtp_starttls: bool = False
    smtp_from: str = "salesplan@localhost"
    # DKIM (contract §14): all three, or none (unsigned). The key: PEM, RSA >= 2048 bits or
    # Ed25519; one that does not load stops `serve` and `worker` at start.
    dkim_domain: str | None = None
    dkim_selector: str | None = None
    dkim_private_key_file: Path | None = None
    # Sender caps (contract §14): e-mails one From address sends in a rolling hour / 24 hours;
    # None: no cap. Over the cap a message waits (`scheduled`, "sender cap reached").
    send_limit_per_hour: int | None = Field(default=None, ge=1)
    send_limit_per_day: int | None = Field(default=None, ge=1)
    worker_in_process: bool | None = None
    # The worker: how long a claimed job stays a worker's without a sign of life (a killed
    # worker's job is taken over after this), and how often an idle worker looks for due work
    # when no wake-up arrives.
    worker_lease_seconds: float = 60.0
    worker_poll_seconds: float = 5.0
    # Enrollment jobs: contacts per batch (one INSERT, one commit), and an optional pause
    # between batches to spread a large enrollment's load on the database.
    enrollment_batch_size: int = Field(default=1000, ge=1, le=1000)
    enrollment_batch_pause_seconds: float = 0.0
    db_pool_size: int = 10
    # Connections the embedded SQLite default keeps open (one writer at a time either way).
    sqlite_pool_size: int = 5
    db_max_overflow: int = 10
    # Ping a pooled connection before a request uses it when it sat unused for
    # `db_pool_ping_idle_seconds` (0: before every use, one to three round trips per request):
    # a connection dropped by a database restart over a quiet spell is replaced instead of
    # failing a request. A connection killed while in use fails its request (503) and renews
    # the whole pool; off, requests meeting a dead connection fail the same way.
    db_pool_pre_ping: bool = True
    db_pool_ping_idle_seconds: float = 2.0
    # PostgreSQL: seconds to open a connection, to run one statement (the server cancels it;
    # the client gives up one second later, when the server itself hangs) and to wait for a
    # pooled connection. Past any of them a request answers 503 service_unavailable.
    db_connect_timeout: float = 5.0
    db_statement_timeout: float = 30.0
    db_pool_timeout: float = 5.0
    log_level: str = "info"
    # The HTTP server `salesplan serve` runs (cli/serving.py): granian (measured faster end to
    # end, bench/servers.py) or uvicorn.
    server: Literal["granian", "uvicorn"] = "granian"
    # Benchmarks only: adds GET /_bench/floor, a bare route with no auth and no database.
    bench_routes: bool = False

    @field_validator("public_url")
    @classmethod
    def _strip_slash(cls, value: str) -> str:
        return value.rstrip("/")

    @field_validator("data_dir")
    @classmethod
    def _absolute_data_dir(cls, value: Path) -> Path:
        return value.expanduser().absolute()

    @property
    def embedded_database_url(self) -> str:
        """The default: the SQLite file in the data folder."""
        return f"sqlite+aiosqlite:///{self.data_dir / 'salesplan.db'}"

    @property
    def uses_data_dir(self) -> bool:
        """Whether the database is the embedded default (SALESPLAN_DATABASE_URL unset)."""
        return self.database_url == self.embedded_database_url

    def make_data_dir(self) -> None:
        """Create the data folder (owner only) when the embedded default is used."""
        if self.uses_data_dir:
            self.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)

    @field_validator("outbound_allow")
    @classmethod
    def _check_outbound_allow(cls, value: str) -> str:
        parse_networks(value)  # a ValueError names the bad entry
        return value

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    @property
    def run_worker_in_process(self) -> bool:
        if self.worker_in_process is None:
            return self.is_sqlite
        return self.worker_in_process

    @property
    def api_base_url(self) -> str:
        return f"{self.public_url}/api/v1"

    @property
    def mcp_url(self) -> str:
        return f"{self.public_url}/mcp"

    @cached_property
    def signing_key(self) -> bytes:
        """The key that signs cursors, sessions and tracking links.

        The embedded default generates one on first use and keeps it in the data folder (beside
        an explicitly configured SQLite file), so that cursors and sessions survive restarts;
        PostgreSQL deployments must set it.
        """
        if self.secret_key:
            return self.secret_key.encode()
        if not self.is_sqlite:
            raise RuntimeError("SALESPLAN_SECRET_KEY is required when the database is PostgreSQL")
        path = self.sqlite_folder / "salesplan.secret"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(secrets.token_urlsafe(48))
            path.chmod(0o600)
        return path.read_text().strip().encode()

    @property
    def sqlite_folder(self) -> Path:
        """Folder of the SQLite database file (the data folder for an in-memory one)."""
        _, _, rest = self.database_url.partition(":///")
        if not rest or rest.startswith(":memory:"):
            return self.data_dir
        return Path(rest.split("?", 1)[0]).expanduser().resolve().parent

    def model_post_init(self, __context: Any) -> None:
        if not self.database_url:
            self.database_url = self.embedded_database_url
        if isinstance(self.rate_limits, str):  # pragma: no cover - pydantic parses JSON already
            raise TypeError("SALESPLAN_RATE_LIMITS must be a JSON object")
