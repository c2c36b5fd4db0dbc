"""`--since` over clones at their inventory's commits: stamped on the driver, reused without a task
or a join, the files table's parts named by the previous marks; the results equal a full audit's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from subguard.audit import incremental, prestamp
from subguard.audit.local import Unit
from tests.audit.conftest import ORG, REPOS, run
from tests.audit.test_since import commit_all, git, head, same

pytestmark = pytest.mark.slow


def clones(org: Path) -> list[str]:
    """Every repository of `org` a git clone (one commit each, unless it is one already)."""
    names = sorted(p.name for p in org.iterdir() if p.is_dir())
    for name in names:
        if not (org / name / ".git").exists():
            git(org / name, "init", "-q", "-b", "main")
            commit_all(org / name, "initial")
    return names


def write_inventory(org: Path, names: list[str]) -> None:
    rows = [f"{name},{head(org / name)}" for name in names]
    (org / "inventory.csv").write_text("repo,commit\n" + "\n".join(rows) + "\n")


@pytest.mark.parametrize("marks_parts", [True, False])
def test_since_all_at_inventory_commits(spark: Any, tmp_path: Path, marks_parts: bool) -> None:
    """Every repository a clone its inventory names: one changed, one added, the rest reused on the
    driver's stamp; with the previous marks' parts (the files table written beside the other jobs)
    and without them (an older output: its parts taken from the counts)."""
    org = tmp_path / "org"
    shutil.copytree(ORG, org, ignore=shutil.ignore_patterns(".subguard_cache"))
    names = clones(org)
    write_inventory(org, names)
    first = run(spark, [str(org)], tmp_path / "first")
    assert first["incremental"]["repos_scanned"] == len(REPOS)
    marks = tmp_path / "first" / "state" / "marks.json"
    doc = json.loads(marks.read_text())
    assert {repo for repo, _ in doc["parts"]} >= set(REPOS)
    if not marks_parts:
        del doc["parts"]
        marks.write_text(json.dumps(doc))
    consumer = org / "orders-py" / "orders" / "consumer.py"
    consumer.write_text(consumer.read_text().replace('"created||paid"', '"created||paid||refunded"'))
    commit_all(org / "orders-py", "subscribe refunded too")
    shutil.copytree(org / "orders-loadtest", org / "orders-loadtest-2")
    shutil.rmtree(org / "orders-loadtest-2" / ".git")
    clones(org)
    write_inventory(org, [*names, "orders-loadtest-2"])
    since = run(spark, [str(org)], tmp_path / "since", since=str(tmp_path / "first"))
    run(spark, [str(org)], tmp_path / "full")
    same(tmp_path / "full", tmp_path / "since")
    info = since["incremental"]
    assert (info["repos_scanned"], info["repos_reused"]) == (2, len(REPOS) - 1), info
    # the reused rows of the parts written again: the previous files, less the changed rows, copied
    # by the driver under their names (not links); Spark reads the table as the full audit's
    before = {p.name for p in (tmp_path / "first" / "files").glob("p*.parquet")}
    now = list((tmp_path / "since" / "files").glob("p*.parquet"))
    assert any(p.name in before and p.stat().st_nlink == 1 for p in now)
    tables = [spark.read.parquet(str(tmp_path / out / "files")) for out in ("since", "full")]
    assert tables[0].schema == tables[1].schema
    assert sorted(tables[0].collect()) == sorted(tables[1].collect())


def test_split_units(tmp_path: Path) -> None:
    """A clone at its inventory's commit is stamped on the driver: reused when equal to the previous
    stamp, else handed to a task without it; a unit the driver cannot stamp keeps its previous stamp."""
    repos = {}
    for name in ("same", "moved", "plain", "fresh"):
        path = tmp_path / name
        path.mkdir()
        (path / "a.txt").write_text(name)
        if name != "plain":
            git(path, "init", "-q", "-b", "main")
            commit_all(path, "initial")
        repos[name] = path
    units = [
        Unit(str(repos["same"]), "same", "repo", commit=head(repos["same"])),
        Unit(str(repos["moved"]), "moved", "repo", commit=head(repos["moved"])),
        Unit(str(repos["plain"]), "plain", "repo"),
        Unit(str(repos["fresh"]), "fresh", "repo", commit=head(repos["fresh"])),
        Unit(str(tmp_path), "", "loose"),
    ]
    previous = {
        "same": prestamp.driver_stamp(units[0]) or "",
        "moved": f"{repos['moved']}\0commit:{'0' * 40}",
        "plain": "tree:x",
    }
    split = prestamp.split_units(units, previous)
    assert split.reused == {"same"}
    assert [u.repo for u in split.units] == ["moved", "plain", "fresh", ""]
    assert split.previous == {"plain": "tree:x"}
    # an inventory commit that is not HEAD: only a task can stamp it
    assert prestamp.driver_stamp(Unit(str(repos["same"]), "same", "repo", commit="1234567")) is None


def test_reused_records(spark: Any) -> None:
    """The previous records of the reused repositories, a `reuse` marker beside each stamp; the
    filter names the smaller side, quotes and backslashes in names kept."""
    from pyspark.sql import functions as F

    names = ["a'b", "c\\d", "e", "f"]
    rows = [(n, kind, f"{n}:{kind}", "", None) for n in names for kind in ("stamp", "consumer")]
    repos = spark.createDataFrame(rows, "repo string, kind string, key string, payload string, files string")
    for kept in ({"a'b"}, {"a'b", "c\\d", "e"}, set()):
        got = prestamp.reused_records(repos, frozenset(kept), frozenset(names))
        assert got.columns == repos.columns
        out = sorted((r.repo, r.kind) for r in got.collect())
        assert out == sorted((n, k) for n in kept for k in ("stamp", "reuse", "consumer")), kept
        markers = got.where(F.col("kind") == "reuse").collect()
        assert all(r.key == f"{r.repo}:stamp" for r in markers)


def test_gone_parts() -> None:
    """The previous parts holding a repository not reused now; None without parts or layout."""
    since = incremental.Since("x", None, None, {}, 4, None, repo_parts={"a": 0, "b": 1, "c": 1, "": 3})  # type: ignore[arg-type]
    assert incremental.gone_parts(since, ["a", "b"], 4) == [1, 3]
    assert incremental.gone_parts(since, ["a", "b"], 8) is None
    older = incremental.Since("x", None, None, {}, 4, None)  # type: ignore[arg-type]
    assert incremental.gone_parts(older, [], 4) is None
    counted = [
        {"repo": "a", "part": 0, "origin": "scanned"},
        {"repo": "b", "part": 1, "origin": "reused"},
        {"repo": "c", "part": 1, "origin": "gone"},
    ]
    assert incremental.repo_parts(counted) == {"a": 0, "b": 1}
