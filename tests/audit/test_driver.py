"""`python -m subguard.audit.job`: the driver JVM is launched in a thread before the job's heavier
imports (`subguard.audit.driver.begin`); the run is the same, and nothing is left behind, also when
the arguments turn out wrong (a whole run of the program: `test_jvm_archive.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.audit.conftest import ORG, run_job


def test_early_args() -> None:
    from subguard.audit import driver

    a = driver._early_args(["org", "--out", "o", "--master", "local[1]", "--no-jvm-archive", "--format", "json"])
    assert a is not None and (a.master, a.jvm_archive, a.verbose) == ("local[1]", False, False)
    assert driver._early_args(["org", "--out", "o", "-h"]) is None  # help: no JVM
    assert driver._early_args(["org"]) is None  # no --out: parse_args reports it
    assert driver._early_args(["--out", "o"]) is None
    assert driver._early_args(["org", "--out", "o", "--format", "bogus"]) is None
    assert driver.take(["org", "--out", "o"]) is None  # nothing begun in this process


@pytest.mark.slow
def test_job_usage_error_starts_nothing(tmp_path: Path, short_tmp: Path) -> None:
    """Wrong arguments: argparse's message on the terminal, and no JVM, zygote or log file started."""
    done = run_job(
        short_tmp, str(ORG), "--out", str(tmp_path / "out"), "--master", "local[2]", "--format", "bogus", timeout=300
    )
    assert done.returncode == 2 and "invalid choice: 'bogus'" in done.stderr, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()
    assert not list(short_tmp.glob("subguard-*"))


def test_the_cli_begins_the_launch_before_the_job_imports(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`subguard audit` starts the driver JVM's launch (`driver.begin`) with the very arguments the
    job then runs with, so the job's `take` finds it (checked here without Spark: the job's `main`
    records what it is given)."""
    from click.testing import CliRunner

    from subguard.audit import driver, job
    from subguard.cli.main import cli

    begun: list[list[str]] = []
    ran: list[list[str]] = []
    monkeypatch.setattr(driver, "begin", lambda argv: begun.append(list(argv)))
    monkeypatch.setattr(job, "main", lambda argv: ran.append(list(argv)) or 0)
    result = CliRunner().invoke(cli, ["audit", str(ORG), "--out", str(tmp_path / "out"), "--master", "local[1]"])
    assert result.exit_code == 0, result.output
    assert begun and begun == ran, (begun, ran)
