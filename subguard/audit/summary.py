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
        "total": sum(by_status.values()),
        **by_status,
        "reasons": [{"status": s, "reason": why, "count": n} for (s, why), n in top],
        "failed_by_repo": [{"repo": k, "count": n} for k, n in sorted(failing.items(), key=lambda kv: (-kv[1], kv[0]))],
    }


def _group(row: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(row)
    impact = out.get("impact")
    out["impact"] = json.loads(impact) if isinstance(impact, str) and impact else {}
    return out


def build(
    *,
    files: Sequence[Mapping[str, Any]],
    findings: Sequence[Mapping[str, Any]],
    groups: Sequence[Mapping[str, Any]],
    group_sizes: Sequence[Mapping[str, Any]],
    totals: Mapping[str, int],
    missing: Sequence[tuple[str, str]],
    problems: Sequence[str],
    sources: Sequence[str],
    seconds: float,
    written: str = "",
) -> dict[str, Any]:
    """The summary written to summary.json and shown by report.html. `written`: when the run
    started (ISO 8601, UTC), the date the next run's comparison names."""
    active = [r for r in findings if not r["suppressed"]]
    severities = {s: sum(int(r["count"]) for r in active if r["severity"] == s) for s in ("error", "warning", "note")}
    return {
        "written": written,
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
        "group_sizes": sorted(
            ({"repos": int(r["repos_count"]), "groups": int(r["count"])} for r in group_sizes), key=lambda d: d["repos"]
        ),
        "worst_groups": [_group(g) for g in groups],
    }


def finding_counts(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The findings counted by rule, severity, scope, team and whether suppressed (`build`'s
    `findings`), from the collected finding rows."""
    counts: dict[tuple[Any, ...], int] = {}
    for r in rows:
        key = (r["rule"], r["severity"], r["scope"], r["team"], r["suppressed"] is not None)
        counts[key] = counts.get(key, 0) + 1
    names = ("rule", "severity", "scope", "team", "suppressed")
    return [{**dict(zip(names, key, strict=True)), "count": n} for key, n in counts.items()]


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


# --- what changed since a previous audit (`--compare PREV_OUT`) ------------------------------------

CHANGE_KEYS = ("rule", "severity", "message", "repo", "path", "line", "group", "team", "fingerprint")
HISTORY = "history.jsonl"
HISTORY_KEEP = 400  # runs the history file retains (a nightly audit: more than a year)


def _by(rows: Sequence[tuple[str, Mapping[str, Any]]], key: str) -> list[dict[str, Any]]:
    counts: dict[str, dict[str, int]] = {}
    for status, r in rows:
        name = str(r.get(key) or ("unassigned" if key == "team" else ""))
        counts.setdefault(name, {"new": 0, "fixed": 0, "unchanged": 0})[status] += 1
    return [{key: k, **v} for k, v in sorted(counts.items(), key=lambda kv: (-kv[1]["new"], -kv[1]["fixed"], kv[0]))]


def changes(
    current: Sequence[Mapping[str, Any]],
    previous: Sequence[Mapping[str, Any]],
    previous_out: str,
    previous_written: str,
) -> dict[str, Any]:
    """New, fixed and unchanged findings, matched by fingerprint (suppressed findings on either side
    are left out). Rows carry `CHANGE_KEYS` and `suppressed`; a fingerprint seen twice counts twice."""
    now = [r for r in current if not r.get("suppressed")]
    before = [r for r in previous if not r.get("suppressed")]
    left: dict[str, int] = {}
    for r in before:
        left[r["fingerprint"]] = left.get(r["fingerprint"], 0) + 1
    labelled: list[tuple[str, Mapping[str, Any]]] = []
    for r in now:
        if left.get(r["fingerprint"], 0) > 0:
            left[r["fingerprint"]] -= 1
            labelled.append(("unchanged", r))
        else:
            labelled.append(("new", r))
    fixed = []
    for r in before:
        if left.get(r["fingerprint"], 0) > 0:
            left[r["fingerprint"]] -= 1
            fixed.append(r)
    labelled += [("fixed", r) for r in fixed]
    new = [r for status, r in labelled if status == "new"]
    return {
        "previous": {"out": previous_out, "written": previous_written},
        "new": len(new),
        "fixed": len(fixed),
        "unchanged": len(labelled) - len(new) - len(fixed),
        "new_by_severity": {s: sum(1 for r in new if r["severity"] == s) for s in ("error", "warning", "note")},
        "by_repo": _by(labelled, "repo"),
        "by_team": _by(labelled, "team"),
        "by_rule": _by(labelled, "rule"),
        "new_fingerprints": sorted({str(r["fingerprint"]) for r in new}),
        "fixed_findings": [{k: r.get(k) for k in CHANGE_KEYS} for r in fixed],
    }


def history_line(summary: Mapping[str, Any]) -> dict[str, Any]:
    """This run's line of the history file: when, how many active findings by severity, and the change."""
    f, ch = summary["findings"], summary.get("changes") or {}
    return {
        "written": summary.get("written", ""),
        "active": f["active"],
        **f["by_severity"],
        "new": ch.get("new"),
        "fixed": ch.get("fixed"),
    }


def history(
    previous_lines: Sequence[str], summary: Mapping[str, Any], previous_summary: Mapping[str, Any] | None
) -> list[dict[str, Any]]:
    """The history carried from the previous output plus this run's line (the last `HISTORY_KEEP`).
    A previous output without a history file (an older version) contributes its own summary's line."""
    lines: list[dict[str, Any]] = []
    for text in previous_lines:
        try:
            row = json.loads(text)
        except ValueError:
            continue
        if isinstance(row, dict):
            lines.append(row)
    if not lines and previous_summary and "findings" in previous_summary:
        lines.append(history_line(previous_summary))
    lines.append(history_line(summary))
    return lines[-HISTORY_KEEP:]
