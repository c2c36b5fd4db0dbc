"""A `--since` run's small tables (consumers, subscriptions, deployments, findings, groups) and
state/groups as the previous output's rows where nothing they rest on changed, plus the rows
computed now for the rest: each table costs in proportion to the change, not to the organisation.

Which previous rows stand (`Carry.keep`), with K the repositories reused on the driver's stamps
(`prestamp`: clones at their inventory's commit; their records never reach Spark, the driver reads
them, `reused_records`) whose inventory hints are unchanged, and T the groups whose input may have
changed (`incremental.touched_groups`):

- consumers, subscriptions, deployments: a row of a repository in K (its records, hints and
  CODEOWNERS file are the previous ones);
- findings: a repository task's finding of a repository in K; a group task's finding (scope `group`)
  whose fingerprint is no previous finding of a group in T (T also holds every group with a group
  finding of a repository not in K, and every group sharing a fingerprint with one in T, `plan`);
- state/groups: a row of a group not in T (its records are the previous ones);
- groups: a row of a group not in R: T, the empty name, and every group of a row not kept above
  (previous or new; a group finding computed now that names another group widens R, `job._regrouped`),
  so that each group whose members, findings or impact may differ is computed again from all of its
  rows.

The rows computed now are exactly the others (from the records Spark holds: those of the
repositories not in K; and the group tasks of T), so each table equals a full audit's. The previous
tables are read with pyarrow on the driver (a few MB for a million files); a row kept is written as
it was read, a row computed now cast to the previous table's schema, which a full audit of the same
code wrote.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from subguard.audit import arrowtables, prestamp
from subguard.audit import transforms as T
from subguard.audit.arrowtables import SPARK_SCHEMA_KEY
from subguard.audit.output import local_path

BY_REPO = ("consumers", "subscriptions", "deployments")
STATE_GROUPS = "state/groups"  # `incremental.GROUPS`
TABLES = (*BY_REPO, "findings", "groups", STATE_GROUPS)
GROUP_SCOPE = "group"  # a group task's findings (`tasks.group_task`); a repository task's have another scope
FINDING_COUNTS = ("group", "severity", "suppressed", "rule")  # what the groups table reads of the findings


def read(uri: str) -> dict[str, pa.Table] | None:
    """The previous output's small tables and state/groups (a local or mounted output), None when one
    is missing or unreadable: then every table is computed whole."""
    path = local_path(uri.rstrip("/") or "/")
    if path is None:
        return None
    try:
        return {name: pq.read_table(os.path.join(path, name)) for name in TABLES}
    except (OSError, ValueError, pa.ArrowException):
        return None


def _in(values: pa.ChunkedArray, names: Iterable[str]) -> pa.ChunkedArray:
    """Whether each value is one of `names` (a null never is)."""
    found = pc.is_in(values, value_set=pa.array(sorted(names), pa.string()))
    return pc.fill_null(found, False)


def _names(values: pa.ChunkedArray) -> set[str]:
    return {v for v in pc.unique(values).to_pylist() if v is not None}


@dataclass(frozen=True)
class Carry:
    """What a `--since` run keeps of the previous tables (see the module docs)."""

    uri: str
    kept: frozenset[str]  # K: repositories whose previous rows stand
    touched: frozenset[str]  # T: groups judged or compared again
    regrouped: frozenset[str]  # R: groups whose groups-table row is computed again
    previous: Mapping[str, pa.Table] = field(repr=False)
    dropped: frozenset[str] = frozenset()  # the fingerprints of the previous findings of the groups in T

    def keep(self, name: str) -> pa.ChunkedArray:
        """The mask of the previous rows of table `name` that stand."""
        t = self.previous[name]
        if name in BY_REPO:
            return _in(t["repo"], self.kept)
        if name == "findings":  # a repository task's by repository, a group task's by its fingerprint
            own = pc.fill_null(pc.not_equal(t["scope"], GROUP_SCOPE), True)
            grouped = pc.invert(_in(t["fingerprint"], self.dropped))
            return pc.if_else(own, _in(t["repo"], self.kept), grouped)
        if name == "groups":
            return pc.invert(_in(t["group"], self.regrouped))
        return pc.and_(pc.is_valid(t["group"]), pc.invert(_in(t["group"], self.touched)))  # state/groups

    def merged(self, name: str, fresh: pa.Table, extra: Mapping[str, Any] | None = None) -> pa.Table:
        """The previous rows of `name` that stand (with `extra` columns, e.g. state/groups' `reused`,
        inserted where `fresh` has them), then `fresh`, in the previous table's schema."""
        kept = self.previous[name].filter(self.keep(name)).replace_schema_metadata(None)
        for column, value in (extra or {}).items():
            kept = kept.add_column(fresh.column_names.index(column), column, pa.repeat(value, kept.num_rows))
        schema = kept.schema
        fresh = fresh.select(schema.names)
        try:
            cast = fresh.cast(schema)
        except (pa.ArrowException, ValueError):  # nested nullability the cast refuses: row by row
            cast = pa.Table.from_pylist(fresh.to_pylist(), schema=schema)
        return pa.concat_tables([kept, cast])

    def spark_schema(self, name: str) -> str:
        """The Spark schema (JSON) the previous table was written with: a full audit's."""
        meta = self.previous[name].schema.metadata or {}
        return bytes(meta[SPARK_SCHEMA_KEY]).decode()

    def in_touched(self, column: str = "group") -> Column:
        return F.col(column).isNotNull() & prestamp.among(column, self.touched)

    def previous_rows(self, spark: SparkSession, name: str, schema: Any) -> DataFrame:
        """The previous rows of `name` (consumers, subscriptions) that stand and belong to a group in R,
        as a Spark frame (for the group tasks and the groups table); the filter names the few
        repositories such rows have (each of them in K: every row of theirs stands)."""
        assert name in BY_REPO
        t = self.previous[name]
        rows = t.filter(pc.and_(self.keep(name), _in(t["group"], self.regrouped)))
        repos = frozenset(_names(rows["repo"]))
        path = f"{self.uri.rstrip('/')}/{name}"
        groups = prestamp.among("group", frozenset(_names(rows["group"])))
        return spark.read.schema(schema).parquet(path).where(groups & prestamp.among("repo", repos))

    def previous_all(self, spark: SparkSession, name: str, schema: Any) -> DataFrame:
        """Every previous row of `name` (consumers, subscriptions, deployments) that stands, as a Spark
        frame (the org map reads every consumer): the filter names the smaller side of the table's
        repositories, those in K or the others."""
        assert name in BY_REPO
        repos = _names(self.previous[name]["repo"])
        inside, others = repos & self.kept, repos - self.kept
        path = f"{self.uri.rstrip('/')}/{name}"
        rows = spark.read.schema(schema).parquet(path)
        if len(others) < len(inside):
            return rows.where(F.col("repo").isNotNull() & ~prestamp.among("repo", frozenset(others)))
        return rows.where(prestamp.among("repo", frozenset(inside)))

    def previous_groups(self, spark: SparkSession, groups: frozenset[str]) -> DataFrame:
        """The previous state/groups records of `groups` (`incremental.GROUP_RECORDS` without `reused`)
        as a relation the driver made: no scan of state/groups."""
        t = self.previous[STATE_GROUPS]
        names = [n for n in t.column_names if n != "files"]
        rows = t.filter(_in(t["group"], groups))
        frame = arrowtables.text_frame(
            spark,
            list(zip(*(rows[n].to_pylist() for n in names), strict=True)),
            ", ".join(f"{n} string" for n in names),
        )
        return frame.withColumn("files", F.lit(None).cast(T.FILE_LIST))

    def idle(self, records: Iterable[Mapping[str, Any]]) -> frozenset[str]:
        """The tables with no row to compute now: no record of their kind outside K (`records`: the
        run's records without file rows, collected)."""
        kinds = {r["kind"] for r in records if r["repo"] is None or r["repo"] not in self.kept}
        by = (("consumers", "consumer"), ("subscriptions", "consumer"), ("deployments", "deployment"))
        return frozenset(name for name, kind in by if kind not in kinds)

    def empty(self, name: str) -> pa.Table:
        """No rows, in the previous table's schema: the rows computed now of a table the run knows has
        none (no record of its kind outside K), without a Spark job."""
        return self.previous[name].schema.empty_table()

    def previous_findings(self, spark: SparkSession) -> DataFrame:
        """The columns of the previous findings that stand and name a group in R which the groups table
        counts (`transforms.groups`), as a relation the driver made."""
        t = self.previous["findings"]
        rows = t.filter(pc.and_(self.keep("findings"), _in(t["group"], self.regrouped)))
        names = list(FINDING_COUNTS)
        return arrowtables.text_frame(
            spark,
            list(zip(*(rows[n].to_pylist() for n in names), strict=True)),
            ", ".join(f"{n} string" for n in names),
        )


