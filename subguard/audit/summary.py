"""The audit's summary: small aggregates (already collected) -> one JSON-ready dict, and its headline."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from subguard.core.model import Severity

TOP_REASONS = 30


def _count(rows: Sequence[Mapping[str, Any]], key: str) -> list[dict[str, Any]]:
    totals: dict[str, int] = {}
    for r in rows:
        name = r.get(key) or ""
        totals[name] = totals.get(name, 0) + int(r["count"])
    return [{key: k, "count": n} for k, n in sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))]


def _files(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    by_status = {"parsed": 0, "skipped": 0, "failed": 0}
    reasons: dict[tuple[str, str], int] = {}
    failing: dict[str, int] = {}
    for r in rows:
        by_status[r["status"]] = by_status.get(r["status"], 0) + int(r["count"])
        if r.get("reason"):
            key = (r["status"], r["reason"])
            reasons[key] = reasons.get(key, 0) + int(r["count"])
        if r["status"] == "failed":
            failing[r["repo"] or ""] = failing.get(r["repo"] or "", 0) + int(r["count"])
    top = sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_REASONS]
    return {
        "total": sum(by_status.values()), **by_status,
        "reasons": [{"status": s, "reason": why, "count": n} for (s, why), n in top],
        "failed_by_repo": [{"repo": k, "count": n} for k, n in sorted(failing.items(), key=lambda kv: (-kv[1], kv[0]))],
    }


def _group(row: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(row)
    impact = out.get("impact")
    out["impact"] = json.loads(impact) if isinstance(impact, str) and impact else {}
    return out


def build(
    *, files: Sequence[Mapping[str, Any]], findings: Sequence[Mapping[str, Any]], groups: Sequence[Mapping[str, Any]],
    group_sizes: Sequence[Mapping[str, Any]], totals: Mapping[str, int], missing: Sequence[tuple[str, str]],
    problems: Sequence[str], sources: Sequence[str], seconds: float,
) -> dict[str, Any]:
    """The summary written to summary.json and shown by report.html."""
    active = [r for r in findings if not r["suppressed"]]
    severities = {s: sum(int(r["count"]) for r in active if r["severity"] == s) for s in ("error", "warning", "note")}
    return {
        "sources": list(sources),
        "seconds": seconds,
        "totals": dict(totals),
        "files": _files(files),
        "missing_repos": [{"repo": name, "uri": uri} for name, uri in missing],
        "problems": list(problems),
        "findings": {
            "total": sum(int(r["count"]) for r in findings),
            "active": sum(severities.values()),
            "suppressed": sum(int(r["count"]) for r in findings if r["suppressed"]),
            "by_severity": severities,
            "by_rule": _count(active, "rule"),
            "by_team": [{"team": d["team"] or "unassigned", "count": d["count"]} for d in _count(active, "team")],
            "group_scope": sum(int(r["count"]) for r in active if r["scope"] == "group"),
        },
        "group_sizes": sorted(({"repos": int(r["repos_count"]), "groups": int(r["count"])} for r in group_sizes), key=lambda d: d["repos"]),
        "worst_groups": [_group(g) for g in groups],
    }


def headline(summary: Mapping[str, Any]) -> str:
    """One line for the terminal."""
    f, t, s = summary["files"], summary["totals"], summary["findings"]["by_severity"]
    missing = len(summary["missing_repos"])
    extra = f", {missing} missing repo(s)" if missing else ""
    return (
        f"audit: {t['repos']} repos, {f['total']} files ({f['parsed']} parsed, {f['skipped']} skipped, {f['failed']} failed){extra}; "
        f"{t['groups']} groups ({t['cross_repo_groups']} across repos); "
        f"{summary['findings']['active']} findings ({s['error']} error, {s['warning']} warning, {s['note']} note)"
    )


def exit_code(summary: Mapping[str, Any], fail_on: str) -> int:
    """1 when an unsuppressed finding is at or above `fail_on` (error | warning | note), else 0."""
    counts = summary["findings"]["by_severity"]
    return int(any(n and Severity(s).meets(fail_on) for s, n in counts.items()))
