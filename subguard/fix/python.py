"""Python sources through libcst: the string literal of a value, a constant's definition and its uses,
and the statement of a `subscribe` call. Only the literal's characters change, so formatting,
comments and quotes stay as written."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import cast

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, ParentNodeProvider, PositionProvider

from subguard.fix.model import Slice
from subguard.fix.source import Source

LANG = "python"


@dataclass(frozen=True)
class Parsed:
    module: cst.Module
    positions: dict[cst.CSTNode, CodeRange]
    parents: dict[cst.CSTNode, cst.CSTNode]


_CACHE: dict[tuple[str, str], Parsed | None] = {}


def parse(src: Source) -> Parsed | None:
    key = (str(src.path), src.digest)
    if key not in _CACHE:
        try:
            wrapper = MetadataWrapper(cst.parse_module(src.text), unsafe_skip_copy=True)
            meta = wrapper.resolve_many([PositionProvider, ParentNodeProvider])
            positions = cast("dict[cst.CSTNode, CodeRange]", dict(meta[PositionProvider]))
            parents = cast("dict[cst.CSTNode, cst.CSTNode]", dict(meta[ParentNodeProvider]))
            _CACHE[key] = Parsed(wrapper.module, positions, parents)
        except (cst.ParserSyntaxError, RecursionError, ValueError):
            _CACHE[key] = None
    return _CACHE[key]


def _offsets(src: Source, rng: CodeRange) -> tuple[int, int]:
    return src.offset(rng.start.line, rng.start.column + 1), src.offset(rng.end.line, rng.end.column + 1)


def _contains(src: Source, rng: CodeRange, offset: int) -> bool:
    start, end = _offsets(src, rng)
    return start <= offset < end


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _string_slice(src: Source, p: Parsed, node: cst.SimpleString) -> Slice | None:
    start, end = _offsets(src, p.positions[node])
    prefix, quote = node.prefix, node.quote
    if "b" in prefix.lower() or "f" in prefix.lower():
        return None
    return Slice(LANG, start + len(prefix) + len(quote), end - len(quote), prefix + quote)


def _value(node: cst.SimpleString) -> str | None:
    try:
        value = node.evaluated_value
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) else None


def declaration(src: Source, line: int, column: int) -> tuple[int, int] | None:
    """The innermost call around (line, column): the subscription's own declaration."""
    p = parse(src)
    if p is None:
        return None
    at = src.offset(line, column)
    calls = [
        n
        for n in _walk(p.module)
        if isinstance(n, cst.Call) and n in p.positions and _contains(src, p.positions[n], at)
    ]
    if not calls:
        return None
    best = min(calls, key=lambda n: _offsets(src, p.positions[n])[1] - _offsets(src, p.positions[n])[0])
    return _offsets(src, p.positions[best])


def literal_in(src: Source, start: int, end: int, value: str, skip: int | None = None) -> list[Slice]:
    """Every string literal between start and end that evaluates to `value` (a literal at `skip`, the
    topic argument the subscription's location points at, is left out)."""
    p = parse(src)
    if p is None:
        return []
    out = []
    for n in _walk(p.module):
        if isinstance(n, cst.SimpleString) and n in p.positions:
            s, e = _offsets(src, p.positions[n])
            if start <= s and e <= end and s != skip and _value(n) == value:
                sl = _string_slice(src, p, n)
                if sl is not None:
                    out.append(sl)
    return out


