"""GitHub Actions workflow commands: one `::error|warning|notice file=…::message` annotation per finding.

Suppressed findings produce no annotation. Related locations and the simulated impact are appended
to the message on their own lines (GitHub shows multi-line annotation messages).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from subguard.core.model import Finding, RuleDoc, Severity
from subguard.report import (
    ReportContext,
    base_revision,
    before_after,
    cite,
    display_path,
    for_display,
    hidden_line,
    revision_label,
    sort_key,
)

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def escape_data(text: str) -> str:
    """Escape a command's message (GitHub's `escapeData`)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a property value (GitHub's `escapeProperty`): data escapes plus `:` and `,`."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(f: Finding, docs: Mapping[str, RuleDoc], ctx: ReportContext) -> str:
    loc = f.location
    doc = docs.get(f.rule)
    props = [("file", display_path(loc, ctx)), ("line", str(loc.line)), ("col", str(loc.column))]
    if loc.end_line is not None and loc.end_line >= loc.line:
        props.append(("endLine", str(loc.end_line)))
        if loc.end_column is not None and loc.end_line == loc.line:
            props.append(("endColumn", str(loc.end_column)))
    props.append(("title", f"{f.rule} {doc.name}" if doc else f.rule))
    lines = [f.message]
    lines += [f"also: {cite(f, r.location, ctx)}: {r.message}".rstrip(": ") for r in f.related]
    if f.impact:
        lines.append(f"impact: {f.impact}")
    lines += [f"{row['member']} {row['topic']}: {row['before']} -> {row['after']}" for row in before_after(f)]
    base = base_revision(f)
    if base:
        lines.append(f"base: {revision_label(base['ref'], base['commit'])}")
    head = ",".join(f"{k}={escape_property(v)}" for k, v in props)
    return f"::{COMMANDS[f.severity]} {head}::{escape_data(chr(10).join(lines))}"


def render(findings: Sequence[Finding], docs: Mapping[str, RuleDoc], ctx: ReportContext) -> str:
    """Annotations for what a reviewer acts on; notes are counted on one plain log line (all of them
    with `--show-notes`; every one stays in the SARIF and JSON reports)."""
    shown, hidden = for_display(findings, ctx)
    out = "".join(annotation(f, docs, ctx) + "\n" for f in sorted(shown, key=sort_key))
    out += hidden_line(hidden, docs, ctx) + "\n" if hidden else ""
    return out + (f"subguard: the change was judged against base {ctx.base}\n" if ctx.base else "")
