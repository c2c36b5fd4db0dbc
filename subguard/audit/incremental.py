"""Incremental audits (`subguard audit --since PREVIOUS_OUT`): what an audit keeps for the next one,
and how the next one reuses it. DataFrame transforms plus the extraction tasks' stamp check; the
job reads and writes.

Every audit writes its state into `state/` of its output: `state/repos`, the extraction records
of each repository read from a local or mounted folder, with a `stamp` record holding its commit or
tree hash (`subguard.audit.stamps`) and one `settings` record (the run's settings key); and
`state/groups`, every group task's records with the group and a digest of the group task's
input (its members' consumer JSON and environment hints, and its member repositories' inline
waivers).

A run with `--since` whose settings key equals the previous one's: each extraction task stamps its
repository and, when the stamp equals the previous one, emits a `reuse` marker instead of scanning;
the previous records of those repositories take the place of a scan (a join, in Spark). Then each
group's input digest is compared with the previous run's: equal -> the previous records of that
group, else the group task runs. A group's input changes only when one of its member
repositories changed (or an inventory hint did), so exactly the groups a changed repository
touches are judged again, and the outputs equal those of a full audit. state/marks.json also keeps
each repository's groups and inventory hints, so that only the groups a repository not reused (or
with other hints) touches, now or in the previous run, have their input digested at all
(`touched_groups`); every other group's records are taken as they are.

Repositories read through Spark's binaryFile source (HDFS, object stores) and inventory outputs are
always read in full; their groups are still reused when their inputs are unchanged.

The files table (one row per file: the largest output by far) is kept split by repository: its
Parquet files are named `p<part>-...` where `part = pmod(hash(repo), parts)` (`parts_for`: a power
of two, about eight repositories a part, at most PARTS_MAX), and `state/file_counts` holds its rows
counted by repository, status and reason. `state/repos` holds no file rows. A `--since` run writes
only the parts a scanned, added or removed repository falls in (the reused repositories of those
parts read back from the previous files table) and links the other parts' files from the previous
output unchanged (a local output; elsewhere every part is written again, the reused repositories'
rows read from the previous table). The table is `files` with the parquet format, else `state/files`.

The small tables (consumers, subscriptions, deployments, findings, groups) and state/groups of a
`--since` run are the previous rows of the unchanged repositories and groups plus rows computed
for the rest (`tablecarry`), when state/marks.json says the previous run wrote them (`tables`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from pyspark import RDD, StorageLevel
from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from subguard.audit import prestamp, stamps, tasks
from subguard.audit import transforms as T
from subguard.audit.local import Unit
from subguard.audit.output import local_path

STATE = "state"
REPOS = f"{STATE}/repos"
GROUPS = f"{STATE}/groups"
GROUP_RECORDS = f"group string, input string, reused boolean, {T.RECORDS}"
FILE_COUNTS = f"{STATE}/file_counts"
STATE_FILES = f"{STATE}/files"  # the files table without the parquet format
MARKS = f"{STATE}/marks.json"  # `marks_json`
FILE_COUNT_SCHEMA = "repo string, status string, reason string, count long"
MARKERS = ("stamp", "reuse", "settings", "layout")  # record kinds of this module; every table ignores them
FILE_KINDS = ("files", "file")  # the files table's records: kept in that table, not in state/repos
PARTS_MAX = 512
PART = re.compile(r"p(\d{5})-[^/]*\.parquet$")


@dataclass(frozen=True)
class Since:
    """The previous audit's state, when it can be reused."""

    uri: str
    repos: DataFrame
    groups: DataFrame
    stamps: Mapping[str, str]  # repo -> stamp of the previous run
    parts: int  # how the previous files table was split (`parts_for`)
    file_counts: DataFrame  # FILE_COUNT_SCHEMA: the previous files table's rows counted
    # (group, input) of every previous group task, from state/marks.json (a local relation: the group
    # job broadcasts it without a scan or a shuffle); None: taken from state/groups
    group_keys: DataFrame | None = None
    named: frozenset[str] = frozenset()  # every repository with a stamp in the previous state
    # repo -> its part of the previous files table (state/marks.json), None: not recorded
    repo_parts: Mapping[str, int] | None = None
    # repo -> the groups its consumers declared, and repo -> its inventory hints (`job.hints_by_repo`),
    # from state/marks.json: which groups a repository not reused now touched (`touched_groups`);
    # None: not recorded (an older output), then every group's input is digested
    members: Mapping[str, frozenset[str]] | None = None
    hints: Mapping[str, tuple[str | None, ...]] | None = None
    # the previous output's small tables may be carried (`tablecarry`): it wrote them, without evidence
    tables: bool = False
    # every repository of `file_counts` (read on the driver from a local output), None: not read
    counted: frozenset[str] | None = None
    # group -> the input digest of its previous group task (state/marks.json; one each), None: not recorded
    inputs: Mapping[str, str] | None = None


