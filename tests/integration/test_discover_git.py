"""Discovery inside git work trees: git's view of the files, except for a root git itself ignores."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from subguard.scan.discover import discover


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


def _recording_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `git` first on PATH that logs each call, then runs the real git."""
    real = shutil.which("git")
    if real is None:
        pytest.skip("git is not installed")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "git-calls.log"
    shim = bindir / "git"
    shim.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{real}" "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    monkeypatch.delenv("GIT_DIR", raising=False)
    return log


def test_git_is_not_started_for_a_tree_with_no_git_folder_above(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _recording_git(tmp_path, monkeypatch)
    plain = tmp_path / "plain"
    (plain / "app").mkdir(parents=True)
    (plain / "app" / "a.py").write_text("x = 1\n", encoding="utf-8")
    if any((d / ".git").exists() for d in plain.parents):
        pytest.skip("the temporary folder is inside a git work tree")
    assert {c.path for c in discover(plain).candidates} == {"app/a.py"}
    assert not log.exists()
    _git(plain, "init", "-q")  # now git must be asked, and its view used
    (plain / ".gitignore").write_text("app/\n", encoding="utf-8")
    assert "app/a.py" not in {c.path for c in discover(plain).candidates}
    assert "ls-files" in log.read_text(encoding="utf-8")
