"""Reporters: one module per output format, all with the same signature, chosen through `FORMATS`.

A renderer is a pure function `render(findings, docs, ctx) -> str`. It sees suppressed findings too
(marked `suppressed`) and decides how to show them; it never filters by severity or rule.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol, TypeVar

from subguard import __version__
from subguard.core.members import MEMBERS, Member
from subguard.core.model import (
    BASE_REVISION,
    BEFORE_AFTER,
    CODE_SCOPE,
    ORG_MAP,
    Finding,
    Location,
    Related,
    RuleDoc,
    Severity,
)

# format name -> "module:function" (explicit registry; a format's module loads only when used)
FORMATS: dict[str, str] = {
    "text": "subguard.report.text:render",
    "json": "subguard.report.json_report:render",
    "sarif": "subguard.report.sarif:render",
    "github": "subguard.report.github:render",
    "markdown": "subguard.report.markdown:render",
    "junit": "subguard.report.junit:render",
    "gitlab": "subguard.report.gitlab:render",
}

# data formats: every path relative to its scan root (named by the finding's `repo`), in locations and
# messages alike, wherever subguard runs; what the audit writes for the same repository, byte for byte
ROOT_RELATIVE = frozenset({"json"})

Cited = TypeVar("Cited", Related, Member)  # a record whose message cites paths


@dataclass(frozen=True)
class Root:
    """A scan root: the repo name findings carry in `Location.repo` and its absolute directory."""

    repo: str
    path: str


@dataclass(frozen=True)
class ReportContext:
    """What a renderer may know besides the findings.

    `roots` maps findings back to files; `workdir` is where paths are shown relative to (the
    current directory, so `file=` in annotations and SARIF URIs resolve from a repo checkout).
    `cite_from_workdir`: the paths a finding's text cites (its message, related messages, impact and
    change rows, written relative to the scan root) are shown like its location, relative to
    `workdir` (`check`: the roots are what the user named); off, they are left as written (the audit,
    whose repositories are not under the working directory in any useful sense).
    """

    version: str = __version__
    roots: tuple[Root, ...] = ()
    workdir: str = ""
    parsed: int = 0
    skipped: int = 0
    failed: int = 0
    color: bool = False
    show_notes: bool = False  # text and GitHub output: list notes too (else one line counts them)
    # findings only in test or example code, or about a placeholder group (rules.code_scope), are
    # counted, not listed, by text and GitHub output, and suppressed in SARIF: unless `test-code: fail`
    hide_marked: bool = True
    base_ref: str = ""  # `check --base REF`: the revision the change was judged against, as given
    base_commit: str = ""  # ... and the commit it named
    cite_from_workdir: bool = False

    @property
    def base(self) -> str:
        """`origin/main (1a2b3c4d5e6f)`; "" without a base revision."""
        return revision_label(self.base_ref, self.base_commit)

    @property
    def files(self) -> int:
        return self.parsed + self.skipped + self.failed


class Renderer(Protocol):
    def __call__(self, findings: Sequence[Finding], docs: Mapping[str, RuleDoc], ctx: ReportContext) -> str: ...


def get_renderer(name: str) -> Renderer:
    """The render function of a registered format; KeyError names the unknown format."""
    module, _, attr = FORMATS[name].partition(":")
    fn: Renderer = getattr(importlib.import_module(module), attr)
    return fn


def render(name: str, findings: Sequence[Finding], docs: Mapping[str, RuleDoc], ctx: ReportContext) -> str:
    """`findings` in format `name`; with `ctx.cite_from_workdir` every path their text cites is shown
    the way their locations are (`cite_paths`), so a finding reads one way in every format a person
    or a CI reads; the data formats (`ROOT_RELATIVE`) keep paths relative to each root throughout."""
    if ctx.cite_from_workdir and name not in ROOT_RELATIVE:
        findings = [cite_paths(f, ctx) for f in findings]
    return get_renderer(name)(findings, docs, ctx)


def root_of(location: Location, ctx: ReportContext) -> Root | None:
    """The scan root a location belongs to (by repo name; the first root when the repo is not set)."""
    return _root_named(location.repo, ctx.roots)


def _root_named(repo: str, roots: tuple[Root, ...]) -> Root | None:
    for root in roots:
        if root.repo == repo:
            return root
    return roots[0] if roots else None


def root_prefix(root: Root | None, ctx: ReportContext) -> str | None:
    """POSIX path of a root relative to the workdir ('' for the workdir itself); None when outside it."""
    return _prefix(root, ctx.workdir)


def _prefix(root: Root | None, workdir: str) -> str | None:
    if root is None or not workdir:
        return ""
    return _relative(root.path, workdir)


@functools.lru_cache(maxsize=256)
def _relative(path: str, workdir: str) -> str | None:
    try:
        rel = Path(path).resolve().relative_to(Path(workdir).resolve())
    except ValueError:
        return None
    text = rel.as_posix()
    return "" if text == "." else text


def foreign(location: Location, ctx: ReportContext) -> bool:
    """A location of a repository that is none of the roots (a member from the org map)."""
    return _foreign(location.repo, ctx.roots)


def _foreign(repo: str, roots: tuple[Root, ...]) -> bool:
    return bool(repo and roots and all(r.repo != repo for r in roots))


def display_path(location: Location, ctx: ReportContext) -> str:
    """The path to show: relative to the workdir when the root is inside it, else absolute; a location
    of a repository that is none of the roots (a member from the org map) as `repo:path`."""
    return _display(location.path, location.repo, ctx.roots, ctx.workdir)


@functools.lru_cache(maxsize=4096)  # a report cites the same few hundred paths in many messages
def _display(path: str, repo: str, roots: tuple[Root, ...], workdir: str) -> str:
    if path.startswith("/"):  # e.g. a config file outside every root
        return path
    if _foreign(repo, roots):
        return f"{repo}:{path}"
    root = _root_named(repo, roots)
    prefix = _prefix(root, workdir)
    if prefix is None:
        assert root is not None
        return (PurePosixPath(Path(root.path).resolve().as_posix()) / path).as_posix()
    return f"{prefix}/{path}" if prefix else path


# a path a message cites: `[repo:]path[:line[:column]]`, relative; a file (ending in an extension:
# `namesrv.prod:9876` is only taken when it is one of the finding's own paths) or a folder of one
_CITED = re.compile(
    r"(?<![\w./:@+%~-])(?:(?P<repo>[\w.@+-]+):)?"
    r"(?P<path>(?:[\w.@+-]+/)*[\w@+-](?:[\w.@+-]*[\w@+-])?)(?P<line>:\d+)?(?![\w/@+%-])"
)
_FILE_NAME = re.compile(r"[^/]\.[A-Za-z][\w-]*$")  # ends in a file extension


def cite_paths(f: Finding, ctx: ReportContext) -> Finding:
    """`f` with every path its message, related and member messages, impact and change rows cite shown as
    `display_path` shows its locations (relative to the working directory, absolute outside it).

    Rules write those paths relative to the scan root, as `path:line` (or `repo:path:line` when the
    members span roots), name module folders by their path and services by `repo/module folder`. A
    citation is rewritten when it is `repo:file` of a root, a file path with a folder followed by a
    line, one of the finding's own paths, a folder (with a `/`) that holds one of them, or a service of
    a root (shown as its module folder is); anything else (a host:port, a path of another repository)
    is left as written."""
    own: dict[str, str] = {}
    folders: dict[str, str] = {}
    for loc in (f.location, *(r.location for r in f.related)):
        own.setdefault(loc.path, loc.repo)
        parts = loc.path.split("/")[:-1]
        for i in range(2, len(parts) + 1):
            folders.setdefault("/".join(parts[:i]), loc.repo)
    roots = {r.repo for r in ctx.roots}

    def shown(m: re.Match[str]) -> str:
        repo, path, line = m.group("repo", "path", "line")
        if repo is None and line is None and "/" not in path and path not in own:
            return path  # a word, or a file name that is none of the finding's own paths (most matches)
        line = line or ""
        file = _FILE_NAME.search(path) is not None
        head, _, module = path.partition("/")
        if repo is None and not file and not line and module and head in roots and path not in folders:
            return _display(module, head, ctx.roots, ctx.workdir)  # a service id: `repo/module folder`
        if repo is not None:
            if repo not in roots or not file:
                return m.group(0)
        elif path in own:
            repo = own[path]
        elif file and "/" in path and line:
            repo = f.location.repo
        elif not file and not line and path in folders:
            repo = folders[path]
        else:
            return m.group(0)
        return _display(path, repo, ctx.roots, ctx.workdir) + line

    bare = [path for path in own if "/" not in path and path]  # cited alone, without a folder or line

    def text(value: str) -> str:
        if not value or ("/" not in value and ":" not in value and not any(p in value for p in bare)):
            return value  # every citation `shown` rewrites has a folder, a line, a repo or is a bare own path
        return _CITED.sub(shown, value)

    texts = (f.message, f.impact, *(r.message for r in f.related))
    if all(root_prefix(r, ctx) == "" for r in ctx.roots) and not any(f"{r}/" in t for r in roots for t in texts):
        return f  # every root is the working directory and no service id is cited: paths already read as shown

    def prop(key: str, value: object) -> object:
        if key == BEFORE_AFTER and isinstance(value, tuple):
            return tuple((text(str(row[0])), *row[1:]) for row in value)
        if key == MEMBERS and isinstance(value, tuple):  # the members' messages, as the related ones
            return tuple(_with_message(m, text(m.message)) if isinstance(m, Member) else m for m in value)
        return value

    changes = tuple((key, prop(key, value)) for key, value in f.properties)
    related = tuple(_with_message(r, text(r.message)) for r in f.related)
    update = {"message": text(f.message), "impact": text(f.impact), "related": related, "properties": changes}
    if (
        update["message"] == f.message
        and update["impact"] == f.impact
        and related == f.related
        and changes == f.properties
    ):
        return f  # nothing it cites is shown otherwise
    return f.model_copy(update=update)


def _with_message(r: Cited, message: str) -> Cited:
    """`r` with its message shown as cited (itself when that changes nothing)."""
    return r if message == r.message else r.model_copy(update={"message": message})


def cite_text(text: str, repo: str, ctx: ReportContext) -> str:
    """A text outside any finding (`simulate --inventory`'s impact lines) with the paths it cites shown
    as `cite_paths` shows a finding's, a bare `path:line` taken as one of repository `repo`."""
    f = Finding(rule="", severity=Severity.NOTE, message=text, location=Location(path="", repo=repo))
    return cite_paths(f, ctx).message


def cited_path(location: Location, ctx: ReportContext) -> str:
    """A location's path where a message cites it (SARIF link texts): as `display_path` shows it under
    `ctx.cite_from_workdir`, else as the rule wrote it (the audit); a location of a repository that is
    none of the roots keeps its own path (its `repo` names it)."""
    return display_path(location, ctx) if ctx.cite_from_workdir and not foreign(location, ctx) else location.path


def map_date(f: Finding, location: Location) -> str:
    """The org map's date when `location` is a member that came from the org map (`check --org-map`), else ""."""
    return map_dates(f)(location)


def map_dates(f: Finding) -> Callable[[Location], str]:
    """`map_date` of each location of one finding (its properties read once)."""
    info = dict(dict(f.properties).get(ORG_MAP) or ())
    date, repos = str(info.get("date") or ""), info.get("repos") or ()
    return lambda location: date if location.repo and location.repo in repos else ""


def cite(f: Finding, location: Location, ctx: ReportContext) -> str:
    """`path:line` as shown to a reader; a member from the org map as `repo:path:line (org map DATE)`."""
    date = map_date(f, location)
    if date:
        return f"{location.repo}:{location.path}:{location.line} (org map {date})"
    return f"{display_path(location, ctx)}:{location.line}"


def active(findings: Sequence[Finding]) -> list[Finding]:
    return [f for f in findings if f.suppressed is None]


def is_diagnostic(f: Finding, docs: Mapping[str, RuleDoc]) -> bool:
    """A finding about what subguard itself could not read or judge (its rule's `roles: [diagnostic]`)."""
    doc = docs.get(f.rule)
    return doc is not None and "diagnostic" in doc.roles


def marked(f: Finding, ctx: ReportContext) -> str:
    """The code scope a finding is marked with ("test", "example", "placeholder") when the terminal
    formats count it instead of listing it (and SARIF suppresses it), else ""."""
    kind = str(dict(f.properties).get(CODE_SCOPE) or "")
    return kind if ctx.hide_marked else ""


def for_display(findings: Sequence[Finding], ctx: ReportContext) -> tuple[list[Finding], list[Finding]]:
    """(shown, hidden) unsuppressed findings of the terminal formats (text, GitHub annotations): notes
    and findings only in test or example code are hidden unless `ctx.show_notes`; the machine formats
    (JSON, SARIF, ...) keep everything."""
    live = active(findings)
    if ctx.show_notes:
        return live, []
    shown: list[Finding] = []
    hidden: list[Finding] = []
    for f in live:
        (hidden if f.severity is Severity.NOTE or marked(f, ctx) else shown).append(f)
    return shown, hidden


def hidden_line(hidden: Sequence[Finding], docs: Mapping[str, RuleDoc], ctx: ReportContext) -> str:
    """One line for what a terminal format did not show, by rule:
    `67 notes not shown (60 SG902 unresolved-value, 7 SG904 deployment-link-ambiguous); --show-notes lists them`,
    and the findings only in test or example code counted apart."""
    if not hidden:
        return ""
    in_code = [f for f in hidden if marked(f, ctx)]
    notes = [f for f in hidden if not marked(f, ctx)]

    def by_rule(fs: Sequence[Finding]) -> str:
        counts: dict[str, int] = {}
        for f in fs:
            counts[f.rule] = counts.get(f.rule, 0) + 1
        return ", ".join(
            f"{n} {rule} {docs[rule].name}" if rule in docs else f"{n} {rule}" for rule, n in sorted(counts.items())
        )

    parts = []
    if notes:
        parts.append(f"{len(notes)} {'note' if len(notes) == 1 else 'notes'} not shown ({by_rule(notes)})")
    if in_code:
        noun = "finding" if len(in_code) == 1 else "findings"
        parts.append(f"{len(in_code)} {noun} only in test or example code not shown ({by_rule(in_code)})")
    return "; ".join(parts) + "; --show-notes lists them"


def severity_counts(findings: Sequence[Finding]) -> dict[Severity, int]:
    """Counts of unsuppressed findings per severity, every severity present, highest first."""
    counts = {s: 0 for s in sorted(Severity, key=lambda s: -s.rank)}
    for f in active(findings):
        counts[f.severity] += 1
    return counts


def summary_line(findings: Sequence[Finding], ctx: ReportContext) -> str:
    """`2 findings (1 error, 1 warning, 0 note), 1 suppressed; 5 files scanned (4 parsed, 1 skipped, 0 failed)`."""
    counts = severity_counts(findings)
    total = sum(counts.values())
    by_sev = ", ".join(f"{n} {s.value}" for s, n in counts.items())
    suppressed = len(findings) - total
    noun = "finding" if total == 1 else "findings"
    head = f"{total} {noun} ({by_sev})"
    if suppressed:
        head += f", {suppressed} suppressed"
    files = f"{ctx.files} file{'s' if ctx.files != 1 else ''} scanned ({ctx.parsed} parsed, {ctx.skipped} skipped, {ctx.failed} failed)"
    return f"{head}; {files}"


def distinct(names: Iterable[str], variant: Callable[[str, int], str]) -> list[str]:
    """The names in order, each made unique: a name already given is replaced by `variant(name, n)`
    for n = 2, 3, ... until the result is new."""
    used: set[str] = set()
    out: list[str] = []
    for name in names:
        candidate, n = name, 1
        while candidate in used:
            n += 1
            candidate = variant(name, n)
        used.add(candidate)
        out.append(candidate)
    return out


def sort_key(f: Finding) -> tuple[str, str, int, int, str]:
    return (f.location.repo, f.location.path, f.location.line, f.location.column, f.rule)


def use_color(isatty: bool, environ: Mapping[str, str] = os.environ) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    return isatty and not environ.get("NO_COLOR")


def revision_label(ref: str, commit: str) -> str:
    """`origin/main (1a2b3c4d5e6f)`, or the short commit alone when the ref is (a prefix of) it; "" without one."""
    if not commit:
        return ""
    short = commit[:12]
    return short if ref and commit.startswith(ref.lower()) else f"{ref} ({short})"


def base_revision(f: Finding) -> dict[str, str] | None:
    """{"ref", "commit"} of the base revision a change finding (SG6xx) was judged against; else None."""
    value = dict(f.properties).get(BASE_REVISION)
    return {str(k): str(v) for k, v in value} if value else None


def before_after(f: Finding) -> list[dict[str, str]]:
    """The before/after rows of a change finding: member, topic, before (base), after (head)."""
    rows = dict(f.properties).get(BEFORE_AFTER) or ()
    return [dict(zip(("member", "topic", "before", "after"), map(str, row))) for row in rows]
