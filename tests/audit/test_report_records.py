"""One set of records (issue 27 item 2): every number report.html shows is the number findings.json,
summary.json and the Parquet tables hold for the same audit of the example organisation."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from subguard.audit.report_html import loss_items
from tests.audit.test_audit_compare import report_data

pytestmark = pytest.mark.slow


def test_report_findings_json_summary_and_parquet_agree(org_audit: tuple[Path, dict[str, Any]], spark: Any) -> None:
    out, _ = org_audit
    summary = json.loads((out / "summary.json").read_text())
    doc = json.loads((out / "findings.json").read_text())
    as_json = [*doc["findings"], *doc["diagnostics"]]
    table = [r.asDict() for r in spark.read.parquet(str(out / "findings")).collect()]
    groups = {r["group"]: r.asDict(recursive=True) for r in spark.read.parquet(str(out / "groups")).collect()}
    data = report_data(out)
    page = (out / "report.html").read_text()
    drawn = data["findings"]

    # the same findings, one for one
    assert (
        Counter(f["fingerprint"] for f in as_json)
        == Counter(r["fingerprint"] for r in table)
        == Counter(f["fingerprint"] for f in drawn)
    )
    by_fp = {r["fingerprint"]: r for r in table}
    for f in drawn:
        row = by_fp[f["fingerprint"]]
        assert (f["rule"], f["severity"], f["message"], f["team"]) == (
            row["rule"],
            row["severity"],
            row["message"],
            row["team"],
        )
    # the same counts, by rule, severity and team
    active_json = [f for f in as_json if not f["suppressed"]]
    active_rows = [r for r in table if not r["suppressed"]]
    active_drawn = [f for f in drawn if not f["suppressed"]]
    by_rule = {r["rule"]: r["count"] for r in summary["findings"]["by_rule"]}
    assert (
        by_rule
        == Counter(f["rule"] for f in active_json)
        == Counter(r["rule"] for r in active_rows)
        == Counter(f["rule"] for f in active_drawn)
    )
    assert summary["findings"]["by_severity"] == {
        s: sum(1 for f in active_drawn if f["severity"] == s) for s in ("error", "warning", "note")
    }
    assert (
        {r["team"]: r["count"] for r in summary["findings"]["by_team"]}
        == Counter(r["team"] or "unassigned" for r in active_rows)
        == Counter(f["team"] or "unassigned" for f in active_drawn)
    )
    for rule, n in by_rule.items():
        assert f'data-label="{rule}" data-value="{n}"' in page
    for key, value in (
        ("n-findings", summary["findings"]["active"]),
        ("n-errors", summary["findings"]["by_severity"]["error"]),
        ("n-groups", summary["totals"]["groups"]),
    ):
        assert f'id="{key}">{value}<' in page
    # one figure per group: the groups table's prediction, in the report, the summary and findings.json
    assert data["groups"]
    worst = {g["group"]: g for g in summary["worst_groups"]}
    for g in data["groups"]:
        row = groups[g["group"]]
        impact = json.loads(row["impact"]) if row["impact"] else {}
        assert (g["errors"], g["warnings"], g["findings"], g["repos_count"]) == (
            row["errors"],
            row["warnings"],
            row["findings"],
            row["repos_count"],
        )
        assert [list(x) for x in g["loss"]] == [list(x) for x in loss_items(impact)]
        assert g["description"] == (impact.get("description") or "") and g["runs"] == impact.get("runs")
        assert worst[g["group"]]["impact"] == impact
        texts = {f["impact"] for f in as_json if f["group"] == g["group"] and f["impact"]}
        assert texts <= {impact.get("description")}, g["group"]
        for i in g["items"]:
            assert drawn[i]["group"] == g["group"] and drawn[i]["scope"] == "group"
    # every finding has one place on the page: a group card or its repository's section
    placed = [i for g in data["groups"] for i in g["items"]] + [i for r in data["repos"] for i in r["items"]]
    assert sorted(placed) == list(range(len(drawn)))
