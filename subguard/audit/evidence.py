"""Runtime evidence in the audit: Spark reads the logs and mqadmin outputs, the evidence package's own
functions run inside the tasks (nothing of the classification is re-implemented in Spark SQL).

    spark.read.text(paths)  --evidence_events-->  events (one row per event, `events.SCHEMA` + file order)
    events + consumers + static findings  --evidence_findings-->  finding rows (`repo` + `transforms.FINDINGS`)

`evidence_events` puts every file's lines back in file order in one task (a record's wrapped or
stack-trace lines belong to the header line before them, and an mqadmin output is a table) and runs
`reader.EvidenceFile.read` on them: the CLI's reader, fed by Spark instead of `open`. Spark's text
source decompresses `.gz` itself. `evidence_findings` streams each consumer group's events, in the
order the CLI reads them, into a `Ledger` in one task, classifies it, and correlates it with the
declared consumers of that group only (a join: the inventory is never collected).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from itertools import groupby
from typing import Any
from urllib.parse import unquote

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from subguard.audit import tasks
from subguard.audit import transforms as T
from subguard.core.config import Config
from subguard.core.model import Consumer, Finding
from subguard.evidence.classify import classify_groups
from subguard.evidence.correlate import Declared, enrich, live_vs_declared
from subguard.evidence.events import FIELD_NAMES, SCHEMA, from_dict
from subguard.evidence.ledger import Ledger
from subguard.evidence.reader import EvidenceFile
from subguard.evidence.rules import OFFSET_MOVED
from subguard.rules.judge import RuleSet
from subguard.rules.policy import builtin

Source = tuple[str, str]  # (qualified URI of a file or folder as given, its display path)

EVENT_STRUCT = ", ".join(f"`{name}` {kind}" for name, kind in SCHEMA)
EVENTS = f"{EVENT_STRUCT}, file_index int, file_uri string"
FINDING_ROWS = f"repo string, {T.FINDINGS}"
_FINDING_COLS = T.column_names(FINDING_ROWS)
_DECLARED, _LINKED, _EVENT = 0, 1, 2  # kinds of rows in a group's stream, in the order a task needs them


# --- files -> events -------------------------------------------------------------------------------


def locate(uri: str, sources: Sequence[Source]) -> tuple[int, str]:
    """(index of the source `uri` came from, display path) - the deepest source that holds it."""
    best = -1
    for i, (base, _) in enumerate(sources):
        root = base.rstrip("/")
        if (uri == base or uri.startswith(root + "/")) and (best < 0 or len(root) > len(sources[best][0].rstrip("/"))):
            best = i
    if best < 0:
        return len(sources), uri
    base, shown = sources[best]
    rest = uri[len(base.rstrip("/")) :].lstrip("/")
    return best, f"{shown.rstrip('/')}/{rest}" if rest else shown


def _file_events(rows: Iterable[Row], sources: Sequence[Source]) -> Iterator[tuple[Any, ...]]:
    """Rows of whole files (sorted by file, split, read order) -> event tuples (`EVENTS`)."""
    for uri, lines in groupby(rows, key=lambda r: str(r.file_uri)):
        path = unquote(uri)
        index, shown = locate(path, sources)
        reader = EvidenceFile(path, shown)
        for event in reader.read((str(r.value) for r in lines), compressed=path.endswith(".gz")):
            values = event.to_dict()
            yield (*(values[name] for name in FIELD_NAMES), index, uri)


def evidence_events(lines: DataFrame, sources: Sequence[Source]) -> DataFrame:
    """Spark `text` source rows (`value`, hidden `_metadata`) of evidence files -> one row per event.

    `lines` must be the text source's DataFrame itself (a projection of it at most): the position of
    a line is its split's start plus its read order within the split (`monotonically_increasing_id`
    counts the rows of a partition in the order the split is read, and a split is never divided
    between partitions), so it is taken before any shuffle. Each file then goes to one task, sorted
    back into file order; line numbers are counted there. `sources` are the evidence arguments
    (qualified URI, display path): the display path of each file and its place in the reading order.
    """
    placed = lines.select(
        F.col("_metadata.file_path").alias("file_uri"),
        F.col("_metadata.file_block_start").alias("block"),
        F.monotonically_increasing_id().alias("seq"),
        F.col("value"),
    )
    ordered = placed.repartition("file_uri").sortWithinPartitions("file_uri", "block", "seq")
    known = tuple(sources)
    rows = ordered.rdd.mapPartitions(lambda part: _file_events(part, known))
    return lines.sparkSession.createDataFrame(rows, EVENTS)


# --- events -> findings per group ------------------------------------------------------------------


def finding_values(f: Finding, rules: RuleSet) -> tuple[Any, ...]:
    """A finding as a row of `FINDING_ROWS`: `tasks.finding_row`'s payload, `repo` its first repo."""
    payload = json.loads(tasks.finding_row(f.location.repo, f, rules.scope(f.rule))["payload"])
    shaped = {**payload, "repo": payload["repos"][0] if payload["repos"] else ""}
    return tuple(shaped.get(c) for c in _FINDING_COLS)


