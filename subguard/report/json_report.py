"""JSON report: `{"findings": [...], "diagnostics": [...]}`, suppressed ones included and marked, paths
relative to the scan root that `repo` names, in `path` and in messages alike, wherever subguard runs
(a data format: the audit writes the same findings for the same repository; `report.ROOT_RELATIVE`).
`diagnostics` holds what subguard could not read or judge (the SG9xx rules with `roles:
[diagnostic]`), kept apart from the findings a user fixes in code."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from subguard.core.model import CODE_SCOPE, SAMPLE, Finding, RuleDoc
from subguard.report import ReportContext, base_revision, before_after, is_diagnostic, map_dates, sort_key
from subguard.report.jsontext import pretty


def finding_dict(f: Finding) -> dict[str, Any]:
    """The stable JSON shape of one finding."""
    loc, props, date = f.location, dict(f.properties), map_dates(f)
    return {
        "rule": f.rule,
        "severity": f.severity.value,
        "message": f.message,
        "path": loc.path,
        "line": loc.line,
        "column": loc.column,
        "repo": loc.repo,
        "group": f.group,
        "topic": f.topic,
        "related": [
            # repo: the member's repository; org_map: the map's date when the member is a row of the org map
            {
                "path": r.location.path,
                "line": r.location.line,
                "column": r.location.column,
                "message": r.message,
                "repo": r.location.repo,
                "org_map": date(r.location) or None,
            }
            for r in f.related
        ],
        "fingerprint": f.fingerprint,
        "suppressed": None if f.suppressed is None else {"kind": f.suppressed.kind, "reason": f.suppressed.reason},
        "impact": f.impact or None,
        "code": props.get(CODE_SCOPE),  # "test", "example", "placeholder" or null
        "sample": props.get(SAMPLE),  # a group finding confined to one sample of example code
        "base": base_revision(f),  # change findings (SG6xx): {"ref", "commit"} of `--base`; else null
        "change": before_after(f),  # change findings: [{"member", "topic", "before", "after"}]
    }


def render(findings: Sequence[Finding], docs: Mapping[str, RuleDoc], ctx: ReportContext) -> str:
    ordered = sorted(findings, key=sort_key)
    report = {
        "findings": [finding_dict(f) for f in ordered if not is_diagnostic(f, docs)],
        "diagnostics": [finding_dict(f) for f in ordered if is_diagnostic(f, docs)],
    }
    return pretty(report)
