"""SARIF 2.1.0: one run; rule help from the policy docs; stable partial fingerprints; suppressions.

URIs are relative to `%SRCROOT%` (the working directory) when the scan root lies inside it, so
GitHub code scanning resolves them from a checkout; roots outside it get their own base id. Paths
in message texts are shown as in every other format (`report.display_path`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from subguard.core.model import CODE_SCOPE, FIX, Finding, Location, RuleDoc
from subguard.report import (
    ReportContext,
    Root,
    base_revision,
    before_after,
    cited_path,
    is_diagnostic,
    map_date,
    marked,
    root_of,
    root_prefix,
    sort_key,
)
from subguard.report.jsontext import pretty

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "subguard/v1"
_SUPPRESSION_KIND = {"inline": "inSource"}  # config waivers and baselines live outside the source
_JUSTIFY = {
    "test": "only test code declares it (setting test-code: report)",
    "example": "only example code declares it (setting test-code: report)",
    "placeholder": "a placeholder group name that samples use on purpose (setting test-code: report)",
}


def _dir_uri(path: str) -> str:
    uri = Path(path).resolve().as_uri()
    return uri if uri.endswith("/") else uri + "/"


def _base(root: Root | None, ctx: ReportContext, index: int | None = None) -> tuple[str, str]:
    """(uriBaseId, prefix to put before the root-relative path); `index` is the root's position in
    `ctx.roots` when the caller knows it."""
    prefix = root_prefix(root, ctx)
    if prefix is None and root is not None:
        return f"ROOT{ctx.roots.index(root) if index is None else index}", ""
    return SRCROOT, f"{prefix}/" if prefix else ""


def _physical(loc: Location, ctx: ReportContext) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": max(loc.line, 1), "startColumn": max(loc.column, 1)}
    if loc.end_line is not None and loc.end_line >= loc.line:
        region["endLine"] = loc.end_line
        if loc.end_column is not None and (loc.end_line > loc.line or loc.end_column > loc.column):
            region["endColumn"] = loc.end_column
    if PurePosixPath(loc.path).is_absolute():  # outside every root (e.g. a config file): a plain file URI
        return {"artifactLocation": {"uri": Path(loc.path).as_uri()}, "region": region}
    base_id, prefix = _base(root_of(loc, ctx), ctx)
    return {"artifactLocation": {"uri": quote(prefix + loc.path), "uriBaseId": base_id}, "region": region}


def _base_ids(ctx: ReportContext) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if ctx.workdir:
        out[SRCROOT] = {"uri": _dir_uri(ctx.workdir), "description": {"text": "The directory subguard ran in."}}
    for i, root in enumerate(ctx.roots):
        base_id, _ = _base(root, ctx, i)
        if base_id != SRCROOT:
            out[base_id] = {"uri": _dir_uri(root.path), "description": {"text": f"Scan root of {root.repo}."}}
    return out


def help_text(doc: RuleDoc) -> str:
    parts = [
        ("What it does", doc.what or doc.summary),
        ("Why is this bad?", doc.why),
        ("Example", doc.example),
        ("Use instead", doc.instead),
        ("References", "\n".join(f"- {r}" for r in doc.references)),
    ]
    return "\n\n".join(f"{title}\n{body.strip()}" for title, body in parts if body.strip())


def help_markdown(doc: RuleDoc) -> str:
    def code(body: str) -> str:
        return f"```\n{body.strip()}\n```"

    parts = [
        ("What it does", doc.what or doc.summary),
        ("Why is this bad?", doc.why),
        ("Example", code(doc.example) if doc.example.strip() else ""),
        ("Use instead", code(doc.instead) if doc.instead.strip() else ""),
        ("References", "\n".join(f"- {r}" for r in doc.references)),
    ]
    return "\n\n".join(f"## {title}\n\n{body.strip()}" for title, body in parts if body.strip())


def _rule(doc: RuleDoc) -> dict[str, Any]:
    short = doc.summary or doc.name
    return {
        "id": doc.id,
        "name": doc.name,
        "shortDescription": {"text": short},
        "fullDescription": {"text": (doc.what or short).strip()},
        "help": {"text": help_text(doc) or short, "markdown": help_markdown(doc) or short},
        "defaultConfiguration": {"level": doc.severity.value},
        "properties": {"scope": doc.scope, "tags": [doc.scope]},
    }


def _rules(findings: Sequence[Finding], docs: Mapping[str, RuleDoc]) -> list[RuleDoc]:
    """Every documented rule, plus a minimal entry for any rule a finding names without docs."""
    known = dict(docs)
    for f in findings:
        if f.rule not in known:
            known[f.rule] = RuleDoc(id=f.rule, name=f.rule.lower(), severity=f.severity, scope="", summary=f.rule)
    return [known[k] for k in sorted(known)]


def _escape(text: str) -> str:
    """Message text may embed links `[text](id)`, so literal brackets and backslashes are escaped."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def _link(f: Finding, loc: Location, i: int, ctx: ReportContext) -> str:
    """A related location in the message: a link to it, or for a member from the org map (no file of
    this checkout) its repository, path and line as text."""
    if map_date(f, loc):
        return _escape(f"{loc.repo}:{loc.path}:{loc.line}")
    return f"[{_escape(cited_path(loc, ctx))}:{loc.line}]({i})"


