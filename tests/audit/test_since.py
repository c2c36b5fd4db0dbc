"""Incremental audits (`--since PREVIOUS_OUT`): only repositories whose commit (git work trees) or
tree hash (plain folders) changed are scanned, only the groups whose input changed are judged, and
the outputs equal a full audit's."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.audit import equality
from tests.audit.conftest import ORG, REPOS, run

pytestmark = pytest.mark.slow

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(path: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def commit_all(path: Path, message: str) -> None:
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", message)


@pytest.fixture()
def org(tmp_path: Path) -> Path:
    """The example organisation, with orders-py and billing-java as git work trees."""
    dest = tmp_path / "org"
    shutil.copytree(ORG, dest, ignore=shutil.ignore_patterns(".subguard_cache"))
    for name in ("orders-py", "billing-java"):
        git(dest / name, "init", "-q", "-b", "main")
        commit_all(dest / name, "initial")
    return dest


def folders(root: Path) -> dict[str, tuple[int, int, int]]:
    """(mtime, size, inode) of every folder below `root`: what a folder-listing signature would see."""
    out = {}
    for folder in [root, *(p for p in root.rglob("*") if p.is_dir() and not p.is_symlink())]:
        st = folder.stat()
        out[str(folder)] = (st.st_mtime_ns, st.st_size, st.st_ino)
    return out


def edit_in_place(path: Path, old: str, new: str) -> None:
    """Rewrite `old` as `new` (as long) in the file itself: same inode and size, its mtime set back;
    no folder above it changes, only the file's ctime tells (`stamps.stamp` must see it)."""
    assert len(old) == len(new)
    st = path.stat()
    data = path.read_bytes()
    assert old.encode() in data
    with open(path, "r+b") as fh:
        fh.write(data.replace(old.encode(), new.encode(), 1))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (st.st_size, st.st_mtime_ns, st.st_ino)


def same(a: Path, b: Path) -> None:
    diff = equality.differences(equality.result(a), equality.result(b))
    assert not diff, "\n".join(diff)


