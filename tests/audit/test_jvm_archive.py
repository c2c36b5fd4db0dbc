"""`subguard audit` (class-data archive on by default): the archive of the local driver JVM is written once,
used after, and an archive that would crash the JVM is dropped, never fatal (`subguard.audit.jvm`)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from subguard.audit import jvm
from tests.audit.conftest import ORG, audit_command, run_job
from tests.report_json import all_findings


def _audit(tmp_path: Path, out: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    cmd = audit_command(tmp_path / out, "local[1]", "--format", "json")
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False)


def _findings(tmp_path: Path, out: str) -> list[tuple[str, str]]:
    data = all_findings((tmp_path / out / "findings.json").read_text(encoding="utf-8"))
    return sorted((str(f["rule"]), str(f.get("group") or "")) for f in data)


def _archives(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache" / "subguard" / "jvm").glob("*.jsa"))


@pytest.mark.slow
def test_archive_written_once_used_after_and_a_broken_one_dropped(tmp_path: Path, short_tmp: Path) -> None:
    """Three audits: the first writes the archive; the second, run as the job's own program, uses it
    (and leaves nothing in its temporary folder); the third finds it broken and runs without."""
    first = _audit(tmp_path, "o1")
    assert first.returncode == 0, first.stderr
    (archive,) = _archives(tmp_path)
    assert jvm.usable(archive)
    assert not list(archive.parent.glob("*.tmp"))  # the temporary name was renamed, nothing left behind
    stamp = archive.stat()

    args = (str(ORG), "--out", str(tmp_path / "o2"), "--master", "local[1]", "--format", "json")
    second = run_job(short_tmp, *args, cwd=tmp_path, XDG_CACHE_HOME=str(tmp_path / "cache"))
    assert second.returncode == 0, second.stderr[-3000:]
    assert (
        archive.stat().st_ino == stamp.st_ino and archive.stat().st_mtime_ns == stamp.st_mtime_ns
    )  # used, not rewritten
    assert _findings(tmp_path, "o2") == _findings(tmp_path, "o1")
    assert "[audit] session: Spark started in" in second.stderr
    assert (tmp_path / "o2" / "audit.log").is_file()  # the JVM's messages, from the file the launch thread made
    assert not list(short_tmp.glob("subguard-*"))  # its log file and the zygote's folder gone

    # an archive cut short that still matches its record would crash the JVM: the run drops it and
    # starts without one
    with open(archive, "r+b") as fh:
        fh.truncate(4096)
    (archive.with_suffix(".ok")).write_text(
        f"{archive.stat().st_size} {archive.stat().st_mtime_ns} {archive.stat().st_ino}", encoding="ascii"
    )
    assert jvm.usable(archive)
    third = _audit(tmp_path, "o3")
    assert third.returncode == 0, third.stderr
    assert _findings(tmp_path, "o3") == _findings(tmp_path, "o1")
    assert not archive.exists()


def test_an_archive_that_does_not_match_its_record_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    jars = tmp_path / "jars"
    jars.mkdir()
    first = jvm.plan("local[2]", "-XX:TieredStopAtLevel=1", str(jars))
    if first.archive is None:
        pytest.skip("no java binary")
    assert first.pending is not None and "ArchiveClassesAtExit" in first.options
    first.archive.write_bytes(b"x" * 100)  # appears without a record: a half-finished rename, a copy
    second = jvm.plan("local[2]", "-XX:TieredStopAtLevel=1", str(jars))
    assert second.pending is not None and not first.archive.exists()  # dropped, and a new one planned
    assert jvm.plan("yarn", "", str(jars)) == jvm.Plan()  # never on a cluster


def test_stale_temporary_archives_are_swept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    folder = tmp_path / "subguard" / "jvm"
    folder.mkdir(parents=True)
    old, new = folder / "spark-x.1.tmp", folder / "spark-x.2.tmp"
    old.write_bytes(b"x")
    new.write_bytes(b"x")
    past = time.time() - jvm.STALE_SECONDS - 10
    os.utime(old, (past, past))
    if jvm.plan("local[1]", "", str(tmp_path)).archive is None:
        pytest.skip("no java binary")
    assert not old.exists() and new.exists()


def test_the_archive_is_on_by_default_and_can_be_turned_off() -> None:
    pytest.importorskip("pyspark")
    from subguard.audit import job

    assert job.parse_args(["org", "--out", "o"]).jvm_archive
    assert not job.parse_args(["org", "--out", "o", "--no-jvm-archive"]).jvm_archive
    assert job.parse_args(["org", "--out", "o", "--jvm-archive"]).jvm_archive
