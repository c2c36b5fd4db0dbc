"""Human-readable report: group findings as aligned member tables, others as `path:line:col: ID message`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import click

from subguard.core.limits import escape_controls
from subguard.core.members import Member, members_of
from subguard.core.model import Finding, RuleDoc, Severity
from subguard.report import ReportContext, cite, display_path, for_display, hidden_line, sort_key, summary_line

_COLOURS = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.NOTE: "cyan"}


def _style(text: str, ctx: ReportContext, **kw: object) -> str:
    return click.style(text, **kw) if ctx.color else text  # type: ignore[arg-type]


def _rule(f: Finding, ctx: ReportContext) -> str:
    return _style(f.rule, ctx, fg=_COLOURS[f.severity], bold=True)


def _quoted(value: str | None) -> str:
    """Expressions quoted as JSON strings so stray spaces and separators stay visible; '?' when unknown."""
    return "?" if value is None else json.dumps(value, ensure_ascii=False)


def _member_rows(f: Finding, members: Sequence[Member], ctx: ReportContext) -> list[list[str]]:
    structured = any(m.expression is not None or m.topic is not None for m in members)
    rows: list[list[str]] = []
    for m in members:
        where = cite(f, m.location, ctx)  # a member from the org map: repo:path:line (org map DATE)
        if structured:
            rows.append([where, m.topic or "?", _quoted(m.expression), m.model or ""])
            rows += [["", topic or "?", _quoted(expression), m.model or ""] for topic, expression in m.more]
        else:
            rows.append([where, m.message])
    return rows


def _table(rows: list[list[str]], indent: str, ctx: ReportContext) -> list[str]:
    """Aligned columns (widths from the plain text, so colour never breaks the alignment)."""
    if not rows:
        return []
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for row in rows:
        cells = [c.ljust(w) for c, w in zip(row, widths)]
        cells[0] = _style(cells[0], ctx, bold=True)
        out.append((indent + "  ".join(cells)).rstrip())
    return out


def _group_block(group: str, findings: Sequence[Finding], ctx: ReportContext) -> list[str]:
    lines = [_style(f"group {group}", ctx, bold=True)]
    for f in findings:
        lines.append(f"  {_rule(f, ctx)} [{f.severity.value}] {f.message}")
        lines += _table(_member_rows(f, members_of(f), ctx), "      ", ctx)
        if f.impact:
            lines += [
                f"      impact: {line}" if i == 0 else f"              {line}"
                for i, line in enumerate(f.impact.splitlines())
            ]
    return lines


def _flat(f: Finding, ctx: ReportContext) -> list[str]:
    loc = f.location
    lines = [f"{display_path(loc, ctx)}:{loc.line}:{loc.column}: {_rule(f, ctx)} {f.message}"]
    for r in f.related:
        lines.append(f"    {cite(f, r.location, ctx)}: {r.message}".rstrip())
    if f.impact:
        lines.append(f"    impact: {f.impact}")
    return lines


def render(findings: Sequence[Finding], docs: Mapping[str, RuleDoc], ctx: ReportContext) -> str:
    """Group findings first (one block per consumer group), then the rest, then a summary line."""
    findings = escape_controls(tuple(findings))  # scanned values must not forge lines or terminal escapes
    visible, hidden = for_display(findings, ctx)
    shown = sorted(visible, key=sort_key)
    groups: dict[str, list[Finding]] = {}
    flat: list[Finding] = []
    for f in shown:
        if f.group and f.related:
            groups.setdefault(f.group, []).append(f)
        else:
            flat.append(f)
    lines: list[str] = []
    for group in sorted(groups):
        lines += _group_block(group, groups[group], ctx) + [""]
    for f in flat:
        lines += _flat(f, ctx)
    if flat:
        lines.append("")
    lines.append(summary_line(findings, ctx))
    if hidden:
        lines.append(hidden_line(hidden, docs, ctx))
    return "\n".join(lines) + "\n"
