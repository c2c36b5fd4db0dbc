"""The check a resident server runs ahead after an edit (`subguard.cli.resident.runahead`): real
servers, real edits. The next run of that check replays what the run ahead recorded and prints what a
run without the server prints; nothing runs ahead for a terminal, a file output, `--no-ahead`, or
without an edit; a client asking while the run ahead runs waits for it."""

# ruff: noqa: F811 - the fixtures shared with test_serve are imported, then taken as parameters by name
from __future__ import annotations

import os
import pty
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_serve import CONSUMER, Served, _runtime_link, _subguard, repo, server  # noqa: F401 - fixtures, used by name

import subguard.cli.resident.warm  # noqa: F401 - as the server: registers the run memo's kept kind
from subguard.cli.resident import runahead
from subguard.core import kept, signing
from subguard.scan import runmemo

ARGS = ("check", ".", "--no-simulate", "--format", "json")


def _ahead(server: Served) -> dict[str, object]:
    ahead = server.status()["ahead"]
    assert isinstance(ahead, dict)
    return ahead


def _until(what: object, done: object, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if callable(done) and done():
            return
        time.sleep(0.05)
    raise AssertionError(f"not within {seconds} s: {what} {done() if callable(done) else None}")


def _watching(server: Served, kind: str = "root") -> bool:
    watched = server.status()["watched"]
    return isinstance(watched, list) and any(k == kind for k, _ in watched)


def _memos(tmp_path: Path) -> dict[str, int]:
    """Each run memo entry and its mtime (a run that is not a replay writes its entry again)."""
    runs = tmp_path / "xdg" / "subguard" / "runs"
    return {p.name: p.stat().st_mtime_ns for p in runs.glob("*.memo")}


def _cold(repo: Path, server: Served, *args: str) -> subprocess.CompletedProcess[str]:
    return _subguard(repo, {**server.env, "SUBGUARD_NO_SERVER": "1"}, *args, "--no-cache")


@pytest.mark.parametrize("git", [False, True])
def test_after_an_edit_the_check_runs_ahead_and_the_next_run_replays_it(
    repo: Path, server: Served, tmp_path: Path, git: bool
) -> None:
    """A root outside git (its walk stamps the runs) and a git work tree (git lists it; the server
    watches it for edits alone, `.git` left out: committing starts nothing)."""
    if git:
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    assert _subguard(repo, server.env, *ARGS).returncode == 1  # pipes, not terminals: it may run ahead
    _until("the root watched", lambda: _watching(server, "work tree" if git else "root"))
    for n, edit in enumerate(("TagC", "TagA", "TagB || TagD"), start=1):
        (repo / "two" / "consumer.py").write_text(CONSUMER.format(tags=edit))
        _until(
            ("the check run ahead", n, server),
            lambda n=n: _ahead(server) == {"enabled": True, "started": n, "running": None, "waited": 0},
        )
        recorded = _memos(tmp_path)
        served = _subguard(repo, server.env, *ARGS)
        assert _memos(tmp_path) == recorded  # replayed: a run would have written its entry again
        cold = _cold(repo, server, *ARGS)
        assert (served.returncode, served.stdout, served.stderr) == (cold.returncode, cold.stdout, cold.stderr)
    if git:  # git's own writes (index, objects) start nothing either
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], cwd=repo, check=True)
    time.sleep(1)  # the runs' own writes (the cache folder inside the root) start nothing
    assert _ahead(server)["started"] == 3


def test_a_client_asking_while_the_check_runs_ahead_waits_for_it(repo: Path, server: Served, tmp_path: Path) -> None:
    for n in range(60):  # enough consumers that a run ahead after editing them all takes a while
        (repo / f"m{n}").mkdir()
        (repo / f"m{n}" / "consumer.py").write_text(CONSUMER.format(tags=f"Tag{n}").replace("order-group", f"g{n}"))
    assert _subguard(repo, server.env, *ARGS).returncode == 1
    _until("the root watched", lambda: _watching(server))
    for n in range(60):  # new bytes everywhere: the run ahead parses them all
        (repo / f"m{n}" / "consumer.py").write_text(CONSUMER.format(tags=f"Tag{n}x").replace("order-group", f"g{n}"))
    _until("the check running ahead", lambda: _ahead(server)["running"] is not None, seconds=10)
    served = _subguard(repo, server.env, *ARGS)  # held until the run ahead ends, then it replays
    assert _ahead(server) == {"enabled": True, "started": 1, "running": None, "waited": 1}
    cold = _cold(repo, server, *ARGS)
    assert (served.returncode, served.stdout, served.stderr) == (cold.returncode, cold.stdout, cold.stderr)
    assert server.status()["served"] == 2  # the run ahead is not a served run


