"""The run memo: an unchanged `subguard check` is replayed, any changed input runs it for real.

Every test runs the real console entry (`python -m subguard`) in a subprocess with its own user
cache, as a pre-commit hook would.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from subguard.scan import runmemo, runrecord, treestamp
from tests.settle import settle

CONSUMER = """from rocketmq.client import PushConsumer


def start(handle):
    c = PushConsumer("GID_MEMO")
    c.set_name_server_address("ns:9876")
    c.subscribe("TopicMemo", handle, "{tags}")
    c.start()
"""


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    (root / "a" / "one.py").write_text(CONSUMER.format(tags="TagA"))
    (root / "b" / "two.py").write_text(CONSUMER.format(tags="TagA"))
    return root


def _check(repo: Path, *args: str, importtime: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(repo.parent / "xdg"), "NO_COLOR": "1"}
    env.pop("SUBGUARD_CACHE_DIR", None)  # the default: <root>/.subguard_cache, inside the root
    env.pop("SUBGUARD_NO_RUN_MEMO", None)
    cmd = [
        sys.executable,
        *(["-X", "importtime"] if importtime else []),
        "-m",
        "subguard",
        "check",
        ".",
        "--no-simulate",
        *args,
    ]
    proc = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, timeout=120, env=env, check=False)
    settle(env)
    return proc


def _replayed(proc: subprocess.CompletedProcess[str]) -> bool:
    """Whether the run was answered without loading the engine (`-X importtime` lists every import)."""
    return "subguard.scan.runmemo" in proc.stderr and "subguard.rules.engine" not in proc.stderr


def _memos(repo: Path) -> list[Path]:
    return sorted((repo.parent / "xdg" / "subguard" / "runs").glob("*.memo"))


def test_unchanged_tree_is_replayed_identically(repo: Path) -> None:
    first = _check(repo)
    assert first.returncode == 0, first.stderr
    second = _check(repo, importtime=True)
    assert _replayed(second)
    assert second.returncode == first.returncode and second.stdout == first.stdout
    assert first.stderr in second.stderr  # the replayed summary line, after the import timings
    imported = {line.split("|")[-1].strip() for line in second.stderr.splitlines() if line.startswith("import time:")}
    heavy = {
        "subguard.cli.main",
        "subguard.core.cache",
        "click",
        "pydantic",
        "hashlib",
        "pickle",
        "json",
        "subprocess",
        "typing",
    }
    assert not imported & heavy  # a replay loads only what it needs: its start-up is most of its time


def test_a_changed_file_runs_for_real(repo: Path) -> None:
    assert _check(repo).returncode == 0
    (repo / "b" / "two.py").write_text(CONSUMER.format(tags="TagB"))
    proc = _check(repo, importtime=True)
    assert not _replayed(proc)
    assert proc.returncode == 1 and "SG102" in proc.stdout
    again = _check(repo, importtime=True)  # and that new state is replayed in turn
    assert _replayed(again) and again.returncode == 1 and again.stdout == proc.stdout


def test_new_file_config_and_parent_config_are_inputs(repo: Path) -> None:
    assert _check(repo).returncode == 0
    (repo / "c.py").write_text(CONSUMER.format(tags="TagC"))
    assert "SG102" in _check(repo).stdout
    (repo / ".subguard.yaml").write_text('ignore: ["SG102"]\n')
    assert "SG102" not in _check(repo).stdout
    (repo / ".subguard.yaml").unlink()
    assert "SG102" in _check(repo).stdout
    (repo.parent / ".subguard.yaml").write_text('ignore: ["SG102"]\n')  # found by walking up from the root
    assert "SG102" not in _check(repo).stdout


def test_arguments_and_environment_are_part_of_the_key(repo: Path) -> None:
    (repo / "b" / "two.py").write_text(CONSUMER.format(tags="TagB"))
    text = _check(repo)
    as_json = _check(repo, "--format", "json")
    assert text.stdout != as_json.stdout and as_json.stdout.lstrip().startswith("{")
    assert _check(repo, "--fail-on", "none").returncode == 0
    assert _check(repo).returncode == 1
    assert len(_memos(repo)) == 3


def test_output_file_is_rewritten_on_replay(repo: Path) -> None:
    out = repo / "report.sarif"
    first = _check(repo, "--format", "sarif", "-o", str(out))
    written = out.read_text()
    out.unlink()
    second = _check(repo, "--format", "sarif", "-o", str(out), importtime=True)
    assert _replayed(second)  # the report inside the root is the run's own output, not an input
    assert out.read_text() == written and second.returncode == first.returncode


def test_corrupt_cache_is_a_changed_input(repo: Path) -> None:
    assert _check(repo).returncode == 0
    for f in (repo / ".subguard_cache").glob("*.pickle"):
        f.write_bytes(b"garbage")
    proc = _check(repo, importtime=True)
    assert not _replayed(proc) and "warning: cache ignored" in proc.stderr


def test_no_cache_and_write_baseline_are_never_memoised(repo: Path) -> None:
    assert _check(repo, "--no-cache").returncode == 0
    assert _check(repo, "--write-baseline", str(repo.parent / "base.json")).returncode == 0
    assert _memos(repo) == []


def test_a_memo_not_signed_by_this_user_is_ignored(repo: Path) -> None:
    assert _check(repo).returncode == 0
    (memo,) = _memos(repo)
    blob = memo.read_bytes()
    memo.write_bytes(blob[:-1] + bytes([blob[-1] ^ 1]))
    proc = _check(repo, importtime=True)
    assert not _replayed(proc) and proc.returncode == 0


def test_a_file_changed_just_before_the_listing_is_not_memoised(repo: Path) -> None:
    """Racy timestamps: an edit within the same coarse tick would look unchanged, so no memo."""
    rec = runrecord.Recorder(["."])
    (repo / "a" / "one.py").write_text(CONSUMER.format(tags="TagA"))  # ctime: now
    rec.note_inputs([str(repo)], [], [], [])
    assert rec.spoiled
    old = runrecord.Recorder(["."])
    digest, newest = runmemo.root_listing(str(repo))
    assert digest == runmemo.root_signature(str(repo)) and newest > 0
    time.sleep(runmemo.RACY_NS / 1e9 + 0.05)
    old.note_inputs([str(repo)], [], [], [])
    assert not old.spoiled


def test_the_recorder_reuses_the_listing_the_replay_took(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A miss lists a large tree once, not twice: the replay's listing serves the recorder."""
    time.sleep(runmemo.RACY_NS / 1e9 + 0.05)  # the fixture's files are no longer racy
    digest = runmemo.root_signature(str(repo))  # the replay comparing an older memo entry
    real, calls = runmemo.root_listing, []
    monkeypatch.setattr(runmemo, "root_listing", lambda *a: calls.append(a) or real(*a))
    rec = runrecord.Recorder(["."])
    rec.note_inputs([str(repo)], [], [], [])
    assert calls == [] and rec.roots[0]["sig"] == digest and not rec.spoiled
    again = runrecord.Recorder(["."])
    again.note_inputs([str(repo)], [], [], [])  # used once: a second recorder lists anew
    assert len(calls) == 1 and again.roots[0]["sig"] == digest