def test_since_equals_a_full_audit(spark: Any, org: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from subguard.audit import incremental

    # sixteen parts for ten repositories: the changes below touch five of them, three others hold files
    monkeypatch.setattr(incremental, "parts_for", lambda repos: 16)
    first = run(spark, [str(org)], tmp_path / "first")
    assert first["incremental"]["repos_scanned"] == len(REPOS) and first["incremental"]["repos_reused"] == 0
    before = equality.result(tmp_path / "first")
    # nothing changed, and the output folder is its own previous state (read before it is replaced)
    again = run(spark, [str(org)], tmp_path / "first", since=str(tmp_path / "first"))
    info = again["incremental"]
    assert (info["repos_scanned"], info["repos_reused"], info["groups_judged"]) == (0, len(REPOS), 0), info
    assert info["groups_reused"] == first["totals"]["groups"]
    assert not equality.differences(before, equality.result(tmp_path / "first"))

    # a committed change in a git work tree: the group's tag set changes (SG102 on GID_ORDER_EVENTS)
    consumer = org / "orders-py" / "orders" / "consumer.py"
    consumer.write_text(consumer.read_text().replace('"created||paid"', '"created||paid||refunded"'))
    commit_all(org / "orders-py", "subscribe refunded too")
    # an uncommitted change in a work tree: its tree hash stands in for the commit
    pom = org / "billing-java" / "pom.xml"
    pom.write_text(pom.read_text() + "\n<!-- edited -->\n")
    # a plain folder edited, one removed, one added
    worker = next((org / "inventory-worker").rglob("*.py"))
    worker.write_text(worker.read_text() + "\n# edited\n")
    shutil.rmtree(org / "price-cache")
    shutil.copytree(org / "orders-loadtest", org / "orders-loadtest-2")
    # a file edited in place in a folder that looks unchanged (every folder's mtime, size and inode
    # as before, the file's size, mtime and inode too): its group's tag set changes
    shipping = org / "shipping-stream"
    looks = folders(shipping)
    edit_in_place(shipping / "src" / "main" / "resources" / "application.yml", "released", "relisted")
    assert folders(shipping) == looks

    since = run(spark, [str(org)], tmp_path / "since", since=str(tmp_path / "first"))
    full = run(spark, [str(org)], tmp_path / "full")
    same(tmp_path / "full", tmp_path / "since")
    # the files table's untouched parts are the previous output's files, linked
    assert any(p.stat().st_nlink > 1 for p in (tmp_path / "since" / "files").glob("p*.parquet"))
    assert any(p.stat().st_nlink == 1 for p in (tmp_path / "since" / "files").glob("p*.parquet"))
    assert full["findings"] != first["findings"]  # the changes changed the results
    info = since["incremental"]
    # orders-py, billing-java, inventory-worker, orders-loadtest-2, shipping-stream
    assert info["repos_scanned"] == 5, info
    assert info["repos_reused"] == len(REPOS) - 5, info  # price-cache is gone
    assert 0 < info["groups_judged"] < full["totals"]["groups"], info
    assert info["groups_judged"] + info["groups_reused"] == full["totals"]["groups"]

    # other settings (here --runs): nothing is reused
    from subguard.audit import stamps
    from subguard.core.config import Config

    assert (
        incremental.read_since(spark, str(tmp_path / "since"), stamps.settings_key(Config(), 21, dt.date.today()))[0]
        is None
    )
    assert incremental.read_since(spark, str(tmp_path / "nowhere"), "x")[0] is None

    # the previous groups' input digests come from state/marks.json, the same as state/groups holds
    settings = stamps.settings_key(Config(), 20, dt.date.today())
    previous = incremental.read_since(spark, str(tmp_path / "since"), settings)[0]
    assert previous is not None and previous.group_keys is not None
    keys = sorted(tuple(r) for r in previous.group_keys.collect())
    assert keys == sorted(tuple(r) for r in previous.groups.select("group", "input").distinct().collect())
    assert len(keys) == full["totals"]["groups"]


def test_since_without_group_keys(spark: Any, org: Path, tmp_path: Path) -> None:
    """A previous output whose state/marks.json has no group keys (an older audit's): its groups'
    inputs are read from state/groups, and the results still equal a full audit's."""
    import json

    run(spark, [str(org)], tmp_path / "first")
    marks = tmp_path / "first" / "state" / "marks.json"
    doc = json.loads(marks.read_text())
    del doc["groups"]
    marks.write_text(json.dumps(doc))
    consumer = org / "orders-py" / "orders" / "consumer.py"
    consumer.write_text(consumer.read_text().replace('"created||paid"', '"created||paid||refunded"'))
    since = run(spark, [str(org)], tmp_path / "since", since=str(tmp_path / "first"))
    run(spark, [str(org)], tmp_path / "full")
    same(tmp_path / "full", tmp_path / "since")
    info = since["incremental"]
    assert info["repos_scanned"] == 1 and 0 < info["groups_judged"] < info["groups_reused"], info


def test_touched_groups() -> None:
    """The groups a --since run digests: every group a repository not reused declares now or
    declared then, and those of a repository whose inventory hints changed; none without the
    previous members or hints."""
    from subguard.audit import incremental as inc

    before = {
        "a": frozenset({"G1", "G2"}),
        "b": frozenset({"G2", "G3"}),
        "gone": frozenset({"G4"}),
        "c": frozenset({"G5"}),
    }
    hints_before = {"a": ("t", "o", "prod"), "c": ("t", "o", "test")}
    since = inc.Since("x", None, None, {}, 1, None, members=before, hints=hints_before)  # type: ignore[arg-type]
    now = {"a": frozenset({"G1"}), "b": frozenset({"G2", "G3"}), "new": frozenset({"G6"}), "c": frozenset({"G5"})}
    hints_now = {"a": ("t", "o", "prod"), "c": ("t", "o", "prod")}
    # a scanned (left G2), b reused, gone removed, new added, c reused with another environment hint
    assert inc.touched_groups(since, now, frozenset({"b", "c"}), hints_now) == {"G1", "G2", "G4", "G5", "G6"}
    assert inc.touched_groups(since, now, frozenset({"a", "b", "c"}), hints_before) == {"G4", "G6"}
    assert inc.touched_groups(since, now, frozenset({"a", "b", "c", "new"}), hints_before) == {"G4"}
    assert inc.touched_groups(since, before, frozenset(before), hints_before) == frozenset()
    older = inc.Since("x", None, None, {}, 1, None, members=before)  # type: ignore[arg-type]
    assert inc.touched_groups(older, now, frozenset(), hints_now) is None
    rows = [
        {"repo": "a", "kind": "consumer", "payload": '{"group": "G1"}'},
        {"repo": "a", "kind": "consumer", "payload": '{"group": null}'},
        {"repo": None, "kind": "consumer", "payload": '{"group": "G7"}'},
        {"repo": "a", "kind": "waiver", "payload": '{"group": "G9"}'},
    ]
    assert inc.repo_groups(rows) == {"a": frozenset({"G1"}), "": frozenset({"G7"})}


def test_since_after_a_hint_changed(spark: Any, org: Path, tmp_path: Path) -> None:
    """Only the inventory changed (one repository's environment hint): the repository is reused, its
    groups are still judged again (their members' environment hints changed), and the results equal
    a full audit's; the members and hints are kept in state/marks.json."""
    import json

    first = run(spark, [str(org)], tmp_path / "first")
    doc = json.loads((tmp_path / "first" / "state" / "marks.json").read_text())
    assert dict((repo, groups) for repo, groups in doc["members"])["orders-loadtest"]
    assert dict((repo, values) for repo, values in doc["hints"])["orders-loadtest"] == ["qa", "bob", "test"]
    inventory = org / "inventory.yaml"
    inventory.write_text(
        inventory.read_text().replace("owner: bob, environment: test", "owner: bob, environment: prod")
    )
    since = run(spark, [str(org)], tmp_path / "since", since=str(tmp_path / "first"))
    run(spark, [str(org)], tmp_path / "full")
    same(tmp_path / "full", tmp_path / "since")
    info = since["incremental"]
    assert info["repos_scanned"] == 0 and info["repos_reused"] == len(REPOS), info
    assert 0 < info["groups_judged"] < first["totals"]["groups"], info


def test_since_over_a_spark_written_state(spark: Any, org: Path, tmp_path: Path) -> None:
    """A previous output whose state/repos and state/file_counts Spark's own writer laid out (several
    part files: an older audit's; the driver now writes each as one file) is read as before."""
    run(spark, [str(org)], tmp_path / "first")
    for table in ("repos", "file_counts"):
        folder = tmp_path / "first" / "state" / table
        spark.read.parquet(str(folder)).repartition(3).write.mode("overwrite").parquet(str(tmp_path / "respilled"))
        shutil.rmtree(folder)
        shutil.move(str(tmp_path / "respilled"), folder)
        assert len(list(folder.glob("*.parquet"))) > 1
    consumer = org / "orders-py" / "orders" / "consumer.py"
    consumer.write_text(consumer.read_text().replace('"created||paid"', '"created||paid||refunded"'))
    commit_all(org / "orders-py", "subscribe refunded too")
    since = run(spark, [str(org)], tmp_path / "since", since=str(tmp_path / "first"))
    run(spark, [str(org)], tmp_path / "full")
    same(tmp_path / "full", tmp_path / "since")
    assert since["incremental"]["repos_scanned"] == 1, since["incremental"]
    # the state the driver wrote is the state a full audit writes (but the run's own settings row)
    for table in ("repos", "file_counts"):
        assert equality.table_rows(tmp_path / "since", f"state/{table}") == equality.table_rows(
            tmp_path / "full", f"state/{table}"
        )


def test_state_rows() -> None:
    """state/repos: every record of a stamped repository (a scanned one, or a reused one whose
    previous records came back with its stamp) but its file lists and reuse marker; a repository
    without a stamp (read through binaryFile) keeps nothing; the settings and layout rows last."""
    from subguard.audit import incremental as inc

    def rec(repo: str | None, kind: str, key: str = "", payload: str = "") -> dict[str, Any]:
        return {"repo": repo, "kind": kind, "key": key, "payload": payload}

    records = [
        rec("a", "consumer", payload="{}"),
        rec("a", "stamp", "commit:1"),
        rec("a", "files"),
        rec("b", "reuse", "commit:2"),
        rec("b", "stamp", "commit:2"),
        rec("b", "waiver", payload="w"),
        rec("c", "consumer", payload="{}"),
        rec("c", "file"),
        rec(None, "problem", payload="p"),
    ]
    rows = inc.state_rows(records, "s1", 4)
    assert rows == [
        {**rec("a", "consumer", payload="{}"), "files": None},
        {**rec("a", "stamp", "commit:1"), "files": None},
        {**rec("b", "stamp", "commit:2"), "files": None},
        {**rec("b", "waiver", payload="w"), "files": None},
        {**rec("", "settings", "s1"), "files": None},
        {**rec("", "layout", "4"), "files": None},
    ]


def test_file_count_origins() -> None:
    """The counts' origins: the table keeps the scanned and reused rows; the parts written again are
    those of the scanned rows and of the previous rows not reused (a changed or removed repository)."""
    import pyarrow as pa

    from subguard.audit import incremental as inc

    counted = pa.table(
        {
            "repo": ["a", "a", "b", "c", "d"],
            "status": ["parsed", "skipped", "parsed", "parsed", "parsed"],
            "reason": ["", "x", "", "", ""],
            "count": pa.array([1, 2, 3, 4, 5], pa.int64()),
            "origin": ["scanned", "scanned", "reused", "gone", "gone"],
            "part": pa.array([1, 1, 2, 3, 1], pa.int32()),
        }
    )
    live = inc.live_counts(counted)
    assert live.column_names == ["repo", "status", "reason", "count"]
    assert live.column("repo").to_pylist() == ["a", "a", "b"]
    assert inc.touched_parts(counted.to_pylist()) == [1, 3]


def _joined_inputs(consumers: Any, waivers: dict[str, str]) -> Any:
    """`incremental.group_inputs` as it was before the lookup: the waivers joined as a relation (the
    aggregation after it is the same, `incremental.inputs_of`)."""
    from pyspark.sql import functions as F

    from subguard.audit import incremental as inc

    spark = consumers.sparkSession
    known = consumers.where(F.col("group").isNotNull() & (F.col("group") != ""))
    frame = spark.createDataFrame(sorted(waivers.items()), "repo string, payloads string")
    by_repo = frame.select("repo", F.from_json("payloads", "array<string>").alias("payloads"))
    return inc.inputs_of(known.join(F.broadcast(by_repo), "repo", "left"))


def test_group_inputs_waivers(spark: Any) -> None:
    """A group's waivers are those of its distinct member repositories (a repository with two
    members gives its waivers once), sorted; a group without any has none; the digest covers them,
    and every column equals what the join of the waivers as a relation gave."""
    from subguard.audit import incremental as inc

    consumers = spark.createDataFrame(
        [
            ("g1", "a", "j1", ""),
            ("g1", "a", "j2", ""),
            ("g1", "b", "j3", "prod"),
            ("g2", "c", "j4", ""),
            ("g3", None, "j6", ""),
            ("", "a", "j5", ""),
        ],
        "group string, repo string, json string, env_hint string",
    )
    kept = [
        {"repo": "a", "kind": "waiver", "payload": "w-a2"},
        {"repo": "a", "kind": "waiver", "payload": "w-a1"},
        {"repo": "b", "kind": "waiver", "payload": "w-b"},
        {"repo": "a", "kind": "consumer", "payload": "{}"},
        {"repo": None, "kind": "waiver", "payload": "w-none"},
    ]
    waivers = inc.waivers_by_repo(kept)
    assert waivers == {"a": '["w-a2", "w-a1"]', "b": '["w-b"]'}
    found = inc.group_inputs(consumers, waivers)
    rows = {r["group"]: r for r in found.collect()}
    assert sorted(rows) == ["g1", "g2", "g3"]
    assert rows["g1"]["waived"] == ["w-a1", "w-a2", "w-b"] and rows["g2"]["waived"] == []
    assert [m["json"] for m in rows["g1"]["members"]] == ["j1", "j2", "j3"]
    for given in (waivers, {}):
        now, before = inc.group_inputs(consumers, given), _joined_inputs(consumers, given)
        assert now.schema == before.schema
        assert sorted(now.collect()) == sorted(before.collect())
    again = {r["group"]: r for r in inc.group_inputs(consumers, {}).collect()}
    assert again["g1"]["input"] != rows["g1"]["input"] and again["g2"]["input"] == rows["g2"]["input"]


def test_stamps(tmp_path: Path) -> None:
    from subguard.audit import stamps

    plain = tmp_path / "plain"
    (plain / "sub").mkdir(parents=True)
    (plain / "sub" / "a.py").write_text("x = 1\n")
    first = stamps.stamp(str(plain))
    assert "tree:" in first and stamps.stamp(str(plain)) == first
    (plain / "sub" / "a.py").write_text("x = 22\n")
    assert stamps.stamp(str(plain)) != first
    # an edit that leaves every folder, and the file's size, mtime and inode, as they were
    edited = stamps.stamp(str(plain))
    looks = folders(plain)
    edit_in_place(plain / "sub" / "a.py", "22", "33")
    assert folders(plain) == looks and stamps.stamp(str(plain)) != edited
    assert stamps.stamp(str(plain), nested=[str(plain / "sub")]) == stamps.stamp(
        str(plain), nested=[str(plain / "sub")]
    )
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("x = 1\n")
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "one")
    clean = stamps.stamp(str(repo))
    assert "commit:" in clean
    (repo / "a.py").write_text("x = 2\n")
    assert "tree:" in stamps.stamp(str(repo))  # dirty: the tree hash
    commit_all(repo, "two")
    assert "commit:" in stamps.stamp(str(repo)) != clean
    (repo / ".gitignore").write_text("build/\n")
    (repo / "build").mkdir()
    commit_all(repo, "ignore build")
    ignored = stamps.stamp(str(repo))
    (repo / "build" / "out.txt").write_text("x")
    assert stamps.stamp(str(repo)) == ignored  # an ignored file is not in the commit
    assert stamps.stamp(str(repo), commit="abc").endswith("commit:abc")


