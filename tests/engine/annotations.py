"""Semgrep-style expectations in fixture files.

`ruleid: SG102` in a comment expects a finding of SG102 at that line if the comment trails code,
else at the next line that is not itself a comment. `ok: SG102` says the same line must not have
one. Several ids may be listed: `ruleid: SG101, SG105`. Comments start with `#` or `//`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_MARK = re.compile(
    r"(?:#|//)\s*(?P<kind>ruleid|ok)\s*:\s*(?P<ids>[A-Za-z][A-Za-z0-9_]*(?:\s*,\s*[A-Za-z][A-Za-z0-9_]*)*)"
)
_COMMENT_ONLY = re.compile(r"^\s*(?:#|//)")
TEXT_SUFFIXES = (
    ".py",
    ".java",
    ".yaml",
    ".yml",
    ".properties",
    ".kt",
    ".groovy",
    ".xml",
    ".json",
    ".toml",
    ".env",
    "Dockerfile",
)


@dataclass(frozen=True)
class Expectations:
    expected: frozenset[tuple[str, str, int]]  # (rule, path, line) that must be reported
    forbidden: frozenset[tuple[str, str, int]]  # (rule, path, line) that must not be
    rules: frozenset[str]  # every rule id mentioned


def _target(lines: list[str], index: int) -> int:
    """1-based line an annotation on lines[index] refers to."""
    if not _COMMENT_ONLY.match(lines[index]):
        return index + 1
    for j in range(index + 1, len(lines)):
        if not _COMMENT_ONLY.match(lines[j]):
            return j + 1
    return index + 1


def read(root: Path, prefix: str = "") -> Expectations:
    expected: set[tuple[str, str, int]] = set()
    forbidden: set[tuple[str, str, int]] = set()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.name.endswith(TEXT_SUFFIXES)):
        rel = prefix + path.relative_to(root).as_posix()
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError:
            continue
        for i, line in enumerate(lines):
            for m in _MARK.finditer(line):
                ids = [x.strip() for x in m.group("ids").split(",")]
                target = _target(lines, i)
                bucket = expected if m.group("kind") == "ruleid" else forbidden
                bucket.update((rule, rel, target) for rule in ids)
    rules = frozenset(r for r, _, _ in expected | forbidden)
    return Expectations(frozenset(expected), frozenset(forbidden), rules)