def definition(src: Source, attrs: tuple[str, ...], value: str) -> Slice | None:
    """The string literal assigned to a module constant (`NAME = "..."`) or a class constant
    (`Cls.NAME`), when it evaluates to `value`."""
    p = parse(src)
    if p is None or not attrs or len(attrs) > 2:
        return None
    body: list[cst.CSTNode] = list(p.module.body)
    if len(attrs) == 2:
        cls = next((n for n in body if isinstance(n, cst.ClassDef) and n.name.value == attrs[0]), None)
        if cls is None or not isinstance(cls.body, cst.IndentedBlock):
            return None
        body = list(cls.body.body)
    found = []
    for stmt in body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign):
                names = [t.target.value for t in small.targets if isinstance(t.target, cst.Name)]
                rhs: cst.BaseExpression | None = small.value
            elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                names, rhs = [small.target.value], small.value
            else:
                continue
            if attrs[-1] in names:
                found.append(rhs)
    if len(found) != 1 or not isinstance(found[0], cst.SimpleString) or _value(found[0]) != value:
        return None  # assigned twice, or not one plain literal: not a definition to edit
    return _string_slice(src, p, found[0])


def uses(src: Source, name: str) -> list[int]:
    """Offsets of every reference to `name` (a Name or an attribute `.name`), imports and the
    assignments that define it left out."""
    p = parse(src)
    if p is None or name not in src.text:
        return []
    skip: set[cst.CSTNode] = set()
    for n in _walk(p.module):
        if isinstance(n, (cst.Import, cst.ImportFrom)):
            skip.update(_walk(n))
        elif isinstance(n, cst.AssignTarget) and isinstance(n.target, cst.Name):
            skip.add(n.target)
        elif isinstance(n, cst.AnnAssign) and isinstance(n.target, cst.Name):
            skip.add(n.target)
    return sorted(
        _offsets(src, p.positions[n])[0]
        for n in _walk(p.module)
        if isinstance(n, cst.Name) and n.value == name and n not in skip and n in p.positions
    )


def statement(src: Source, line: int, column: int) -> tuple[int, int] | str:
    """The lines of the statement that is exactly the call at (line, column), to remove it; else why not."""
    p = parse(src)
    if p is None:
        return "the file does not parse"
    at = src.offset(line, column)
    call_range = declaration(src, line, column)
    if call_range is None:
        return "no call found at the subscription"
    for n in _walk(p.module):
        if not isinstance(n, cst.SimpleStatementLine) or n not in p.positions or not _contains(src, p.positions[n], at):
            continue
        if (
            len(n.body) != 1
            or not isinstance(n.body[0], cst.Expr)
            or _offsets(src, p.positions[n.body[0]]) != call_range
        ):
            return "the subscribe call is part of a larger statement"
        block = p.parents.get(n)
        if isinstance(block, cst.IndentedBlock | cst.Module) and len(block.body) < 2:
            return "the subscribe call is the only statement of its block"
        start, end = _offsets(src, p.positions[n])
        line_start = src.starts[src.position(start)[0] - 1]
        if src.text[line_start:start].strip():
            return "the statement shares its line with other code"
        nxt = src.position(end)[0]
        stop = src.starts[nxt] if nxt < len(src.starts) else len(src.text)
        if src.text[end:stop].strip() and not src.text[end:stop].strip().startswith("#"):
            return "the statement shares its line with other code"
        return line_start, stop
    return "no statement found at the subscription"


def encode(style: str, value: str) -> str | None:
    """The characters that write `value` inside a string literal of this prefix and quote."""
    quote = style.lstrip("rRuU")
    raw = "r" in style[: len(style) - len(quote)].lower()
    if raw:
        bad = "\\" in value or quote[0] in value or "\n" in value or "\r" in value
        return None if bad else value
    out = []
    for ch in value:
        if ch == "\\":
            out.append("\\\\")
        elif ch == quote[0]:
            out.append("\\" + ch)
        elif ch in "\n\r\t" and len(quote) == 1:
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


def decode(style: str, source: str) -> str | None:
    """What the literal's characters evaluate to (None when they are not a valid literal)."""
    quote = style.lstrip("rRuU")
    try:
        value = cst.SimpleString(style + source + quote).evaluated_value
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) else None


def check(text: str, before: str) -> str | None:
    """Why the edited file is wrong (it does not parse), else None."""
    del before
    try:
        cst.parse_module(text)
    except (cst.ParserSyntaxError, RecursionError, ValueError) as exc:
        return f"the fixed file does not parse: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    return None