def test_files_table_parts() -> None:
    from subguard.audit import incremental as inc

    assert [inc.parts_for(n) for n in (0, 8, 9, 100, 1000, 5000, 10**6)] == [1, 1, 2, 16, 128, 512, 512]
    names = [inc.part_name(3, "part-0-a.parquet"), inc.part_name(3, "part-1-a.parquet"), inc.part_name(12, "x.parquet")]
    previous = inc.file_parts([*names, "_SUCCESS", ".p00003-x.parquet.crc"])
    assert previous == {3: names[:2], 12: names[2:]}
    assert inc.carry(previous, [12], True, True) == inc.Carry(read=tuple(names[2:]), link=tuple(names[:2]))
    assert inc.carry(previous, [], False, True) == inc.Carry(read=tuple(names))  # another layout: all read
    assert inc.carry(previous, [], True, False) == inc.Carry(read=tuple(names))  # no links (remote): all read


def head(path: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(path), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()


def test_inventory_commit(tmp_path: Path) -> None:
    """An inventory's commit stamps a clone whose HEAD (read from `.git`, no git process) is that
    commit: loose and packed refs, a detached HEAD, a linked work tree; any other HEAD does not."""
    from subguard.audit import stamps

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("x = 1\n")
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "one")
    one = head(repo)
    assert stamps.head_commit(str(repo)) == one
    assert stamps.inventory_commit(str(repo), one) == one
    assert stamps.inventory_commit(str(repo), one[:7].upper()) == one  # a prefix names it too
    assert stamps.inventory_commit(str(repo), one[:6]) is None  # too short to name it
    assert stamps.stamp(str(repo), (), stamps.inventory_commit(str(repo), one)) == f"{repo}\0commit:{one}"
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert stamps.head_commit(str(repo)) == one
    (repo / "a.py").write_text("x = 2\n")
    commit_all(repo, "two")
    two = head(repo)
    assert stamps.inventory_commit(str(repo), one) is None  # HEAD moved on: the inventory is stale
    git(repo, "checkout", "-q", "--detach", one)
    assert stamps.inventory_commit(str(repo), one) == one
    git(repo, "worktree", "add", "-q", str(tmp_path / "linked"), "main")
    assert (tmp_path / "linked" / ".git").is_file()
    assert stamps.head_commit(str(tmp_path / "linked")) == two
    plain = tmp_path / "plain"
    plain.mkdir()
    assert stamps.head_commit(str(plain)) is None and stamps.inventory_commit(str(plain), one) is None


