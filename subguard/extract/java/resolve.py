"""Cross-file constant resolution for Java: literals, `static final` constants, imports, concatenation.

`Symbols` indexes the classes of every parsed Java file by fully qualified name and loads the
files the prefilter skipped on demand (`load(path) -> JavaFacts | None`), remembering which it
loaded so the extractor can record them. `string_value(expr, where)` gives a `Value` (raw text:
Spring placeholders are resolved later) and never guesses.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from subguard.core.model import Location, Resolution, Value
from subguard.extract.java.facts import ClassFacts, Expr, JavaFacts
from subguard.extract.java.library import library_constant
from subguard.extract.java.spring import BOUND_PROPERTY

_MAX_DEPTH = 12
OPTION_GETTERS = frozenset({"getOptionValue"})
_JDK_TYPES = frozenset({"Serializable", "Cloneable", "Runnable", "AutoCloseable", "Closeable", "Comparable", "Object"})
_Hit = tuple[Expr, "Where", str, Resolution | None]
_RANK = {Resolution.LITERAL: 0, Resolution.CONSTANT: 1, Resolution.IMPORTED_CONSTANT: 2}
# the questions `Symbols.asked` is told of
LOOKUP, REGISTERED, IN_MODULE, ANNOTATED = "lookup", "registered", "in-module", "annotated"
CARRIERS, FOREIGN = "carriers", "foreign"


@dataclass(frozen=True)
class Where:
    """The lexical place an expression was written: file, its facts, and the enclosing class."""

    path: str
    facts: JavaFacts
    class_name: str
    # parameter (or parameter-fed field) -> the argument a call site passes and where it is written:
    # a template (factory, helper, wrapper) read for one of its instances
    bindings: tuple[tuple[str, Expr, Where], ...] = ()
    # the enclosing method's parameters: a name among them is the parameter, never a same-named field
    params: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClassEntry:
    path: str
    facts: JavaFacts
    cls: ClassFacts


class Symbols:
    def __init__(
        self,
        files: dict[str, JavaFacts],
        all_paths: Iterable[str],
        load: Callable[[str], JavaFacts | None],
        grep: Callable[[bytes], list[str]] | None = None,
    ) -> None:
        self._grep = grep  # the source files of the repository a regex finds
        # told of every question whose answer the files of the run decide, with the answer
        # (`answer` asks it again): which class a name resolves to, which file of a module declares
        # a type, whether an annotation is written (`subguard.extract.java.linkmemo`)
        self.asked: Callable[[tuple[str, ...], object], None] | None = None
        self._annotated: dict[str, list[str]] = {}
        self._classes: dict[str, ClassEntry] = {}
        self._by_base: dict[str, list[str]] = {}
        self._load = load
        self._tried: set[str] = set()
        # names looked up in vain: every file that could declare one was tried (a file loaded since
        # for another name may still declare it, and `_classes` then has it)
        self._missed: set[str] = set()
        self.loaded: dict[str, JavaFacts | None] = {}
        for path in all_paths:
            if path.endswith(".java"):
                self._by_base.setdefault(posixpath.basename(path)[:-5], []).append(path)
        self._files = dict(files)
        for path, facts in files.items():
            self._register(path, facts)
            self._tried.add(path)

    def _register(self, path: str, facts: JavaFacts) -> None:
        prefix = f"{facts.package}." if facts.package else ""
        for cls in facts.classes:
            self._classes.setdefault(prefix + cls.name, ClassEntry(path, facts, cls))

    def _lookup(self, candidates: tuple[str, ...]) -> ClassEntry | None:
        """The class of the first of `candidates` (fully qualified names, in order) that resolves."""
        found = None
        for fq in candidates:
            found = self._find(fq)
            if found is not None:
                break
        if self.asked is not None:
            self.asked((LOOKUP, *candidates), _told(found))
        return found

    def _registered(self, fq: str) -> ClassEntry | None:
        """The class registered so far under `fq` (no file loaded for it)."""
        found = self._classes.get(fq)
        if self.asked is not None:
            self.asked((REGISTERED, fq), _told(found))
        return found

    def answer(self, question: tuple[str, ...]) -> object:
        """What the run's files answer to a question `asked` was told of, asked again (untold); it
        loads what asking it first loaded."""
        told, self.asked = self.asked, None
        try:
            kind = question[0]
            if kind == LOOKUP:
                return _told(self._lookup(question[1:]))
            if kind == REGISTERED:
                return _told(self._registered(question[1]))
            if kind == IN_MODULE:
                return _told(self._declared_in(question[1], question[2]))
            if kind == CARRIERS:
                return self.carriers(question[1])
            if kind == FOREIGN:
                return self.written_elsewhere(question[1])
            return self.annotation_used(question[1])
        finally:
            self.asked = told

    def _find(self, fq: str) -> ClassEntry | None:
        found = self._classes.get(fq)
        if found is not None or fq in self._missed:
            return found
        parts = fq.split(".")
        for i in range(len(parts) - 1, -1, -1):
            top, pkg = parts[i], parts[:i]
            suffix = "/".join([*pkg, top + ".java"])
            for path in self._by_base.get(top, ()):
                if path not in self._tried and (path == suffix or path.endswith("/" + suffix)):
                    self.facts_of(path)
            if fq in self._classes:
                return self._classes[fq]
        self._missed.add(fq)
        return None

    def find_class(self, dotted: str, where: Where) -> ClassEntry | None:
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
        return self._lookup(tuple(candidates))

    def _member(self, entry: ClassEntry, name: str, depth: int) -> _Hit | None:
        """A constant of a class or (for interface-constant patterns) of its supertypes; also a non-final
        field whose literal initializer is never reassigned, and a command-line option's default."""
        here = Where(entry.path, entry.facts, entry.cls.name)
        for cname, expr in entry.cls.constants:
            if cname == name:
                return expr, here, f"{entry.cls.name}.{name}", None
        for cname, expr in entry.cls.fields:
            if cname == name:
                return expr, here, f"{entry.cls.name}.{name} (field initializer, never reassigned)", None
        for cname, names, default in entry.cls.options:
            if cname == name and default is not None:
                return (
                    default,
                    here,
                    f"command-line option {names} (its default; set at run time)",
                    Resolution.OPTION_DEFAULT,
                )
            if cname == name:  # no default: read as commons-cli's getOptionValue(option) (unknown, naming the option)
                return Expr("call", "getOptionValue", args=(Expr("str", names),)), here, names, None
        if depth < _MAX_DEPTH:
            for sup in entry.cls.supers:
                parent = self.find_class(sup, Where(entry.path, entry.facts, entry.cls.name))
                if parent is not None and parent is not entry:
                    hit = self._member(parent, name, depth + 1)
                    if hit is not None:
                        return hit
        return None

    def implements(self, dotted: str, where: Where, names: frozenset[str], depth: int = 0) -> bool | None:
        """Whether a class implements one of `names` (simple names) through its supertypes in the tree;
        None when that cannot be told (the class, or a supertype that may carry it, is outside the tree)."""
        entry = self.find_class(dotted, where)
        if entry is None:
            return None
        here = Where(entry.path, entry.facts, entry.cls.name)
        unknown = False
        for sup in entry.cls.supers:
            simple = sup.rsplit(".", 1)[-1]
            if simple in names:
                return True
            if simple in _JDK_TYPES or any(
                i.endswith(f".{simple}") and i.startswith(("java.", "javax.")) for i in entry.facts.imports
            ):
                continue
            found = self.implements(sup, here, names, depth + 1) if depth < _MAX_DEPTH else None
            if found:
                return True
            unknown = unknown or found is None
        return None if unknown else False

    def _name(self, name: str, where: Where) -> _Hit | None:
        facts = where.facts
        pkg = f"{facts.package}." if facts.package else ""
        outer = where.class_name
        while outer:
            entry = self._registered(pkg + outer)
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

    def constant(self, expr: Expr, where: Where) -> _Hit | None:
        """The initializer a name or `Type.NAME` refers to, with its place, a label and (for an option
        default) the resolution it gives."""
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
        if expr.kind == "name" and where.bindings:
            for bname, bexpr, bwhere in where.bindings:
                if bname == expr.text:
                    return self._bound(expr.text, bexpr, bwhere, depth)
        if expr.kind == "name" and expr.text in where.params:
            return Value.unknown(f"`{expr.text}` is a parameter of the enclosing method", loc)
        if expr.kind in ("name", "field"):
            hit = self.constant(expr, where)
            if hit is None:
                lib = self._library(expr, where)
                if lib is not None:
                    return Value(value=lib[0], resolution=Resolution.IMPORTED_CONSTANT, detail=lib[1], location=loc)
                bound = self._config_property(expr, where, loc)
                if bound is not None:
                    return bound
                return Value.unknown(
                    f"`{expr.source}` is not a constant subguard can resolve (field, parameter or computed value)", loc
                )
            init, there, label, forced = hit
            inner = self.string_value(init, there, depth + 1)
            if not inner.known:
                return inner
            kind = Resolution.CONSTANT if there.path == where.path else Resolution.IMPORTED_CONSTANT
            if inner.resolution is Resolution.IMPORTED_CONSTANT:
                kind = Resolution.IMPORTED_CONSTANT
            return Value(
                value=inner.value,
                resolution=forced or kind,
                detail=label,
                location=inner.location if inner.location is not None else loc,
            )
        if expr.kind == "concat":
            parts = [self.string_value(p, where, depth + 1) for p in expr.args]
            for p in parts:
                if not p.known:
                    return Value.unknown(f"`{expr.source}`: {p.detail}", loc)
            worst = max(
                (p.resolution for p in parts if p.resolution in _RANK),
                key=lambda r: _RANK[r],
                default=Resolution.LITERAL,
            )
            return Value(
                value="".join(p.value or "" for p in parts),
                resolution=worst,
                detail=",".join(p.detail for p in parts if p.detail),
                location=loc,
            )
        if expr.kind == "call" and expr.text in OPTION_GETTERS and expr.args:
            return self._option(expr, where, depth, loc)
        if expr.kind == "call" and expr.text in ("getenv", "getProperty"):
            return Value.unknown(f"`{expr.source}` is only known at run time", loc)
        bound = self._element(expr, where, depth) or self._config_property(expr, where, loc)
        if bound is not None:
            return bound
        return Value.unknown(f"`{expr.source[:80]}` is computed at run time", loc)

    def annotation_used(self, name: str) -> bool:
        """Whether any source file of the repository writes `@name` (simple or qualified); True when
        subguard cannot tell (no reader)."""
        if self._grep is None:
            return True
        used = bool(self._writing(name))
        if self.asked is not None:
            self.asked((ANNOTATED, name), used)
        return used

    def carriers(self, name: str) -> tuple[tuple[str, str], ...] | None:
        """The Java files that write `@name` (each as (path, name)), or None when subguard cannot tell."""
        if self._grep is None:
            return None
        found = tuple((path, name) for path in self._writing(name) if path.endswith(".java"))
        if self.asked is not None:
            self.asked((CARRIERS, name), found)
        return found

    def written_elsewhere(self, name: str) -> bool:
        """Whether a source file in another language (Kotlin, Groovy) writes `@name`: its classes are not
        read (True when subguard cannot tell)."""
        found = self._grep is None or any(not path.endswith(".java") for path in self._writing(name))
        if self.asked is not None:
            self.asked((FOREIGN, name), found)
        return found

    def facts_of(self, path: str) -> JavaFacts | None:
        """The facts of a source file: one the extractor was given, else loaded once (recorded in
        `loaded`, its classes registered when it parses)."""
        if path in self._files:
            return self._files[path]
        if path not in self._tried:
            self._tried.add(path)
            facts = self.loaded[path] = self._load(path)
            if facts is not None and facts.error is None:
                self._register(path, facts)
        return self.loaded.get(path)

    def _writing(self, name: str) -> list[str]:
        if self._grep is None:
            return []
        if name not in self._annotated:
            self._annotated[name] = self._grep(rb"@(?:[\w$]+\.)*" + re.escape(name.encode()) + rb"\b")
        return self._annotated[name]

    def _config_property(self, expr: Expr, where: Where, loc: Location) -> Value | None:
        """`config.getConsumerGroup()` on a field whose type is a `@ConfigurationProperties("p")` class of
        the same module with a field `consumerGroup` (or `getConsumerGroup()` / `this.getConsumerGroup()`
        in that class): the placeholder `${p.consumer-group}`, which the module's Spring config resolves
        (relaxed binding) or leaves unknown naming the key."""
        here = next((c for c in where.facts.classes if c.name == where.class_name), None)
        if here is None:
            return None
        entry: ClassEntry | None
        if expr.kind == "name" and expr.text not in where.params:  # a field of the class itself (`this.x` too)
            entry, prop = ClassEntry(where.path, where.facts, here), expr.text
        elif expr.kind != "call" or expr.args or len(expr.text) < 4 or not expr.text.startswith("get"):
            return None
        elif expr.qual is None or expr.qual.text == "this":
            entry, prop = ClassEntry(where.path, where.facts, here), expr.text[3].lower() + expr.text[4:]
        elif expr.qual.kind != "name" or where.params and expr.qual.text in where.params:
            return None
        else:
            typ = dict(here.field_types).get(expr.qual.text)
            entry, prop = self._in_module(typ, where) if typ else None, expr.text[3].lower() + expr.text[4:]
        if entry is None or entry.cls.config_prefix is None:
            return None
        prefix = self.string_value(entry.cls.config_prefix, Where(entry.path, entry.facts, entry.cls.name))
        if prefix.value is None or prop not in dict(entry.cls.field_types):
            return None
        kebab = re.sub(r"(?<!^)(?=[A-Z])", "-", prop).lower()
        return Value(
            value=f"${{{prefix.value}.{kebab}}}",
            resolution=Resolution.IMPORTED_CONSTANT,
            detail=f"{entry.cls.name}.{prop}, {BOUND_PROPERTY} '{prefix.value}'",
            location=loc,
        )

    def _in_module(self, typ: str, where: Where) -> ClassEntry | None:
        """The class `typ` declared in a `typ.java` of the same module as `where` (modules often repeat a
        package and class name, each with its own configuration class), else None."""
        module = _module(where.path)
        found = self._declared_in(typ, module)
        if self.asked is not None:
            self.asked((IN_MODULE, typ, module), _told(found))
        return found

    def _declared_in(self, typ: str, module: str) -> ClassEntry | None:
        for path in self._by_base.get(typ, ()):
            if _module(path) != module:
                continue
            facts = self.facts_of(path)
            cls = next((c for c in facts.classes if c.name == typ), None) if facts is not None else None
            if facts is not None and cls is not None:
                return ClassEntry(path, facts, cls)
        return None

    def _element(self, expr: Expr, where: Where, depth: int) -> Value | None:
        """`listener.topic()` on a reflective read of `@Listener` (`getDeclaredAnnotation(Listener.class)`),
        for one class carrying it: the element's value there, or its default (bound as
        `@Listener.topic`, `link.Linker.instances`); None when nothing binds it."""
        for key in element_keys(expr) if where.bindings else ():
            for bname, bexpr, bwhere in where.bindings:
                if bname == key:
                    return self._bound(key, bexpr, bwhere, depth)
        return None

    def _bound(self, name: str, arg: Expr, there: Where, depth: int) -> Value:
        """A template's parameter read as the argument one call site passes, or an annotation element as
        one carrier writes it (provenance: both)."""
        inner = self.string_value(arg, there, depth + 1)
        site = f"{there.path}:{arg.line}"
        what = "annotation element" if name.startswith("@") else "parameter"
        if not inner.known:
            return Value.unknown(f"{what} `{name}` is `{arg.source[:80]}` at {site}: {inner.detail}", inner.location)
        detail = f"{what} {name} = {arg.source[:80]} at {site}" + (f" ({inner.detail})" if inner.detail else "")
        return inner.model_copy(update={"detail": detail})

    def _option(self, expr: Expr, where: Where, depth: int, loc: Location) -> Value:
        """commons-cli `cl.getOptionValue('t', "dflt")` (or `cl.hasOption('t') ? ... : "dflt"`): the default,
        set at run time by the option; without a default, unknown naming the option."""
        opt = expr.args[0].text if expr.args[0].kind in ("str", "num") else expr.args[0].source
        if len(expr.args) < 2:
            return Value.unknown(f"set at run time by the command-line option {opt}", loc)
        default = self.string_value(expr.args[1], where, depth + 1)
        if not default.known:
            return Value.unknown(f"set at run time by the command-line option {opt} (default: {default.detail})", loc)
        return Value(
            value=default.value,
            resolution=Resolution.OPTION_DEFAULT,
            detail=f"command-line option {opt} (its default; set at run time)",
            location=default.location or loc,
        )

    @staticmethod
    def _library(expr: Expr, where: Where) -> tuple[str, str] | None:
        """A RocketMQ library constant (`MixAll.LMQ_PREFIX`, or statically imported) not found in the tree."""
        facts = where.facts
        if expr.kind == "field" and expr.qual is not None:
            owner = expr.qual.dotted()
            return library_constant(owner, expr.text, facts.imports, facts.wildcards) if owner else None
        for imp in facts.static_imports:
            owner, _, name = imp.rpartition(".")
            if name == expr.text:
                return library_constant(owner, name, (owner,), ())
        for owner in facts.static_wildcards:
            hit = library_constant(owner, expr.text, (owner,), ())
            if hit is not None:
                return hit
        return None


