"""Inline and config waivers: pure functions over findings and source text.

Inline: `# subguard: ignore[SG102,SG103] reason` (`//` in Java/Kotlin/Groovy/Scala). A trailing
comment covers its own line; a comment alone on its line covers the next line that is not itself
a waiver comment (so several waiver lines can be stacked above one statement). In YAML, when that
line is a key that opens a block (`input:` with more-indented lines below), the waiver covers the
whole block, as a waiver above a Java annotation covers the declaration: a Spring binding's
destination, group and subscription sit on different lines of one block. `.properties` files
have no trailing comments (`#` there is part of the value), so only whole-line waivers count.

A waiver applies to a finding of one of its rules when it covers the finding's primary line OR the
line of any related location: a group finding spans files, its primary member is an arbitrary
choice of the engine, and a reviewer waives where they look. A location inside a multi-line
declaration (a listener annotation with its class's other annotations, a subscribe call) counts
every line of it (`Location.span`), so the waiver can sit above the declaration or on the argument
that is wrong.

Waivers never apply silently wrong. Each of these becomes an SG903 finding at the waiver and the
waiver does not apply: no rule id, no reason, an unknown rule id, an inline waiver for a rule in
`no-inline-waivers` (warning), an expired config waiver (warning), a waiver that matched nothing
(only for rules that ran, so `--select` does not make every other waiver "unused").
"""

from __future__ import annotations

import datetime as dt
import io
import re
import tokenize
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from subguard.core.config import Config, Waiver
from subguard.core.model import WAIVER_NEEDLE, Finding, Location, RuleDoc, Severity, Suppression, fingerprint

WAIVER_RULE = "SG903"
_SLASH_EXTS = (".java", ".kt", ".kts", ".groovy", ".scala", ".gradle")
_BODY = re.compile(r"^\s*subguard\s*:\s*ignore\b\s*(?:\[(?P<ids>[^\]]*)\])?(?P<reason>.*)$", re.IGNORECASE)
_HASH = re.compile(r"(?:^|(?<=\s))#")
_SLASH = re.compile(r"//")
NEEDLE = WAIVER_NEEDLE


@dataclass(frozen=True)
class InlineWaiver:
    """One waiver comment: the rule ids it names, its reason and the lines it covers."""

    rules: tuple[str, ...]
    reason: str
    location: Location
    covers: tuple[int, ...]


@dataclass(frozen=True)
class Problem:
    """Why a waiver was not applied (or not needed); becomes an SG903 finding."""

    message: str
    location: Location
    key: str  # stable identity for the fingerprint (no line numbers)
    severity: Severity | None = None  # None: the SG903 policy's severity


# --- parsing -----------------------------------------------------------------------------------


def _parse_body(body: str) -> tuple[tuple[str, ...], str] | None:
    """(rule ids, reason) from a comment's text after the marker, or None when it is no waiver.

    The waiver may follow another directive in the same comment: `# noqa: E501  # subguard: ...`.
    """
    m = _BODY.match(body)
    rest = body
    while m is None and "#" in rest:
        rest = rest.split("#", 1)[1]
        m = _BODY.match(rest)
    if m is None:
        return None
    ids = tuple(dict.fromkeys(i.strip().upper() for i in (m.group("ids") or "").split(",") if i.strip()))
    reason = m.group("reason").strip().lstrip(":-\u2013\u2014 ").strip()
    return ids, reason


