"""Hostile and broken input: subguard never crashes, never hangs, never runs scanned code, and
accounts for every file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "hostile"
MARKER = Path("/tmp/subguard-pwned")


@pytest.fixture(scope="module")
def hostile_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed hostile files plus what git cannot store: FIFOs, devices, symlink tricks."""
    root = tmp_path_factory.mktemp("hostile") / "repo"
    shutil.copytree(FIXTURE, root, symlinks=True)
    os.mkfifo(root / "app" / "fifo.py")
    (root / "app" / "loop_a.py").symlink_to("loop_b.py")
    (root / "app" / "loop_b.py").symlink_to("loop_a.py")
    (root / "app" / "escape.py").symlink_to("/etc/passwd")
    (root / "config" / "application-escape.yml").symlink_to("/etc/hostname")
    (root / "app" / "dangling.py").symlink_to("does-not-exist.py")
    (root / "linkdir").symlink_to(root / "app", target_is_directory=True)
    (root / "up").symlink_to("..", target_is_directory=True)
    try:
        os.mknod(root / "app" / "device.py", 0o600 | 0o020000, os.makedev(1, 3))  # like /dev/null
    except (PermissionError, OSError):
        pass
    return root


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("SUBGUARD_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "subguard", *args], cwd=cwd, capture_output=True, text=True, timeout=60, env=env)


def _discovered(root: Path) -> set[str]:
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            if full.is_symlink() or not full.is_dir():
                out.add(full.relative_to(root).as_posix())
    return out


def test_fixture_has_enough_cases() -> None:
    assert sum(1 for p in FIXTURE.rglob("*") if p.is_file()) >= 25


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_check_survives_and_accounts_for_every_file(hostile_repo: Path, fmt: str) -> None:
    MARKER.unlink(missing_ok=True)
    start = time.monotonic()
    proc = _run("check", ".", "--format", fmt, "--stats", "--no-simulate", cwd=hostile_repo)
    elapsed = time.monotonic() - start
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert elapsed < 10, f"took {elapsed:.1f}s"
    assert not MARKER.exists(), "scanned code was executed"
    if fmt == "json":
        findings = json.loads(proc.stdout)
        failed_paths = {f["path"] for f in findings if f["rule"] == "SG901"}
        for bad in ("app/syntax_error.py", "app/latin1.py", "config/application-tabs.yml", "src/main/java/com/x/Broken.java"):
            assert bad in failed_paths, f"{bad} should be reported as unparseable"


def test_inventory_stats_account_for_every_file(hostile_repo: Path) -> None:
    proc = _run("inventory", ".", "--format", "json", "--stats", cwd=hostile_repo)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    rows = json.loads(proc.stdout)
    groups = {r["group"] for r in rows}
    assert {"hostile-good-group", "bom-group", "many-group"} <= groups
    first = proc.stderr.splitlines()[0]
    discovered = int(first.split()[1])
    assert discovered == len(_discovered(hostile_repo)), first
    assert not MARKER.exists()


def test_scan_records_reasons(hostile_repo: Path) -> None:
    from subguard.config import load_config
    from subguard.scan import scan_repo

    config = load_config(None, hostile_repo)
    result = scan_repo(hostile_repo, config)
    by_path = {r.path: r for r in result.files}
    assert set(by_path) == _discovered(hostile_repo)
    assert all(r.reason for r in result.files if r.status.value != "parsed")
    assert "symbolic link" in by_path["app/escape.py"].reason
    assert "symbolic link" in by_path["up"].reason
    assert "not a regular file" in by_path["app/fifo.py"].reason
    assert "size limit" in by_path["app/too_big.py"].reason
    assert by_path["app/binary.py"].status.value in ("failed", "skipped")
    assert by_path["app/empty.py"].status.value == "skipped"
    assert by_path["chart/templates/deployment.yaml"].status.value in ("skipped", "failed")
    for bad in ("config/application-laughs.yml", "config/application-deep.yml", "deploy/deep.yaml", "app/deep_expr.py"):
        assert by_path[bad].status.value in ("failed", "parsed"), by_path[bad]
