"""The audit's transformations: DataFrame -> DataFrame, no writes, and no reads but one: the tasks of
`extract_local` list and read the folders they are given, because no Spark source lists a local
file system without following symbolic links (see `subguard.audit.local`).

Local and mounted roots: folders (`local.Unit`) -> `extract_local` (each task lists and scans its folders)
-> records. Other file systems: files (binaryFile rows plus the hidden files the job lists itself)
-> `assign_repos` -> `mark_skips` -> `extract` (partitioned by repo, `tasks.scan_task` per repo, one
pass over the content) -> records. Then records -> `table` (files, consumers, deployments, findings) ->
`subscriptions` -> `judge_groups` (one task per consumer group, `tasks.group_task`) -> `groups`.
Rules are never re-implemented here: the tasks call the same scan and engine as `subguard check`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from pyspark import RDD
from pyspark.sql import Column, DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, LongType, StringType, StructField, StructType

from subguard.audit import codeowners, tasks
from subguard.audit.local import EXCLUDED, HIDDEN_TOP, OUTSIDE, Unit
from subguard.audit.sources import repo_of_jsonl
from subguard.core.inventory import group_name, subscription_rows
from subguard.core.model import Consumer, FileRecord, FileStatus
from subguard.scan.discover import DEFAULT_EXCLUDE_DIRS

FILE_LIST = "array<struct<path:string, status:string, reason:string, extractor:string, size:long>>"  # FILES, as a list
RECORDS = f"repo string, kind string, key string, payload string, files {FILE_LIST}"  # files: kind "files" only


def _strings(*names: str) -> list[StructField]:
    return [StructField(n, StringType()) for n in names]


# RECORDS as a type built here: the extraction's frame is the run's first, and a DDL string would be
# parsed by the JVM's SQL parser, whose first use (about 0.3 s) would come before the extraction's job
RECORDS_TYPE = StructType(
    [
        *_strings("repo", "kind", "key", "payload"),
        StructField(
            "files",
            ArrayType(
                StructType([*_strings("path", "status", "reason", "extractor"), StructField("size", LongType())])
            ),
        ),
    ]
)
ROOTS = "base string, mode string, repo string"
HINTS = "repo string, team string, owner string, env_hint string"
FILES = "path string, status string, reason string, extractor string, size long"
CONSUMERS = (
    "consumer_id string, group string, namespace string, client string, message_model string, consume_mode string, "
    "service string, environment string, path string, line int, subscriptions int, origin string, json string"
)
DEPLOYMENTS = (
    "deployment_id string, service string, kind string, name string, namespace string, environment string, "
    "image string, replicas int, path string, line int, json string"
)
FINDINGS = (
    "rule string, severity string, message string, scope string, path string, line int, column int, group string, "
    "topic string, fingerprint string, suppressed string, impact string, repos array<string>, json string"
)
SUBSCRIPTIONS = (
    "group string, topic string, expression string, expression_type string, tags array<string>, message_model string, "
    "consume_mode string, client string, service string, environment string, path string, line int, column int, "
    "consumer_id string, resolution map<string,string>, repo string, name_server string, namespace string, "
    "instance_name string, unresolved map<string,string>, registers boolean, template array<string>, "
    "startup_failure string"
)
UNREAD_HIDDEN = (
    "not read: Spark's readers skip names starting with . or _, and the task could not open it itself "
    "(not on a local or mounted file system, or unreadable)"
)


# --- files -----------------------------------------------------------------------------------------


def assign_repos(raw: DataFrame, roots: DataFrame) -> DataFrame:
    """binaryFile rows -> (repo, root, path relative to the repo, uri, size, content).

    `roots` rows are (base, mode, repo): mode `parent` makes each first-level folder of `base` a
    repo (a file directly in `base` belongs to none: repo ""); mode `repo` makes `base` itself the
    repo `repo`. When bases nest, a file belongs to the longest one. The roots table is small and
    broadcast, so no file content moves here.
    """
    bases = roots.select(F.col("base").alias("other"))
    nested = (
        roots.alias("a")
        .join(bases, F.col("other").startswith(F.concat(F.col("a.base"), F.lit("/"))), "left")
        .groupBy("base", "mode", "repo")
        .agg(F.collect_list("other").alias("inner"))
    )
    under = F.col("f.path").startswith(F.concat(F.col("r.base"), F.lit("/")))
    deeper = F.exists(F.col("r.inner"), lambda o: F.col("f.path").startswith(F.concat(o, F.lit("/"))))
    j = raw.alias("f").join(F.broadcast(nested.alias("r")), under & ~deeper)
    rel0 = F.expr("substring(f.path, length(r.base) + 2)")
    first = F.substring_index(rel0, "/", 1)
    # a hidden first-level folder (`.git`, `_archive`) is no repository, as `sources.classify` says
    hidden_first = first.startswith(".") | first.startswith("_")
    parent_nested = (F.col("r.mode") == "parent") & rel0.contains("/") & ~hidden_first
    return j.select(
        F.when(F.col("r.mode") == "repo", F.col("r.repo"))
        .when(parent_nested, first)
        .otherwise(F.lit(""))
        .alias("repo"),
        F.when(parent_nested, F.concat(F.col("r.base"), F.lit("/"), first)).otherwise(F.col("r.base")).alias("root"),
        F.when(
            parent_nested,
            F.expr("substring(f.path, length(r.base) + 2 + instr(substring(f.path, length(r.base) + 2), '/'))"),
        )
        .otherwise(rel0)
        .alias("path"),
        F.col("f.path").alias("uri"),
        F.col("f.length").alias("size"),
        F.col("f.content").alias("content"),
    )


def _excluded(path: Column) -> Column:
    """True when a folder on the path is one `subguard check` never walks into (.git, node_modules, ...)."""
    dirs = F.slice(F.split(path, "/"), 1, F.greatest(F.size(F.split(path, "/")) - 1, F.lit(0)))
    hit = F.exists(dirs, lambda d: d.isin(*sorted(DEFAULT_EXCLUDE_DIRS)) | d.endswith(".egg-info"))
    return hit


def mark_skips(files: DataFrame, max_size: int) -> DataFrame:
    """Add `skip_reason` for files the scan must not read (outside a repo, excluded folder, too large)."""
    reason = (
        F.when((F.col("repo") == "") & F.col("path").contains("/"), F.lit(HIDDEN_TOP))
        .when(F.col("repo") == "", F.lit(OUTSIDE))
        .when(_excluded(F.col("path")), F.lit(EXCLUDED))
        .when(
            F.col("size") > max_size,
            F.format_string("larger than the size limit (%d > %d bytes)", F.col("size"), F.lit(max_size)),
        )
        .when(F.col("content").isNull(), F.lit(UNREAD_HIDDEN))
    )
    return files.withColumn("skip_reason", reason)


# --- per repo --------------------------------------------------------------------------------------


def _records(spark: SparkSession, rows: RDD[dict[str, Any]]) -> DataFrame:
    # rows are built by our own tasks: per-row schema verification in Python would only cost time
    return spark.createDataFrame(
        rows.map(lambda d: (d["repo"], d["kind"], d["key"], d["payload"], d.get("files"))),
        RECORDS_TYPE,
        verifySchema=False,
    )


_SCAN_COLS = ("repo", "root", "path", "uri", "size", "content", "skip_reason")


def _scan(repo: str, rows: Sequence[Row], options: tasks.AuditOptions) -> list[dict[str, Any]]:
    # rows are (repo, root, path, uri, size, content, skip_reason): by position, cheaper than by name
    files = [
        tasks.FileRow(
            path=r[2], size=int(r[4]), uri=r[3], content=bytes(r[5]) if r[5] is not None else None, skip_reason=r[6]
        )
        for r in rows
    ]
    if not repo:  # files outside any repo are only accounted for
        return [
            tasks.files_row(
                "",
                [
                    FileRecord(path=f.path, status=FileStatus.SKIPPED, reason=f.skip_reason or OUTSIDE, size=f.size)
                    for f in files
                ],
            )
        ]
    return tasks.scan_task(repo, rows[0][1], files, options)


def _scan_partition(rows: Iterable[Row], options: tasks.AuditOptions) -> Iterator[dict[str, Any]]:
    """The rows of one partition arrive sorted by repo: scan each repo as soon as its rows are in."""
    for repo, group in itertools.groupby(rows, key=lambda r: str(r[0])):
        yield from _scan(repo, list(group), options)


def extract(files: DataFrame, options: tasks.AuditOptions, partitions: int | None = None) -> DataFrame:
    """One pass over the file content: rows are hash-partitioned by repo in the JVM (no Python in the
    shuffle), sorted by repo inside each partition, and each Python task runs `tasks.scan_task` on
    one repo after another -> records (RECORDS). Skipped files carry no content."""
    spark = files.sparkSession
    n = partitions or int(spark.conf.get("spark.sql.shuffle.partitions") or "8")
    content = F.when(F.col("skip_reason").isNull(), F.col("content")).alias("content")
    cols = files.select(*[content if c == "content" else c for c in _SCAN_COLS])
    by_repo = cols.repartition(n, "repo").sortWithinPartitions("repo", "path")
    return _records(spark, by_repo.rdd.mapPartitions(lambda rows: _scan_partition(rows, options)))


def _unit_partition(units: Iterable[Unit], options: tasks.AuditOptions) -> Iterator[dict[str, Any]]:
    for unit in units:
        yield from tasks.unit_task(unit, options)


def extract_local(spark: SparkSession, units: RDD[Unit], options: tasks.AuditOptions) -> DataFrame:
    """Folders of a local or mounted file system (`local.Unit`s) -> records: each task lists and scans
    its folders itself (`tasks.unit_task`: links never followed, special files never opened), so
    no file content crosses the JVM. One task per partition of `units`, as the job partitioned it.

    `units` is a plain RDD (`parallelize`), not a DataFrame: a DataFrame's `.rdd` adds a Python
    conversion stage in front of every task, which measured a quarter to a half slower here."""
    return _records(spark, units.mapPartitions(lambda part: _unit_partition(part, options)))


def missing_repo_records(missing: DataFrame) -> DataFrame:
    """(repo, uri) of repos whose path does not exist -> one failed file record each."""
    payload = F.to_json(
        F.struct(
            F.lit(".").alias("path"),
            F.lit("failed").alias("status"),
            F.concat(F.lit("repository path does not exist: "), F.col("uri")).alias("reason"),
            F.lit("").alias("extractor"),
            F.lit(0).cast("long").alias("size"),
        )
    )
    return missing.select(
        "repo",
        F.lit("file").alias("kind"),
        F.lit(".").alias("key"),
        payload.alias("payload"),
        F.lit(None).cast(FILE_LIST).alias("files"),
    )


# --- inventory outputs -----------------------------------------------------------------------------


def _inventory(uri: str, lines: list[str]) -> list[dict[str, Any]]:
    name = repo_of_jsonl(uri)
    out = tasks.inventory_task(name, lines)
    failed = [r for r in out if r["kind"] == "problem"]
    status = FileStatus.FAILED if failed else FileStatus.PARSED
    reason = f"{len(failed)} unreadable line(s)" if failed else ""
    out.append(tasks.file_row(name, FileRecord(path=uri, status=status, reason=reason, extractor="inventory-jsonl")))
    return out


def inventory_records(lines: DataFrame) -> DataFrame:
    """Text lines (value, file_path) of jsonl inventory outputs -> consumer records, one task per file."""
    by_file = lines.rdd.map(lambda r: (r.file_path, r.value)).groupByKey()
    return _records(lines.sparkSession, by_file.flatMap(lambda kv: _inventory(kv[0], list(kv[1]))))


# --- tables ----------------------------------------------------------------------------------------


def table(records: DataFrame, kind: str, schema: str) -> DataFrame:
    """The records of one kind as a typed table: `repo` plus the payload's fields."""
    parsed = F.from_json("payload", schema)
    return records.where(F.col("kind") == kind).select("repo", parsed.alias("p")).select("repo", "p.*")


