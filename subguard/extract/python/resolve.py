"""Per-repo value resolution over `ModuleFacts`: constants, imports, env defaults, parameters.

`Resolver.resolve(ir, frame)` evaluates the IR statically into an `RV` (a value with its
`Resolution`); nothing is executed. Modules that the prefilter skipped are loaded on demand through
`ModuleSource.light` (a constants-only parse).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from subguard.core.model import Location, Resolution, Value
from subguard.extract.python.ir import (
    IR,
    AttrOf,
    CallIR,
    Concat,
    DictIR,
    Dyn,
    Env,
    Function,
    Glob,
    Imp,
    Lit,
    Loc,
    Local,
    ModuleFacts,
    Param,
    SelfAttr,
    Star,
    Subscript,
)

MAX_DEPTH = 60

# weakest first: a composite value is as weak as its weakest part
_STRENGTH = {
    Resolution.DYNAMIC: 0,
    Resolution.ENV_DEFAULT: 1,
    Resolution.OPTION_DEFAULT: 1,
    Resolution.PLACEHOLDER: 2,
    Resolution.IMPORTED_CONSTANT: 3,
    Resolution.CONSTANT: 4,
    Resolution.DEFAULT: 5,
    Resolution.LITERAL: 6,
}


# ---- resolved objects ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ModRef:
    path: str


@dataclass(frozen=True)
class ClassRef:
    path: str
    qual: str


@dataclass(frozen=True)
class FuncRef:
    path: str
    qual: str


@dataclass(frozen=True)
class InstanceRef:
    """An instance of a repository class (`RocketMQConfig()`): its attributes are what the class's
    methods assign to `self`, else its class attributes; its methods are the class's functions."""

    path: str
    qual: str


@dataclass(frozen=True)
class LibRef:
    """A name from outside the repo (a library such as rocketmq, or an unknown package)."""

    dotted: str


@dataclass(frozen=True)
class DictVal:
    items: tuple[tuple[RV, RV, Location | None], ...]


@dataclass(frozen=True)
class SeqVal:
    items: tuple[RV, ...]


@dataclass(frozen=True)
class CallVal:
    """A call of a library callable kept as structure (FilterExpression, ClientConfiguration, ...)."""

    dotted: str
    args: tuple[RV, ...]
    kwargs: tuple[tuple[str, RV], ...]
    location: Location | None

    def arg(self, index: int, *names: str) -> RV | None:
        kw = dict(self.kwargs)
        for name in names:
            if name in kw:
                return kw[name]
        return self.args[index] if 0 <= index < len(self.args) else None


@dataclass(frozen=True)
class ArgsVal:
    """The namespace `parser.parse_args()` returns: attributes are the parser's options."""

    path: str
    parser: str


@dataclass(frozen=True)
class MethodVal:
    """A method of a resolved value, e.g. a dict's `.get`."""

    base: RV
    name: str


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()
Obj = (
    str
    | int
    | float
    | bool
    | None
    | ModRef
    | ClassRef
    | FuncRef
    | InstanceRef
    | LibRef
    | DictVal
    | SeqVal
    | CallVal
    | ArgsVal
    | MethodVal
    | _Unknown
)


@dataclass(frozen=True)
class RV:
    """A resolved value: the object, how it was obtained, and a detail (source name or reason)."""

    obj: Obj
    resolution: Resolution = Resolution.LITERAL
    detail: str = ""
    # unknown because a run-time setting without a default is read: (its resolution, its name), so
    # that `setting or "fallback"` resolves to the fallback as that setting's default
    unset: tuple[Resolution, str] | None = None

    @property
    def known(self) -> bool:
        return self.obj is not UNKNOWN

    def to_value(self, what: str = "value") -> Value:
        """A string `Value`; non-string objects become unknown with a reason."""
        obj = self.obj
        if obj is UNKNOWN:
            return Value.unknown(self.detail)
        if isinstance(obj, bool) or obj is None:
            return Value.unknown(f"{what} is {obj!r}, not a string")
        if isinstance(obj, (str, int, float)):
            return Value(value=str(obj), resolution=self.resolution, detail=self.detail)
        if isinstance(obj, LibRef):
            return Value.unknown(f"'{obj.dotted}' comes from outside the repo")
        return Value.unknown(f"{what} is a {type(obj).__name__}, not a string")


