"""What two audit outputs must agree on to be "the same result": findings.json (findings and
diagnostics), summary.json without the run's own facts (time, sources, date, history), and the rows
of the Parquet tables (read with pyarrow, in a canonical order)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RUN_FACTS = ("seconds", "sources", "written", "changes", "history", "incremental", "timings")
TABLES = ("files", "consumers", "subscriptions", "deployments", "groups", "findings")


def _canonical(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def table_rows(out: Path, name: str) -> list[str]:
    import pyarrow.parquet as pq

    folder = out / name
    parts = sorted(folder.glob("*.parquet"))
    rows: list[dict[str, Any]] = []
    for part in parts:
        rows += pq.read_table(part).to_pylist()
    return _canonical(rows)


def result(out: Path, tables: tuple[str, ...] = TABLES) -> dict[str, Any]:
    findings = json.loads((out / "findings.json").read_text())
    summary = json.loads((out / "summary.json").read_text())
    for key in RUN_FACTS:
        summary.pop(key, None)
    return {
        "findings": _canonical(findings["findings"]),
        "diagnostics": _canonical(findings["diagnostics"]),
        "summary": summary,
        **{f"table {name}": table_rows(out, name) for name in tables},
    }


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The keys whose values differ, with the first differing item of each: an assertion message."""
    out = []
    for key in sorted(set(a) | set(b)):
        if a.get(key) == b.get(key):
            continue
        left, right = a.get(key), b.get(key)
        if isinstance(left, list) and isinstance(right, list):
            only_a = [x for x in left if x not in right][:2]
            only_b = [x for x in right if x not in left][:2]
            out.append(f"{key}: only in the first {only_a}, only in the second {only_b}")
        else:
            out.append(f"{key}: {str(left)[:600]} != {str(right)[:600]}")
    return out


SMALL_TABLES = ("consumers", "subscriptions", "deployments", "groups", "findings", "state/groups")


def spark_schemas(out: Path, tables: tuple[str, ...] = SMALL_TABLES) -> dict[str, str]:
    """The Spark schema (JSON) each small table's Parquet file carries: what Spark reads it as."""
    import pyarrow.parquet as pq

    key = b"org.apache.spark.sql.parquet.row.metadata"
    return {
        name: (pq.read_schema(part).metadata or {}).get(key, b"").decode()
        for name in tables
        for part in sorted((out / name).glob("*.parquet"))
    }


def org_map(out: Path) -> dict[str, list[str]]:
    """The org map's rows (org-map.sqlite), a subscription with its consumer's row for the consumer's
    id (numbered in the order the consumers were collected), the meta rows but the run's own."""
    import sqlite3

    conn = sqlite3.connect(out / "org-map.sqlite")
    try:
        consumers = {r[0]: list(r[1:]) for r in conn.execute("SELECT * FROM consumers")}
        subs = [[consumers[r[0]], *r[1:]] for r in conn.execute("SELECT * FROM subscriptions")]
        tables = {
            "repos": list(conn.execute("SELECT * FROM repos")),
            "consumers": list(consumers.values()),
            "subscriptions": subs,
            "waivers": list(conn.execute("SELECT * FROM waivers")),
            "meta": list(conn.execute("SELECT * FROM meta WHERE key NOT IN ('written', 'sources')")),
        }
    finally:
        conn.close()
    return {name: _canonical([{"row": list(r)} for r in rows]) for name, rows in tables.items()}
