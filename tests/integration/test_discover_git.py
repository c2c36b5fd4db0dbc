"""Discovery inside git work trees: git's view of the files, except for a root git itself ignores."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from subguard.discover import discover


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


@pytest.fixture
def work_tree(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    _git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text("vendor/\n*.log\n", encoding="utf-8")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "a.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "app" / "debug.log").write_text("noise\n", encoding="utf-8")
    (tmp_path / "vendor" / "lib").mkdir(parents=True)
    (tmp_path / "vendor" / "lib" / "b.py").write_text("y = 2\n", encoding="utf-8")
    return tmp_path


def test_git_ignored_files_are_not_discovered(work_tree: Path) -> None:
    found = discover(work_tree)
    paths = {c.path for c in found.candidates}
    assert "app/a.py" in paths and "app/debug.log" not in paths
    assert not any(p.startswith("vendor/") for p in paths)


def test_a_root_that_git_ignores_is_walked(work_tree: Path) -> None:
    found = discover(work_tree / "vendor")
    assert [c.path for c in found.candidates] == ["lib/b.py"]


def test_an_empty_untracked_root_stays_empty(work_tree: Path) -> None:
    (work_tree / "empty").mkdir()
    assert discover(work_tree / "empty").candidates == ()