@dataclass(frozen=True)
class Mark:
    """A marker record of state/repos: the run's `settings` key, the files table's `layout`, or a
    repository's `stamp`."""

    repo: str
    kind: str
    key: str


def marks_json(
    settings: str,
    parts: int,
    stamps: Iterable[tuple[str, str]],
    groups: Iterable[tuple[str, str]] = (),
    repo_parts: Mapping[str, int] | None = None,
    members: Mapping[str, Iterable[str]] | None = None,
    hints: Mapping[str, Sequence[str | None]] | None = None,
    tables: bool = False,
) -> str:
    """state/marks.json: the marker records of state/repos (settings, layout, every stamp) and each
    group task's input digest (`groups`: group, input), written by the driver so that the next
    `--since` run reads them without a Spark job before its extraction, and compares its groups'
    inputs with a local relation instead of a scan and a shuffle of state/groups; with `members` and
    `hints` (`repo_groups`, the inventory hints), the next run digests only the groups a repository it
    does not reuse touches (`touched_groups`); `tables`: the run wrote its small tables from the
    repositories alone (Parquet, no evidence), so the next run may carry their rows (`tablecarry`)."""
    doc = {
        "settings": settings,
        "layout": parts,
        "stamps": sorted([repo, key] for repo, key in stamps),
        "groups": sorted({(g, i) for g, i in groups}),
        **({"parts": sorted(repo_parts.items())} if repo_parts is not None else {}),
        **(
            {"members": sorted([repo, sorted(groups)] for repo, groups in members.items())}
            if members is not None
            else {}
        ),
        **({"hints": sorted([repo, list(values)] for repo, values in hints.items())} if hints is not None else {}),
        **({"tables": True} if tables else {}),
    }
    return json.dumps(doc, separators=(",", ":")) + "\n"


