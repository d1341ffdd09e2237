"""The README of a fresh clone: every file it points at is in the repository."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def test_readme_links_the_deployment_guide() -> None:
    assert "](docs/deployment.md)" in README
    assert (ROOT / "docs" / "deployment.md").is_file()


def test_readme_points_at_no_file_outside_the_repository() -> None:
    assert "../" not in README and "/work/" not in README
    for target in re.findall(r"\]\(([^)#]+)", README):
        if "://" in target:
            continue
        assert (ROOT / target).resolve().is_relative_to(ROOT), target
        assert (ROOT / target).exists(), target


def test_deployment_guide_says_how_to_create_the_database_and_run_the_worker() -> None:
    guide = (ROOT / "docs" / "deployment.md").read_text()
    assert "createdb" in guide and "salesplan worker" in guide
