"""The client's README (clients/python/README.md): its quickstart and async example run as
written against a live server, in a fresh interpreter."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

from tests.client.conftest import Live

README = Path(__file__).resolve().parents[2] / "clients" / "python" / "README.md"


def example(section: str) -> str:
    """The first ```python block after the heading `section`."""
    text = README.read_text()
    start = text.index(f"\n{section}\n")
    match = re.search(r"```python\n(.*?)```", text[start:], re.S)
    assert match, section
    return match.group(1)


async def run(code: str, live: Live, key: str) -> str:
    env = {**os.environ, "SALESPLAN_URL": live.origin, "SALESPLAN_API_KEY": key}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        code,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await process.communicate()
    assert process.returncode == 0, out.decode()
    return out.decode()


async def test_the_quickstart_runs(live: Live, actor) -> None:
    out = (await run(example("## Quickstart"), live, actor.key)).splitlines()
    assert out[0].endswith(" 1250000.75")
    assert out[1] == "Acme"
    assert out[2].startswith("404 not_found ") and len(out[2].split()) == 3


async def test_the_async_example_runs(live: Live, actor) -> None:
    out = await run(example("### Async"), live, actor.key)
    assert out.splitlines() == ["Globex"]