def read_marks(base: str) -> list[Mark] | None:
    """The marks of state/marks.json on a local or mounted file system; None when there is none."""
    path = local_path(f"{base}/{MARKS}")
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
        groups = doc.get("groups")
        return [
            Mark("", "settings", str(doc["settings"])),
            Mark("", "layout", str(int(doc["layout"]))),
            *(Mark(str(repo), "stamp", str(key)) for repo, key in doc["stamps"]),
            *([Mark("", "groups", "")] if isinstance(groups, list) else []),
            *(Mark(str(group), "group", str(key)) for group, key in groups or ()),
            *([Mark("", "parts", "")] if isinstance(doc.get("parts"), list) else []),
            *(Mark(str(repo), "part", str(int(part))) for repo, part in doc.get("parts") or ()),
            *([Mark("", "members", "")] if isinstance(doc.get("members"), list) else []),
            *(Mark(str(repo), "member", str(g)) for repo, groups in doc.get("members") or () for g in groups),
            *([Mark("", "hints", "")] if isinstance(doc.get("hints"), list) else []),
            *(Mark(str(repo), "hint", json.dumps(values)) for repo, values in doc.get("hints") or ()),
            *([Mark("", "tables", "")] if doc.get("tables") is True else []),
        ]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def read_since(spark: SparkSession, uri: str, settings: str) -> tuple[Since | None, str]:
    """The previous output's state, or None and why it cannot be reused."""
    base = uri.rstrip("/")
    tables = (
        (REPOS, T.RECORDS),
        (GROUPS, GROUP_RECORDS.replace("reused boolean, ", "")),
        (FILE_COUNTS, FILE_COUNT_SCHEMA),
    )
    try:
        # the three tables resolved side by side (each is a listing and a schema parse in the JVM)
        def read(at: str, schema: str) -> DataFrame:
            return spark.read.schema(schema).parquet(f"{base}/{at}")

        with ThreadPoolExecutor(max_workers=len(tables)) as pool:
            reads = [pool.submit(read, at, schema) for at, schema in tables]
            repos, groups, counts = (r.result() for r in reads)
        marks = read_marks(base)
        if marks is None:  # an output without state/marks.json, or not on a local file system
            rows = (
                repos.where(F.col("kind").isin("settings", "stamp", "layout")).select("repo", "kind", "key").collect()
            )
            marks = [Mark(str(r.repo), str(r.kind), str(r.key)) for r in rows]
    except AnalysisException:
        return None, f"{uri} holds no audit state ({REPOS}): a full audit"
    if [r.key for r in marks if r.kind == "settings"] != [settings]:
        return (
            None,
            f"{uri} was written with other settings (code, config, policies, --runs or a waiver's expiry): a full audit",
        )
    seen: dict[str, list[str]] = {}
    for r in marks:
        if r.kind == "stamp":
            seen.setdefault(str(r.repo), []).append(str(r.key))
    layout = [int(r.key) for r in marks if r.kind == "layout"] or [0]
    keys = None
    if any(r.kind == "groups" for r in marks):
        keys = key_frame(spark, [(r.repo, r.key) for r in marks if r.kind == "group"])
    # a name two folders share is never reused: its records could not be told apart
    return Since(
        uri,
        repos.where(~F.col("kind").isin("settings", "layout")),
        groups,
        {k: v[0] for k, v in seen.items() if len(v) == 1},
        layout[0],
        counts,
        keys,
        frozenset(seen),
        {r.repo: int(r.key) for r in marks if r.kind == "part"} if any(r.kind == "parts" for r in marks) else None,
        _members(marks),
        _hints(marks),
        any(r.kind == "tables" for r in marks),
        _counted(base),
        _inputs(marks),
    ), ""


def _inputs(marks: Sequence[Mark]) -> dict[str, str] | None:
    if not any(r.kind == "groups" for r in marks):
        return None
    pairs = [(r.repo, r.key) for r in marks if r.kind == "group"]
    inputs = dict(pairs)
    return inputs if len(inputs) == len(pairs) else None


def _counted(base: str) -> frozenset[str] | None:
    """The repositories of the previous state/file_counts (a local output, read with pyarrow), so that
    its reused rows are filtered on the smaller side (`file_counts`); None elsewhere."""
    path = local_path(f"{base}/{FILE_COUNTS}")
    if path is None:
        return None
    import pyarrow.parquet as pq

    try:
        repos = pq.read_table(path, columns=["repo"])["repo"].unique().to_pylist()
    except (OSError, ValueError):
        return None
    return frozenset(str(r) for r in repos if r is not None)


def _members(marks: Sequence[Mark]) -> dict[str, frozenset[str]] | None:
    if not any(r.kind == "members" and r.repo == "" for r in marks):
        return None
    by: dict[str, set[str]] = {}
    for r in marks:
        if r.kind == "member":
            by.setdefault(r.repo, set()).add(r.key)
    return {repo: frozenset(groups) for repo, groups in by.items()}


def _hints(marks: Sequence[Mark]) -> dict[str, tuple[str | None, ...]] | None:
    if not any(r.kind == "hints" and r.repo == "" for r in marks):
        return None
    return {r.repo: tuple(json.loads(r.key)) for r in marks if r.kind == "hint"}


def key_frame(spark: SparkSession, keys: Sequence[tuple[str, str]]) -> DataFrame:
    """(group, input) rows as a local relation, broadcast by a join without a scan
    (`arrowtables.text_frame`; imported here: the executors that import this module never need it)."""
    from subguard.audit import arrowtables

    return arrowtables.text_frame(spark, keys, "group string, input string")


# --- repositories ----------------------------------------------------------------------------------


def marker(repo: str, kind: str, key: str) -> dict[str, Any]:
    return {"repo": repo, "kind": kind, "key": key, "payload": ""}


