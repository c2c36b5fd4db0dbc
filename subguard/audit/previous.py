"""A previous audit's output, read for `subguard audit --compare PREV_OUT`: its findings (by
fingerprint), when it ran, and the history of runs it carries. Readers only; nothing is written.

The findings come from its Parquet `findings` table (they carry the team), else from its
findings.json (findings and diagnostics). A local output is read with plain file I/O (and pyarrow),
any other file system through Spark.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession

from subguard.audit import output as outdir
from subguard.audit.sources import SourceError
from subguard.audit.summary import CHANGE_KEYS, HISTORY


@dataclass(frozen=True)
class Previous:
    out: str
    written: str
    findings: list[dict[str, Any]] = field(default_factory=list)
    history: list[str] = field(default_factory=list)
    summary: dict[str, Any] | None = None


def _text(spark: SparkSession, out: str, rel: str) -> str | None:
    path = outdir.local_path(out)
    if path is not None:
        try:
            with open(os.path.join(path, rel), encoding="utf-8", errors="replace") as fh:
                return fh.read()
        except OSError:
            return None
    try:
        rows = spark.read.text(f"{out.rstrip('/')}/{rel}", wholetext=True).collect()
    except AnalysisException:
        return None
    return str(rows[0][0]) if rows else ""


def _json(text: str | None) -> Any:
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def _from_json(doc: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    if not isinstance(doc, dict):
        return rows
    for f in [*(doc.get("findings") or []), *(doc.get("diagnostics") or [])]:
        if isinstance(f, dict) and f.get("fingerprint"):
            rows.append({**{k: f.get(k) for k in CHANGE_KEYS}, "team": "", "suppressed": f.get("suppressed")})
    return rows


def _from_local_parquet(path: str) -> list[dict[str, Any]] | None:
    """The findings table of a local output, read with pyarrow: no Spark job (a schema inference and a
    collect) beside the run's own first jobs."""
    import pyarrow.parquet as pq

    try:
        dataset = pq.ParquetDataset(os.path.join(path, "findings"))
        cols = [c for c in (*CHANGE_KEYS, "suppressed") if c in dataset.schema.names]
        if "fingerprint" not in cols:
            return None
        return list(dataset.read(columns=cols).to_pylist())
    except (OSError, ValueError):
        return None


def _from_parquet(spark: SparkSession, out: str) -> list[dict[str, Any]] | None:
    path = outdir.local_path(out)
    if path is not None:
        return _from_local_parquet(path)
    try:
        df = spark.read.parquet(f"{out.rstrip('/')}/findings")
    except AnalysisException:
        return None
    cols = [c for c in (*CHANGE_KEYS, "suppressed") if c in df.columns]
    if "fingerprint" not in cols:
        return None
    return [r.asDict() for r in df.select(*cols).collect()]


def _summary(spark: SparkSession, out: str) -> dict[str, Any]:
    summary = _json(_text(spark, out, "summary.json"))
    if not isinstance(summary, dict):
        raise SourceError(f"--compare {out}: not an audit output (no readable summary.json)")
    return summary


def check(spark: SparkSession, out: str) -> None:
    """Raise SourceError unless `out` is an audit output (its summary.json is readable): the run
    fails before any work, while `read` may then run beside it."""
    _summary(spark, out.rstrip("/") or "/")


def read(spark: SparkSession, out: str) -> Previous:
    """The previous output at `out`; a folder without summary.json is no audit output (SourceError)."""
    out = out.rstrip("/") or "/"
    summary = _summary(spark, out)
    manifest = _json(_text(spark, out, outdir.MANIFEST)) or {}
    written = str(summary.get("written") or (manifest.get("written") if isinstance(manifest, dict) else "") or "")
    findings = _from_parquet(spark, out)
    if findings is None:
        findings = _from_json(_json(_text(spark, out, "findings.json")))
    history = [line for line in (_text(spark, out, HISTORY) or "").splitlines() if line.strip()]
    return Previous(out, written, findings, history, summary)
