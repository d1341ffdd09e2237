"""Where a request's CPU goes, by layer: reads py-spy's folded profiles and attributes each
sample to the layer of its innermost Python frame (the code that was running, not its callers).

    .venv/bin/python bench/cpu.py --only getAccount --profile /tmp/prof   # writes /tmp/prof.getAccount.txt
    .venv/bin/python bench/breakdown.py /tmp/prof.getAccount.txt [--cpu-ms 0.76]

With `--cpu-ms` (the `total` column of bench/cpu.py for that endpoint) each layer is also given
in milliseconds per request. Samples of threads other than the event loop's (aiosqlite's
connection threads, the worker's) are counted in their own layer, so the loop's share stays
readable.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

# First match wins; a frame is "function (path:line)" and the rules look at the path.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("our auth + rate limit", ("salesplan/auth/", "salesplan/ratelimit/")),
    ("our middleware", ("salesplan/middleware.py", "salesplan/errors.py")),
    ("our route code + services", ("salesplan/",)),
    ("database driver", ("asyncpg/", "aiosqlite/", "sqlite3/")),
    ("SQLAlchemy", ("sqlalchemy/",)),
    ("FastAPI (routing, dependencies, wrappers)", ("fastapi/",)),
    ("Starlette (middleware stack, requests)", ("starlette/",)),
    ("pydantic", ("pydantic/", "pydantic_core/")),
    ("serialization", ("orjson", "json/")),
    ("uvicorn + HTTP parsing", ("uvicorn/", "h11/", "httptools/")),
    ("asyncio event loop", ("asyncio/", "selectors.py", "uvloop/")),
]
OTHER_THREADS = "other threads (driver threads, worker)"
FRAME = re.compile(r"^(?P<func>.*) \((?P<path>[^()]*):\d+\)$")


def layer_of(path: str) -> str:
    for name, needles in LAYERS:
        if any(needle in path for needle in needles):
            return name
    return "other"


def breakdown(lines: list[str]) -> tuple[Counter[str], int]:
    layers: Counter[str] = Counter()
    total = 0
    for line in lines:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        frames = stack.split(";")
        if any("Thread._bootstrap" in f or "threading.py" in f for f in frames[:4]):
            layers[OTHER_THREADS] += n
            continue
        leaf = next((m for f in reversed(frames) if (m := FRAME.match(f))), None)
        layers[layer_of(leaf.group("path")) if leaf else "other"] += n
    return layers, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("profiles", nargs="+", type=Path, help="py-spy record -f raw output")
    parser.add_argument("--cpu-ms", type=float, help="CPU ms per request (bench/cpu.py)")
    args = parser.parse_args()
    for path in args.profiles:
        layers, total = breakdown(path.read_text().splitlines())
        print(f"{path.name}: {total} samples")
        for name, n in layers.most_common():
            share = n / max(total, 1)
            ms = f"  {share * args.cpu_ms:6.3f} ms" if args.cpu_ms else ""
            print(f"  {name:44} {100 * share:5.1f} %{ms}")


if __name__ == "__main__":
    main()