def unit_rows(unit: Unit, options: tasks.AuditOptions, previous: Mapping[str, str]) -> Iterator[dict[str, Any]]:
    """A unit's records (`tasks.unit_task`), with the repository's stamp; only a `reuse` marker when
    the stamp equals the previous run's."""
    if unit.kind != "repo":
        yield from tasks.unit_task(unit, options)
        return
    try:
        named = stamps.inventory_commit(unit.path, unit.commit) if unit.commit else None
        stamp = stamps.stamp(unit.path, unit.nested, named)
    except OSError:
        stamp = ""
    if stamp and previous.get(unit.repo) == stamp:
        yield marker(unit.repo, "reuse", stamp)
        return
    yield from tasks.unit_task(unit, options)
    if stamp:
        yield marker(unit.repo, "stamp", stamp)


def _units(units: Iterable[Unit], options: tasks.AuditOptions, previous: Mapping[str, str]) -> Iterator[dict[str, Any]]:
    for unit in units:
        yield from unit_rows(unit, options, previous)


def extract_local(
    spark: SparkSession,
    units: RDD[Unit],
    options: tasks.AuditOptions,
    previous: Mapping[str, str],
) -> DataFrame:
    """`transforms.extract_local` with stamps: repositories whose stamp is unchanged are not scanned."""
    known = dict(previous)
    rows = units.mapPartitions(lambda part: _units(part, options, known))
    return T._records(spark, rows)


def with_reused(
    records: DataFrame, since: Since | None, early: frozenset[str] = frozenset(), join: bool = True
) -> DataFrame:
    """The records with the previous records of every repository marked `reuse` added (the marker
    stays: it counts the reused repositories): those the driver reused (`early`, read back with a
    filter: `prestamp.reused_records`) and, with `join`, those a task marked."""
    if since is None:
        return records
    out = records
    if join:
        reused = records.where(F.col("kind") == "reuse").select("repo")
        # the records behind a projection: a union of unions is flattened as it is built (Spark's
        # CombineUnions), and the flattened plan no longer matches the cached `records`, whose extraction
        # tasks would then run twice (once for the reuse markers' broadcast, once for this union)
        kept = records.select(*records.columns)
        # a shuffle join, not a broadcast: a broadcast of the markers is a Spark job of its own (the
        # extraction's), before the job that reads the records; joined by a shuffle, the extraction is a
        # stage of that one job
        out = kept.unionByName(since.repos.join(reused.hint("merge"), "repo", "left_semi"))
    return out.unionByName(prestamp.reused_records(since.repos, early, since.named)) if early else out


def state_rows(records: Iterable[Mapping[str, Any]], settings: str, parts: int) -> list[dict[str, Any]]:
    """`state/repos` (T.RECORDS rows): every record but the file rows (`records`: the run's records
    without them, as the driver collected them) of each stamped repository, with no reuse marker,
    then the settings record and the files table's layout (`parts`)."""
    kept = [r for r in records if r["kind"] not in ("reuse", *FILE_KINDS)]
    stamped = {r["repo"] for r in kept if r["kind"] == "stamp" and r["repo"] is not None}
    rows = [{**r, "files": None} for r in kept if r["repo"] in stamped]
    return [
        *rows,
        {**marker("", "settings", settings), "files": None},
        {**marker("", "layout", str(parts)), "files": None},
    ]


# --- the files table, split by repository ----------------------------------------------------------


def parts_for(repos: int) -> int:
    """How many parts the files table is split into: a power of two near an eighth of the
    repositories (so a few more or fewer keep the layout), 1 to PARTS_MAX."""
    parts = 1
    while parts * 8 < repos and parts < PARTS_MAX:
        parts *= 2
    return parts


def part_of(repo: Column, parts: int) -> Column:
    return F.pmod(F.hash(repo), F.lit(parts))


def part_name(part: int, name: str) -> str:
    """A files-table Parquet file's name in the output: its part first (`PART`)."""
    return f"p{part:05d}-{name}"


def file_parts(names: Iterable[str]) -> dict[int, list[str]]:
    """part -> the names of the files table's Parquet files of that part."""
    out: dict[int, list[str]] = {}
    for name in names:
        m = PART.fullmatch(name)
        if m:
            out.setdefault(int(m.group(1)), []).append(name)
    return out