def unknown(reason: str) -> RV:
    return RV(UNKNOWN, Resolution.DYNAMIC, reason)


def weakest(parts: list[RV]) -> tuple[Resolution, str]:
    res = min((p.resolution for p in parts), key=lambda r: _STRENGTH[r], default=Resolution.LITERAL)
    details = []
    for p in parts:
        if p.detail and p.resolution is not Resolution.LITERAL and p.detail not in details:
            details.append(p.detail)
    return res, ", ".join(details)


# ---- frames -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Binding:
    """A parameter bound at a call site: the argument IR, the caller's frame and the argument location."""

    ir: IR
    frame: Frame
    location: Location | None


@dataclass(frozen=True)
class Frame:
    """Where an IR is evaluated: its module and the parameters bound by a factory call site."""

    module: ModuleFacts
    bindings: Mapping[tuple[str, str], Binding] = field(default_factory=dict)


def location(path: str, loc: Loc) -> Location:
    return Location(
        path=path, line=loc.line, column=loc.column, end_line=loc.end_line or None, end_column=loc.end_column or None
    )


def dotted_module(path: str) -> str:
    stem = path[:-3] if path.endswith(".py") else path.removesuffix(".pyi")
    stem = stem.removesuffix("/__init__")
    return stem.replace("/", ".")


# ---- module source ------------------------------------------------------------------------------


# how a module was asked for (`ModuleSource.note`): `get`, `get_full`, `get_attrs`
GET, FULL, ATTRS = "get", "full", "attrs"
FIND, SETTINGS, HAS = "find", "settings", "has"  # the questions the path set answers (`ModuleSource.asked`)
Question = tuple[str, ...]


