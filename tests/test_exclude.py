"""`exclude` (issue 24): files the config excludes are never judged, in `check`, `inventory` and the
pre-commit hook's replayed runs, and `--stats` counts them with the pattern that excluded them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from subguard.cli.main import main
from subguard.scan import globs, runmemo
from tests.report_json import all_findings
from tests.settle import settle

CONSUMER = """from rocketmq.client import PushConsumer


def start(handle):
    c = PushConsumer("GID_EXCL")
    c.set_name_server_address("ns:9876")
    c.subscribe("TopicExcl", handle, "{tags}")
    c.start()
"""


def _tree(root: Path) -> Path:
    (root / "app").mkdir(parents=True)
    (root / "legacy" / "old").mkdir(parents=True)
    (root / "src" / "generated").mkdir(parents=True)
    (root / "app" / "live.py").write_text(CONSUMER.format(tags="TagA"))
    (root / "legacy" / "old" / "stale.py").write_text(CONSUMER.format(tags="TagB"))
    (root / "src" / "generated" / "gen.py").write_text(CONSUMER.format(tags="TagC"))
    return root


def test_glob_semantics() -> None:
    match = globs.matcher(["legacy", "**/generated/**", "*.py", "a b/c?.java", "./top/"])
    assert match is not None
    assert match("legacy/old/stale.py") == "legacy" and match("legacy") == "legacy"
    assert match("legacyx/a.java") is None  # a folder name, not a prefix of a name
    assert match("src/generated/gen.py") == "**/generated/**" and match("generated/x.yaml") == "**/generated/**"
    assert match("top.py") == "*.py" and match("app/top.java") is None  # anchored: `*` stays within one name
    assert match("a b/c1.java") == "a b/c?.java" and match("a b/c12.java") is None
    assert match("top/x/y.yaml") == "./top/"
    assert globs.matcher([]) is None
    nested = globs.matcher(["services/a/legacy/**"], prefix="services/a/")  # the root's place under the config
    assert nested is not None and nested("legacy/x.py") == "services/a/legacy/**"


def test_check_inventory_and_stats_honour_exclude(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _tree(tmp_path / "repo")
    assert main(["check", str(root), "--no-cache", "--no-simulate", "--format", "json"]) == 1
    assert "SG102" in capsys.readouterr().out
    (root / "pyproject.toml").write_text('[tool.subguard]\nexclude = ["legacy", "**/generated/**"]\n')
    assert main(["check", str(root), "--no-cache", "--no-simulate", "--format", "json", "--stats"]) == 0
    cap = capsys.readouterr()
    assert all_findings(cap.out) == []
    assert "skipped      1  excluded by config (exclude: legacy)" in cap.err
    assert "skipped      1  excluded by config (exclude: **/generated/**)" in cap.err
    assert "skipped: legacy" not in cap.err  # counted, not named file by file
    assert main(["inventory", str(root), "--no-cache", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["path"] for r in rows] == ["app/live.py"]


def test_patterns_are_relative_to_the_config_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _tree(tmp_path / "repo" / "services" / "billing")
    (tmp_path / "repo" / ".subguard.yaml").write_text("exclude: ['services/billing/legacy/**', src]\n")
    assert main(["inventory", str(root), "--no-cache", "--format", "json", "--stats"]) == 0
    cap = capsys.readouterr()
    assert [r["path"] for r in json.loads(cap.out)] == [
        "app/live.py",
        "src/generated/gen.py",
    ]  # `src` is the repo's, not billing's
    assert "excluded by config (exclude: services/billing/legacy/**)" in cap.err
    # a single file named on the command line is excluded too
    assert main(["inventory", str(root / "legacy" / "old" / "stale.py"), "--no-cache", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


# --- the pre-commit hook: `subguard check .` answered from the run memo -------------------------------


def _check(repo: Path, importtime: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(repo.parent / "xdg"), "NO_COLOR": "1"}
    env.pop("SUBGUARD_CACHE_DIR", None)
    env.pop("SUBGUARD_NO_RUN_MEMO", None)
    cmd = [
        sys.executable,
        *(["-X", "importtime"] if importtime else []),
        "-m",
        "subguard",
        "check",
        ".",
        "--no-simulate",
        "--stats",
    ]
    proc = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, timeout=120, env=env, check=False)
    settle(env)
    time.sleep(runmemo.RACY_NS / 1e9 + 0.05)  # the next edit is not within the listing's timestamp tick
    return proc


def _replayed(proc: subprocess.CompletedProcess[str]) -> bool:
    return "subguard.scan.runmemo" in proc.stderr and "subguard.rules.engine" not in proc.stderr


@pytest.mark.parametrize("git", [True, False], ids=["git-listing", "walk"])
def test_hook_replay_ignores_excluded_edits_and_sees_exclude_edits(tmp_path: Path, git: bool) -> None:
    repo = _tree(tmp_path / "repo")
    (repo / ".subguard.yaml").write_text("exclude: [legacy]\n")
    if git:
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
    time.sleep(runmemo.RACY_NS / 1e9 + 0.05)
    first = _check(repo)
    assert first.returncode == 1 and "SG102" in first.stdout and "stale.py" not in first.stdout  # live vs generated
    assert "excluded by config (exclude: legacy)" in first.stderr
    # an edit of an excluded file changes nothing: replayed, same answer
    (repo / "legacy" / "old" / "stale.py").write_text(CONSUMER.format(tags="TagZ"))
    time.sleep(runmemo.RACY_NS / 1e9 + 0.05)
    edited = _check(repo)
    assert _replayed(edited) and edited.stdout == first.stdout
    # a new excluded file is counted: a real run
    (repo / "legacy" / "more.py").write_text(CONSUMER.format(tags="TagY"))
    time.sleep(runmemo.RACY_NS / 1e9 + 0.05)
    added = _check(repo)
    assert not _replayed(added) and "skipped      2  excluded by config (exclude: legacy)" in added.stderr
    assert _replayed(_check(repo))
    # an edit of the exclude setting: a real run with the new setting
    (repo / ".subguard.yaml").write_text("exclude: [legacy, '**/generated/**']\n")
    time.sleep(runmemo.RACY_NS / 1e9 + 0.05)
    narrowed = _check(repo)
    assert not _replayed(narrowed) and narrowed.returncode == 0 and "SG102" not in narrowed.stdout
    # and an edit of a file that is not excluded still runs for real
    (repo / "app" / "live.py").write_text(CONSUMER.format(tags="TagA || TagB"))
    time.sleep(runmemo.RACY_NS / 1e9 + 0.05)
    assert not _replayed(_check(repo))


def test_the_listing_of_an_excluded_file_root_ignores_its_edits(tmp_path: Path) -> None:
    stale = tmp_path / "stale.py"
    stale.write_text("a\n")
    patterns = [["stale.py"], str(tmp_path)]
    excluded, plain = runmemo.root_listing(str(stale), (), patterns)[0], runmemo.root_listing(str(stale))[0]
    stale.write_text("bb\n")
    assert runmemo.root_listing(str(stale), (), patterns)[0] == excluded
    assert runmemo.root_listing(str(stale))[0] != plain