@dataclass(frozen=True)
class Carry:
    """What a run does with the previous files table: `read` (its files whose reused repositories'
    rows are written again) and `link` (its files put into the new output as they are)."""

    read: tuple[str, ...] = ()
    link: tuple[str, ...] = ()


def carry(previous: Mapping[int, Sequence[str]], touched: Iterable[int], same_layout: bool, can_link: bool) -> Carry:
    """Which of the previous files table's files (`previous`: part -> names) are read back and which
    linked: the parts no scanned, added or removed repository falls in are linked when the layout is
    the same and the output can take links; every other file is read."""
    hit = set(touched)
    read: list[str] = []
    link: list[str] = []
    for part, names in sorted(previous.items()):
        (link if same_layout and can_link and part not in hit else read).extend(names)
    return Carry(tuple(read), tuple(link))


def file_counts(fresh: DataFrame, since: Since | None, reused: frozenset[str], parts: int) -> DataFrame:
    """The files table's rows counted by repository, status and reason (FILE_COUNT_SCHEMA), each with
    its `part` and `origin`: `scanned` (counted now), `reused` (the previous counts of a reused
    repository) or `gone` (the previous counts of a repository not reused now: changed or removed).
    `state/file_counts` is the rows not gone (`live_counts`); the parts of the rows not reused are
    the parts the files table writes again (`touched_parts`). One job collects it."""
    counts = fresh.groupBy("repo", "status", "reason").count().withColumn("origin", F.lit("scanned"))
    if since is not None:
        previous = since.file_counts
        # the reused repositories as one parsed IN filter (a broadcast of them is a Spark job of its own),
        # or, when the previous counts name fewer other repositories, as NOT IN those
        others = since.counted - reused if since.counted is not None else None
        among = (
            F.col("repo").isNotNull() & ~prestamp.among("repo", others)
            if others is not None and len(others) < len(reused)
            else prestamp.among("repo", reused)
        )
        kept = previous.where(among).withColumn("origin", F.lit("reused"))
        gone = previous.where(~among | F.col("repo").isNull()).withColumn("origin", F.lit("gone"))
        counts = counts.unionByName(kept).unionByName(gone)
    return counts.withColumn("part", part_of(F.col("repo"), parts))


def live_counts(counted: Any) -> Any:
    """`state/file_counts` (FILE_COUNT_SCHEMA's columns) from `file_counts`' rows (an Arrow table)."""
    import pyarrow.compute as pc

    return counted.filter(pc.not_equal(counted["origin"], "gone")).select(T.column_names(FILE_COUNT_SCHEMA))


def gone_parts(since: Since, reused: Iterable[str], parts: int) -> list[int] | None:
    """The parts of the previous files table holding rows of a repository not reused now (changed or
    removed), from the parts state/marks.json names: the only previous files not linked unchanged
    (a scanned repository's rows go to new files of its part). None when the marks name no parts or
    the layout changed: then `touched_parts`, after the counts."""
    if since.repo_parts is None or since.parts != parts:
        return None
    kept = set(reused)
    return sorted({part for repo, part in since.repo_parts.items() if repo not in kept})