def files_table(records: DataFrame) -> DataFrame:
    """The `files` table: single file records plus the per-repo lists (`tasks.files_row`) exploded."""
    listed = records.where(F.col("kind") == "files").select("repo", F.explode("files").alias("p")).select("repo", "p.*")
    return table(records, "file", FILES).unionByName(listed)


def column_names(schema: str) -> list[str]:
    """The column names of a DDL schema string ("name type, name type, ...")."""
    return [c.strip().split(" ")[0] for c in schema.split(", ")]


HINT_FIELDS = column_names(HINTS)[1:]  # team, owner, env_hint


def lookup(key: Column, table: Mapping[str, Sequence[str | None]], fields: Sequence[str]) -> Column:
    """`key`'s row of a small table the driver holds (key -> values of `fields`, all strings) as a
    struct column, null when the key is absent or null. The table is one JSON literal the optimizer
    folds into a map literal: no join, so no broadcast, whose Spark job would queue behind the running
    ones (a broadcast of even a local relation is a job of its own) and hold up the planning thread."""
    text = json.dumps({k: dict(zip(fields, v, strict=True)) for k, v in table.items()}, sort_keys=True)
    schema = "map<string,struct<" + ",".join(f"{f}:string" for f in fields) + ">>"
    return F.try_element_at(F.from_json(F.lit(text), schema), key)