def _related(f: Finding, loc: Location, message: str, i: int, ctx: ReportContext) -> dict[str, Any]:
    """A related location; a member from the org map (`check --org-map`) lies in another repository,
    so it is named, not resolved against this checkout: a logical location `repo:path:line`, the
    repository and the map's date as properties."""
    date = map_date(f, loc)
    if not date:
        return {"id": i, "physicalLocation": _physical(loc, ctx), "message": {"text": _escape(message or f.rule)}}
    where = f"{loc.repo}:{loc.path}:{loc.line}"
    return {
        "id": i,
        "logicalLocations": [{"name": loc.path, "fullyQualifiedName": where, "kind": "module"}],
        "message": {"text": _escape(f"{where}: {message or f.rule} (org map {date})")},
        "properties": {"repository": loc.repo, "path": loc.path, "line": loc.line, "orgMap": date},
    }


def _result(f: Finding, index: int, ctx: ReportContext) -> dict[str, Any]:
    text = _escape(f.message)
    if f.related:
        links = ", ".join(_link(f, r.location, i, ctx) for i, r in enumerate(f.related, 1))
        text += f" (also: {links})"
    if f.impact:
        text += f"\nImpact: {_escape(f.impact)}"
    result: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": index,
        "level": f.severity.value,
        "message": {"text": text},
        "locations": [{"physicalLocation": _physical(f.location, ctx)}],
    }
    if f.related:
        result["relatedLocations"] = [_related(f, r.location, r.message, i, ctx) for i, r in enumerate(f.related, 1)]
    if f.fingerprint:
        result["partialFingerprints"] = {FINGERPRINT_KEY: f.fingerprint}
    scope = marked(f, ctx)
    if f.suppressed is None and scope:  # counted, not raised: only test or example code, or a placeholder group
        result["suppressions"] = [{"kind": "external", "status": "accepted", "justification": _JUSTIFY[scope]}]
    if f.suppressed is not None:
        result["suppressions"] = [
            {
                "kind": _SUPPRESSION_KIND.get(f.suppressed.kind, "external"),
                "status": "accepted",
                "justification": f.suppressed.reason or f.suppressed.kind,
            }
        ]
    props = _properties(f)
    if props:
        result["properties"] = props
    fixes = _fixes(f, ctx)
    if fixes:
        result["fixes"] = fixes
    return result


def _fixes(f: Finding, ctx: ReportContext) -> list[dict[str, Any]]:
    """The finding's fix (`check` attaches it under FIX) as one SARIF fix: a change per file, each a
    deleted region and the inserted text; whether it is safe is in its description and properties."""
    fix = dict(dict(f.properties).get(FIX) or ())
    if not fix:
        return []
    changes: dict[tuple[str, str], dict[str, Any]] = {}
    for loc, text in fix.get("replacements", ()):
        physical = _physical(loc, ctx)
        region = {
            "startLine": loc.line,
            "startColumn": loc.column,
            "endLine": loc.end_line or loc.line,
            "endColumn": loc.end_column or loc.column,
        }
        change = changes.setdefault(
            (loc.repo, loc.path), {"artifactLocation": physical["artifactLocation"], "replacements": []}
        )
        change["replacements"].append({"deletedRegion": region, "insertedContent": {"text": text}})
    if not changes:
        return []
    safety = fix.get("safety", "")
    why = "; ".join(fix.get("reasons", ()))
    text = f"{fix.get('description', 'fix')} ({safety}{': ' + why if why else ''})"
    return [
        {"description": {"text": text}, "artifactChanges": list(changes.values()), "properties": {"safety": safety}}
    ]


def _properties(f: Finding) -> dict[str, Any]:
    code = dict(f.properties).get(CODE_SCOPE)
    pairs = (
        ("group", f.group),
        ("topic", f.topic),
        ("impact", f.impact),
        ("code", code),
        ("base", base_revision(f)),
        ("change", before_after(f)),
    )
    return {k: v for k, v in pairs if v}


def _notification(f: Finding, index: int, ctx: ReportContext) -> dict[str, Any]:
    """A diagnostic finding (what subguard could not read or judge) as a tool execution notification:
    GitHub code scanning lists these as tool diagnostics and raises no alert for them."""
    out: dict[str, Any] = {
        "level": f.severity.value,
        "message": {"text": f.message},
        "locations": [{"physicalLocation": _physical(f.location, ctx)}],
        "associatedRule": {"id": f.rule, "index": index},
    }
    props = _properties(f)
    if f.suppressed is not None:
        props["suppressed"] = f.suppressed.kind
    if props:
        out["properties"] = props
    return out


def sarif_log(findings: Sequence[Finding], docs: Mapping[str, RuleDoc], ctx: ReportContext) -> dict[str, Any]:
    rules = _rules(findings, docs)
    index = {r.id: i for i, r in enumerate(rules)}
    ordered = sorted(findings, key=sort_key)
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "subguard",
                "version": ctx.version,
                "semanticVersion": ctx.version,
                "rules": [_rule(r) for r in rules],
            }
        },
        "columnKind": "unicodeCodePoints",
        "results": [_result(f, index[f.rule], ctx) for f in ordered if not is_diagnostic(f, docs)],
        "invocations": [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": [
                    _notification(f, index[f.rule], ctx) for f in ordered if is_diagnostic(f, docs)
                ],
            }
        ],
    }
    base_ids = _base_ids(ctx)
    if base_ids:
        run["originalUriBaseIds"] = base_ids
    if ctx.base_commit:  # `check --base`: the revision the change rules (SG6xx) compared with
        run["properties"] = {"base": {"ref": ctx.base_ref, "commit": ctx.base_commit}}
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(findings: Sequence[Finding], docs: Mapping[str, RuleDoc], ctx: ReportContext) -> str:
    return pretty(sarif_log(findings, docs, ctx))