def _payload_groups(records: Sequence[Mapping[str, Any]], kinds: tuple[str, ...], repos: frozenset[str]) -> set[str]:
    out: set[str] = set()
    for r in records:
        if r["kind"] in kinds and (r["repo"] is None or r["repo"] not in repos):
            group = json.loads(r["payload"]).get("group")
            if group is not None:
                out.add(str(group))
    return out


def reused_records(uri: str, kept: frozenset[str]) -> list[dict[str, Any]]:
    """The previous records (state/repos, no file rows) of the repositories `kept`, read on the driver
    with pyarrow, each `stamp` record doubled as the `reuse` marker its task would have emitted (as
    `prestamp.reused_records` gives them to Spark): their rows are carried, so Spark never reads them."""
    path = local_path(f"{uri.rstrip('/')}/state/repos")
    assert path is not None  # `read` read the same output
    table = pq.read_table(path, columns=["repo", "kind", "key", "payload"])
    rows = table.filter(_in(table["repo"], kept)).to_pylist()
    return [*rows, *({**r, "kind": "reuse"} for r in rows if r["kind"] == "stamp")]


def kept_repos(
    reused: Iterable[str],
    hints: Mapping[str, tuple[str | None, ...]],
    hints_before: Mapping[str, tuple[str | None, ...]],
) -> frozenset[str]:
    """K: the repositories `reused` (known to be reused before the extraction runs: the driver's stamps,
    `prestamp`) whose inventory hints (`hints` now, `hints_before` then) are unchanged."""
    return frozenset(r for r in reused if hints.get(r) == hints_before.get(r))


