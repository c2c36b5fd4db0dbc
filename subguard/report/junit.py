"""JUnit XML for CI test reports (GitLab, Jenkins, Azure Pipelines): one test case per finding.

One `<testsuite>` per rule id with findings, not per consumer group: every finding has a rule but
file-level findings (SG401, SG903, ...) have no group, so rule suites need no catch-all bucket, stay
few and stable from run to run, and read as "this check failed for these subjects". The group and
topic go into the test case name instead.

Test cases are `classname="subguard.<rule>"` and a `name` made of the finding's subject (the path for
file-level findings, group and topic) with no line number, so CI history matches a finding across
runs; the fingerprint's head is appended only when two names would collide. Where it is (file:line,
then every other member of the group) is in the `file`/`line` attributes and the body.
Unsuppressed findings at any severity are `<failure type="<rule>">`, suppressed ones
`<skipped message="suppressed: <reason>">`. Without findings, one passing test case "subguard", so
CI shows a green test rather than an empty report.

Scanned text is made safe first: control characters become escapes (`\\n`, `\\x1b`, as in the text
report, so the report printed to a CI log cannot forge lines), then anything else XML 1.0 cannot
hold (lone surrogates, U+FFFE/U+FFFF) becomes a `\\uXXXX` escape; ElementTree escapes the rest.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Mapping, Sequence

from subguard.core.limits import escape_controls
from subguard.core.members import Member, members_of
from subguard.core.model import Finding, RuleDoc
from subguard.report import ReportContext, display_path, distinct, sort_key

NAME = "subguard"
_CLEAN = {"tests": "1", "failures": "0", "errors": "0", "skipped": "0"}  # the one passing test of a clean run
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """`text` with every character XML 1.0 cannot hold written as a backslash escape."""
    return _NOT_XML.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def _element(tag: str, text: str = "", **attrs: str) -> ET.Element:
    el = ET.Element(tag, {k: xml_safe(v) for k, v in attrs.items()})
    if text:
        el.text = xml_safe(text)
    return el


def subject(f: Finding, ctx: ReportContext) -> str:
    """What a finding is about, without line numbers: path (unless it spans a group), group, topic."""
    parts = [] if f.group and f.related else [display_path(f.location, ctx)]
    parts += [f"group {f.group}"] if f.group else []
    parts += [f"topic {f.topic}"] if f.topic else []
    return ", ".join(parts)


def case_names(cases: Sequence[Finding], ctx: ReportContext) -> list[str]:
    """Stable, unique test case names: subjects, disambiguated by fingerprint, then by a counter."""
    subjects = [subject(f, ctx) for f in cases]
    shared = Counter(subjects)
    names = [f"{s} #{f.fingerprint[:8]}" if shared[s] > 1 and f.fingerprint else s for s, f in zip(subjects, cases)]
    return distinct(names, lambda name, n: f"{name} ({n})")


def member_line(m: Member, ctx: ReportContext) -> str:
    """`path:line:col: message (topic T, expression "e", model M)`, leaving out what is not known."""
    text = f"{display_path(m.location, ctx)}:{m.location.line}:{m.location.column}"
    if m.message:
        text += f": {m.message}"
    facts = [
        f"topic {m.topic}" if m.topic is not None else "",
        f'expression "{m.expression}"' if m.expression is not None else "",
        f"model {m.model}" if m.model else "",
    ]
    facts = [x for x in facts if x]
    return f"{text} ({', '.join(facts)})" if facts else text


def body(f: Finding, docs: Mapping[str, RuleDoc], ctx: ReportContext) -> str:
    """The rule and message, then the location and every other member, one per line."""
    doc = docs.get(f.rule)
    title = f"{f.rule} {doc.name}" if doc else f.rule
    first, *others = members_of(f)
    lines = [f"{title} [{f.severity.value}]: {f.message}", f"at {member_line(first, ctx)}"]
    lines += [f"also {member_line(m, ctx)}" for m in others]
    lines += [f"impact: {f.impact}"] if f.impact else []
    lines += [f"fingerprint: {f.fingerprint}"] if f.fingerprint else []
    return "\n".join(lines)


def testcase(f: Finding, name: str, docs: Mapping[str, RuleDoc], ctx: ReportContext) -> ET.Element:
    case = _element(
        "testcase",
        classname=f"{NAME}.{f.rule}",
        name=name,
        file=display_path(f.location, ctx),
        line=str(f.location.line),
    )
    if f.suppressed is None:
        case.append(_element("failure", body(f, docs, ctx), type=f.rule, message=f"{f.severity.value}: {f.message}"))
    else:
        reason = f.suppressed.reason or f.suppressed.kind
        case.append(_element("skipped", body(f, docs, ctx), message=f"suppressed: {reason}"))
    return case


def counts(cases: Sequence[Finding]) -> dict[str, str]:
    skipped = sum(1 for f in cases if f.suppressed is not None)
    return {"tests": str(len(cases)), "failures": str(len(cases) - skipped), "errors": "0", "skipped": str(skipped)}


def testsuite(rule: str, cases: Sequence[Finding], docs: Mapping[str, RuleDoc], ctx: ReportContext) -> ET.Element:
    doc = docs.get(rule)
    suite = _element("testsuite", name=f"{rule} {doc.name}" if doc else rule, **counts(cases))
    suite.extend(testcase(f, name, docs, ctx) for f, name in zip(cases, case_names(cases, ctx)))
    return suite


def passing_suite() -> ET.Element:
    """The report of a clean run: one passing test, so CI shows green instead of "no tests"."""
    suite = _element("testsuite", name=NAME, **_CLEAN)
    suite.append(_element("testcase", classname=NAME, name=NAME))
    return suite


def render(findings: Sequence[Finding], docs: Mapping[str, RuleDoc], ctx: ReportContext) -> str:
    shown = sorted(escape_controls(tuple(findings)), key=sort_key)
    by_rule: dict[str, list[Finding]] = {}
    for f in shown:
        by_rule.setdefault(f.rule, []).append(f)
    root = _element("testsuites", name=NAME, **(counts(shown) if shown else _CLEAN))
    root.extend([testsuite(rule, by_rule[rule], docs, ctx) for rule in sorted(by_rule)] or [passing_suite()])
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