def test_since_with_inventory_commits(spark: Any, org: Path, tmp_path: Path) -> None:
    """An organisation folder whose inventory names each git clone's commit: a clone at the commit
    named is reused without a walk, a clone whose commit moved is scanned, and the results equal a
    full audit's."""
    hints = org / "inventory.csv"

    def write_inventory() -> None:
        rows = [f"{name},{head(org / name)}" for name in ("orders-py", "billing-java")]
        hints.write_text("repo,commit\n" + "\n".join(rows) + "\n")

    write_inventory()
    first = run(spark, [str(org)], tmp_path / "first")
    assert first["incremental"]["repos_scanned"] == len(REPOS)
    # a new commit in orders-py (the inventory updated with it); billing-java's stays as named
    consumer = org / "orders-py" / "orders" / "consumer.py"
    consumer.write_text(consumer.read_text().replace('"created||paid"', '"created||paid||refunded"'))
    commit_all(org / "orders-py", "subscribe refunded too")
    write_inventory()
    since = run(spark, [str(org)], tmp_path / "since", since=str(tmp_path / "first"))
    run(spark, [str(org)], tmp_path / "full")
    same(tmp_path / "full", tmp_path / "since")
    assert since["incremental"]["repos_scanned"] == 1, since["incremental"]
    assert equality.differences(equality.result(tmp_path / "first"), equality.result(tmp_path / "since"))