def with_hints(df: DataFrame, hints: Mapping[str, Sequence[str | None]], env: bool = True) -> DataFrame:
    """Add the inventory's team / owner (and, with `env`, environment) hint of each row's repo (empty
    when none; `hints`: repo -> HINT_FIELDS' values), as a left join on `repo` lays the columns out:
    `repo` first, then the other columns, then the hints."""
    hint = lookup(F.col("repo"), hints, HINT_FIELDS)
    added = [F.coalesce(hint[n], F.lit("")).alias(n) for n in HINT_FIELDS[: 3 if env else 2]]
    return df.select(F.col("repo"), *[F.col(f"`{c}`") for c in df.columns if c != "repo"], *added)


_SUB_COLS = column_names(SUBSCRIPTIONS)


def _subscription_rows(js: str, env: str | None) -> list[tuple[Any, ...]]:
    consumer = tasks.with_hint(Consumer.model_validate_json(js), env)
    rows = subscription_rows([consumer])
    for row in rows:
        row["group"] = group_name(consumer)  # namespace%group, the key of every group-level table
        row["resolution"] = {k: str(v) for k, v in (row.get("resolution") or {}).items()}
        row["unresolved"] = {k: str(v) for k, v in (row.get("unresolved") or {}).items()}
    return [tuple(row.get(c) for c in _SUB_COLS) for row in rows]


