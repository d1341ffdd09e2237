"""Generate salesplan_client's models and method table from the server's OpenAPI document.

    make client                      # from the server in this checkout
    python generate.py --check       # exit 1 when the checked-in files differ (what a test does)

Only two things are generated: pydantic models for the document's schemas (`models/`) and one
typed method per operation (`resources/`, `_operations.py`), grouped by tag, named from the
operationId. Everything else (transport, retries, pagination, errors, webhooks) is written by
hand. Naming, schema mapping and module layout: `codegen/` beside this file.
"""

from __future__ import annotations

import argparse
import difflib
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from codegen import render  # noqa: E402

PACKAGE = HERE / "src" / "salesplan_client"


def server_document() -> dict[str, Any]:
    """The document the server in this checkout publishes (`GET /api/v1/openapi.json`)."""
    from salesplan.app import create_app
    from salesplan.config import Settings

    settings = Settings(
        database_url="sqlite+aiosqlite:///:memory:",
        secret_key="client-generation-not-a-secret",
        public_url="http://127.0.0.1:8000",
        redis_url=None,
        worker_in_process=False,
        _env_file=None,  # type: ignore[call-arg]
    )
    document: dict[str, Any] = create_app(settings).openapi()
    return document


def formatted(files: dict[str, str]) -> dict[str, str]:
    """The files as `ruff` writes them (imports sorted, then formatted), with this package's
    settings, so that the checked-in files pass `make lint` as they are."""
    ruff = Path(sys.executable).with_name("ruff")
    command = str(ruff) if ruff.exists() else "ruff"
    out = {}
    for name, text in files.items():
        target = str(PACKAGE / name)
        for args in (
            ["check", "--fix-only", "--select", "I,F401,UP,RUF022,RUF036", "--quiet"],
            ["format", "--quiet"],
        ):
            text = subprocess.run(
                [
                    command,
                    *args,
                    "--config",
                    str(HERE / "pyproject.toml"),
                    "--stdin-filename",
                    target,
                    "-",
                ],
                input=text,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        out[name] = text
    return out


def generate(document: dict[str, Any]) -> dict[str, str]:
    """Path under the package → text, for every generated file."""
    return formatted(render.package(document))


def generated_on_disk() -> dict[str, str]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text()
        if text.startswith(render.HEADER):
            found[str(path.relative_to(PACKAGE))] = text
    return found


def drift(expected: dict[str, str]) -> list[str]:
    """What differs between the generated files and those checked in (a unified diff)."""
    actual = generated_on_disk()
    lines: list[str] = []
    for name in sorted(set(expected) | set(actual)):
        lines += difflib.unified_diff(
            actual.get(name, "").splitlines(keepends=True),
            expected.get(name, "").splitlines(keepends=True),
            f"checked-in/{name}",
            f"generated/{name}",
        )
    return lines


def write(files: dict[str, str]) -> None:
    for name in generated_on_disk():
        if name not in files:
            (PACKAGE / name).unlink()
    for name, text in files.items():
        path = PACKAGE / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report drift")
    args = parser.parse_args()
    files = generate(server_document())
    if args.check:
        diff = drift(files)
        sys.stdout.writelines(diff)
        return 1 if diff else 0
    write(files)
    print(f"salesplan_client: {len(files)} generated files up to date")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
