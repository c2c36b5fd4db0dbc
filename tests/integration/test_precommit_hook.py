"""The pre-commit hook, installed and run by real pre-commit from a clone of this repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# one consumer module; "{tags}" is its tag expression (shared by the cache, action and hook tests)
CONSUMER = (Path(__file__).parents[1] / "fixtures" / "snippets" / "order_consumer.py.tmpl").read_text(encoding="utf-8")


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _snapshot(tmp_path: Path) -> tuple[Path, str]:
    """This checkout as it is on disk (tracked and untracked, not ignored), committed to a scratch
    repository: pre-commit installs hooks from a commit, and the work in progress must be tested."""
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        check=True,
        capture_output=True,
    ).stdout.decode("utf-8", "surrogateescape")
    snap = tmp_path / "subguard-src"
    for rel in filter(None, listing.split("\0")):
        src = REPO / rel
        if src.is_symlink() or src.is_file():
            dst = snap / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.is_symlink():
                dst.symlink_to(os.readlink(src))
            else:
                shutil.copy2(src, dst)
    _git(snap, "init", "-q")
    _git(snap, "config", "user.email", "t@example.com")
    _git(snap, "config", "user.name", "t")
    _git(snap, "add", "-A")
    _git(snap, "commit", "-qm", "snapshot")
    return snap, _git(snap, "rev-parse", "HEAD")


def _pre_commit(cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def _project(tmp_path: Path, hook: str, consumers: dict[str, str]) -> Path:
    """A committed repository whose `.pre-commit-config.yaml` runs `hook` (its YAML after `- id: `)
    from a snapshot of this checkout; one consumer module per folder, with its tag expression."""
    source, head = _snapshot(tmp_path)
    project = tmp_path / "svc"
    project.mkdir()
    _git(project, "init", "-q")
    _git(project, "config", "user.email", "t@example.com")
    _git(project, "config", "user.name", "t")
    for folder, tags in consumers.items():
        (project / folder).mkdir()
        (project / folder / "consumer.py").write_text(CONSUMER.format(tags=tags), encoding="utf-8")
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {source}\n    rev: {head}\n    hooks:\n      - id: {hook}\n", encoding="utf-8"
    )
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "consumers")
    return project


@pytest.mark.slow
def test_hook_fails_on_inconsistent_group_and_passes_after_fix(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    project = _project(tmp_path, "subguard", {"billing": "tag1", "shipping": "tag2"})
    env = {**os.environ, "PRE_COMMIT_HOME": str(REPO / ".pytest_cache" / "pre-commit-home"), "NO_COLOR": "1"}
    env.pop("VIRTUAL_ENV", None)
    env.pop("SUBGUARD_CACHE_DIR", None)  # the hook's default: <repo>/.subguard_cache

    failed = _pre_commit(project, env)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "SG102" in failed.stdout
    assert "billing/consumer.py" in failed.stdout and "shipping/consumer.py" in failed.stdout

    (project / "shipping" / "consumer.py").write_text(CONSUMER.format(tags="tag1"), encoding="utf-8")
    _git(project, "commit", "-qam", "same tags")
    passed = _pre_commit(project, env)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    # the hook's content cache lives in the repository but is ignored by git
    assert (project / ".subguard_cache" / ".gitignore").is_file()
    assert _git(project, "status", "--porcelain") == ""


@pytest.mark.slow
def test_fix_hook_rewrites_the_tag_order_and_passes_on_the_next_run(tmp_path: Path) -> None:
    """The `subguard-fix` hook under real pre-commit: it fails the run in which it changed a file (as
    formatters do), the fix is the canonical tag order, and the next run passes."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    consumers = {"billing": "tag1||tag2", "shipping": "tag1||tag2", "audit": "tag2 || tag1"}
    project = _project(tmp_path, "subguard-fix", consumers)
    env = {**os.environ, "PRE_COMMIT_HOME": str(REPO / ".pytest_cache" / "pre-commit-home"), "NO_COLOR": "1"}
    env.pop("VIRTUAL_ENV", None)
    env.pop("SUBGUARD_CACHE_DIR", None)

    fixed = _pre_commit(project, env)
    assert fixed.returncode == 1, fixed.stdout + fixed.stderr
    assert "files were modified by this hook" in fixed.stdout
    assert CONSUMER.format(tags="tag1||tag2") == (project / "audit" / "consumer.py").read_text(encoding="utf-8")
    _git(project, "add", "-A")
    again = _pre_commit(project, env)
    assert again.returncode == 0, again.stdout + again.stderr


@pytest.mark.slow
def test_hook_with_serve_hands_the_next_commits_run_to_a_resident_server(tmp_path: Path) -> None:
    """`args: [--serve]` under real pre-commit: the first run is the hook's own and starts a server of
    pre-commit's environment; the next run is handed to it and reports what a run of its own would."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    import json
    import tempfile
    import time

    project = _project(tmp_path, "subguard\n        args: [--serve]", {"billing": "tag1", "shipping": "tag2"})
    runtime = Path(tempfile.mkdtemp(prefix="sg-", dir="/tmp"))  # a socket path holds at most 107 bytes
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(REPO / ".pytest_cache" / "pre-commit-home"),
        "NO_COLOR": "1",
        "XDG_RUNTIME_DIR": str(runtime),
    }
    for name in ("VIRTUAL_ENV", "SUBGUARD_CACHE_DIR", "SUBGUARD_NO_SERVER"):
        env.pop(name, None)
    from subguard.cli.resident.server import ask

    sock = ""
    try:
        first = _pre_commit(project, env)
        assert first.returncode == 1, first.stdout + first.stderr
        assert "SG102" in first.stdout
        deadline, listening = time.monotonic() + 120, ""
        while not listening and time.monotonic() < deadline:
            logs = "".join(p.read_text() for p in (runtime / "subguard").glob("*.log"))
            listening = next((line for line in logs.splitlines() if "serving checks of this install at " in line), "")
            time.sleep(0.1)
        assert listening, "the hook's first run started no server"
        sock = listening.split(" at ", 1)[1].split(" (pid ", 1)[0]

        (project / "shipping" / "consumer.py").write_text(CONSUMER.format(tags="tag1"), encoding="utf-8")
        _git(project, "commit", "-qam", "same tags")
        second = _pre_commit(project, env)
        assert second.returncode == 0, second.stdout + second.stderr
        status = ask(sock, "status")
        assert status is not None and status["served"] == 1, json.dumps(status)
    finally:  # the server, found or not, and its folder, socket and log
        for path in [sock] if sock else [str(p) for p in (runtime / "subguard").glob("*") if p.is_socket()]:
            ask(path, "stop")
        shutil.rmtree(runtime, ignore_errors=True)