def subscriptions(consumers: DataFrame) -> DataFrame:
    """One row per declared subscription, with exactly the keys of `subguard inventory --format jsonl`."""
    rows = consumers.select("json", "env_hint").rdd.flatMap(lambda r: _subscription_rows(r.json, r.env_hint))
    return consumers.sparkSession.createDataFrame(rows, SUBSCRIPTIONS)


def with_owners(df: DataFrame, files: Mapping[str, tuple[str, str]]) -> DataFrame:
    """Add `codeowners`: the owners the repository's CODEOWNERS file (`files`: repo -> (path, text))
    gives each row's `path`; a row whose inventory names no team gets them as its `team`."""
    if not files:
        return df.withColumn("codeowners", F.array().cast("array<string>"))
    known = dict(files)

    def resolve(repo: str | None, path: str | None) -> list[str]:
        entry = known.get(repo or "")
        return list(codeowners.parsed(*entry).owners(path)) if entry is not None and path else []

    owned = df.withColumn("codeowners", F.udf(resolve, "array<string>", useArrow=False)("repo", "path"))
    return owned.withColumn(
        "team", F.when(F.col("team") == "", F.array_join("codeowners", " ")).otherwise(F.col("team"))
    )


def effective_environment(consumers: DataFrame) -> DataFrame:
    return consumers.withColumn(
        "environment", F.when(F.col("environment") == "", F.col("env_hint")).otherwise(F.col("environment"))
    )


# --- per group -------------------------------------------------------------------------------------


def _judge(
    group: str, members: Iterable[Row], waived: Iterable[str], options: tasks.AuditOptions
) -> list[dict[str, Any]]:
    pairs = [(m.json, m.env_hint or None) for m in members]
    return tasks.group_task(group, pairs, list(waived), options) if pairs else []