def test_a_racy_listing_serves_the_record_once_its_racy_entries_settle(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The replay's listing is racy (an edit just before it). While the edit is in the window, a new
    listing would be racy too: the run is left unrecorded without a second walk. Once it is out of
    the window, the entries that were in it are stat-ed again: unchanged, the listing is recorded as
    taken; changed since, the tree is listed anew."""
    real, calls = runmemo.root_listing, []
    monkeypatch.setattr(runmemo, "root_listing", lambda *a: calls.append(a) or real(*a))
    tick = runmemo.RACY_NS / 1e9 + 0.05
    one = repo / "a" / "one.py"
    one.write_text(CONSUMER.format(tags="TagA"))  # ctime: now
    runmemo.root_signature(str(repo))
    rec = runrecord.Recorder(["."])
    rec.note_inputs([str(repo)], [], [], [])
    assert len(calls) == 1 and rec.spoiled  # the replay's listing only

    one.write_text(CONSUMER.format(tags="TagB"))
    digest = runmemo.root_signature(str(repo))
    time.sleep(tick)
    settled = runrecord.Recorder(["."])
    settled.note_inputs([str(repo)], [], [], [])
    assert len(calls) == 2 and not settled.spoiled and settled.roots[0]["sig"] == digest

    one.write_text(CONSUMER.format(tags="TagC"))
    racy = runmemo.root_signature(str(repo))
    time.sleep(tick)
    one.write_text(CONSUMER.format(tags="TagC || TagD"))  # changed after the listing: listed anew
    time.sleep(tick)
    anew = runrecord.Recorder(["."])
    anew.note_inputs([str(repo)], [], [], [])
    assert len(calls) == 4 and not anew.spoiled
    assert anew.roots[0]["sig"] != racy and anew.roots[0]["sig"] == runmemo.root_listing(str(repo))[0]


def test_the_racy_entries_of_a_git_listing_are_those_stat_ed_in_the_window(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a git work tree the listing is git's names with their stat fields: the entries whose ctime
    is in the window are found there as in a walk's rows, and only they are stat-ed again."""
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    time.sleep(runmemo.RACY_NS / 1e9 + 0.05)
    (repo / "b" / "two.py").write_text(CONSUMER.format(tags="TagB"))
    kept: list[object] = []
    listed_at = time.time_ns()
    digest, newest = runmemo.root_listing(str(repo), (), (), kept)
    assert isinstance(kept[0], tuple)  # git's names and stats, not a walk's rows
    real, looked = os.lstat, []
    with monkeypatch.context() as patched:
        patched.setattr(treestamp.os, "lstat", lambda path: looked.append(path) or real(path))
        assert treestamp.unchanged_since(kept[0], str(repo), listed_at - runmemo.RACY_NS) is True
    assert looked == [f"{repo}/b/two.py"]
    time.sleep(runmemo.RACY_NS / 1e9 + 0.05)
    assert runmemo._settled(str(repo), (listed_at, digest, newest, kept[0])) is not None
    (repo / "b" / "two.py").write_text(CONSUMER.format(tags="TagC"))
    assert runmemo._settled(str(repo), (listed_at, digest, newest, kept[0])) is None


def test_a_root_given_as_a_link_is_checked_again_after_an_edit(repo: Path) -> None:
    link = repo.parent / "linked-repo"
    os.symlink(repo, link)
    env = {**os.environ, "XDG_CACHE_HOME": str(repo.parent / "xdg"), "NO_COLOR": "1"}
    env.pop("SUBGUARD_NO_RUN_MEMO", None)
    cmd = [sys.executable, "-m", "subguard", "check", str(link), "--no-simulate"]

    def run() -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(cmd, cwd=repo.parent, capture_output=True, text=True, timeout=120, env=env, check=False)
        settle(env)
        return proc

    assert run().returncode == 0
    time.sleep(runmemo.RACY_NS / 1e9 + 0.05)
    (repo / "b" / "two.py").write_text(CONSUMER.format(tags="TagB"))
    time.sleep(runmemo.RACY_NS / 1e9 + 0.05)
    edited = run()
    assert edited.returncode == 1 and "SG102" in edited.stdout


def test_version_is_answered_before_the_cli_loads_and_matches_clicks(capsys: pytest.CaptureFixture[str]) -> None:
    from subguard.cli.entry import run
    from subguard.cli.main import main

    assert run(["--version"]) == 0
    fast = capsys.readouterr().out
    assert main(["--version"]) == 0 and capsys.readouterr().out == fast
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "subguard", "--version"], capture_output=True, text=True, check=False
    )
    assert proc.stdout == fast and "click" not in proc.stderr