def audit(spark: Any, org: Path, out: Path, since: Path | None = None) -> tuple[dict[str, Any], list[str]]:
    """`run` with the progress lines kept."""
    from subguard.audit import job

    lines: list[str] = []
    args = job.AuditArgs(sources=(str(org),), out=str(out), since=str(since) if since is not None else None)
    return job.run_audit(spark, args, lines.append), lines


def same_tables(full: Path, since: Path) -> None:
    """`same`, each small table's Spark schema is a full audit's (a carried table keeps it), and the org
    map holds the same rows (every consumer: those of the repositories carried too)."""
    same(full, since)
    assert equality.spark_schemas(since) == equality.spark_schemas(full)
    assert equality.org_map(since) == equality.org_map(full)


def clone_org(org: Path) -> None:
    """Every repository of `org` a git clone at the commit its inventory.csv names (as a nightly fetch
    leaves them): the driver stamps each by that commit and reuses an unchanged one without a task,
    so its rows are carried (`tablecarry`)."""
    names = sorted(p.name for p in org.iterdir() if p.is_dir() and not p.name.startswith("."))
    for name in names:
        if not (org / name / ".git").exists():
            git(org / name, "init", "-q", "-b", "main")
        status = subprocess.run(
            ["git", "-C", str(org / name), "status", "--porcelain"], check=True, capture_output=True, text=True
        )
        if status.stdout.strip():
            commit_all(org / name, "state of the test")
    rows = [f"{name},{head(org / name)}" for name in names]
    (org / "inventory.csv").write_text("repo,commit\n" + "\n".join(rows) + "\n")


