"""Markdown summary for a PR comment or `$GITHUB_STEP_SUMMARY`: totals, a table per group, the rest."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from subguard.core.limits import escape_controls
from subguard.core.members import members_of
from subguard.core.model import Finding, RuleDoc, Severity
from subguard.report import (
    ReportContext,
    active,
    before_after,
    cite,
    display_path,
    severity_counts,
    sort_key,
    summary_line,
)


def cell(text: str) -> str:
    """A table cell: pipes escaped (also inside code spans, per GFM), newlines flattened."""
    return text.replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def code(value: str | None) -> str:
    """A value as a code span that survives backticks inside it; `?` when unknown."""
    if value is None:
        return "?"
    if value == "":
        return '`""`'
    fence = "``" if "`" in value else "`"
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def _rule_title(f: Finding, docs: Mapping[str, RuleDoc]) -> str:
    doc = docs.get(f.rule)
    return f"{f.rule} {doc.name}" if doc else f.rule


def _group_section(
    group: str, findings: Sequence[Finding], docs: Mapping[str, RuleDoc], ctx: ReportContext
) -> list[str]:
    lines = [f"### Group {code(group)}", ""]
    for f in findings:
        lines += [f"**{_rule_title(f, docs)}** ({f.severity.value}): {cell(f.message)}", ""]
        changes = before_after(f)
        if changes:  # a change finding (SG6xx): what each member declares at base and at head
            lines += _change_table(changes, ctx)
            lines += [f"> **Impact:** {f.impact}", ""] if f.impact else []
            continue
        rows = members_of(f)
        if any(m.topic is not None or m.expression is not None or m.model for m in rows):
            lines += ["| member | topic | expression | model |", "| --- | --- | --- | --- |"]
            for m in rows:
                where = cell(code(cite(f, m.location, ctx)))
                expr = code(m.expression) if m.expression is not None else (cell(m.message) or "?")
                lines.append(f"| {where} | {cell(code(m.topic))} | {cell(expr)} | {cell(m.model or '?')} |")
        else:  # places with no declared subscription (log lines of runtime evidence): where and what
            lines += ["| where | what |", "| --- | --- |"]
            for m in rows:
                where = cell(code(cite(f, m.location, ctx)))
                lines.append(f"| {where} | {cell(m.message or 'first seen here')} |")
        lines.append("")
        if f.impact:
            first, *rest = f.impact.splitlines() or [""]
            lines += [f"> **Impact:** {first}", *(f"> {line}" for line in rest), ""]
    return lines


def _change_table(rows: Sequence[dict[str, str]], ctx: ReportContext) -> list[str]:
    base = f"before ({cell(ctx.base)})" if ctx.base else "before (base)"
    lines = [f"| member | topic | {base} | after (head) |", "| --- | --- | --- | --- |"]
    for r in rows:
        lines.append(
            f"| {cell(code(r['member']))} | {cell(code(r['topic']))} | {cell(r['before'])} | {cell(r['after'])} |"
        )
    return lines + [""]


def _other_section(findings: Sequence[Finding], docs: Mapping[str, RuleDoc], ctx: ReportContext) -> list[str]:
    lines = ["### Other findings", "", "| location | rule | severity | message |", "| --- | --- | --- | --- |"]
    for f in findings:
        where = cell(code(f"{display_path(f.location, ctx)}:{f.location.line}:{f.location.column}"))
        lines.append(f"| {where} | {cell(_rule_title(f, docs))} | {f.severity.value} | {cell(f.message)} |")
    return lines + [""]


def render(findings: Sequence[Finding], docs: Mapping[str, RuleDoc], ctx: ReportContext) -> str:
    findings = escape_controls(tuple(findings))  # scanned values must not forge lines (workflow commands in logs)
    shown = sorted(active(findings), key=sort_key)
    icon = ":x:" if severity_counts(findings)[Severity.ERROR] else (":warning:" if shown else ":white_check_mark:")
    lines = ["## subguard", "", f"{icon} {summary_line(findings, ctx)}", ""]
    if ctx.base:
        lines += [f"The change was judged against base {code(ctx.base)}.", ""]
    if not shown:
        lines += ["No findings." if ctx.files else "No files were scanned.", ""]
    groups: dict[str, list[Finding]] = {}
    rest: list[Finding] = []
    for f in shown:
        (groups.setdefault(f.group, []) if f.group and (f.related or before_after(f)) else rest).append(f)
    for group in sorted(groups):
        lines += _group_section(group, groups[group], docs, ctx)
    if rest:
        lines += _other_section(rest, docs, ctx)
    return "\n".join(lines).rstrip("\n") + "\n"
