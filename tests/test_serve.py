"""The resident server (`subguard serve`, `subguard.cli.resident`): real server processes on real sockets.

A check handed to the server prints, exits and caches exactly what it does without one, replayed or
run, with the walks the server keeps current; only runs
of the same user, interpreter, code and start-up environment are served; Ctrl-C reaches the served
run; `--stop`, `--status` and the idle limit do what they say.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from subguard.cli.resident import address
from subguard.cli.resident.server import ask
from subguard.core import frames
from tests.settle import settle

# one consumer module; "{tags}" is its tag expression (shared with the cache, action and hook tests)
CONSUMER = (Path(__file__).parent / "fixtures" / "snippets" / "order_consumer.py.tmpl").read_text(encoding="utf-8")


def _short(tmp: Path) -> Path:
    """A short link to `tmp/run` (a socket path holds at most 107 bytes; pytest's folders are long)."""
    return Path(tempfile.gettempdir()) / f"sg-{hashlib.blake2b(str(tmp).encode(), digest_size=6).hexdigest()}"


@pytest.fixture(autouse=True)
def _runtime_link(tmp_path: Path) -> Iterator[None]:
    (tmp_path / "run").mkdir()
    _short(tmp_path).symlink_to(tmp_path / "run")
    yield
    _short(tmp_path).unlink()


def _env(tmp: Path, **more: str) -> dict[str, str]:
    short = _short(tmp)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(short), "XDG_CACHE_HOME": str(tmp / "xdg"), "NO_COLOR": "1"}
    for name in ("SUBGUARD_NO_SERVER", "SUBGUARD_NO_RUN_MEMO", "SUBGUARD_CACHE_DIR"):
        env.pop(name, None)
    env.update(more)
    return env


def _subguard(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "subguard", *args]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=180, env=env, check=False)
    settle(env)
    return proc


class Served:
    """A foreground `subguard serve` and the socket it announced."""

    def __init__(self, tmp: Path, *args: str, **env: str) -> None:
        self.env = _env(tmp, **env)
        cmd = [sys.executable, "-m", "subguard", "serve", *args]
        self.proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env=self.env)
        assert self.proc.stderr is not None
        line = self.proc.stderr.readline()  # "... serving checks of this install at PATH (pid N, ...)"
        assert "serving checks of this install at " in line, line
        self.path = line.split(" at ", 1)[1].split(" (pid ", 1)[0]

    def status(self) -> dict[str, object]:
        answer = ask(self.path, "status")
        assert answer is not None
        return answer

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for name, tags in (("one", "TagA"), ("two", "TagB")):  # one group, two tag expressions: a finding
        (root / name).mkdir(parents=True)
        (root / name / "consumer.py").write_text(CONSUMER.format(tags=tags))
    return root


@pytest.fixture()
def server(tmp_path: Path) -> Iterator[Served]:
    served = Served(tmp_path, "--idle", "120")
    try:
        yield served
    finally:
        served.close()


def test_a_served_check_prints_and_exits_as_one_without_the_server(repo: Path, server: Served, tmp_path: Path) -> None:
    args = ("check", ".", "--no-simulate", "--format", "json")
    for edit in ("TagB", "TagA", "TagA || TagC"):
        (repo / "two" / "consumer.py").write_text(CONSUMER.format(tags=edit))
        time.sleep(0.15)  # past the run memo's racy window
        before = server.status()["served"]
        served = _subguard(repo, server.env, *args)
        assert server.status()["served"] == before + 1
        alone = _subguard(repo, {**server.env, "SUBGUARD_NO_SERVER": "1"}, *args, "--no-cache")
        assert (served.returncode, served.stdout) == (alone.returncode, alone.stdout)
        assert served.stderr == alone.stderr
        assert served.returncode == (1 if edit != "TagA" else 0)
    text = _subguard(repo, server.env, "check", ".", "--no-simulate")  # the text report, through the same streams
    assert text.returncode == 1
    assert "order-group" in text.stdout


def test_a_run_that_would_start_otherwise_is_not_served(repo: Path, server: Served) -> None:
    other = {**server.env, "PYTHONHASHSEED": "7"}  # read at interpreter start: the server's differs
    result = _subguard(repo, other, "check", ".", "--no-simulate", "--format", "json")
    assert result.returncode == 1
    assert server.status()["served"] == 0