class ModuleSource:
    """Modules of the repo by path: full facts when parsed, light facts loaded on demand."""

    def __init__(
        self,
        paths: frozenset[str],
        full: dict[str, ModuleFacts],
        light: Callable[[str], ModuleFacts | None],
        load_full: Callable[[str], ModuleFacts | None] | None = None,
        load_attrs: Callable[[str], ModuleFacts | None] | None = None,
    ) -> None:
        self.paths = paths
        self.full = full
        self._light = light
        self._load_full = load_full
        self._load_attrs = load_attrs
        self._attrs_cache: dict[str, ModuleFacts | None] = {}
        self._cache: dict[str, ModuleFacts | None] = {}
        self._full_cache: dict[str, ModuleFacts | None] = {}
        self._suffix: dict[str, list[str]] | None = None
        self._settings: list[str] | None = None
        self.note: Callable[[str, str], None] | None = None  # told of every module asked for: (how, path)
        # told of every question the path set answers, with the answer (`answer` asks it again)
        self.asked: Callable[[Question, object], None] | None = None
        self.hidden: frozenset[str] = frozenset()  # modules of `full` read as if they were not

    def get_full(self, path: str) -> ModuleFacts | None:
        """Full facts (methods, instance attributes, options) of a module, parsed on demand."""
        if self.note is not None:
            self.note(FULL, path)
        if path in self.full and path not in self.hidden:
            return self.full[path]
        if path not in self._full_cache:
            loaded = self._load_full(path) if self._load_full is not None and path in self.paths else None
            self._full_cache[path] = loaded if loaded is not None else self.get(path)
        return self._full_cache[path]

    def get_attrs(self, path: str) -> ModuleFacts | None:
        """A module's classes with their instance attributes: full facts when parsed, else a quick read."""
        if self.note is not None:
            self.note(ATTRS, path)
        if path in self.full and path not in self.hidden or path in self._full_cache:
            return self.get_full(path)
        if path not in self._attrs_cache:
            loaded = self._load_attrs(path) if self._load_attrs is not None and path in self.paths else None
            self._attrs_cache[path] = loaded if loaded is not None else self.get_full(path)
        return self._attrs_cache[path]

    def settings_modules(self) -> list[str]:
        """Django-style settings modules of the repo: `settings.py` and the modules of a `settings/` package."""
        if self._settings is None:
            self._settings = sorted(
                p
                for p in self.paths
                if p.endswith(".py") and (posixpath.basename(p) == "settings.py" or "settings" in p.split("/")[:-1])
            )
        if self.asked is not None:
            self.asked((SETTINGS,), tuple(self._settings))
        return self._settings

    def has(self, path: str) -> bool:
        """Whether `path` is one of the repo's files."""
        found = path in self.paths
        if self.asked is not None:
            self.asked((HAS, path), found)
        return found

    def answer(self, question: Question) -> object:
        """What the path set answers to a question `asked` was told of, asked again (untold)."""
        told, self.asked = self.asked, None
        try:
            if question[0] == FIND:
                found = self.find(question[1], question[2])
                return None if found is None else (found[0], tuple(found[1]))
            return tuple(self.settings_modules()) if question[0] == SETTINGS else self.has(question[1])
        finally:
            self.asked = told

    def get(self, path: str) -> ModuleFacts | None:
        """A module's facts: full when parsed, else its constants (a light parse on demand)."""
        if self.note is not None:
            self.note(GET, path)
        if path in self.full and path not in self.hidden:
            return self.full[path]
        if path not in self._cache:
            self._cache[path] = self._light(path) if path in self.paths else None
        return self._cache[path]

    def _index(self) -> dict[str, list[str]]:
        if self._suffix is None:
            idx: dict[str, list[str]] = {}
            for p in self.paths:
                if p.endswith((".py", ".pyi")):
                    parts = dotted_module(p).split(".")
                    for i in range(len(parts)):
                        idx.setdefault(".".join(parts[i:]), []).append(p)
            self._suffix = idx
        return self._suffix

    def find(self, dotted: str, importer: str) -> tuple[str, list[str]] | None:
        """(module path, remaining attribute names) for a dotted import seen in `importer`."""
        found = self._find(dotted, importer)
        if self.asked is not None:
            self.asked((FIND, dotted, importer), None if found is None else (found[0], tuple(found[1])))
        return found

    def _find(self, dotted: str, importer: str) -> tuple[str, list[str]] | None:
        if dotted.startswith("."):
            level = len(dotted) - len(dotted.lstrip("."))
            folder = posixpath.dirname(importer)
            for _ in range(level - 1):
                folder = posixpath.dirname(folder)
            parts = [p for p in dotted[level:].split(".") if p]
            for n in range(len(parts), -1, -1):
                base = "/".join([folder, *parts[:n]]) if folder else "/".join(parts[:n])
                for cand in (f"{base}.py", f"{base}/__init__.py", f"{base}.pyi"):
                    cand = cand.lstrip("/")
                    if cand in self.paths:
                        return cand, parts[n:]
            return None
        parts = dotted.split(".")
        idx = self._index()
        for n in range(len(parts), 0, -1):
            cands = idx.get(".".join(parts[:n]))
            if cands:
                best = max(cands, key=lambda c: (_common(c, importer), -len(c), c))
                return best, parts[n:]
        return None


def _common(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("/")[:-1], b.split("/")[:-1]):
        if x != y:
            break
        n += 1
    return n


# ---- the resolver -------------------------------------------------------------------------------


