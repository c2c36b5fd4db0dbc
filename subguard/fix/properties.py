"""`.properties` files by line: the value of one logical line (continuations included) is replaced by
the new value, escaped as `Properties.load` reads it; the rest of the line, and every other line,
stays as written."""

from __future__ import annotations

import re

from subguard.extract.spring.props import PropertiesError, read_properties
from subguard.fix.model import Slice
from subguard.fix.source import Source

LANG = "properties"
_BLANKS = " \t\f"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_UNICODE = re.compile(r"(?<!\\)(?:\\\\)*\\u([0-9a-fA-F]{4})")


def _logical(src: Source, line: int) -> tuple[str, list[int]] | None:
    """The logical line that starts on `line`: its text and the file offset of each of its characters."""
    if line < 1 or line > len(src.starts):
        return None
    chars: list[str] = []
    where: list[int] = []
    i = line - 1
    first = True
    while i < len(src.starts):
        start = src.starts[i]
        stop = src.starts[i + 1] if i + 1 < len(src.starts) else len(src.text)
        physical = src.text[start:stop].rstrip("\r\n")
        skip = len(physical) - len(physical.lstrip(_BLANKS))
        if first:
            skip = 0  # the value column counts from the start of the logical line's own text as read
        body = physical[skip:]
        trailing = len(body) - len(body.rstrip("\\"))
        more = trailing % 2 == 1
        body = body[:-1] if more else body
        chars.extend(body)
        where.extend(range(start + skip, start + skip + len(body)))
        if not more:
            break
        first = False
        i += 1
    return "".join(chars), where


def _unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch != "\\" or i + 1 >= len(text):
            out.append(ch)
            i += 1
        elif text[i + 1] == "u":
            out.append(chr(int(text[i + 2 : i + 6], 16)))
            i += 6
        else:
            out.append(_ESCAPES.get(text[i + 1], text[i + 1]))
            i += 2
    return "".join(out)


def literal_at(src: Source, line: int, column: int, value: str) -> Slice | None:
    """The value of the entry whose logical line starts on `line`, from `column` of that line's text
    (leading blanks included, as subguard's reader counts it) to the end of the logical line."""
    got = _logical(src, line)
    if got is None:
        return None
    text, where = got
    lead = len(text) - len(text.lstrip(_BLANKS))
    begin = lead + column - 1
    if begin > len(text) or not where:
        return None
    try:
        if _unescape(text[begin:]) != value:
            return None
    except ValueError:
        return None
    start = where[begin] if begin < len(where) else where[-1] + 1
    end = where[-1] + 1
    written = src.text[start:end]
    nonascii = any(ord(c) > 127 for c in written)
    escaped = sorted({chr(int(m, 16)) for m in _UNICODE.findall(written)})
    return Slice(LANG, start, end, ("unicode" if nonascii else "ascii") + "|" + "".join(escaped))


def decode(style: str, source: str) -> str | None:
    del style
    try:
        entries = read_properties("k=" + source + "\n")
    except PropertiesError:
        return None
    return entries[0].value if len(entries) == 1 else None


def encode(style: str, value: str) -> str | None:
    """`value` escaped for a properties value: backslashes, line ends, a leading blank; characters
    beyond ASCII as \\uXXXX unless the value already holds them unescaped, and every character the
    old value wrote as a \\uXXXX escape written so again (the escapes are kept)."""
    kind, _, kept = style.partition("|")
    out: list[str] = []
    for i, ch in enumerate(value):
        if ch in kept:
            out.extend(f"\\u{unit:04x}" for unit in _utf16(ch))
        elif ch == "\\":
            out.append("\\\\")
        elif ch in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[ch])
        elif ch == " " and i == 0:
            out.append("\\ ")
        elif ord(ch) > 127 and kind != "unicode":
            out.extend(f"\\u{unit:04x}" for unit in _utf16(ch))
        else:
            out.append(ch)
    return "".join(out)


def _utf16(ch: str) -> list[int]:
    data = ch.encode("utf-16-be", "surrogatepass")
    return [(data[i] << 8) | data[i + 1] for i in range(0, len(data), 2)]


def check(text: str, before: str) -> str | None:
    del before
    try:
        read_properties(text)
    except PropertiesError as exc:
        return f"the fixed file is not a valid properties file: {exc}"
    return None