def test_status_stop_and_the_idle_limit(tmp_path: Path, server: Served) -> None:
    status = _subguard(tmp_path, server.env, "serve", "--status")
    assert status.returncode == 0
    assert json.loads(status.stdout)["pid"] == server.proc.pid
    stopped = _subguard(tmp_path, server.env, "serve", "--stop")
    assert stopped.returncode == 0
    assert server.proc.wait(timeout=30) == 0
    assert not os.path.exists(server.path)
    assert _subguard(tmp_path, server.env, "serve", "--status").returncode == 1

    idle = Served(tmp_path, "--idle", "0.5")
    try:
        assert idle.proc.wait(timeout=30) == 0  # nothing to serve: gone by itself
    finally:
        idle.close()
    assert not os.path.exists(idle.path)


def test_ctrl_c_reaches_the_served_run(tmp_path: Path, server: Served) -> None:
    slow = tmp_path / "slow"
    for i in range(600):
        (slow / f"svc{i}").mkdir(parents=True)
        (slow / f"svc{i}" / "consumer.py").write_text(CONSUMER.format(tags=f"Tag{i}"))
    (slow / ".subguard.yaml").write_text("jobs: 1\n")  # one process parses them all: a run of seconds
    cmd = [sys.executable, "-m", "subguard", "check", ".", "--no-cache", "--no-simulate"]
    began = time.monotonic()
    client = subprocess.Popen(cmd, cwd=slow, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=server.env)
    deadline = time.monotonic() + 30
    while server.status()["running"] == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    client.send_signal(signal.SIGINT)
    out, err = client.communicate(timeout=60)
    assert client.returncode == 2, (out, err)
    assert "aborted" in err
    assert time.monotonic() - began < 30


def test_a_request_of_a_foreign_kind_is_refused_and_nothing_runs(server: Served) -> None:
    import socket

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(server.path)
    frames.send(sock, {"op": "run", "argv": ["audit", "."], "fds": []})
    answer, _ = frames.receive(sock)
    sock.close()
    assert answer == {"refused": "not a check"}
    assert server.status()["served"] == 0


def test_a_folder_others_may_enter_is_never_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.delenv("SUBGUARD_NO_SERVER", raising=False)
    assert address.served() is None  # no folder yet: one stat, nothing else
    folder = tmp_path / "subguard"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    assert address.served() is None
    with pytest.raises(OSError, match="not a private folder"):
        address.make_folder()
    folder.chmod(0o700)
    assert address.served() is None  # no socket of this install in it
    (folder / address.name()).touch()
    assert address.served() == os.path.join(str(folder), address.name())
    monkeypatch.setenv("SUBGUARD_NO_SERVER", "1")
    assert address.served() is None


