"""CODEOWNERS: who owns a path of a repository, in GitHub's and GitLab's syntax (standard library only).

GitHub: one `pattern owner...` per line, `#` comments, the last matching line wins (a line without
owners leaves the path unowned). Patterns follow `.gitignore`: a leading `/` or a `/` inside the
pattern anchors it at the repository root, otherwise it matches at any depth; a trailing `/` names a
folder (and everything below it); `*` stays inside one path segment, `**` crosses them; `dir/*`
owns the files directly in `dir` only. GitLab adds sections (`[Name]`, `^[Optional]`, `[Name][2]`,
each with default owners for its lines without owners): the last match wins inside each section,
and the owners of every section that matches are combined.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# where GitHub and GitLab look, in their order (GitHub: .github/, root, docs/; GitLab: root, docs/, .gitlab/)
LOCATIONS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS", ".gitlab/CODEOWNERS")
MAX_BYTES = 3 * 1024 * 1024  # GitHub ignores a CODEOWNERS file larger than 3 MB
_SECTION = re.compile(r"^\^?\[([^\]]+)\](?:\[\d+\])?(?:\s+(.*))?$")
_TOKEN = re.compile(r"(?:\\.|\S)+")


@dataclass(frozen=True)
class Rule:
    pattern: str
    owners: tuple[str, ...]
    section: str = ""
    regex: re.Pattern[str] | None = None
    direct: bool = False  # `dir/*`: the files directly in dir, no deeper


@dataclass(frozen=True)
class CodeOwners:
    path: str  # the CODEOWNERS file, relative to the repository
    rules: tuple[Rule, ...]

    def owners(self, path: str) -> tuple[str, ...]:
        return owners_of(self.rules, path)


def _segment(seg: str) -> str:
    out = []
    i = 0
    while i < len(seg):
        ch = seg[i]
        if ch == "\\" and i + 1 < len(seg):
            out.append(re.escape(seg[i + 1]))
            i += 2
            continue
        out.append("[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch))
        i += 1
    return "".join(out)


def compile_pattern(pattern: str) -> tuple[re.Pattern[str], bool]:
    """(regex matching a path or one of its folders, whether only direct children match)."""
    pat = pattern
    folder = pat.endswith("/")
    pat = pat.strip("/") if pat.startswith("/") else pat.rstrip("/")
    anchored = pattern.startswith("/") or "/" in pat
    parts = pat.split("/") if pat else [""]
    direct = not folder and len(parts) > 1 and parts[-1] == "*"
    body = ""
    for i, seg in enumerate(parts):
        last = i == len(parts) - 1
        if seg == "**":
            body += ".*" if last else "(?:.*/)?"
        else:
            body += _segment(seg) + ("" if last else "/")
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(f"{prefix}{body}"), direct


def parse(text: str, path: str = "CODEOWNERS") -> CodeOwners:
    """The rules of a CODEOWNERS file, in file order; lines that are not rules are ignored."""
    rules: list[Rule] = []
    section, defaults = "", tuple[str, ...]()
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        head = _SECTION.match(line)
        if head:
            section = head.group(1).strip().lower()  # GitLab: section names are case-insensitive
            defaults = _owner_tokens(head.group(2) or "")
            continue
        tokens = _TOKEN.findall(line)
        pattern, owners = tokens[0], _owner_tokens(" ".join(tokens[1:]))
        regex, direct = compile_pattern(pattern)
        rules.append(Rule(pattern, owners or (defaults if section else ()), section, regex, direct))
    return CodeOwners(path, tuple(rules))


def _owner_tokens(text: str) -> tuple[str, ...]:
    out: list[str] = []
    for tok in text.split():
        if tok.startswith("#"):
            break  # an inline comment
        out.append(tok)
    return tuple(out)


def _matches(rule: Rule, path: str) -> bool:
    assert rule.regex is not None
    if rule.regex.fullmatch(path):
        return True
    if rule.direct:
        return False
    parts = path.split("/")
    return any(rule.regex.fullmatch("/".join(parts[:i])) for i in range(1, len(parts)))


def owners_of(rules: Sequence[Rule], path: str) -> tuple[str, ...]:
    """The owners of `path` (relative to the repository root): per section the last matching rule."""
    path = path.lstrip("/")
    last: dict[str, Rule] = {}
    for rule in rules:
        if _matches(rule, path):
            last[rule.section] = rule
    out: list[str] = []
    for rule in last.values():
        out += [o for o in rule.owners if o not in out]
    return tuple(out)


def find(read: Callable[[str], bytes | None]) -> CodeOwners | None:
    """The repository's CODEOWNERS file (the first of `LOCATIONS` present), parsed; None when none."""
    for rel in LOCATIONS:
        data = read(rel)
        if data is not None and len(data) <= MAX_BYTES:
            return parse(data.decode("utf-8", "replace"), rel)
    return None


@functools.lru_cache(maxsize=256)
def parsed(path: str, text: str) -> CodeOwners:
    """`parse`, once per file per process (the audit's tasks resolve many paths against one file)."""
    return parse(text, path)


@dataclass(frozen=True)
class Owners:
    """Who owns a place of a repository: the inventory's team and owner, and otherwise the owners the
    repository's CODEOWNERS file gives the path (as `transforms.with_owners` fills the tables)."""

    inventory: Mapping[str, tuple[str, str]]  # repo -> (team, owner) from the audit's inventory hints
    files: Mapping[str, tuple[str, str]]  # repo -> (CODEOWNERS path, text)

    def of(self, repo: str, path: str) -> dict[str, Any]:
        team, owner = self.inventory.get(repo, ("", ""))
        entry = self.files.get(repo)
        found = list(parsed(*entry).owners(path)) if entry is not None and path else []
        return {"team": team or " ".join(found), "owner": owner, "codeowners": found}
