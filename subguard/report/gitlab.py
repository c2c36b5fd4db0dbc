"""GitLab Code Quality report: a JSON array of issues in the Code Climate subset GitLab reads.

Each issue has `description` (rule id and message), `check_name` (rule id), a `fingerprint` unique in
the report (the finding's own, re-hashed with a counter when two share one), `severity` and
`location.path` / `location.lines.begin`. Paths are relative to the working directory, as SARIF's
`%SRCROOT%` URIs are: in a GitLab job that is the checkout (`$CI_PROJECT_DIR`), which is what the
merge request widget resolves paths against.

Suppressed findings are left out: Code Quality has no suppressed state, so a waived finding would show
as an open issue. Severity: error -> `major`, warning -> `minor`, note -> `info`. Errors are not
`critical`: the widget ranks the issues of every tool in the pipeline together, where `critical` and
`blocker` usually mean security or crash grade, and an error already fails the job by exit code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from subguard.core.model import Finding, RuleDoc, Severity, fingerprint
from subguard.report import ReportContext, active, display_path, distinct, sort_key
from subguard.report.jsontext import pretty

SEVERITIES = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.NOTE: "info"}


def unique_fingerprints(findings: Sequence[Finding]) -> list[str]:
    """One fingerprint per finding, in order: its own (or one from rule, place and message), re-hashed
    with a counter when an earlier finding already has it."""
    own = (f.fingerprint or fingerprint(f.rule, f.location.repo, f.location.path, f.message) for f in findings)
    return distinct(own, lambda base, n: fingerprint(base, str(n)))


def issue(f: Finding, fp: str, ctx: ReportContext) -> dict[str, Any]:
    """The Code Quality issue of one finding."""
    return {
        "description": f"{f.rule}: {f.message}",
        "check_name": f.rule,
        "fingerprint": fp,
        "severity": SEVERITIES[f.severity],
        "location": {"path": display_path(f.location, ctx), "lines": {"begin": max(f.location.line, 1)}},
    }


def render(findings: Sequence[Finding], docs: Mapping[str, RuleDoc], ctx: ReportContext) -> str:
    shown = sorted(active(findings), key=sort_key)
    issues = [issue(f, fp, ctx) for f, fp in zip(shown, unique_fingerprints(shown))]
    return pretty(issues)