def test_check_serve_starts_a_server_for_the_next_run(repo: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    args = ("check", ".", "--no-simulate", "--format", "json", "--serve")
    first = _subguard(repo, env, *args)  # none runs: this run is its own, and starts one
    assert first.returncode == 1
    folder = Path(env["XDG_RUNTIME_DIR"]) / "subguard"
    deadline = time.monotonic() + 60
    path = None
    while path is None and time.monotonic() < deadline:
        logs = [p.read_text() for p in folder.glob("*.log")] if folder.exists() else []
        lines = [line for text in logs for line in text.splitlines() if "serving checks of this install at " in line]
        path = lines[0].split(" at ", 1)[1].split(" (pid ", 1)[0] if lines else None
        time.sleep(0.05)
    assert path is not None, "no server started"
    try:
        (repo / "two" / "consumer.py").write_text(CONSUMER.format(tags="TagC"))
        time.sleep(0.15)
        second = _subguard(repo, env, *args)
        answer = ask(path, "status")
        assert answer is not None and answer["served"] == 1
        alone = _subguard(repo, {**env, "SUBGUARD_NO_SERVER": "1"}, "check", ".", "--no-simulate", "--format", "json")
        assert (second.returncode, second.stdout) == (alone.returncode, alone.stdout)
    finally:
        ask(path, "stop")


def test_an_unchanged_run_is_replayed_by_the_served_run_from_the_walks_the_server_keeps(
    repo: Path, server: Served
) -> None:
    """Once a served run has ended, the server watches the trees it walked (the scan root, the cache
    folder: `subguard.scan.watch`); the next run is handed over and replays from the run memo with
    the stamps of those walks, exactly as the console process replays, and after an edit the run
    prints what a run without the server prints."""
    args = ("check", ".", "--no-simulate", "--format", "json")
    first = _subguard(repo, server.env, *args)
    deadline = time.monotonic() + 30
    while not _watched(server, "root") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _watched(server, "root") == [os.path.realpath(repo)]
    again = _subguard(repo, server.env, *args)
    assert server.status()["served"] == 2
    assert (again.returncode, again.stdout, again.stderr) == (first.returncode, first.stdout, first.stderr)
    alone = _subguard(repo, {**server.env, "SUBGUARD_NO_SERVER": "1"}, *args)  # replayed by itself
    assert (alone.returncode, alone.stdout, alone.stderr) == (first.returncode, first.stdout, first.stderr)
    assert server.status()["served"] == 2
    for edit in ("TagA", "TagB", "TagC"):
        (repo / "two" / "consumer.py").write_text(CONSUMER.format(tags=edit))
        (repo / "three").mkdir(exist_ok=True)  # a new folder, and a file in it: followed as well
        (repo / "three" / f"{edit}.py").write_text(CONSUMER.format(tags=edit))
        time.sleep(0.15)
        served = _subguard(repo, server.env, *args)
        cold = _subguard(repo, {**server.env, "SUBGUARD_NO_SERVER": "1"}, *args, "--no-cache")
        assert (served.returncode, served.stdout, served.stderr) == (cold.returncode, cold.stdout, cold.stderr)
        replayed = _subguard(repo, server.env, *args)
        assert (replayed.returncode, replayed.stdout) == (cold.returncode, cold.stdout)


def _watched(server: Served, kind: str) -> list[str]:
    """The folders of `kind` the server watches (`subguard serve --status`: "watched")."""
    watched = server.status()["watched"]
    assert isinstance(watched, list)
    return [path for k, path in watched if k == kind]


def test_the_server_keeps_the_cache_files_a_run_loaded_and_the_next_run_reads_the_same(
    repo: Path, server: Served
) -> None:
    """Once a served run has ended, the server loads the content cache's state that run read
    (`subguard.core.kept`); the next run, after an edit, gets it from the server and prints what a
    run without the server prints."""
    args = ("check", ".", "--no-simulate", "--format", "json")
    assert _subguard(repo, server.env, *args).returncode == 1
    deadline = time.monotonic() + 30
    while not _kept_states(server) and time.monotonic() < deadline:  # loaded once the run has ended
        time.sleep(0.05)
    assert [Path(p).name[:5] for p in _kept_states(server)] == ["scan-"]
    for edit in ("TagA", "TagB"):
        (repo / "two" / "consumer.py").write_text(CONSUMER.format(tags=edit))
        time.sleep(0.15)
        served = _subguard(repo, server.env, *args)
        alone = _subguard(repo, {**server.env, "SUBGUARD_NO_SERVER": "1"}, *args, "--no-cache")
        assert (served.returncode, served.stdout, served.stderr) == (alone.returncode, alone.stdout, alone.stderr)


def _kept_states(server: Served) -> list[str]:
    """The content cache states the server keeps (`subguard serve --status`: "kept")."""
    kept = server.status()["kept"]
    assert isinstance(kept, list)
    return [path for kind, path in kept if kind == "scan-state"]


def test_the_server_holds_its_install_stamp_for_the_runs_it_forks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A client reaches a server by a socket name made of its install stamp, so the server's runs take
    the stamp it held when it named its socket instead of walking the install again."""
    from subguard.core import identity
    from subguard.scan import runmemo

    monkeypatch.setattr(identity, "_HELD", [])
    stamp = identity.install_stamp()
    name = address.name()
    identity.hold_install_stamp()

    def no_walk(*args: object, **kwargs: object) -> Iterator[tuple[str, list[str], list[str]]]:
        raise AssertionError("the install was walked again")

    monkeypatch.setattr(os, "walk", no_walk)
    assert runmemo.install_stamp() == stamp and address.name() == name  # the run memo's key takes it too
