"""A console `check` ends for its caller once its report is out; a fork writes its caches, and every
later run waits for that fork (`subguard.cli.background`)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from subguard.cli import background

# a run's last steps as the console entry takes them: the report, the answer, then the work queued
# for the next run (here: wait for the test's word on a pipe, then write a marker file)
RUN = textwrap.dedent(
    """
    import os, sys
    from subguard.cli import background
    from subguard.core import afterwards

    release, marker = int(sys.argv[1]), sys.argv[2]

    def work():
        os.read(release, 1)
        with open(marker, "w") as fh:
            fh.write("written")
        print("warned after the answer", file=sys.stderr)

    with afterwards.deferring() as for_the_next_run:
        afterwards.later(work)
        print("the report")
        background.answer(3)
        for_the_next_run()
    sys.stdout.flush()
    os._exit(0)
    """
)


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "subguard"


def _run(tmp_path: Path, release: int, stderr: int | None = subprocess.PIPE) -> tuple[subprocess.Popen[str], Path]:
    marker = tmp_path / "marker"
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN, str(release), str(marker)],
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        pass_fds=(release,),
        env=os.environ.copy(),
    )
    return proc, marker


def test_the_caller_has_the_answer_before_the_work_for_the_next_run_is_done(tmp_path: Path, cache_home: Path) -> None:
    release_r, release_w = os.pipe()
    try:
        proc, marker = _run(tmp_path, release_r)
        out, err = proc.communicate(timeout=60)  # read to the end: the fork holds neither stream
        assert (proc.returncode, out, err) == (3, "the report\n", "")
        assert not marker.exists()
        assert not background.wait(0.2), "the fork holds the lock until its work is done"
        os.write(release_w, b"x")
        assert background.wait(30)
        assert marker.read_text() == "written"
    finally:
        os.close(release_r)
        os.close(release_w)


def test_a_file_as_stderr_still_gets_the_forks_warnings(tmp_path: Path, cache_home: Path) -> None:
    release_r, release_w = os.pipe()
    os.write(release_w, b"x")
    try:
        with open(tmp_path / "stderr.txt", "w") as err_file:
            proc, marker = _run(tmp_path, release_r, stderr=err_file.fileno())
            proc.communicate(timeout=60)
        assert proc.returncode == 3
        assert background.wait(30)
        assert (tmp_path / "stderr.txt").read_text() == "warned after the answer\n"
    finally:
        os.close(release_r)
        os.close(release_w)


def test_a_run_writes_its_own_caches_while_another_runs_fork_writes(tmp_path: Path, cache_home: Path) -> None:
    cache_home.mkdir(parents=True)
    held = os.open(background.lock_path(), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(held, fcntl.LOCK_EX)  # as a fork of another run still writing
    release_r, release_w = os.pipe()
    os.write(release_w, b"x")
    try:
        proc, marker = _run(tmp_path, release_r)
        out, err = proc.communicate(timeout=60)
        # no fork: the work was done before the process ended, and its exit code is the script's own
        assert (proc.returncode, out, err) == (0, "the report\n", "warned after the answer\n")
        assert marker.read_text() == "written"
        started = time.monotonic()
        assert not background.wait(0.1)
        assert time.monotonic() - started >= 0.1
    finally:
        os.close(held)
        os.close(release_r)
        os.close(release_w)
    assert background.wait(0)


def test_no_run_ever_forked_costs_one_open(cache_home: Path) -> None:
    assert not cache_home.exists()
    assert background.wait(0)


def test_the_next_check_replays_what_the_fork_recorded(tmp_path: Path, cache_home: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "app" / "consumer.py").write_text(
        "from rocketmq.client import PushConsumer\n"
        "c = PushConsumer('GID_ORDERS')\n"
        "c.subscribe('orders', handler, 'TagA||TagB')\n"
    )
    cmd = [sys.executable, "-m", "subguard", "check", str(repo), "--format", "json"]
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=os.environ.copy())
    second = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert (first.returncode, first.stdout, first.stderr) == (second.returncode, second.stdout, second.stderr)
    assert background.wait(30)
    memos = list((cache_home / "runs").glob("*.memo"))
    assert len(memos) == 1
    written = memos[0].stat().st_mtime_ns
    third = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert third.stdout == first.stdout
    assert background.wait(30)
    assert memos[0].stat().st_mtime_ns == written, "the runs after the first were replayed from its record"
