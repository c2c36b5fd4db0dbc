"""The driver-held tables looked up instead of joined (`transforms.lookup`): the same columns, types,
nullability, rows and order as the broadcast joins they replaced, and no Spark job to plan them."""

from __future__ import annotations

from typing import Any

HINTS = {"a": ("team-a", "owner-a", "prod"), "b": ("owner-b", "owner-b", None), "c": ("", None, "dev")}
ROWS = [("a", "x", 1), (None, "y", 2), ("zz", "z", 3), ("b", "w", 4), ("c", "v", 5), ("a", "u", 6)]


def _joined(df: Any, hints: dict[str, tuple[str | None, ...]], env: bool) -> Any:
    """`transforms.with_hints` as it was: the hints a relation, broadcast and left-joined, then filled."""
    from pyspark.sql import functions as F

    from subguard.audit import transforms as T

    frame = df.sparkSession.createDataFrame([(k, *v) for k, v in hints.items()], T.HINTS)
    if not env:
        frame = frame.drop("env_hint")
    joined = df.join(F.broadcast(frame), "repo", "left")
    return joined.fillna("", subset=[c for c in ("team", "owner", "env_hint") if c in joined.columns])


def test_with_hints_equals_the_join(spark: Any) -> None:
    from subguard.audit import transforms as T

    df = spark.createDataFrame(ROWS, "repo string, path string, line int").select("path", "repo", "line")
    for hints in (HINTS, {}):
        for env in (True, False):
            now, before = T.with_hints(df, hints, env), _joined(df, hints, env)
            assert now.schema == before.schema  # names, order, types and nullability
            assert now.collect() == before.collect()
    got = {r["line"]: (r["team"], r["owner"], r["env_hint"]) for r in T.with_hints(df, HINTS).collect()}
    assert got == {
        1: ("team-a", "owner-a", "prod"),
        2: ("", "", ""),
        3: ("", "", ""),
        4: ("owner-b", "owner-b", ""),
        5: ("", "", "dev"),
        6: ("team-a", "owner-a", "prod"),
    }


def test_lookup_is_folded_into_the_plan(spark: Any) -> None:
    """The table is a literal of the plan: the query runs one job (a broadcast join ran two)."""
    from pyspark.sql import functions as F

    from subguard.audit import transforms as T

    df = spark.createDataFrame(ROWS, "repo string, path string, line int")
    hint = T.lookup(F.col("repo"), HINTS, T.HINT_FIELDS)
    looked = df.select("line", hint["team"].alias("team"))
    plan = looked._jdf.queryExecution().optimizedPlan().toString()
    assert "from_json" not in plan and "Join" not in plan
    tracker = spark.sparkContext.statusTracker()
    spark.sparkContext.setJobGroup("lookup-test", "one query")
    try:
        rows = looked.collect()
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    assert [r["team"] for r in rows] == ["team-a", None, None, "owner-b", "", "team-a"]
    assert len(tracker.getJobIdsForGroup("lookup-test")) == 1


def test_records_type_is_the_ddl(spark: Any) -> None:
    """The extraction's schema, built without the JVM's parser, is the RECORDS DDL's."""
    from subguard.audit import transforms as T

    assert spark.createDataFrame([], T.RECORDS).schema == T.RECORDS_TYPE