class Resolver:
    """Evaluates IR statically. `unbound` collects parameters met without a call-site binding."""

    def __init__(self, modules: ModuleSource) -> None:
        self.modules = modules
        self.unbound: list[tuple[str, str, str]] = []  # (path, function, parameter)

    def resolve(self, ir: IR | None, frame: Frame, depth: int = 0) -> RV:
        if ir is None:
            return RV(None)
        if depth > MAX_DEPTH:
            return unknown("value is defined through too many indirections (or a cycle)")
        d = depth + 1
        if isinstance(ir, Lit):
            return RV(ir.value)
        if isinstance(ir, Dyn):
            return unknown(ir.reason)
        if isinstance(ir, Glob):
            return self._glob(ir.name, frame.module, d, frame)
        if isinstance(ir, Local):
            return self._local(ir, frame, d)
        if isinstance(ir, Param):
            return self._param(ir, frame, d)
        if isinstance(ir, Imp):
            return self._import(ir.dotted, frame.module, d)
        if isinstance(ir, Star):
            return self._star(ir, frame.module, d)
        if isinstance(ir, AttrOf):
            return self._attr(self.resolve(ir.base, frame, d), ir.attr, d, frame.module)
        if isinstance(ir, SelfAttr):
            return self._self_attr(ir, frame, d)
        if isinstance(ir, Concat):
            return self._concat([self.resolve(p, frame, d) for p in ir.parts])
        if isinstance(ir, Env):
            return self._env(ir, frame, d)
        if isinstance(ir, DictIR):
            items = tuple(
                (
                    self.resolve(k, frame, d),
                    self.resolve(v, frame, d),
                    location(frame.module.path, loc) if loc.line and frame.module.full else None,
                )
                for k, v, loc in zip(ir.keys, ir.values, ir.locs)
            )
            return RV(DictVal(items))
        if isinstance(ir, Subscript):
            return self._subscript(self.resolve(ir.base, frame, d), self.resolve(ir.index, frame, d))
        if isinstance(ir, CallIR):
            return self._call(ir, frame, d)
        return unknown(f"unsupported expression {type(ir).__name__}")  # pragma: no cover

    # names ------------------------------------------------------------------------------------
    def _glob(self, name: str, module: ModuleFacts, depth: int, origin: Frame) -> RV:
        table = dict(module.globals)
        if name in table:
            rv = self.resolve(table[name], Frame(module), depth)
            return self._constant(rv, name, module, origin)
        imports = dict(module.imports)
        if name in imports:
            return self._import(imports[name], module, depth)
        if name in dict(module.classes) or name in module.defs:
            funcs = {f.qualname for f in module.functions}
            if name in dict(module.classes):
                return RV(ClassRef(module.path, name))
            if name in funcs or not module.full:
                return RV(FuncRef(module.path, name))
        if module.star_imports:
            return self._star(Star(name, module.star_imports), module, depth)
        return unknown(f"name '{name}' is not defined in {module.path}")

    def _constant(self, rv: RV, name: str, module: ModuleFacts, origin: Frame) -> RV:
        if not rv.known or not isinstance(rv.obj, (str, int, float, DictVal)) or isinstance(rv.obj, bool):
            return rv
        if rv.resolution in (
            Resolution.ENV_DEFAULT,
            Resolution.OPTION_DEFAULT,
            Resolution.DYNAMIC,
            Resolution.PLACEHOLDER,
        ):
            return rv
        if module.path != origin.module.path:
            if rv.resolution is Resolution.IMPORTED_CONSTANT:
                return rv
            return RV(rv.obj, Resolution.IMPORTED_CONSTANT, f"{dotted_module(module.path)}.{name}")
        if rv.resolution is Resolution.IMPORTED_CONSTANT:
            return rv
        return RV(rv.obj, Resolution.CONSTANT, name)

    def _local(self, ir: Local, frame: Frame, depth: int) -> RV:
        entries = dict(frame.module.locals).get(f"{ir.scope}:{ir.name}", ())
        if not entries:
            return unknown(f"local variable '{ir.name}' of {ir.scope} has no simple assignment")
        before = [e for e in entries if e[0] < ir.at]
        _pos, value = (before or list(entries))[-1]
        return self.resolve(value, frame, depth)

    def _param(self, ir: Param, frame: Frame, depth: int) -> RV:
        bound = frame.bindings.get((ir.func, ir.name))
        if bound is not None:
            return self.resolve(bound.ir, bound.frame, depth)
        self.unbound.append((frame.module.path, ir.func, ir.name))
        return unknown(f"parameter '{ir.name}' of function {ir.func}")

    def _import(self, dotted: str, module: ModuleFacts, depth: int) -> RV:
        found = self.modules.find(dotted, module.path)
        if found is None:
            if dotted.startswith(_DJANGO_SETTINGS) and len(dotted) > len(_DJANGO_SETTINGS):
                name, *more = dotted[len(_DJANGO_SETTINGS) :].split(".")
                rv = self._setting(name, depth, module)
                for attr in more:
                    rv = self._attr(rv, attr, depth, module)
                return rv
            return RV(LibRef(dotted.lstrip(".")))
        path, rest = found
        target = self.modules.get(path)
        if target is None:
            return unknown(f"module {path} could not be read")
        if not rest:
            return RV(ModRef(path))
        rv = self._glob(rest[0], target, depth, Frame(module))
        if (
            not rv.known
            and path.endswith("__init__.py")
            and self.modules.has(f"{posixpath.dirname(path)}/{rest[0]}.py".lstrip("/"))
        ):
            rv = RV(ModRef(f"{posixpath.dirname(path)}/{rest[0]}.py".lstrip("/")))
        for attr in rest[1:]:
            rv = self._attr(rv, attr, depth, module)
        name = dotted.lstrip(".")
        if (name == "rocketmq" or name.startswith("rocketmq.")) and not isinstance(
            rv.obj, (str, int, float, DictVal, SeqVal, ModRef)
        ):
            # the SDK's own tree or a vendored copy: its classes and enums are the library's
            return RV(LibRef(name))
        return rv

    def _star(self, ir: Star, module: ModuleFacts, depth: int) -> RV:
        for dotted in ir.modules:
            found = self.modules.find(dotted, module.path)
            if found is None:
                if dotted.startswith("rocketmq"):
                    return RV(LibRef(f"{dotted}.{ir.name}"))
                continue
            path, rest = found
            target = self.modules.get(path)
            if target is None or rest:
                continue
            names = {n for n, _ in target.globals} | {n for n, _ in target.imports} | set(target.defs)
            if ir.name in names:
                return self._glob(ir.name, target, depth, Frame(module))
        return unknown(f"name '{ir.name}' is not defined (star imports: {', '.join(ir.modules)})")

    def _attr(self, base: RV, attr: str, depth: int, origin: ModuleFacts) -> RV:
        obj = base.obj
        if isinstance(obj, ModRef):
            target = self.modules.get(obj.path)
            if target is None:
                return unknown(f"module {obj.path} could not be read")
            return self._glob(attr, target, depth, Frame(origin))
        if isinstance(obj, ClassRef):
            target = self.modules.get(obj.path)
            attrs = dict(dict(target.classes).get(obj.qual, ())) if target else {}
            if attr in attrs and target is not None:
                rv = self.resolve(attrs[attr], Frame(target), depth)
                return self._constant(rv, f"{obj.qual}.{attr}", target, Frame(origin))
            if target is not None and f"{obj.qual}.{attr}" in dict(target.classes):
                return RV(ClassRef(obj.path, f"{obj.qual}.{attr}"))
            for base_module, base_cls in self._bases(target, obj.qual, depth) if target is not None else ():
                rv = self._attr(RV(ClassRef(base_module.path, base_cls)), attr, depth + 1, origin)
                if rv.known:
                    return rv
            return unknown(f"class {obj.qual} has no constant '{attr}'")
        if isinstance(obj, InstanceRef):
            return self._instance_attr(obj, attr, depth)
        if isinstance(obj, LibRef):
            if obj.dotted == "django.conf.settings":
                return self._setting(attr, depth, origin)
            return RV(LibRef(f"{obj.dotted}.{attr}"))
        if isinstance(obj, DictVal) and attr == "get":
            return RV(MethodVal(base, attr))
        if isinstance(obj, ArgsVal):
            return self._option(obj, attr, depth)
        if obj is UNKNOWN:
            return unknown(base.detail)
        return unknown(f"attribute '{attr}' of a {type(obj).__name__} value")

    def _instance_attr(self, obj: InstanceRef, attr: str, depth: int) -> RV:
        """An attribute of an instance of a repository class: its method (a factory's call site
        names it so), else the attribute `self.attr` would read in the class's methods."""
        target = self.modules.get(obj.path)
        if target is None:
            return unknown(f"module {obj.path} could not be read")
        method = f"{obj.qual}.{attr}"
        if function_of(target, method) is not None:
            return RV(FuncRef(obj.path, method))
        return self._self_attr(SelfAttr(obj.qual, attr), Frame(target), depth)

    def _self_attr(self, ir: SelfAttr, frame: Frame, depth: int) -> RV:
        """`self.attr`: assigned in the class's methods (one distinct value), else its class attribute
        (a literal initializer never reassigned), else the same lookup in its base classes."""
        found = self._own_attr(ir, frame, depth)
        if found is not None:
            return found
        for base_module, base in self._bases(frame.module, ir.cls, depth):
            inherited = self._own_attr(SelfAttr(base, ir.attr), Frame(base_module, frame.bindings), depth + 1)
            if inherited is not None:
                return inherited
        return unknown(f"self.{ir.attr} is never assigned in class {ir.cls} or its base classes")

    def _own_attr(self, ir: SelfAttr, frame: Frame, depth: int) -> RV | None:
        assigned = dict(frame.module.instance_attrs).get(f"{ir.cls}.{ir.attr}", ())
        distinct = list(dict.fromkeys(assigned))
        attrs = dict(dict(frame.module.classes).get(ir.cls, ()))
        initial = attrs.get(ir.attr)
        if initial is not None and distinct and initial != Lit(None) and initial not in distinct:
            return unknown(f"self.{ir.attr} is initialised in class {ir.cls} and assigned other values in its methods")
        if len(distinct) == 1:
            return self.resolve(distinct[0], frame, depth)
        if len(distinct) > 1:
            return unknown(f"self.{ir.attr} is assigned {len(distinct)} different values in class {ir.cls}")
        if initial is not None:
            return self._constant(self.resolve(initial, frame, depth), f"{ir.cls}.{ir.attr}", frame.module, frame)
        return None

    def _bases(self, module: ModuleFacts, cls: str, depth: int) -> list[tuple[ModuleFacts, str]]:
        """The repo classes `cls` derives from, nearest first, with their modules' full facts."""
        out: list[tuple[ModuleFacts, str]] = []
        for base_ir in dict(module.bases).get(cls, ()):
            if depth >= MAX_DEPTH:
                break
            found = self._class_of(base_ir, module)
            if found is None:
                ref = self.resolve(base_ir, Frame(module), depth + 1).obj
                target = self.modules.get_attrs(ref.path) if isinstance(ref, ClassRef) else None
                found = (target, ref.qual) if target is not None and isinstance(ref, ClassRef) else None
            if found is not None:
                out.append(found)
        return out

    def _class_of(self, ir: IR, module: ModuleFacts) -> tuple[ModuleFacts, str] | None:
        """A base class named directly (`Base`, an imported `Base`, `pkg.mod.Base`), found without
        reading its module's constants: the quick class read is all a base class needs."""
        dotted = ""
        if isinstance(ir, Glob):
            if ir.name in dict(module.classes):
                return module, ir.name
            dotted = dict(module.imports).get(ir.name, "")
        elif isinstance(ir, Imp):
            dotted = ir.dotted
        elif isinstance(ir, AttrOf) and isinstance(ir.base, Glob) and ir.base.name in dict(module.imports):
            dotted = f"{dict(module.imports)[ir.base.name]}.{ir.attr}"
        found = self.modules.find(dotted, module.path) if dotted else None
        if found is None or len(found[1]) != 1:
            return None
        target = self.modules.get_attrs(found[0])
        if target is None or found[1][0] not in dict(target.classes):
            return None
        return target, found[1][0]

    def _setting(self, name: str, depth: int, origin: ModuleFacts) -> RV:
        """`django.conf.settings.NAME`: the module-level NAME of the repo's settings modules."""
        found: list[tuple[str, RV]] = []
        for path in self.modules.settings_modules():
            target = self.modules.get(path)
            if target is not None and name in dict(target.globals):
                rv = self.resolve(dict(target.globals)[name], Frame(target), depth)
                found.append((path, self._constant(rv, name, target, Frame(origin))))
        distinct = list(dict.fromkeys(rv.obj for _p, rv in found if rv.known))
        if not found:
            return unknown(f"settings.{name} is not defined in a settings module of the repo")
        if len(found) == 1 or (len(distinct) == 1 and all(rv.known for _p, rv in found)):
            return found[0][1]
        return unknown(f"settings.{name} differs between settings modules ({', '.join(p for p, _rv in found)})")

    def _option(self, ns: ArgsVal, attr: str, depth: int) -> RV:
        """`args.attr` of `args = parser.parse_args()`: the option's default, else set at run time."""
        module = self.modules.get_full(ns.path)
        options = [
            o for o in (module.options if module is not None else ()) if o.parser == ns.parser and o.dest == attr
        ]
        if not options or module is None:
            return unknown(f"'{attr}' is not an option of the command-line parser")
        opt = options[-1]
        runtime = f"command-line option {opt.flag}, set at run time"
        if opt.default is None:
            return RV(UNKNOWN, Resolution.DYNAMIC, f"{runtime} (no default)", (Resolution.OPTION_DEFAULT, opt.flag))
        rv = self.resolve(opt.default, Frame(module), depth)
        if not rv.known:
            return unknown(f"{runtime} (default: {rv.detail})")
        if rv.obj is None:
            return RV(UNKNOWN, Resolution.DYNAMIC, f"{runtime} (default None)", (Resolution.OPTION_DEFAULT, opt.flag))
        if isinstance(rv.obj, (str, int, float)) and not isinstance(rv.obj, bool):
            return RV(rv.obj, Resolution.OPTION_DEFAULT, opt.flag)
        return rv

    # composite values -------------------------------------------------------------------------
    def _concat(self, parts: list[RV]) -> RV:
        for p in parts:
            if not p.known:
                return p
        if not all(isinstance(p.obj, str) for p in parts):
            if all(isinstance(p.obj, (int, float)) and not isinstance(p.obj, bool) for p in parts):
                return unknown("arithmetic on numbers")
            bad = next(p for p in parts if not isinstance(p.obj, str))
            return unknown(
                f"string concatenation with a non-string ({bad.to_value().detail or type(bad.obj).__name__})"
            )
        res, detail = weakest(parts)
        return RV("".join(str(p.obj) for p in parts), res, detail)

    def _env(self, ir: Env, frame: Frame, depth: int) -> RV:
        var = self.resolve(ir.var, frame, depth)
        name = var.obj if isinstance(var.obj, str) else None
        label = f"environment variable {name}" if name else "an environment variable"
        if ir.default is None:
            return RV(UNKNOWN, Resolution.DYNAMIC, f"{label} without a default", (Resolution.ENV_DEFAULT, name or "?"))
        default = self.resolve(ir.default, frame, depth)
        if not default.known:
            return unknown(f"{label} with an unknown default ({default.detail})")
        if default.obj is None:
            return RV(UNKNOWN, Resolution.DYNAMIC, f"{label} with default None", (Resolution.ENV_DEFAULT, name or "?"))
        if not isinstance(default.obj, (str, int, float)) or isinstance(default.obj, bool):
            return unknown(f"{label} with a non-string default")
        return RV(default.obj, Resolution.ENV_DEFAULT, name or "?")

    def _subscript(self, base: RV, index: RV) -> RV:
        if not base.known:
            return base
        if not index.known:
            return index
        if isinstance(base.obj, DictVal):
            for k, v, _loc in base.obj.items:
                if k.known and k.obj == index.obj:
                    if (
                        base.resolution in (Resolution.CONSTANT, Resolution.IMPORTED_CONSTANT)
                        and v.resolution is Resolution.LITERAL
                    ):
                        return RV(v.obj, base.resolution, f"{base.detail}[{index.obj!r}]")  # SETTINGS['key']
                    res, detail = weakest([base, v])
                    return RV(
                        v.obj, res if _STRENGTH[res] < _STRENGTH[v.resolution] else v.resolution, detail or v.detail
                    )
            return unknown(f"key {index.obj!r} is not in the dict")
        if isinstance(base.obj, SeqVal) and isinstance(index.obj, int):
            if -len(base.obj.items) <= index.obj < len(base.obj.items):
                return base.obj.items[index.obj]
            return unknown("index out of range")
        return unknown(f"subscript of a {type(base.obj).__name__} value")

    def _call(self, ir: CallIR, frame: Frame, depth: int) -> RV:
        op = (
            ir.func.value
            if isinstance(ir.func, Lit) and isinstance(ir.func.value, str) and ir.func.value.startswith("<")
            else None
        )
        if op == "<or>":
            return self._or(ir.args, frame, depth)
        if op == "<parse_args>" and ir.args and isinstance(ir.args[0], Lit) and isinstance(ir.args[0].value, str):
            return RV(ArgsVal(frame.module.path, ir.args[0].value))
        args = [self.resolve(a, frame, depth) for a in ir.args]
        kwargs = tuple((k, self.resolve(v, frame, depth)) for k, v in ir.kwargs)
        if op is not None:
            return _string_op(op, args, dict(kwargs))
        func = self.resolve(ir.func, frame, depth)
        if isinstance(func.obj, LibRef):
            loc = location(frame.module.path, ir.loc) if frame.module.full else None
            return RV(CallVal(func.obj.dotted, tuple(args), kwargs, loc))
        if isinstance(func.obj, MethodVal) and isinstance(func.obj.base.obj, DictVal) and args:
            found = self._subscript(func.obj.base, args[0])
            if found.known or len(args) < 2 and "default" not in dict(kwargs):
                return found
            return args[1] if len(args) > 1 else dict(kwargs)["default"]
        if (
            isinstance(func.obj, ClassRef)
            and func.obj.qual.rsplit(".", 1)[-1] in SDK_VALUE_CLASSES
            and "rocketmq" in func.obj.path.split("/")[:-1]
        ):
            # FilterExpression() of the SDK's own tree (or a vendored copy): the library's value class
            loc = location(frame.module.path, ir.loc) if frame.module.full else None
            return RV(CallVal(f"rocketmq.{func.obj.qual}", tuple(args), kwargs, loc))
        if isinstance(func.obj, ClassRef):
            return RV(InstanceRef(func.obj.path, func.obj.qual), Resolution.DYNAMIC, f"an instance of {func.obj.qual}")
        if isinstance(func.obj, FuncRef):
            return unknown(f"return value of {func.obj.qual}()")
        if not func.known:
            return unknown(f"result of a call ({func.detail})")
        return unknown("result of a call")

    def _or(self, operands: tuple[IR, ...], frame: Frame, depth: int) -> RV:
        """`a or b`: a when it is truthy; a run-time setting without a default falls back to b."""
        left = self.resolve(operands[0], frame, depth)
        right = self.resolve(operands[1], frame, depth) if len(operands) > 1 else unknown("empty or")
        if left.known:
            return left if left.obj else right
        if (
            left.unset is not None
            and right.known
            and isinstance(right.obj, (str, int, float))
            and not isinstance(right.obj, bool)
        ):
            kind, name = left.unset
            return RV(right.obj, kind, name)
        return left