def test_since_carries_the_tables(spark: Any, org: Path, tmp_path: Path) -> None:
    """The small tables of a --since run are the previous rows of the repositories and groups nothing
    changed plus rows computed now: a repository whose group moved (the old group gone, a new one),
    a group a changed repository shares with an unchanged one, a removed repository and a group
    nobody touched all give a full audit's rows and org map, twice in a row (a carried output carried
    again)."""
    clone_org(org)
    first, _ = audit(spark, org, tmp_path / "first")
    # orders-py: its audit trail's group renamed (GID_ORDER_AUDIT gone, GID_ORDER_AUDIT_V2 new) and the
    # group it shares with orders-loadtest (unchanged) subscribing one tag more
    consumer = org / "orders-py" / "orders" / "consumer.py"
    text = consumer.read_text().replace('"GID_ORDER_AUDIT"', '"GID_ORDER_AUDIT_V2"')
    consumer.write_text(text.replace('"created||paid"', '"created||paid||refunded"'))
    shutil.rmtree(org / "legacy-broken")  # a removed repository (with findings of its own)
    clone_org(org)
    since, lines = audit(spark, org, tmp_path / "since", tmp_path / "first")
    kept = [line for line in lines if line.startswith("carry: ")]
    assert kept and f"the rows of {len(REPOS) - 2} repositories kept" in kept[0], lines
    audit(spark, org, tmp_path / "full")
    same_tables(tmp_path / "full", tmp_path / "since")
    groups = {json.loads(r)["group"] for r in equality.table_rows(tmp_path / "since", "groups")}
    assert "GID_ORDER_AUDIT_V2" in groups and "GID_ORDER_AUDIT" not in groups
    assert first["totals"]["groups"] > since["incremental"]["groups_judged"] > 0
    # the carried output carried again: billing-java edited, orders-py's group back
    pom = org / "billing-java" / "pom.xml"
    pom.write_text(pom.read_text() + "\n<!-- edited -->\n")
    consumer.write_text(consumer.read_text().replace('"GID_ORDER_AUDIT_V2"', '"GID_ORDER_AUDIT"'))
    clone_org(org)
    _, lines = audit(spark, org, tmp_path / "again", tmp_path / "since")
    assert any(line.startswith(f"carry: the rows of {len(REPOS) - 3} repositories kept") for line in lines), lines
    audit(spark, org, tmp_path / "full2")
    same_tables(tmp_path / "full2", tmp_path / "again")


