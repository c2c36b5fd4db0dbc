"""Java sources through tree-sitter: the byte range of a string literal (or of a value inside one, such
as a placeholder's default), a constant's uses, and the statement of a `subscribe` call."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache

from tree_sitter import Node, Parser, Tree

from subguard.extract.java.tree import language
from subguard.extract.java.tree import walk as _walk
from subguard.fix.model import Slice
from subguard.fix.source import Source

LANG = "java"
_ESCAPE = re.compile(r"\\(?:u+[0-9a-fA-F]{4}|[0-3]?[0-7]{1,2}|.)", re.DOTALL)
_SIMPLE = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", "s": " ", '"': '"', "'": "'", "\\": "\\"}
_DECLARATIONS = ("method_invocation", "annotation", "object_creation_expression")


@lru_cache(maxsize=1)
def _parser() -> Parser:
    return Parser(language())


_CACHE: dict[tuple[str, str], tuple[Tree, bytes]] = {}


def _tree(src: Source) -> tuple[Tree, bytes]:
    key = (str(src.path), src.digest)
    if key not in _CACHE:
        data = src.text.encode("utf-8", "surrogatepass")
        _CACHE[key] = (_parser().parse(data), data)
    return _CACHE[key]


def _char(data: bytes, byte: int) -> int:
    return len(data[:byte].decode("utf-8", "surrogatepass"))


def _byte(src: Source, offset: int) -> int:
    return len(src.text[:offset].encode("utf-8", "surrogatepass"))


def _unescape(m: re.Match[str]) -> str:
    esc = m.group(0)[1:]
    if esc.startswith("u"):
        return chr(int(esc.lstrip("u")[:4], 16))
    if esc[:1].isdigit():
        return chr(int(esc, 8))
    return _SIMPLE.get(esc, esc)


def decode(style: str, source: str) -> str | None:
    """The value of a literal's characters between its quotes (escapes interpreted)."""
    del style
    if '"' in _ESCAPE.sub("", source) or "\n" in source:
        return None
    return _ESCAPE.sub(_unescape, source)


def encode(style: str, value: str) -> str | None:
    del style
    out = []
    for ch in value:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def _literals(src: Source, start: int, end: int) -> Iterator[tuple[int, int, str]]:
    """(start, end, content) of every one-line string literal's content between two offsets."""
    tree, data = _tree(src)
    lo, hi = _byte(src, start), _byte(src, end)
    for n in _walk(tree.root_node):
        if n.type == "string_literal" and lo <= n.start_byte and n.end_byte <= hi:
            text = (n.text or b"").decode("utf-8", "surrogatepass")
            if text.startswith('"""') or len(text) < 2:
                continue  # a text block: its value is computed from its indentation, not edited here
            s, e = _char(data, n.start_byte) + 1, _char(data, n.end_byte) - 1
            yield s, e, src.text[s:e]


def literal_in(src: Source, start: int, end: int, value: str, skip: int | None = None) -> list[Slice]:
    """Every literal between start and end holding `value`: the whole literal, or the value inside
    it when it is written there without escapes (a placeholder's default: "${key:TagA||TagB}")."""
    out = []
    for s, e, content in _literals(src, start, end):
        if s - 1 == skip:
            continue
        if decode("", content) == value:
            out.append(Slice(LANG, s, e))
        elif value and "\\" not in content and content.count(value) == 1 and "${" in content:
            at = s + content.index(value)
            out.append(Slice(LANG, at, at + len(value)))
    return out


def declaration(src: Source, line: int, column: int) -> tuple[int, int] | None:
    """The innermost call, annotation or constructor around (line, column)."""
    tree, data = _tree(src)
    at = _byte(src, src.offset(line, column))
    best: Node | None = None
    for n in _walk(tree.root_node):
        if (
            n.type in _DECLARATIONS
            and n.start_byte <= at < n.end_byte
            and (best is None or n.end_byte - n.start_byte < best.end_byte - best.start_byte)
        ):
            best = n
    return None if best is None else (_char(data, best.start_byte), _char(data, best.end_byte))


def uses(src: Source, name: str, definition: int | None = None) -> list[int]:
    """Offsets of every identifier `name` (a field access or a simple name), imports and the
    declarator at `definition` left out."""
    if name not in src.text:
        return []
    tree, data = _tree(src)
    out = []
    for n in _walk(tree.root_node):
        if n.type == "import_declaration":
            continue
        if n.type != "identifier" or (n.text or b"").decode("utf-8", "surrogatepass") != name:
            continue
        parent = n.parent
        if parent is not None and parent.type == "variable_declarator" and parent.child_by_field_name("name") == n:
            value = parent.child_by_field_name("value")
            if definition is None or (
                value is not None and _char(data, value.start_byte) <= definition < _char(data, value.end_byte)
            ):
                continue
        if _inside(n, "import_declaration"):
            continue
        out.append(_char(data, n.start_byte))
    return sorted(out)


def _inside(node: Node, kind: str) -> bool:
    p = node.parent
    while p is not None:
        if p.type == kind:
            return True
        p = p.parent
    return False


def statement(src: Source, line: int, column: int) -> tuple[int, int] | str:
    """The whole lines of the expression statement that is exactly the call at (line, column)."""
    span = declaration(src, line, column)
    if span is None:
        return "no call found at the subscription"
    tree, data = _tree(src)
    lo, hi = _byte(src, span[0]), _byte(src, span[1])
    for n in _walk(tree.root_node):
        if n.type == "method_invocation" and (n.start_byte, n.end_byte) == (lo, hi):
            stmt = n.parent
            if stmt is None or stmt.type != "expression_statement" or stmt.end_byte - n.end_byte > 1:
                return "the subscribe call is part of a larger statement"
            block = stmt.parent
            if block is None or len([c for c in block.named_children if c.type != "line_comment"]) < 2:
                return "the subscribe call is the only statement of its block"
            start, end = _char(data, stmt.start_byte), _char(data, stmt.end_byte)
            line_start = src.starts[src.position(start)[0] - 1]
            nxt = src.position(end)[0]
            stop = src.starts[nxt] if nxt < len(src.starts) else len(src.text)
            rest = src.text[end:stop].strip()
            if src.text[line_start:start].strip() or (rest and not rest.startswith("//")):
                return "the statement shares its line with other code"
            return line_start, stop
    return "no call found at the subscription"


def _errors(text: str) -> int:
    root = _parser().parse(text.encode("utf-8", "surrogatepass")).root_node
    return sum(1 for n in _walk(root) if n.type == "ERROR" or n.is_missing)


def check(text: str, before: str) -> str | None:
    """Why the edited file is wrong (tree-sitter finds more syntax errors than before), else None."""
    return "the fixed file has a syntax error" if _errors(text) > _errors(before) else None