def test_nothing_runs_ahead_of_a_file_output_or_a_terminal(repo: Path, tmp_path: Path, server: Served) -> None:
    report = tmp_path / "report.json"
    assert _subguard(repo, server.env, *ARGS, "--output", str(report)).returncode == 1
    _until("the root watched", lambda: _watching(server))
    written = report.stat().st_mtime_ns
    (repo / "two" / "consumer.py").write_text(CONSUMER.format(tags="TagC"))
    time.sleep(1.5)
    assert _ahead(server)["started"] == 0  # it would write report.json before anyone asked
    assert report.stat().st_mtime_ns == written

    assert _subguard(repo, server.env, *ARGS).returncode == 1  # one that may run ahead ...
    primary, secondary = pty.openpty()  # ... then the latest check writes to a terminal
    try:
        cmd = [sys.executable, "-m", "subguard", *ARGS]
        code = subprocess.run(cmd, cwd=repo, env=server.env, stdout=secondary, stderr=secondary, timeout=180).returncode
        assert code == 1
    finally:
        os.close(secondary)
        os.close(primary)
    assert server.status()["served"] == 3
    (repo / "two" / "consumer.py").write_text(CONSUMER.format(tags="TagD"))
    time.sleep(1.5)
    assert _ahead(server)["started"] == 0


def test_a_check_may_run_ahead_when_its_memo_entry_writes_no_file_and_no_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`runahead.replayable`, on real signed entries the server holds: an entry it does not hold,
    a terminal, or a regular file among the outputs: not run ahead; /dev/null, or none: run ahead."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    home = signing.cache_home()
    signing.user_key()
    report = tmp_path / "report.json"
    report.write_text("{}")
    for name, files, ttys, ahead in (
        ("none", {}, False, True),
        ("devnull", {os.devnull: "{}"}, False, True),
        ("terminal", {}, True, False),
        ("file", {str(report): "{}", os.devnull: ""}, False, False),
    ):
        path = str(tmp_path / f"{name}.memo")
        runmemo.write_entry(path, {"version": runmemo.FORMAT, "outputs": {"stdout": "", "stderr": "", "files": files}})
        assert not runahead.replayable([path], ttys)  # not held by the server yet
        kept.warm([(runmemo.KEPT_KIND, path, home)], signing.stored_key)
        assert runahead.replayable([path], ttys) == ahead, name
    kept.forget()


def test_no_ahead_runs_nothing_ahead(tmp_path: Path, repo: Path) -> None:
    server = Served(tmp_path, "--idle", "120", "--no-ahead")
    try:
        assert _subguard(repo, server.env, *ARGS).returncode == 1
        _until("the root watched", lambda: _watching(server))
        (repo / "two" / "consumer.py").write_text(CONSUMER.format(tags="TagC"))
        time.sleep(1.5)
        assert _ahead(server) == {"enabled": False, "started": 0, "running": None, "waited": 0}
        served = _subguard(repo, server.env, *ARGS)
        cold = _cold(repo, server, *ARGS)
        assert (served.returncode, served.stdout) == (cold.returncode, cold.stdout)
    finally:
        server.close()


@pytest.mark.slow
def test_random_edits_at_random_moments_print_what_a_run_without_the_server_prints(
    repo: Path, server: Served, tmp_path: Path
) -> None:
    """Edits of consumers (tags changed, consumers added and removed) with the commit's check coming
    at random moments after them: before the run ahead starts, while it runs (held), or after it (a
    replay); two edits in a row, one of them while the run ahead runs. Whatever the moment, the check
    prints what a run without the server prints."""
    rng = random.Random(7)
    assert _subguard(repo, server.env, *ARGS).returncode == 1
    _until("the root watched", lambda: _watching(server))
    edits = 0
    for step in range(14):
        for _ in range(rng.choice((1, 1, 2))):
            edits += 1
            name = rng.choice(("two", "three", "four"))
            target = repo / name / "consumer.py"
            if name != "two" and target.exists() and rng.random() < 0.3:
                target.unlink()
            else:
                target.parent.mkdir(exist_ok=True)
                target.write_text(CONSUMER.format(tags=rng.choice(("TagA", "TagB", "TagA || TagB", f"Tag{step}"))))
            time.sleep(rng.choice((0.0, 0.05, 0.2, 0.4)))
        time.sleep(rng.choice((0.0, 0.1, 0.2, 0.3, 0.6, 1.0)))
        served = _subguard(repo, server.env, *ARGS)
        cold = _cold(repo, server, *ARGS)
        assert (served.returncode, served.stdout, served.stderr) == (cold.returncode, cold.stdout, cold.stderr), step
    ahead = _ahead(server)
    assert 0 < ahead["started"] <= edits  # run ahead, and never on its own writes
