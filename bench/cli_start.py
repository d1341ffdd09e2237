"""How long a CLI command takes to start and run: wall time and the process's CPU (user + sys),
the median of `--runs` runs, for this tree and optionally another one's `src` (an A/B: the two
alternate run by run, so that both see the same load).

    .venv/bin/python bench/cli_start.py [--runs 5] [--before OTHER_TREE/src] [-- admin list-users]

The command runs on an embedded database in a throwaway data folder (migrated by the first
run, which is not counted). Prints the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_once(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "salesplan.cli", *command], env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 0, done.stderr
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--before", help="another tree's src folder, measured alternately")
    parser.add_argument("command", nargs="*", default=["admin", "list-users"])
    args = parser.parse_args()
    trees = {"this tree": str(ROOT / "src")}
    if args.before:
        trees = {"before": args.before, "after": str(ROOT / "src")}
    base = {k: v for k, v in os.environ.items() if not k.startswith("SALESPLAN_")}
    base["SALESPLAN_DATA_DIR"] = tempfile.mkdtemp(prefix="salesplan-cli-start-")
    envs = {name: base | {"PYTHONPATH": src} for name, src in trees.items()}
    for env in envs.values():
        run_once(args.command, env)  # migrates the embedded database, warms the file cache
    print(f"load average before: {os.getloadavg()}")
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
    for i in range(args.runs):
        order = list(envs) if i % 2 == 0 else list(reversed(envs))
        for name in order:
            results[name].append(run_once(args.command, envs[name]))
    print(f"load average after: {os.getloadavg()}")
    for name, runs in results.items():
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        print(
            f"{name:10} wall median {statistics.median(walls):.2f} s (min {min(walls):.2f}), "
            f"CPU median {statistics.median(cpus):.2f} s (min {min(cpus):.2f})"
        )


if __name__ == "__main__":
    main()
