"""`salesplan serve`: with SALESPLAN_PUBLIC_URL unset, links name the origin actually served."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.fixtures.served import came_up


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def served_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("serve")


@pytest.fixture(scope="module")
def served(served_folder: Path) -> Iterator[str]:
    """One server for the module's tests (starting one costs seconds)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SALESPLAN_")}
    env["SALESPLAN_DATABASE_URL"] = f"sqlite+aiosqlite:///{served_folder / 'serve.db'}"
    process = subprocess.Popen(
        [sys.executable, "-m", "salesplan.cli", "serve", "--port", str(port)],
        cwd=served_folder,  # no .env of the checkout
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    origin = f"http://127.0.0.1:{port}"
    try:
        if not came_up(process, origin, 60):
            stderr = process.stderr.read().decode() if process.stderr else ""
            pytest.fail(f"serve did not start: {stderr}")
        yield origin
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_public_url_defaults_to_the_served_host_and_port(served: str) -> None:
    meta = httpx.get(f"{served}/api/v1/meta").json()
    assert meta["mcp"]["url"] == f"{served}/mcp"
    issuer = httpx.get(f"{served}/.well-known/oauth-authorization-server").json()["issuer"]
    assert issuer == served
    resource = httpx.get(f"{served}/.well-known/oauth-protected-resource/mcp").json()
    assert resource["resource"] == f"{served}/mcp"
    challenge = httpx.post(f"{served}/mcp", json={}).headers["www-authenticate"]
    assert f'resource_metadata="{served}/.well-known/oauth-protected-resource' in challenge


async def test_served_app_freezes_its_startup_heap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`serve` runs `create_served_app`: once started, what is alive is out of the garbage
    collector's reach (a full collection of it stalled a request ~200 ms); `create_app` alone
    (tests, embedding) leaves the collector as it is."""
    import gc

    from salesplan.app import create_app, create_served_app

    monkeypatch.setenv("SALESPLAN_DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'gc.db'}")
    monkeypatch.setenv("SALESPLAN_WORKER_IN_PROCESS", "false")
    assert gc.get_freeze_count() == 0
    plain = create_app()
    async with plain.router.lifespan_context(plain):
        assert gc.get_freeze_count() == 0
    served = create_served_app()
    try:
        async with served.router.lifespan_context(served):
            assert gc.get_freeze_count() > 10_000
    finally:
        gc.unfreeze()


def test_demo_prints_a_sign_in_on_the_port_served(served: str, served_folder: Path) -> None:
    """`make run PORT=8200` then `salesplan demo`: the sign-in names port 8200, not 8000."""
    import json

    from tests.foundation.test_cli import run_cli

    result = run_cli(f"sqlite+aiosqlite:///{served_folder / 'serve.db'}", "demo")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["signIn"] == f"{served}/login"
    assert not served.endswith(":8000")


def test_demo_on_postgresql_names_the_port_serve_ran_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL too (it printed port 8000 whatever `serve` ran on): `serve` notes its origin
    in the data folder, one note per database, and `demo` reads the one of its database."""
    from salesplan.cli import public_origin, remember_served_origin
    from salesplan.config import Settings

    monkeypatch.chdir(tmp_path)  # no .env of the checkout
    monkeypatch.delenv("SALESPLAN_PUBLIC_URL", raising=False)

    def pg(name: str) -> Settings:
        return Settings(
            database_url=f"postgresql+asyncpg://app:secret@db.internal:5432/{name}",
            secret_key="k",
            data_dir=tmp_path / "data",
        )

    assert public_origin(pg("sales")) == "http://127.0.0.1:8000"  # nothing served yet
    remember_served_origin(pg("sales"), "http://127.0.0.1:8200")
    assert public_origin(pg("sales")) == "http://127.0.0.1:8200"
    assert public_origin(pg("other")) == "http://127.0.0.1:8000"  # another database's server
    assert not any("secret" in p.read_text() + p.name for p in (tmp_path / "data").iterdir())