def judge_groups(consumers: DataFrame, waivers: DataFrame, options: tasks.AuditOptions) -> DataFrame:
    """One task per consumer group: `tasks.group_task` on every member -> findings + impact records.

    `waivers` are the inline-waiver records (repo, payload) of the per-repo tasks; each group task
    gets those of its member repos. Members and waivers are gathered per group in the JVM (no
    Python shuffle); the group task puts the members in order itself.
    """
    known = consumers.where(F.col("group").isNotNull() & (F.col("group") != ""))
    members = known.groupBy("group").agg(F.collect_list(F.struct("json", "env_hint")).alias("members"))
    waived = (
        known.select("group", "repo")
        .distinct()
        .join(waivers.select("repo", "payload"), "repo")
        .groupBy("group")
        .agg(F.sort_array(F.collect_list("payload")).alias("waived"))
    )
    joined = members.join(waived, "group", "left")
    rows = joined.rdd.flatMap(lambda r: _judge(r.group, r.members, r.waived or [], options))
    return _records(consumers.sparkSession, rows)


def impacts(group_records: DataFrame) -> DataFrame:
    """(group, impact JSON) from the group tasks' records."""
    rows = group_records.where(F.col("kind") == "group")
    return rows.select(F.col("key").alias("group"), F.get_json_object("payload", "$.impact").alias("impact"))


def groups(subs: DataFrame, findings: DataFrame, impact: DataFrame) -> DataFrame:
    """The group map across repos: members side by side, finding counts, simulated impact."""
    member = F.struct(
        "repo",
        "team",
        "service",
        "environment",
        "client",
        "message_model",
        "path",
        "line",
        "topic",
        "expression",
        "expression_type",
    )
    known = subs.where(F.col("group").isNotNull())
    # distinct counts as the sizes of sets: two `countDistinct`s over different columns make Spark
    # expand every row once per distinct set and aggregate twice (a shuffle more, in series)
    pair = F.when(F.col("consumer_id").isNotNull() & F.col("repo").isNotNull(), F.struct("consumer_id", "repo"))
    base = known.groupBy("group").agg(
        F.size(F.collect_set(pair)).cast("long").alias("consumers"),
        F.size(F.collect_set("repo")).cast("long").alias("repos_count"),
        F.sort_array(F.collect_set("repo")).alias("repos"),
        F.sort_array(F.collect_set("team")).alias("teams"),
        F.sort_array(F.collect_set("service")).alias("services"),
        F.sort_array(F.collect_set("environment")).alias("environments"),
        F.sort_array(F.collect_set("topic")).alias("topics"),
        F.sort_array(F.collect_list(member)).alias("members"),
    )
    rank = F.when(F.col("severity") == "error", 3).when(F.col("severity") == "warning", 2).otherwise(1)
    counted = (
        findings.where(F.col("group").isNotNull() & (F.col("group") != "") & F.col("suppressed").isNull())
        .groupBy("group")
        .agg(
            F.count("*").alias("findings"),
            F.sum(F.when(F.col("severity") == "error", 1).otherwise(0)).alias("errors"),
            F.sum(F.when(F.col("severity") == "warning", 1).otherwise(0)).alias("warnings"),
            F.max(rank).alias("worst"),
            F.sort_array(F.collect_set("rule")).alias("rules"),
        )
    )
    out = base.join(counted, "group", "left").join(impact, "group", "left")
    return out.fillna(0, subset=["findings", "errors", "warnings", "worst"]).withColumn(
        "rules", F.coalesce(F.col("rules"), F.array().cast("array<string>"))
    )


def worst_first_order() -> list[Column]:
    """The order groups are reported in: worst severity, then errors, repositories, findings; by
    name last (a group is one row, so the order is total)."""
    return [
        F.col("worst").desc(),
        F.col("errors").desc(),
        F.col("repos_count").desc(),
        F.col("findings").desc(),
        F.col("group"),
    ]


def worst_first_key(group: Mapping[str, Any]) -> tuple[Any, ...]:
    """`worst_first_order` as a sort key of a collected group row (names compared as Spark compares
    strings: by their UTF-8 bytes)."""
    return (
        -int(group["worst"]),
        -int(group["errors"]),
        -int(group["repos_count"]),
        -int(group["findings"]),
        str(group["group"]).encode("utf-8", "surrogatepass"),
    )


def worst_first(groups_df: DataFrame) -> DataFrame:
    return groups_df.orderBy(*worst_first_order())