@pytest.mark.parametrize("under_git", [False, True])
def test_the_scan_lists_a_root_from_the_memos_stamp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, under_git: bool
) -> None:
    """One listing per run: after the memo stamped a root, `discover` lists it from the stamp's rows
    (no second walk) and finds exactly what its own walk or git listing finds: entry order, links,
    special files, excluded folders, files over the size limit, forked halves."""
    from subguard.scan import discover, listing, treestamp

    root = tmp_path / "repo"
    for n in range(60):  # enough folders for the stamp to fork
        (root / f"d{n % 9}" / f"e{n % 4}").mkdir(parents=True, exist_ok=True)
        (root / f"d{n % 9}" / f"e{n % 4}" / f"f{n}.py").write_text("x" * n)
    (root / "node_modules").mkdir()
    (root / "node_modules" / "lib.py").write_text("x")
    (root / "top.py").write_text("big" * 100)
    (root / "link.py").symlink_to(root / "top.py")
    (root / "dirlink").symlink_to(root / "d1")
    os.mkfifo(root / "fifo")
    (root / "closed").mkdir()
    (root / "closed" / "hidden.py").write_text("x")
    if under_git:
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    monkeypatch.setattr(treestamp, "SPLIT_MIN_NAMES", 10)
    os.chmod(root / "closed", 0)
    try:
        own = discover.discover(root, max_size=200)
        runmemo.root_signature(str(root))
        top = os.path.realpath(root)
        assert top in listing._SHARED, "the stamp kept no listing"
        shared = discover.discover(root, max_size=200)
        assert top not in listing._SHARED, "a listing serves one scan"
    finally:
        os.chmod(root / "closed", 0o755)
    assert shared == own
    assert [c.path for c in shared.candidates] == [c.path for c in own.candidates]
    assert len(own.candidates) > 60 and own.skipped