_DJANGO_SETTINGS = "django.conf.settings."
SDK_VALUE_CLASSES = frozenset({"FilterExpression", "ClientConfiguration", "Credentials"})
_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*|\d*)\}")


def _string_op(op: str, args: list[RV], kwargs: dict[str, RV]) -> RV:
    """The few pure string operations resolved: %, .format with plain fields, .join, case."""
    if op == "<tuple>":
        return RV(SeqVal(tuple(args)))
    parts = args + list(kwargs.values())
    for p in parts:
        if not p.known:
            return p
    res, detail = weakest(parts)
    head = args[0].obj if args else None
    if op in ("<upper>", "<lower>", "<strip>") and isinstance(head, str):
        return RV(getattr(head, op[1:-1])(), res, detail)
    if op == "<join>" and isinstance(head, str) and len(args) == 2 and isinstance(args[1].obj, SeqVal):
        items = [i.obj for i in args[1].obj.items]
        if all(isinstance(i, str) for i in items):
            res, detail = weakest([args[0], *args[1].obj.items])
            return RV(head.join(str(i) for i in items), res, detail)
    if op == "<percent>" and isinstance(head, str):
        values = [a.obj for a in args[1:]]
        if len(values) == 1 and isinstance(values[0], SeqVal):
            res, detail = weakest([args[0], *values[0].items])
            values = [i.obj for i in values[0].items]
        if all(isinstance(v, (str, int)) for v in values) and re.fullmatch(r"(?:[^%]|%[sd%])*", head):
            try:
                return RV(head % tuple(values), res, detail)
            except (TypeError, ValueError):
                return unknown("bad % formatting")
    if op == "<format>" and isinstance(head, str):
        values = [a.obj for a in args[1:]]
        named = {k: v.obj for k, v in kwargs.items()}
        stripped = _FIELD.sub("", head.replace("{{", "").replace("}}", ""))
        if (
            "{" not in stripped
            and "}" not in stripped
            and all(isinstance(v, (str, int)) for v in [*values, *named.values()])
        ):
            try:
                return RV(head.format(*values, **named), res, detail)
            except (IndexError, KeyError, ValueError):
                return unknown("bad str.format() call")
    return unknown(f"string operation {op[1:-1]} on values that are not plain strings")


def function_of(module: ModuleFacts, qual: str) -> Function | None:
    for f in module.functions:
        if f.qualname == qual:
            return f
    return None
