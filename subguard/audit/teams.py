"""`teams/<team>.md`: one Markdown summary per team, ready to paste into a ticket (`--format markdown`).

Each lists the team's findings (the team of the finding's primary place, as the findings table
names it: the inventory's, else CODEOWNERS'), new ones first when the audit compared with a
previous one, each with the file:line to change (every cited member the team owns), then what was
fixed since.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from subguard.audit.codeowners import Owners
from subguard.audit.report_html import SEVERITY_RANK, cited
from subguard.core.model import Finding, RuleDoc

UNASSIGNED = "unassigned"


def slug(team: str) -> str:
    """A file name for a team (`@acme/payments` -> `acme-payments`)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", team).strip("-.") or UNASSIGNED


def _line(row: Mapping[str, Any], team: str, owners: Owners, docs: Mapping[str, RuleDoc]) -> list[str]:
    f = Finding.model_validate_json(row["json"])
    doc = docs.get(f.rule)
    title = f"{f.rule} {doc.name}" if doc else f.rule
    places: list[tuple[str, bool]] = []  # (file:line, owned by this team)
    for m in cited(f):
        repo = m.location.repo or f.location.repo
        where = f"`{repo}:{m.location.path}:{m.location.line}`" if repo else f"`{m.location.path}:{m.location.line}`"
        places.append((where, not repo or owners.of(repo, m.location.path)["team"] in (team, "")))
    mine = [w for w, owned in places if owned] or [w for w, _ in places]  # the team's own places, else every one
    out = [f"- **{title}** ({f.severity.value}): {f.message.replace(chr(10), ' ')}"]
    out += [f"  - change {', '.join(dict.fromkeys(mine))}"] if mine else []
    if doc and doc.instead:
        out.append(f"  - use instead: {_instead(doc.instead)}")
    return out


def _instead(text: str) -> str:
    """The first line of a rule's "use instead": a comment as words, code as a code span."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first.lstrip("#/ ").strip() if first.startswith(("#", "//")) else f"`{first}`"


def render_team(
    team: str,
    summary: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    owners: Owners,
    docs: Mapping[str, RuleDoc],
) -> str:
    changes = summary.get("changes")
    new = set(changes["new_fingerprints"]) if changes else set()
    mine = sorted(
        (r for r in rows if not r["suppressed"]),
        key=lambda r: (
            r["fingerprint"] not in new,
            -SEVERITY_RANK.get(r["severity"], 0),
            r["rule"],
            r["repo"] or "",
            r["path"] or "",
            r["line"] or 0,
        ),
    )
    when = str(summary.get("written") or "")[:10]
    lines = [f"# subguard audit{' ' + when if when else ''}: {team}", ""]
    counts = {s: sum(1 for r in mine if r["severity"] == s) for s in ("error", "warning", "note")}
    lines.append(
        f"{len(mine)} open finding(s): {counts['error']} error(s), {counts['warning']} warning(s), {counts['note']} note(s)."
    )
    if changes:
        since = str(changes["previous"].get("written") or changes["previous"].get("out")).replace("T", " ")
        fixed = [f for f in changes["fixed_findings"] if (f.get("team") or UNASSIGNED) == team]
        fresh = [r for r in mine if r["fingerprint"] in new]
        lines.append(f"Since {since}: {len(fresh)} new, {len(fixed)} fixed.")
    lines.append("")
    fresh_rows = [r for r in mine if r["fingerprint"] in new]
    old_rows = [r for r in mine if r["fingerprint"] not in new]
    if fresh_rows:
        lines += ["## New", ""]
        for r in fresh_rows:
            lines += _line(r, team, owners, docs)
        lines.append("")
    if old_rows:
        lines += ["## Still open" if changes else "## Open", ""]
        for r in old_rows:
            lines += _line(r, team, owners, docs)
        lines.append("")
    if changes:
        fixed = [f for f in changes["fixed_findings"] if (f.get("team") or UNASSIGNED) == team]
        if fixed:
            lines += ["## Fixed", ""]
            lines += [f"- ~~{f['rule']}~~ `{f['repo']}:{f['path']}:{f['line']}`: {f['message']}" for f in fixed]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def render_all(
    summary: Mapping[str, Any], rows: Sequence[Mapping[str, Any]], owners: Owners, docs: Mapping[str, RuleDoc]
) -> dict[str, str]:
    """File name (without .md) -> text, for every team with an open or a fixed finding."""
    by_team: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        by_team.setdefault(r["team"] or UNASSIGNED, []).append(r)
    for f in (summary.get("changes") or {}).get("fixed_findings", []):
        by_team.setdefault(f.get("team") or UNASSIGNED, [])
    out: dict[str, str] = {}
    for team in sorted(by_team):
        name = slug(team)
        while name in out:
            name += "_"
        out[name] = render_team(team, summary, by_team[team], owners, docs)
    return out
