"""Templates and their instances across files: factories, helpers and wrapper classes.

A consumer construction whose unknown values are parameters of its enclosing method, or fields its
class sets from parameters, is a template (`Consumer.template`). Its instances are the call sites
the extractor can follow:

- `T c = Owner.factory(args)` (any class, `T` a consumer type): the factory's parameters bound to the
  caller's arguments, plus the calls the caller makes on `c` (subscribe, setters);
- `helper(args)` calling a method of the same class that builds the consumer;
- `new Wrapper(args)`: the constructor's parameters and the fields it sets from them bound to the
  arguments, for every template the wrapper class holds (built in `start()`/`init()`, ...).

An instance is located at its call site; a subscription whose topic the call site passes is placed
there too (one subscription per `new Wrapper("g", "t")`), else at its subscribe call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from subguard.core.model import Consumer
from subguard.extract.java.conditions import inactive
from subguard.extract.java.consumers import Site, code_consumers
from subguard.extract.java.facts import AnnotationUse, ClassFacts, ConsumerDecl, Expr, Invocation, JavaFacts, reads
from subguard.extract.java.resolve import ClassEntry, Symbols, Where
from subguard.extract.java.running import never
from subguard.extract.spring.extractor import ModuleConfig

ModuleOf = Callable[[str], ModuleConfig | None]


@dataclass(frozen=True)
class _Template:
    path: str
    facts: JavaFacts
    decl: ConsumerDecl
    # what feeds it (`Consumer.template`): when only annotations read by reflection, a call site
    # binds none of it, and the classes carrying them are its instances
    names: frozenset[str] = frozenset()

    @property
    def by_annotation(self) -> bool:
        return bool(self.names) and all(n.startswith("@") for n in self.names)


TEMPLATES = "templates"  # the question `Linker.asked` is told of


def _told(templates: list[_Template]) -> tuple[tuple[str, str], ...]:
    """A class's templates as a question's answer: (file, the construction's place) of each. (Its
    relays need no answer: they are read from the class's file, whose content the step that found
    the class already depends on.)"""
    return tuple((t.path, f"{t.decl.method}:{t.decl.line}:{t.decl.column}") for t in templates)


@dataclass(frozen=True)
class _Relay:
    """A call in a method of a class that passes that method's parameters on to another call (which may
    make a consumer): a call of the method is followed through it (`Linker._targets`)."""

    path: str
    facts: JavaFacts
    call: Invocation


# a call followed on the way to a template: the calls made on its result and where they are read
Hop = tuple[Invocation, Where]

_HOPS = 4  # how many relays deep a call is followed


def class_of(facts: JavaFacts, name: str) -> ClassFacts | None:
    return next((c for c in facts.classes if c.name == name), None)


def decl_where(path: str, facts: JavaFacts, decl: ConsumerDecl) -> Where:
    return Where(path, facts, decl.class_name, params=decl.params)


class Linker:
    """Collects the templates of a scan, then makes the instances its call sites create."""

    def __init__(self, symbols: Symbols, module_of: ModuleOf) -> None:
        self.symbols = symbols
        self.module_of = module_of
        self.templates: dict[tuple[str, str], list[_Template]] = {}  # (path, class) -> templates
        self.asked: Callable[[tuple[str, ...], object], None] | None = None  # told of each class's templates asked for
        self._relayed: dict[tuple[str, str], dict[str, list[_Relay]]] = {}  # (path, class) -> method -> relays

    def add(self, path: str, facts: JavaFacts, decl: ConsumerDecl, made: list[Consumer]) -> bool:
        """Keep `decl` of `path` as a template when what it made is one; whether it was."""
        if any(c.template for c in made):
            self.add_template(path, facts, decl, made)
            return True
        return False

    def add_template(self, path: str, facts: JavaFacts, decl: ConsumerDecl, made: Iterable[Consumer]) -> None:
        """Keep `decl` of `path` as a template of its class, with what feeds what it `made`."""
        here = (path, decl.line, decl.column)
        names = {n for c in made if (c.location.path, c.location.line, c.location.column) == here for n in c.template}
        self.templates.setdefault((path, decl.class_name), []).append(_Template(path, facts, decl, frozenset(names)))

    def _templates(self, key: tuple[str, str]) -> list[_Template]:
        found = self.templates.get(key, [])
        if self.asked is not None:
            self.asked((TEMPLATES, *key), _told(found))
        return found

    def _relays(self, key: tuple[str, str], method: str) -> list[_Relay]:
        """The calls in a method of a class that pass the method's parameters on (a file's facts do
        not change within a run: each class's are read once)."""
        found = self._relayed.get(key)
        if found is None:
            found = self._relayed[key] = {}
            facts = self.symbols.facts_of(key[0])
            if facts is not None:
                for inv in facts.invocations:
                    if (
                        inv.class_name == key[1]
                        and inv.in_method not in ("", "<init>")
                        and any(reads(a, inv.params) for a in inv.args)
                    ):
                        found.setdefault(inv.in_method, []).append(_Relay(key[0], facts, inv))
        return found.get(method, [])

    def answer(self, question: tuple[str, ...]) -> object:
        """The templates of a class `asked` was told of (or whether there is any), asked again (untold)."""
        if len(question) == 1:
            return bool(self.templates)
        return _told(self.templates.get((question[1], question[2]), []))

    def instances(self, path: str, facts: JavaFacts) -> Iterator[Consumer]:
        if self.asked is not None:
            self.asked((TEMPLATES,), bool(self.templates))
        if not self.templates:
            return
        module = self.module_of(path)
        for inv in facts.invocations:
            caller = Where(path, facts, inv.class_name, params=inv.params)
            off: str | None = None  # why the caller's class is never a bean, read at its first instance
            for tpl, bindings, hops in self._targets(inv, caller, _HOPS):
                if tpl.by_annotation:
                    continue  # the call binds none of what feeds it
                where = Where(tpl.path, tpl.facts, tpl.decl.class_name, bindings=bindings, params=tpl.decl.params)
                repeated = inv.repeated or any(h.repeated for h, _ in hops)
                inner = tuple((h.calls, w) for h, w in reversed(hops))
                site = Site(caller, inv.line, inv.column, inv.calls, repeated, inner)
                for c in code_consumers(tpl.decl, where, self.symbols, module, site):
                    off = inactive(caller, module, self.symbols) if off is None else off
                    yield never(c, off) if off and not c.never_runs else c
        for class_name in dict.fromkeys(d.class_name for d in facts.consumers):  # its own templates
            for tpl in self._templates((path, class_name)):
                yield from self._carried(tpl)

    def _carried(self, tpl: _Template) -> Iterator[Consumer]:
        """The instances of a template fed by annotations it reads by reflection: every class of the
        repository carrying one, each element bound to the value the class writes, else the
        annotation's default; located at the annotation."""
        reader = Where(tpl.path, tpl.facts, tpl.decl.class_name, params=tpl.decl.params)
        for name in sorted(n[1:] for n in tpl.names if n.startswith("@")):
            entry = self.symbols.find_class(name, reader)
            if entry is None or not entry.cls.elements:
                continue
            declared = Where(entry.path, entry.facts, entry.cls.name)
            for here, mark in self._carriers(name, entry):
                bindings = _elements(name, dict(mark.elements), here, entry.cls.elements, declared)
                where = Where(tpl.path, tpl.facts, tpl.decl.class_name, bindings=bindings, params=tpl.decl.params)
                site = Site(here, mark.line, mark.column, ())
                yield from code_consumers(tpl.decl, where, self.symbols, self.module_of(here.path), site)

    def _carriers(self, name: str, entry: ClassEntry) -> Iterator[tuple[Where, AnnotationUse]]:
        """Each class of the repository carrying the annotation type `entry` (written `@name`, any
        qualification), with that annotation."""
        for path, _ in self.symbols.carriers(name) or ():
            facts = self.symbols.facts_of(path)
            if facts is None:
                continue
            for cls in facts.classes:
                here = Where(path, facts, cls.name)
                for mark in cls.marks:
                    if mark.name.rsplit(".", 1)[-1] == name and _same(self.symbols.find_class(mark.name, here), entry):
                        yield here, mark

    def _targets(
        self, inv: Invocation, caller: Where, depth: int
    ) -> Iterator[tuple[_Template, tuple[tuple[str, Expr, Where], ...], tuple[Hop, ...]]]:
        """The templates a call instantiates, with their parameters' bindings and the relays it was
        followed through (outermost first): a call of a method that passes its parameters on to a
        factory is followed into that call, its parameters bound to the arguments."""
        if inv.owner:
            entry = self.symbols.find_class(inv.owner, caller)
            if entry is None:
                return
            key = (entry.path, entry.cls.name)
        else:
            key = (caller.path, inv.class_name)
        templates = self._templates(key)
        if inv.method != "<init>":
            for tpl in templates:
                if tpl.decl.method == inv.method and len(tpl.decl.params) == len(inv.args):
                    yield tpl, tuple((p, a, caller) for p, a in zip(tpl.decl.params, inv.args, strict=True)), ()
            for relay in self._relays(key, inv.method) if depth else ():
                call = relay.call
                if len(call.params) == len(inv.args):
                    passed = tuple((p, a, caller) for p, a in zip(call.params, inv.args, strict=True))
                    mid = Where(relay.path, relay.facts, call.class_name, bindings=passed, params=call.params)
                    for tpl, bindings, hops in self._targets(call, mid, depth - 1):
                        yield tpl, bindings, ((call, mid), *hops)
            return
        cls = class_of(templates[0].facts, key[1]) if templates else None
        if cls is None:
            return
        for ctor in cls.ctors:
            if len(ctor) != len(inv.args):
                continue
            bound = dict(zip(ctor, inv.args, strict=True))
            fields = [(f, bound[p]) for f, p in cls.param_fields if p in bound]
            bindings = tuple((n, a, caller) for n, a in [*bound.items(), *fields])
            for tpl in templates:
                if tpl.decl.method != "<init>" or len(tpl.decl.params) == len(ctor):
                    yield tpl, bindings, ()
            return


def _same(found: ClassEntry | None, entry: ClassEntry) -> bool:
    return found is not None and (found.path, found.cls.name) == (entry.path, entry.cls.name)


def _elements(
    name: str,
    written: dict[str, Expr],
    here: Where,
    elements: tuple[tuple[str, Expr | None], ...],
    declared: Where,
) -> tuple[tuple[str, Expr, Where], ...]:
    """An annotation's elements as a template's bindings (`@name.element`): as written at `here`, else
    the default its declaration gives."""
    out: list[tuple[str, Expr, Where]] = []
    for element, default in elements:
        if element in written:
            out.append((f"@{name}.{element}", written[element], here))
        elif default is not None:
            out.append((f"@{name}.{element}", default, declared))
    return tuple(out)