def _group_findings(rows: Iterable[Row]) -> Iterator[tuple[Any, ...]]:
    """Rows of whole groups (declared consumers, linked findings, then events in reading order) ->
    finding rows: exactly `analyze`'s fold, classification and correlation, one group at a time."""
    rules: RuleSet | None = None
    for _, items in groupby(rows, key=lambda r: str(r.target)):
        ledger = Ledger()
        declared: list[Declared] = []
        linked: list[Finding] = []
        correlate = False
        for r in items:
            correlate = bool(r.correlate)
            if r.k == _DECLARED:
                declared.append(Declared(str(r.repo or ""), Consumer.model_validate_json(r.json)))
            elif r.k == _LINKED:
                linked.append(Finding.model_validate_json(r.json))
            else:
                ledger.add(from_dict(r.event.asDict()))
        groups = ledger.resolve()
        found = classify_groups(groups)
        if correlate:
            found = enrich(found, groups, declared, linked) + live_vs_declared(groups, declared)
        if found and rules is None:
            rules = tasks._policies(Config())  # loaded once per process (cached)
        for f in found:
            yield finding_values(f, rules or RuleSet((), {}))


def with_targets(events: DataFrame) -> DataFrame:
    """Add `target`, the group whose ledger takes the event: its own group, or - for the events that
    name none (old client wordings: code 25, rebalance lines) - the only group its file names, else
    "" (the `Ledger.resolve` rule, decided here so that each group can be folded on its own)."""
    owners = (
        events.where(F.col("group") != "")
        .groupBy("path")
        .agg(F.countDistinct("group").alias("_groups"), F.min("group").alias("_owner"))
    )
    target = (
        F.when(F.col("group") != "", F.col("group")).when(F.col("_groups") == 1, F.col("_owner")).otherwise(F.lit(""))
    )
    return events.join(owners, "path", "left").withColumn("target", target).drop("_groups", "_owner")


def evidence_findings(events: DataFrame, consumers: DataFrame, static_findings: DataFrame) -> DataFrame:
    """Events (`evidence_events`) -> SG501-SG509 finding rows (`FINDING_ROWS`), one task per group.

    `consumers` is the audit's consumer table (`group`, `repo`, `json`), `static_findings` its finding
    table (`rule`, `group`, `json`): only the rows of groups the evidence names are joined in. As in
    `analyze`, the live-vs-declared correlation runs when some group of the evidence is declared.
    """
    targeted = with_targets(events)
    named = targeted.where(F.col("target") != "").select("target").distinct()
    declared = (
        consumers.where(F.col("group").isNotNull())
        .select("group", "repo", "json")
        .join(named, F.col("group") == F.col("target"))
        .select("target", "repo", "json")
    )
    linked = (
        static_findings.where(F.col("rule").isin(*builtin(OFFSET_MOVED).links))
        .select("group", "json")
        .join(named, F.col("group") == F.col("target"))
        .select("target", F.lit(None).cast("string").alias("repo"), "json")
    )
    none_event = F.lit(None).cast(f"struct<{EVENT_STRUCT}>")
    no_int, no_str = F.lit(None).cast("int"), F.lit(None).cast("string")
    side = [F.col("target"), F.col("repo"), F.col("json")]
    stream = (
        declared.select(
            F.lit(_DECLARED).alias("k"),
            *side,
            no_int.alias("file_index"),
            no_str.alias("file_uri"),
            no_int.alias("line"),
            none_event.alias("event"),
        )
        .unionByName(
            linked.select(
                F.lit(_LINKED).alias("k"),
                *side,
                no_int.alias("file_index"),
                no_str.alias("file_uri"),
                no_int.alias("line"),
                none_event.alias("event"),
            )
        )
        .unionByName(
            targeted.select(
                F.lit(_EVENT).alias("k"),
                F.col("target"),
                no_str.alias("repo"),
                no_str.alias("json"),
                "file_index",
                "file_uri",
                "line",
                F.struct(*[F.col(name) for name, _ in SCHEMA]).alias("event"),
            )
        )
    )
    flag = declared.agg((F.count(F.lit(1)) > 0).alias("correlate"))
    ordered = (
        stream.crossJoin(F.broadcast(flag))
        .repartition("target")
        .sortWithinPartitions("target", "k", "file_index", "file_uri", "line", "repo", "json")
    )
    rows = ordered.rdd.mapPartitions(_group_findings)
    return events.sparkSession.createDataFrame(rows, FINDING_ROWS)
