"""Cross-file constant resolution for Java: literals, `static final` constants, imports, concatenation.

`Symbols` indexes the classes of every parsed Java file by fully qualified name and loads the
files the prefilter skipped on demand (`load(path) -> JavaFacts | None`), remembering which it
loaded so the extractor can record them. `string_value(expr, where)` gives a `Value` (raw text:
Spring placeholders are resolved later) and never guesses.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from subguard.core.model import Location, Resolution, Value
from subguard.extract.java.facts import ClassFacts, Expr, JavaFacts

_MAX_DEPTH = 12
_RANK = {Resolution.LITERAL: 0, Resolution.CONSTANT: 1, Resolution.IMPORTED_CONSTANT: 2}


@dataclass(frozen=True)
class Where:
    """The lexical place an expression was written: file, its facts, and the enclosing class."""

    path: str
    facts: JavaFacts
    class_name: str


@dataclass(frozen=True)
class _Entry:
    path: str
    facts: JavaFacts
    cls: ClassFacts


class Symbols:
    def __init__(self, files: dict[str, JavaFacts], all_paths: Iterable[str], load: Callable[[str], JavaFacts | None]) -> None:
        self._classes: dict[str, _Entry] = {}
        self._by_base: dict[str, list[str]] = {}
        self._load = load
        self._tried: set[str] = set()
        self.loaded: dict[str, JavaFacts | None] = {}
        for path in all_paths:
            if path.endswith(".java"):
                self._by_base.setdefault(posixpath.basename(path)[:-5], []).append(path)
        for path, facts in files.items():
            self._register(path, facts)
            self._tried.add(path)

    def _register(self, path: str, facts: JavaFacts) -> None:
        prefix = f"{facts.package}." if facts.package else ""
        for cls in facts.classes:
            self._classes.setdefault(prefix + cls.name, _Entry(path, facts, cls))

    def _lookup(self, fq: str) -> _Entry | None:
        found = self._classes.get(fq)
        if found is not None:
            return found
        parts = fq.split(".")
        for i in range(len(parts) - 1, -1, -1):
            top, pkg = parts[i], parts[:i]
            suffix = "/".join([*pkg, top + ".java"])
            for path in self._by_base.get(top, ()):
                if path in self._tried or not (path == suffix or path.endswith("/" + suffix)):
                    continue
                self._tried.add(path)
                facts = self._load(path)
                self.loaded[path] = facts
                if facts is not None and facts.error is None:
                    self._register(path, facts)
            if fq in self._classes:
                return self._classes[fq]
        return None

    def find_class(self, dotted: str, where: Where) -> _Entry | None:
        """Resolve a type name as written at `where` (nested, imported, same package, wildcard, FQN)."""
        facts = where.facts
        head, _, rest = dotted.partition(".")
        tail = f".{rest}" if rest else ""
        pkg = f"{facts.package}." if facts.package else ""
        candidates: list[str] = []
        outer = where.class_name
        while outer:
            candidates.append(f"{pkg}{outer}.{dotted}")
            outer = outer.rpartition(".")[0]
        candidates += [imp + tail for imp in facts.imports if imp.rsplit(".", 1)[-1] == head]
        candidates.append(pkg + dotted)
        candidates += [f"{w}.{dotted}" for w in facts.wildcards]
        candidates.append(dotted)
        for fq in candidates:
            found = self._lookup(fq)
            if found is not None:
                return found
        return None

    def _member(self, entry: _Entry, name: str, depth: int) -> tuple[Expr, Where, str] | None:
        """A constant of a class or (for interface-constant patterns) of its supertypes."""
        for cname, expr in entry.cls.constants:
            if cname == name:
                return expr, Where(entry.path, entry.facts, entry.cls.name), f"{entry.cls.name}.{name}"
        if depth < _MAX_DEPTH:
            for sup in entry.cls.supers:
                parent = self.find_class(sup, Where(entry.path, entry.facts, entry.cls.name))
                if parent is not None and parent is not entry:
                    hit = self._member(parent, name, depth + 1)
                    if hit is not None:
                        return hit
        return None

    def _name(self, name: str, where: Where) -> tuple[Expr, Where, str] | None:
        facts = where.facts
        pkg = f"{facts.package}." if facts.package else ""
        outer = where.class_name
        while outer:
            entry = self._classes.get(pkg + outer)
            if entry is not None:
                hit = self._member(entry, name, 0)
                if hit is not None:
                    return hit
            outer = outer.rpartition(".")[0]
        owners = [imp.rpartition(".")[0] for imp in facts.static_imports if imp.rpartition(".")[2] == name]
        for owner in [*owners, *facts.static_wildcards]:
            entry = self.find_class(owner, where)
            if entry is not None:
                hit = self._member(entry, name, 0)
                if hit is not None:
                    return hit
        return None

    def constant(self, expr: Expr, where: Where) -> tuple[Expr, Where, str] | None:
        """The initializer a name or `Type.NAME` refers to, with its place and a label."""
        if expr.kind == "name":
            return self._name(expr.text, where)
        if expr.kind == "field" and expr.qual is not None:
            owner = expr.qual.dotted()
            if owner is None:
                return None
            entry = self.find_class(owner, where)
            return self._member(entry, expr.text, 0) if entry is not None else None
        return None

    def string_value(self, expr: Expr, where: Where, depth: int = 0) -> Value:
        """A string-valued expression as a Value (raw text; unknown with a reason when not static)."""
        loc = Location(path=where.path, line=expr.line, column=expr.column)
        if depth > _MAX_DEPTH:
            return Value.unknown(f"constant chain too deep at `{expr.source}`", loc)
        if expr.kind in ("str", "num", "bool"):
            return Value(value=expr.text, resolution=Resolution.LITERAL, location=loc)
        if expr.kind == "null":
            return Value.unknown("null", loc)
        if expr.kind in ("name", "field"):
            hit = self.constant(expr, where)
            if hit is None:
                return Value.unknown(f"`{expr.source}` is not a constant subguard can resolve (field, parameter or computed value)", loc)
            init, there, label = hit
            inner = self.string_value(init, there, depth + 1)
            if not inner.known:
                return inner
            kind = Resolution.CONSTANT if there.path == where.path else Resolution.IMPORTED_CONSTANT
            if inner.resolution is Resolution.IMPORTED_CONSTANT:
                kind = Resolution.IMPORTED_CONSTANT
            return Value(value=inner.value, resolution=kind, detail=label, location=inner.location if inner.location is not None else loc)
        if expr.kind == "concat":
            parts = [self.string_value(p, where, depth + 1) for p in expr.args]
            for p in parts:
                if not p.known:
                    return Value.unknown(f"`{expr.source}`: {p.detail}", loc)
            worst = max((p.resolution for p in parts if p.resolution in _RANK), key=lambda r: _RANK[r], default=Resolution.LITERAL)
            return Value(value="".join(p.value or "" for p in parts), resolution=worst,
                         detail=",".join(p.detail for p in parts if p.detail), location=loc)
        if expr.kind == "call" and expr.text in ("getenv", "getProperty"):
            return Value.unknown(f"`{expr.source}` is only known at run time", loc)
        return Value.unknown(f"`{expr.source[:80]}` is computed at run time", loc)


def enum_name(expr: Expr) -> str | None:
    """`MessageModel.BROADCASTING` or a statically imported `BROADCASTING` -> "BROADCASTING"."""
    if expr.kind == "field":
        return expr.text
    if expr.kind == "name" and expr.text.isupper():
        return expr.text
    return None
