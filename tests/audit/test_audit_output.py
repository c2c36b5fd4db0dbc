"""The audit's output folder (issue 24): staged and switched over at the end, so a killed run leaves
the previous output whole; a quiet start (the JVM's chatter in `--out`/audit.log); no `.crc` files
beside the report files. The slow test runs the real `subguard audit` console command."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from subguard.audit import output as outdir
from tests.audit.conftest import audit_command

REPORTS = ("report.html", "findings.json", "summary.json")


def _audit(out: Path, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    cmd = audit_command(out, "local[2]", "--no-jvm-archive", *extra)
    return subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=out.parent, start_new_session=True
    )


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


@pytest.mark.slow
def test_a_killed_audit_leaves_the_previous_output_whole_and_the_next_starts_quietly(
    org_audit: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    pytest.importorskip("pyspark")
    previous, _ = org_audit
    out = tmp_path / "out"
    shutil.copytree(previous, out)  # last night's complete output
    before = _snapshot(out)
    proc = _audit(out)
    deadline = time.monotonic() + 600
    table = None
    while table is None and time.monotonic() < deadline and proc.poll() is None:
        staged = [p for p in tmp_path.glob(".out.staging-*") if p.is_dir()]
        table = next((t for s in staged for t in s.glob("*/*.parquet")), None)
        time.sleep(0.02)
    assert table is not None, "no Parquet table appeared in a staging folder"
    os.kill(proc.pid, signal.SIGKILL)  # the audit itself; its JVM goes when its parent's pipe closes
    proc.communicate(timeout=60)
    try:
        for _ in range(300):  # the JVM and its workers, started by this test: wait for them, then end them
            os.killpg(proc.pid, 0)
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    assert _snapshot(out) == before and outdir.complete(str(out))
    assert any(p.name.startswith(".out.staging-") for p in tmp_path.iterdir())  # the dead run's staging folder
    again = _audit(out)
    stdout, stderr = again.communicate(timeout=900)
    assert again.returncode == 0, stderr
    assert outdir.complete(str(out)) and _leftovers(out) == []  # swept: the dead run's folder and lock are gone
    old_run = json.loads(Path(previous, outdir.MANIFEST).read_text())["run"]
    assert json.loads((out / outdir.MANIFEST).read_text())["run"] != old_run
    assert (
        json.loads((out / "summary.json").read_text())["totals"]
        == json.loads((previous / "summary.json").read_text())["totals"]
    )
    # a quiet start: subguard's own lines on the terminal from the first, the JVM's chatter in audit.log
    lines = stderr.splitlines()
    assert lines and all(line.startswith("[audit] ") for line in lines), lines[:12]
    assert f"report: {out}/report.html" in stdout
    for name in REPORTS:
        assert (out / name).is_file() and not (out / f".{name}.crc").exists()
    assert not list(out.glob("*.crc"))
    log = (out / "audit.log").read_text()
    assert "NativeCodeLoader" in log or "incubator" in log  # the chatter is kept, in the output


# --- the switch itself, without Spark --------------------------------------------------------------


def _write(output: outdir.Output, text: str) -> None:
    output.write_text("summary.json", text)
    os.mkdir(os.path.join(output.staging, "files"))
    Path(output.staging, "files", "part-0.parquet").write_text(text)


def test_switch_replaces_the_previous_output_and_cleans_dead_runs(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = outdir.Output(str(out))
    first.open_local()
    _write(first, "one")
    first.commit_local()
    assert (out / "summary.json").read_text() == "one" and outdir.complete(str(out))
    dead = outdir.Output(str(out))  # a run that died: staging folder, lock file nobody holds
    dead.open_local()
    _write(dead, "dead")
    os.close(dead._lock_fd or -1)
    dead._lock_fd = None
    second = outdir.Output(str(out))
    second.open_local()
    assert not Path(dead.staging).exists() and not Path(dead.lock_path()).exists()
    _write(second, "two")
    assert (out / "summary.json").read_text() == "one"  # untouched until the switch
    second.commit_local()
    assert (out / "summary.json").read_text() == "two" and outdir.complete(str(out)) and _leftovers(out) == []
    (out / "files" / "part-0.parquet").write_text("torn")
    assert not outdir.complete(str(out))


def test_an_output_moved_aside_by_a_dead_run_is_moved_back(tmp_path: Path) -> None:
    out = tmp_path / "out"
    (out / "files").mkdir(parents=True)
    (out / "summary.json").write_text("previous")
    os.rename(out, tmp_path / ".out.old-123-dead")  # killed between the two renames of the fallback switch
    run = outdir.Output(str(out))
    run.open_local()
    assert (out / "summary.json").read_text() == "previous"
    run.abandon()
    assert (out / "summary.json").read_text() == "previous" and _leftovers(out) == []


def test_a_live_runs_staging_is_left_alone(tmp_path: Path) -> None:
    out = tmp_path / "out"
    live = outdir.Output(str(out))
    live.open_local()
    other = outdir.Output(str(out))
    other.open_local()
    assert Path(live.staging).is_dir()
    other.abandon()
    live.abandon()
    assert _leftovers(out) == []


def test_a_folder_of_other_files_is_refused(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.md").write_text("mine")
    with pytest.raises(outdir.OutputError, match="not an audit output"):
        outdir.Output(str(tmp_path / "out")).open_local()
    assert (tmp_path / "out" / "notes.md").read_text() == "mine"
