"""A `.properties` reader with `java.util.Properties.load` semantics that keeps line numbers.

Logical lines join on an odd number of trailing backslashes; the key ends at the first unescaped
`=`, `:` or blank; escapes `\\t \\n \\r \\f \\uXXXX` are decoded and any other `\\x` is `x`. A malformed
`\\u` escape is an error (Java throws "Malformed \\uxxxx encoding."), reported with its line.
"""

from __future__ import annotations

from dataclasses import dataclass

_BLANKS = " \t\f"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


@dataclass(frozen=True)
class Entry:
    """One `key=value` pair; `line` is where its logical line starts (1-based), `column` of the value."""

    key: str
    value: str
    line: int
    column: int = 1


class PropertiesError(ValueError):
    """A file `Properties.load` would reject; `line` is 1-based."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.line = line


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Join continuation lines; comments and blank lines dropped. Returns (first line, text)."""
    out: list[tuple[int, str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        start = i
        raw = lines[i].lstrip(_BLANKS)
        i += 1
        if not raw or raw[0] in "#!":
            continue
        parts = []
        while True:
            trailing = len(raw) - len(raw.rstrip("\\"))
            if trailing % 2 == 1 and i <= len(lines):
                parts.append(raw[:-1])
                if i == len(lines):
                    break
                raw = lines[i].lstrip(_BLANKS)
                i += 1
                continue
            parts.append(raw)
            break
        out.append((start + 1, "".join(parts)))
    return out


def _unescape(text: str, line: int) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch != "\\" or i + 1 >= len(text):
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "u":
            digits = text[i + 2 : i + 6]
            if len(digits) != 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
                raise PropertiesError(
                    f"malformed \\uxxxx escape '\\u{digits}' (Properties.load rejects the file)", line
                )
            out.append(chr(int(digits, 16)))
            i += 6
            continue
        out.append(_ESCAPES.get(nxt, nxt))
        i += 2
    return "".join(out)


def _split(logical: str) -> tuple[str, str, int]:
    """Key text, value text (both still escaped) and the value's offset in the logical line."""
    i = 0
    while i < len(logical):
        ch = logical[i]
        if ch == "\\":
            i += 2
            continue
        if ch in "=:" or ch in _BLANKS:
            break
        i += 1
    key = logical[:i]
    j = i
    while j < len(logical) and logical[j] in _BLANKS:
        j += 1
    if j < len(logical) and logical[j] in "=:":
        j += 1
        while j < len(logical) and logical[j] in _BLANKS:
            j += 1
    return key, logical[j:], j


def read_properties(text: str) -> list[Entry]:
    """All entries in file order (a later duplicate key overrides an earlier one when loaded)."""
    entries: list[Entry] = []
    for line, logical in _logical_lines(text):
        key, value, offset = _split(logical)
        entries.append(Entry(_unescape(key, line), _unescape(value, line), line, offset + 1))
    return entries