def _python_comments(text: str) -> list[tuple[int, int, str, bool]] | None:
    """(line, column, body, alone) of every real comment; None when the file does not tokenize."""
    out: list[tuple[int, int, str, bool]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                alone = not tok.line[: tok.start[1]].strip()
                out.append((tok.start[0], tok.start[1] + 1, tok.string[1:], alone))
    except (tokenize.TokenError, SyntaxError):
        return None
    return out


def _line_comments(path: str, lines: Sequence[str]) -> list[tuple[int, int, str, bool]]:
    """Comments found by marker: `//` for JVM sources, `#` after whitespace or at line start otherwise."""
    properties = path.endswith(".properties")
    marker = _SLASH if path.endswith(_SLASH_EXTS) else _HASH
    out: list[tuple[int, int, str, bool]] = []
    for number, line in enumerate(lines, 1):
        if properties:
            stripped = line.lstrip()
            if stripped[:1] in ("#", "!"):
                out.append((number, len(line) - len(stripped) + 1, stripped[1:], True))
            continue
        for m in marker.finditer(line):
            if _BODY.match(line[m.end() :]):
                out.append((number, m.start() + 1, line[m.end() :], not line[: m.start()].strip()))
                break
    return out


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _yaml_block(lines: Sequence[str], target: int) -> int:
    """The last line of the block a YAML key on line `target` (1-based) opens: the lines after it
    that are blank, comments, or more indented (a sequence may also sit at the key's own indent);
    `target` itself when it opens no block (a scalar value, a list item, a comment)."""
    if not 1 <= target <= len(lines):
        return target
    head = lines[target - 1]
    body = head.split(" #", 1)[0].rstrip()
    if not body.endswith(":") or body.lstrip().startswith(("#", "- ")):
        return target
    depth, last = _indent(head), target
    for number in range(target + 1, len(lines) + 1):
        text = lines[number - 1]
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped in ("---", "...") and _indent(text) == 0:
            break
        if _indent(text) > depth or (_indent(text) == depth and stripped.startswith("- ")):
            last = number
            continue
        break
    return last


def parse_inline(path: str, text: str, repo: str = "") -> list[InlineWaiver]:
    """Every `subguard: ignore[...]` comment of one file, in line order."""
    if "subguard" not in text.lower():
        return []
    lines = text.splitlines()
    comments = _python_comments(text) if path.endswith((".py", ".pyi")) else None
    if comments is None:
        comments = _line_comments(path, lines)
    found: list[tuple[int, int, tuple[str, ...], str, bool]] = []
    for line, col, body, alone in comments:
        parsed = _parse_body(body)
        if parsed is not None:
            found.append((line, col, parsed[0], parsed[1], alone))
    waiver_lines = {line for line, _, _, _, alone in found if alone}
    out: list[InlineWaiver] = []
    for line, col, ids, reason, alone in found:
        covers: tuple[int, ...] = (line,)
        if alone:
            target = line + 1
            while target in waiver_lines:
                target += 1
            block = _yaml_block(lines, target) if path.endswith((".yaml", ".yml")) else target
            covers = (line, *range(target, block + 1))
        out.append(InlineWaiver(ids, reason, Location(path=path, line=line, column=col, repo=repo), covers))
    return out


def collect_inline(sources: Iterable[tuple[str, str, str]]) -> list[InlineWaiver]:
    """Waivers of many files given as (repo, path, text)."""
    return [w for repo, path, text in sources for w in parse_inline(path, text, repo)]


# --- applying ------------------------------------------------------------------------------------


def _same_file(a: Location, b: Location) -> bool:
    return a.path == b.path and (not a.repo or not b.repo or a.repo == b.repo)


def _lines(loc: Location) -> range:
    """The lines a waiver may sit on for `loc`: its own, or every line of its declaration."""
    first, last = loc.span or (loc.line, loc.line)
    return range(first, last + 1)


def _covered(f: Finding, w: InlineWaiver) -> bool:
    return any(
        _same_file(loc, w.location) and any(line in _lines(loc) for line in w.covers)
        for loc in (f.location, *(r.location for r in f.related))
    )


def matches_prefix(rule: str, patterns: Iterable[str]) -> bool:
    """True when a pattern equals the rule id or is a prefix of it (`SG1` covers SG101..SG199)."""
    return any(rule == p or (p and rule.startswith(p)) for p in patterns)


def apply_inline(
    findings: Sequence[Finding],
    waivers: Sequence[InlineWaiver],
    *,
    known: Callable[[str], bool],
    enabled: Callable[[str], bool],
    forbidden: Sequence[str] = (),
) -> tuple[list[Finding], list[Problem]]:
    """Mark findings covered by a valid inline waiver; report every waiver that did not apply."""
    problems: list[Problem] = []
    valid: list[tuple[InlineWaiver, str]] = []
    for w in waivers:
        key = f"inline\x1f{w.location.path}\x1f{','.join(w.rules)}\x1f{w.reason}"
        if not w.rules:
            problems.append(
                Problem(
                    "waiver names no rule: write `subguard: ignore[SG102] <reason>` (blanket waivers are not supported)",
                    w.location,
                    key + "\x1fnorule",
                )
            )
            continue
        if not w.reason:
            problems.append(
                Problem(
                    f"waiver for {', '.join(w.rules)} has no reason, so it does not apply: add why after `]`",
                    w.location,
                    key + "\x1fnoreason",
                )
            )
            continue
        for rule in w.rules:
            if not known(rule):
                problems.append(Problem(f"waiver names unknown rule {rule}", w.location, f"{key}\x1funknown\x1f{rule}"))
            elif matches_prefix(rule, forbidden):
                problems.append(
                    Problem(
                        f"inline waivers for {rule} are forbidden by config (no-inline-waivers), so this one does not apply; use a config waiver",
                        w.location,
                        f"{key}\x1fforbidden\x1f{rule}",
                        Severity.WARNING,
                    )
                )
            else:
                valid.append((w, rule))
    used: set[tuple[int, str]] = set()
    out: list[Finding] = []
    for f in findings:
        if f.suppressed is None:
            # every waiver covering the finding counts as used (two teams may each waive their member
            # of one group finding); the first one is the finding's suppression
            covering = [(i, w) for i, (w, rule) in enumerate(valid) if rule == f.rule and _covered(f, w)]
            if covering:
                w = covering[0][1]
                f = f.model_copy(
                    update={"suppressed": Suppression(kind="inline", reason=w.reason, location=w.location)}
                )
                used.update((i, f.rule) for i, _ in covering)
        out.append(f)
    for i, (w, rule) in enumerate(valid):
        if (i, rule) not in used and enabled(rule):
            key = f"inline\x1f{w.location.path}\x1f{rule}\x1f{w.reason}\x1funused"
            problems.append(Problem(f"unused waiver: no {rule} finding on this line or the next", w.location, key))
    return out, problems


def _waiver_name(w: Waiver) -> str:
    topic = f" topic {w.topic}" if w.topic else ""
    return f"config waiver for {w.rule} group {w.group}{topic}"


def apply_config(
    findings: Sequence[Finding],
    waivers: Sequence[Waiver],
    locations: Sequence[Location],
    *,
    today: dt.date,
    enabled: Callable[[str], bool],
) -> tuple[list[Finding], list[Problem]]:
    """Mark findings matched by a config waiver (rule + group, + topic when given); report the rest.

    `locations[i]` is where waiver i is written (see `locate_config_waivers`).
    """
    problems: list[Problem] = []
    live: list[int] = []
    for i, w in enumerate(waivers):
        key = f"config\x1f{w.rule}\x1f{w.group}\x1f{w.topic or ''}"
        if w.expires is not None and w.expires < today:
            problems.append(
                Problem(
                    f"{_waiver_name(w)} expired on {w.expires.isoformat()} and no longer applies",
                    locations[i],
                    key + "\x1fexpired",
                    Severity.WARNING,
                )
            )
        elif not w.reason.strip():
            problems.append(
                Problem(f"{_waiver_name(w)} has no reason, so it does not apply", locations[i], key + "\x1fnoreason")
            )
        else:
            live.append(i)
    used: set[int] = set()
    out: list[Finding] = []
    for f in findings:
        if f.suppressed is None:
            for i in live:
                w = waivers[i]
                if w.rule == f.rule and w.group == f.group and (w.topic is None or w.topic == f.topic):
                    f = f.model_copy(
                        update={"suppressed": Suppression(kind="config", reason=w.reason, location=locations[i])}
                    )
                    used.add(i)
                    break
        out.append(f)
    for i in live:
        if i not in used and enabled(waivers[i].rule):
            w = waivers[i]
            problems.append(
                Problem(
                    f"unused {_waiver_name(w)}: it matched no finding",
                    locations[i],
                    f"config\x1f{w.rule}\x1f{w.group}\x1f{w.topic or ''}\x1funused",
                )
            )
    return out, problems


def locate_config_waivers(waivers: Sequence[Waiver], path: str, text: str, repo: str = "") -> list[Location]:
    """Best-effort line of each waiver in its config file: the n-th line naming its group."""
    lines = text.splitlines()
    seen: dict[str, int] = {}
    out: list[Location] = []
    for w in waivers:
        hits = [n for n, line in enumerate(lines, 1) if re.search(rf"(?<![\w.-]){re.escape(w.group)}(?![\w.-])", line)]
        nth = seen.get(w.group, 0)
        seen[w.group] = nth + 1
        out.append(Location(path=path, line=hits[nth] if nth < len(hits) else 1, repo=repo))
    return out


def problem_findings(problems: Iterable[Problem], docs: Mapping[str, RuleDoc]) -> list[Finding]:
    """SG903 findings; severity from the SG903 policy (note without one) unless the problem sets it."""
    doc = docs.get(WAIVER_RULE)
    default = doc.severity if doc else Severity.NOTE
    return [
        Finding(
            rule=WAIVER_RULE,
            severity=p.severity or default,
            message=p.message,
            location=p.location,
            fingerprint=fingerprint(WAIVER_RULE, p.location.repo, p.key),
        )
        for p in problems
    ]


def apply_waivers(
    found: Sequence[Finding],
    inline: Sequence[InlineWaiver],
    config: Config,
    locations: Sequence[Location],
    docs: Mapping[str, RuleDoc],
    enabled: Callable[[str], bool],
    today: dt.date,
) -> tuple[list[Finding], list[Finding]]:
    """Inline waivers, then config waivers: the findings marked, and the SG903 findings for waivers
    that were malformed, forbidden, expired or unused (only for enabled rules). `check` and the
    audit's tasks both call this, so they waive alike."""
    known = set(docs)
    marked, problems = apply_inline(
        found, inline, known=known.__contains__, enabled=enabled, forbidden=config.no_inline_waivers
    )
    marked, more = apply_config(marked, config.waivers, locations, today=today, enabled=enabled)
    return marked, [f for f in problem_findings([*problems, *more], docs) if enabled(f.rule)]