def repo_parts(counted: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """repo -> part of the files table now (`file_counts`' rows, collected; the gone ones left out)."""
    return {str(r["repo"]): int(r["part"]) for r in counted if r["origin"] != "gone" and r["repo"] is not None}


def touched_parts(counted: Iterable[Mapping[str, Any]]) -> list[int]:
    """The parts a scanned repository's rows fall in, or a repository of the previous files table
    that is not reused now (`file_counts`' rows, collected)."""
    return sorted({int(r["part"]) for r in counted if r["origin"] != "reused"})


def carried_rows(spark: SparkSession, uris: Sequence[str], reused: frozenset[str], parts: int) -> DataFrame | None:
    """The reused repositories' rows of the previous files table's files `uris`, with their part."""
    if not uris:
        return None
    rows = spark.read.schema(f"repo string, {T.FILES}").parquet(*uris)
    return rows.where(prestamp.among("repo", reused)).withColumn("part", part_of(F.col("repo"), parts))


# --- groups ----------------------------------------------------------------------------------------


def repo_groups(records: Iterable[Mapping[str, Any]]) -> dict[str, frozenset[str]]:
    """repo ("" for none) -> the groups its consumer records declare (`tasks.consumer_row`'s
    `group`), from the records the driver collected; a consumer without a group is in none."""
    by: dict[str, set[str]] = {}
    for r in records:
        if r["kind"] == "consumer":
            group = json.loads(r["payload"]).get("group")
            if group:
                by.setdefault(r["repo"] or "", set()).add(str(group))
    return {repo: frozenset(groups) for repo, groups in by.items()}


def touched_groups(
    since: Since,
    now: Mapping[str, frozenset[str]],
    reused: frozenset[str],
    hints: Mapping[str, tuple[str | None, ...]],
) -> frozenset[str] | None:
    """The groups whose input may differ from the previous run's: every group a repository declares
    now or declared then (`now`: `repo_groups`; `since.members`), for each repository that is not
    reused (scanned, added, removed, or read in full) or whose inventory hints (`hints`) changed. A
    group no such repository touches has the same members, environment hints and waivers as before,
    so its previous records stand without its input being digested. None when the previous state did
    not record the members or the hints (every group's input is then compared)."""
    if since.members is None or since.hints is None:
        return None
    before = since.members
    changed = {repo for repo in (*now, *before) if repo not in reused}
    changed |= {repo for repo in (*hints, *since.hints) if hints.get(repo) != since.hints.get(repo)}
    out: set[str] = set()
    for repo in changed:
        out |= now.get(repo, frozenset()) | before.get(repo, frozenset())
    return frozenset(out)


def waivers_by_repo(records: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """repo -> JSON list of its inline waivers' payloads, from the records the driver collected."""
    by: dict[str, list[str]] = {}
    for r in records:
        if r["kind"] == "waiver" and r["repo"] is not None:
            by.setdefault(r["repo"], []).append(r["payload"])
    return {repo: json.dumps(payloads) for repo, payloads in sorted(by.items())}


def group_inputs(consumers: DataFrame, waivers: Mapping[str, str]) -> DataFrame:
    """(group, members, waived, input): what each group task gets, and a digest of it. One
    aggregation: each consumer row carries its repository's waivers (`waivers`: `waivers_by_repo`,
    looked up, not joined: `transforms.lookup`), a group's waivers are those of its distinct member
    repositories, sorted."""
    known = consumers.where(F.col("group").isNotNull() & (F.col("group") != ""))
    listed = T.lookup(F.col("repo"), {repo: (text,) for repo, text in waivers.items()}, ["payloads"])
    return inputs_of(known.withColumn("payloads", F.from_json(listed["payloads"], "array<string>")))


def inputs_of(rows: DataFrame) -> DataFrame:
    """`group_inputs` of consumer rows with a group that carry their repository's waivers
    (`payloads`: an array of waiver payloads, null for none)."""
    none = F.array().cast("array<string>")
    repo = F.struct(F.col("repo"), F.coalesce(F.col("payloads"), none).alias("payloads"))
    gathered = rows.groupBy("group").agg(
        F.sort_array(F.collect_list(F.struct("json", "env_hint"))).alias("members"),
        F.collect_set(repo).alias("_repos"),
    )
    waived = F.sort_array(F.flatten(F.transform(F.col("_repos"), lambda r: r["payloads"])))
    joined = gathered.withColumn("waived", F.coalesce(waived, none)).drop("_repos")
    return joined.withColumn("input", F.sha2(F.to_json(F.struct("members", "waived")), 256))


def _judged(r: Row, options: tasks.AuditOptions) -> list[tuple[Any, ...]]:
    rows = T._judge(r.group, r.members, r.waived, options)
    return [(r.group, r.input, False, d["repo"], d["kind"], d["key"], d["payload"], None) for d in rows]


def judge_groups(
    consumers: DataFrame,
    waivers: Mapping[str, str],
    options: tasks.AuditOptions,
    since: Since | None,
    touched: frozenset[str] | None = None,
    others: bool = True,
    compared: DataFrame | None = None,
) -> tuple[DataFrame, list[DataFrame]]:
    """`transforms.judge_groups` keyed by group and input digest (GROUP_RECORDS): groups whose input
    is unchanged since the previous run take its records (`reused`), the others run the group task.
    With `touched` (`touched_groups`), only those groups' inputs are digested and compared; every
    other group takes its previous records as they are (left out without `others`: the caller takes
    them from the previous state/groups itself, `tablecarry`; `compared`: the previous records of the
    `touched` groups, when the caller has them). Also the frames it cached (the inputs, read
    by both: one aggregation), for the caller to unpersist."""
    spark = consumers.sparkSession
    narrow = prestamp.among("group", touched) if since is not None and touched is not None else None
    inputs = group_inputs(consumers if narrow is None else consumers.where(narrow), waivers)
    to_run = inputs
    reused = None
    held = []
    if since is not None:
        inputs = to_run = inputs.persist(StorageLevel.MEMORY_AND_DISK)
        held.append(inputs)
        previous = since.group_keys
        if previous is None:  # an output without the keys in state/marks.json
            previous = since.groups.select("group", "input").distinct()
        if narrow is not None and touched is not None and since.inputs is not None:
            # the few groups' previous digests looked up, not joined: no broadcast of every group's
            known = {g: (since.inputs[g],) for g in sorted(touched) if g in since.inputs}
            before = T.lookup(F.col("group"), known, ["input"])["input"]
            to_run = inputs.where(before.isNull() | (before != F.col("input")))
        else:
            to_run = inputs.join(F.broadcast(previous), ["group", "input"], "left_anti")
        # joined on the group alone (one input each; the inputs are partitioned by it already, so only
        # the previous records move), the same input kept
        now = inputs.select("group", F.col("input").alias("_now"))
        if compared is None:
            compared = since.groups if narrow is None else since.groups.where(narrow)
        same = compared.join(now, "group").where(F.col("input") == F.col("_now")).drop("_now")
        reused = same.withColumn("reused", F.lit(True))
        if narrow is not None and others:  # the groups no changed repository touches: their records as they are
            reused = reused.unionByName(since.groups.where(~narrow).withColumn("reused", F.lit(True)))
    judged = spark.createDataFrame(to_run.rdd.flatMap(lambda r: _judged(r, options)), GROUP_RECORDS, verifySchema=False)
    return (judged if reused is None else judged.unionByName(reused)), held


def state_groups(group_records: DataFrame) -> DataFrame:
    return group_records.drop("reused")


def group_counts(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The group records (collected: group, reused, kind, payload) by whether they were reused: how
    many groups (`count`), records (`rows`) and the problems' payloads, not reused first."""
    by: dict[bool, dict[str, Any]] = {}
    groups: dict[bool, set[str]] = {}
    for r in rows:
        reused = bool(r["reused"])
        info = by.setdefault(reused, {"reused": reused, "count": 0, "rows": 0, "problems": []})
        info["rows"] += 1
        if r["group"] is not None:
            groups.setdefault(reused, set()).add(r["group"])
        if r["kind"] == "problem":
            info["problems"].append(r["payload"])
    for reused, info in by.items():
        info["count"] = len(groups.get(reused, ()))
    return [by[k] for k in sorted(by)]


# --- what the run says about it --------------------------------------------------------------------


def summary(since: str | None, kinds: Mapping[str, int], groups: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """summary.json's `incremental`: what was reused from `since` (None: a full audit)."""
    by = {bool(g["reused"]): int(g["count"]) for g in groups}
    reused = int(kinds.get("reuse", 0))
    return {
        "since": since,
        "repos_reused": reused,
        "repos_scanned": int(kinds.get("stamp", 0)) - reused,
        "groups_reused": by.get(True, 0),
        "groups_judged": by.get(False, 0),
    }


def headline(info: Mapping[str, Any]) -> str:
    what = f"since {info['since']}" if info["since"] else "full audit"
    return (
        f"incremental: {what}: {info['repos_scanned']} repositories scanned, {info['repos_reused']} reused; "
        f"{info['groups_judged']} groups judged, {info['groups_reused']} reused"
    )
