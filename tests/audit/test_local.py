"""`subguard.audit.local`: what a Spark task lists in a local folder, without Spark."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from subguard.audit import local
from subguard.core.model import FileStatus
from subguard.scan import discover


def _org(tmp_path: Path) -> Path:
    org = tmp_path / "org"
    for rel in (
        "a/app.py",
        "a/node_modules/x/index.js",
        "a/.subguard.yaml",
        "b/src/Main.java",
        ".git/HEAD",
        "_archive/old.py",
        "inner/sub/deep.yml",
        "inner/top.yml",
    ):
        (org / rel).parent.mkdir(parents=True, exist_ok=True)
        (org / rel).write_text("x\n")
    (org / "README.md").write_text("org\n")
    (org / "a" / "up").symlink_to("..", target_is_directory=True)
    (org / "a" / "passwd.py").symlink_to("/etc/passwd")
    os.mkfifo(org / "a" / "pipe.yml")
    (org / "linked-repo").symlink_to(org / "b", target_is_directory=True)
    return org


def test_local_path_only_for_local_uris() -> None:
    assert local.local_path("file:/tmp/x") == "/tmp/x"
    assert local.local_path("file:///tmp/x") == "/tmp/x"
    assert local.local_path("/tmp/x") == "/tmp/x"
    assert local.local_path("hdfs://nn/x") is None
    assert local.local_path("s3a://bucket/x") is None


def test_units_of_an_org_folder_and_nested_inventory_repos(tmp_path: Path) -> None:
    org = _org(tmp_path)
    units = local.plan_units([(str(org), "parent", ""), (f"{org}/inner/sub", "repo", "sub-svc")])
    by_path = {u.path: u for u in units}
    assert by_path[str(org)].kind == "loose"
    assert by_path[f"{org}/a"] == local.Unit(f"{org}/a", "a", "repo")
    assert by_path[f"{org}/.git"].kind == "hidden" and by_path[f"{org}/_archive"].repo == ""
    # the inventory's repo inside `inner` is its own unit, and `inner` does not walk into it
    assert by_path[f"{org}/inner/sub"].repo == "sub-svc"
    assert by_path[f"{org}/inner"].nested == (f"{org}/inner/sub",)
    assert f"{org}/linked-repo" not in by_path  # a link to a folder is no repository


def test_repo_listing_never_follows_or_opens(tmp_path: Path) -> None:
    org = _org(tmp_path)
    candidates, skipped = local.list_repo(local.Unit(f"{org}/a", "a", "repo"), 1 << 20)
    assert sorted(c.path for c in candidates) == [".subguard.yaml", "app.py"]
    reasons = {r.path: r.reason for r in skipped}
    assert reasons == {
        "node_modules/x/index.js": local.EXCLUDED,
        "passwd.py": discover.LINK,
        "pipe.yml": discover.SPECIAL,
        "up": discover.LINK,
    }
    assert all(r.status == FileStatus.SKIPPED for r in skipped)


def test_outside_units_account_for_top_level_entries(tmp_path: Path) -> None:
    org = _org(tmp_path)
    loose = {r.path: r.reason for r in local.list_outside(local.Unit(str(org), "", "loose"))}
    assert loose == {"README.md": local.OUTSIDE, "linked-repo": discover.LINK}
    hidden = {r.path: r.reason for r in local.list_outside(local.Unit(f"{org}/.git", "", "hidden"))}
    assert hidden == {".git/HEAD": local.HIDDEN_TOP}


def test_git_ignored_files_are_recorded_not_scanned(tmp_path: Path) -> None:
    import subprocess

    repo = tmp_path / "repo"
    (repo / "generated").mkdir(parents=True)
    (repo / "app.py").write_text("x\n")
    (repo / "generated" / "application.yml").write_text("x\n")
    (repo / ".gitignore").write_text("generated/\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    candidates, skipped = local.list_repo(local.Unit(str(repo), "repo", "repo"), 1 << 20)
    assert sorted(c.path for c in candidates) == [".gitignore", "app.py"]
    reasons = {r.path: r.reason for r in skipped}
    assert reasons.pop("generated/application.yml") == local.GIT_IGNORED
    assert reasons and all(p.startswith(".git/") and why == local.EXCLUDED for p, why in reasons.items())


def test_hidden_files_off_local_file_systems_are_recorded_unread(tmp_path: Path) -> None:
    """binaryFile path: the task cannot open `hdfs://...`; it hands back no content (never raises)."""
    pytest.importorskip("pyspark")
    from subguard.audit.job import _read_hidden

    mine = tmp_path / ".subguard.yaml"
    mine.write_text("ignore: []\n")
    assert _read_hidden((f"file:{mine}", 11, True)) == (f"file:{mine}", 11, b"ignore: []\n")
    assert _read_hidden(("hdfs://nn/org/a/.subguard.yaml", 11, True)) == ("hdfs://nn/org/a/.subguard.yaml", 11, None)
    assert _read_hidden((f"file:{tmp_path}/gone", 3, True))[2] is None
    os.mkfifo(tmp_path / ".pipe")
    assert _read_hidden((f"file:{tmp_path}/.pipe", 0, True))[2] is None  # never blocks on a FIFO


def test_few_tasks_on_a_local_master() -> None:
    """One shuffle partition per local core; an extraction task per slot for a few folders, up to
    eight per slot for many."""
    from subguard.audit import driver, job

    assert [driver.shuffle_partitions(m) for m in ("local[1]", "local[2]", "local[4,3]", "spark://h:7077")] == [
        1,
        2,
        4,
        200,
    ]
    assert driver.shuffle_partitions("local[*]") == driver.shuffle_partitions("local") == (os.cpu_count() or 1)
    assert [job.extraction_slices(n, 2) for n in (0, 1, 10, 40, 100, 5001)] == [1, 1, 2, 2, 6, 16]