def plan(
    uri: str,
    previous: Mapping[str, pa.Table],
    kept: frozenset[str],
    touched: frozenset[str],
    records: Sequence[Mapping[str, Any]],
) -> Carry:
    """The carry of a `--since` run: `kept` K (`kept_repos`; every one of them reused), `touched` the
    groups `incremental.touched_groups` names, `records` the run's records without file rows
    (collected on the driver)."""
    state = previous[STATE_GROUPS]
    # a group task's finding of a repository not in K: its group is judged again (its row may differ)
    findings = state.filter(pc.equal(state["kind"], "finding"))
    touched = touched | _names(findings.filter(pc.invert(_in(findings["repo"], kept)))["group"])
    while True:  # a fingerprint of a group judged again and of another group too: both judged again
        again = _in(findings["group"], touched)
        dropped = _names(findings.filter(again)["key"])
        shared = _names(findings.filter(pc.and_(pc.invert(again), _in(findings["key"], dropped)))["group"])
        if not shared:
            break
        touched |= shared
    base = Carry(uri, kept, touched, frozenset(), previous, frozenset(dropped))
    regrouped = set(touched) | {""}
    for name in (*BY_REPO, "findings"):
        t = previous[name]
        if "group" in t.column_names:
            regrouped |= _names(t.filter(pc.invert(base.keep(name)))["group"])
    regrouped |= _payload_groups(records, ("consumer", "finding"), kept)
    return Carry(uri, kept, touched, frozenset(regrouped), previous, base.dropped)
