"""One session-scoped local SparkSession for every audit test, and the example-org audit they share."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ORG = ROOT / "examples" / "org"


def audit_command(out: Path, master: str, *extra: str) -> list[str]:
    """`subguard audit` of the bundled example organisation into `out`, as a user runs it."""
    return [sys.executable, "-m", "subguard", "audit", str(ORG), "--out", str(out), "--master", master, *extra]


def run_job(
    short_tmp: Path, *args: str, cwd: Path = ROOT, timeout: float = 600, **env: str
) -> subprocess.CompletedProcess[str]:
    """`python -m subguard.audit.job ARGS`, the program spark-submit runs, in a process of its own: no
    gateway or hash seed handed down from this one; TMPDIR is `short_tmp` (the JVM's log file and the
    zygote's folder are made there); `env` adds to the environment."""
    inherited = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_GATEWAY_PORT", "PYTHONHASHSEED")}
    return subprocess.run(
        [sys.executable, "-m", "subguard.audit.job", *args],
        capture_output=True,
        text=True,
        env={**inherited, **env, "TMPDIR": str(short_tmp)},
        cwd=cwd,
        timeout=timeout,
        check=False,
    )


REPOS = sorted(
    p.name for p in ORG.iterdir() if p.is_dir() and not p.name.startswith(".")
)  # hidden folders (a local .subguard_cache) are not repos


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    pytest.importorskip("pyspark.sql")
    from subguard.audit import driver

    session = driver.session("local[2]", app="subguard-audit-tests")  # the job's own settings
    session.conf.set("spark.sql.shuffle.partitions", "4")
    yield session
    session.stop()


def run(spark: Any, sources: list[str], out: Path, **kw: Any) -> dict[str, Any]:
    from subguard.audit import job

    args = job.AuditArgs(sources=tuple(sources), out=str(out), **kw)
    return job.run_audit(spark, args, lambda text: None)


@pytest.fixture(scope="session")
def org_audit(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The example organisation audited from its sources (folder of repos)."""
    out = tmp_path_factory.mktemp("org-audit") / "out"
    return out, run(spark, [str(ORG)], out)


@pytest.fixture(scope="session")
def org_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the example org outside any git work tree (so `check` walks it like Spark lists it)."""
    dest = tmp_path_factory.mktemp("org-copy") / "org"
    shutil.copytree(ORG, dest)
    return dest


@pytest.fixture()
def short_tmp() -> Iterator[Path]:
    """A temporary folder with a short path (the zygote's socket path must fit a Unix socket's)."""
    with tempfile.TemporaryDirectory(prefix="sgd-", dir="/tmp") as folder:
        yield Path(folder)