# calls that read an annotation by reflection (`X.class.getAnnotation(...)`, Spring's `findAnnotation`)
REFLECTION = frozenset(
    {
        "getClass",
        "getAnnotation",
        "getDeclaredAnnotation",
        "getAnnotationsByType",
        "findAnnotation",
        "findMergedAnnotation",
        "findAnnotationOnBean",
    }
)


def bound_name(expr: Expr) -> str | None:
    """The name a template's binding gives `expr` by: a parameter's (`topic`), or an annotation
    element read by reflection (`listener.topic()` -> `@Listener.topic`)."""
    if expr.kind == "name":
        return expr.text
    keys = element_keys(expr)
    return keys[0] if len(keys) == 1 else None


def element_keys(expr: Expr) -> list[str]:
    """The bindings an annotation element read by reflection may be given by (`listener.topic()` on
    `getDeclaredAnnotation(Listener.class)` -> `@Listener.topic`, one per annotation named); none
    for any other expression."""
    read = expr.qual
    if expr.kind != "call" or expr.args or read is None or read.kind != "call" or read.text not in REFLECTION:
        return []
    return [f"@{name}.{expr.text}" for name in reflected_names(read)]


def reflected_names(call: Expr) -> list[str]:
    """The annotation types a reflective call names by class literal (`Listener.class` -> Listener)."""
    return [a.source[: -len(".class")].rsplit(".", 1)[-1] for a in call.args if a.source.endswith(".class")]


def _told(entry: ClassEntry | None) -> tuple[tuple[str, str], ...] | None:
    """A class found, as a question's answer: ((its file, its name),), or None."""
    return None if entry is None else ((entry.path, entry.cls.name),)


def _module(path: str) -> str:
    """The folder a Maven/Gradle module's sources sit under (`svc/` for `svc/src/main/java/...`)."""
    head, sep, _ = path.partition("src/main/java/")
    return head if sep else posixpath.dirname(path)


def enum_name(expr: Expr) -> str | None:
    """`MessageModel.BROADCASTING` or a statically imported `BROADCASTING` -> "BROADCASTING"."""
    if expr.kind == "field":
        return expr.text
    if expr.kind == "name" and expr.text.isupper():
        return expr.text
    return None
