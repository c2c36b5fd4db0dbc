"""`subguard audit` without a usable Java: one line naming Java 17+ and how to point subguard at it,
exit 2, before Spark is loaded (it printed a PySpark traceback and exited 1)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from tests.audit.conftest import ORG


def audit(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "subguard", "audit", str(ORG), "--out", str(tmp_path / "out")],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_java_home_pointing_nowhere(tmp_path: Path) -> None:
    done = audit(tmp_path, JAVA_HOME="/nonexistent")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert "Java 17+" in done.stderr and "JAVA_HOME=/nonexistent has no bin/java" in done.stderr
    assert "point JAVA_HOME at it" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_java_too_old(tmp_path: Path) -> None:
    home = tmp_path / "jdk11"
    (home / "bin").mkdir(parents=True)
    java = home / "bin" / "java"
    java.write_text("#!/bin/sh\necho 'openjdk version \"11.0.22\" 2024-01-16' >&2\n", encoding="utf-8")
    java.chmod(java.stat().st_mode | stat.S_IXUSR)
    done = audit(tmp_path, JAVA_HOME=str(home))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"{java} (JAVA_HOME={home}) is Java 11" in done.stderr and "Java 17+" in done.stderr
