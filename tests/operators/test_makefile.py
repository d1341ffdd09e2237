"""The two commands of a fresh clone: `make run` installs the runtime only, `make test` adds the
dev extras to the same .venv; `make run PORT=…` serves on that port (dry runs: `make -n`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def dry_run(tmp_path: Path, *args: str) -> str:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    result = subprocess.run(
        ["make", "-n", *args], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    return result.stdout


def test_make_run_installs_the_runtime_only(tmp_path: Path) -> None:
    out = dry_run(tmp_path, "run")
    assert "pip install --quiet -e ." in out and "[dev]" not in out
    assert "salesplan serve --host 127.0.0.1 --port 8000" in out


def test_make_test_adds_the_dev_extras_to_the_same_venv(tmp_path: Path) -> None:
    out = dry_run(tmp_path, "test")
    assert "pip install --quiet -e '.[dev]'" in out and ".venv/bin/pytest" in out
    assert "-m venv .venv" in out


def test_make_test_installs_the_python_client_and_lint_checks_it(tmp_path: Path) -> None:
    """Contract §17: `make test` installs clients/python into the dev venv (its tests are in
    tests/client, so every `make test` run, both engines in CI, runs them); `make lint` holds
    it to the same ruff and strict mypy; `make client` regenerates it."""
    assert "pip install --quiet -e ./clients/python" in dry_run(tmp_path, "test")
    lint = dry_run(tmp_path, "lint")
    assert "ruff check src tests clients/python" in lint
    assert "cd clients/python && ../../.venv/bin/mypy" in lint
    assert ".venv/bin/python clients/python/generate.py" in dry_run(tmp_path, "client")


def test_make_run_port_serves_on_that_port(tmp_path: Path) -> None:
    out = dry_run(tmp_path, "run", "PORT=8200")
    assert "salesplan serve --host 127.0.0.1 --port 8200" in out