def test_carry_plan() -> None:
    """What a carry keeps of the previous tables: a repository's rows by whether it is in K; a group
    task's findings by their fingerprint, its group judged again when a finding of it names a
    repository not in K or shares a fingerprint with a group judged again; the groups table's rows
    of every group a row not kept or computed now names."""
    import pyarrow as pa

    from subguard.audit import tablecarry

    def table(**cols: list[Any]) -> pa.Table:
        return pa.table({k: pa.array(v, pa.string()) for k, v in cols.items()})

    previous = {
        "consumers": table(repo=["a", "b", "gone"], group=["G1", "G2", "G5"]),
        "subscriptions": table(repo=["a", "b", "gone"], group=["G1", "G2", "G5"]),
        "deployments": table(repo=["a", "gone"]),
        "findings": table(
            repo=["a", "b", "b", "a", "a"],
            group=["G1", "G2", "G6", "G3", None],
            scope=["group", "group", "consumer", "group", "consumer"],
            fingerprint=["f1", "f2", "f3", "f4", "f5"],
        ),
        "groups": table(group=["G1", "G2", "G3", "G4", "G5", "G6"]),
        "state/groups": table(
            group=["G1", "G2", "G3", "G4", "G4"],
            repo=[
                "a",
                "b",
                "a",
                "gone",
                "",
            ],
            kind=["finding", "finding", "finding", "finding", "group"],
            key=["f1", "f2", "f4", "f1", "G4"],
        ),
    }
    records = [
        {"repo": "new", "kind": "consumer", "payload": '{"group": "G7"}'},
        {"repo": "new", "kind": "finding", "payload": '{"group": "G8"}'},
        {"repo": "a", "kind": "finding", "payload": '{"group": "G9"}'},  # K's: not computed now
    ]
    carry = tablecarry.plan("out", previous, frozenset({"a", "b"}), frozenset({"G2"}), records)
    # G4: a group finding of a removed repository; G1: shares fingerprint f1 with G4
    assert carry.touched == {"G1", "G2", "G4"}
    assert carry.dropped == {"f1", "f2"}
    assert carry.keep("consumers").to_pylist() == [True, True, False]
    assert carry.keep("deployments").to_pylist() == [True, False]
    assert carry.keep("findings").to_pylist() == [False, False, True, True, True]
    assert carry.keep("state/groups").to_pylist() == [False, False, True, False, False]
    # R: T, "", G5 (a removed repository's rows), G7 and G8 (rows computed now)
    assert carry.regrouped == {"", "G1", "G2", "G4", "G5", "G7", "G8"}
    assert carry.keep("groups").to_pylist() == [False, False, True, False, False, True]
    assert carry.idle(records) == {"deployments"}  # no deployment outside K: no job for its table
    assert carry.empty("deployments").schema == previous["deployments"].schema
    fresh = table(group=["G7"])
    assert carry.merged("groups", fresh).column("group").to_pylist() == ["G3", "G6", "G7"]
