"""Picklable facts of one Python module: a tiny value IR plus the consumer-related events.

The per-file parse (`py_parse`) turns source into these records; the per-repo link step
(`py_link`) resolves them. Nothing here refers to a libcst node, so facts can be cached.
"""

from __future__ import annotations

from dataclasses import dataclass

Scalar = str | int | float | bool | None


@dataclass(frozen=True)
class Loc:
    """A span in the module: 1-based line and column."""

    line: int
    column: int
    end_line: int = 0
    end_column: int = 0


NOWHERE = Loc(1, 1)


# ---- value IR ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Lit:
    """A literal scalar (str, int, float, bool, None)."""

    value: Scalar


@dataclass(frozen=True)
class Glob:
    """A module-level name of this module (constant, class, function or import alias)."""

    name: str


@dataclass(frozen=True)
class Local:
    """A local variable of function `scope`, read at `at` (the latest earlier assignment wins)."""

    scope: str
    name: str
    at: tuple[int, int]


@dataclass(frozen=True)
class Param:
    """A parameter of function `func` (qualified inside the module, e.g. `Worker.__init__`)."""

    func: str
    name: str


@dataclass(frozen=True)
class Imp:
    """An imported dotted name, relative ones keep their leading dots (`.config.GROUP`)."""

    dotted: str


@dataclass(frozen=True)
class Star:
    """A name that only a star import can bind; `modules` are the star-imported modules."""

    name: str
    modules: tuple[str, ...]


@dataclass(frozen=True)
class AttrOf:
    """`base.attr` where base is not an import (a class constant, an object)."""

    base: IR
    attr: str


@dataclass(frozen=True)
class SelfAttr:
    """`self.attr` inside a method of class `cls` (module-qualified class name)."""

    cls: str
    attr: str


@dataclass(frozen=True)
class Concat:
    """String concatenation: `a + b`, f-strings, `"%s" % x`, `"{}".format(x)`."""

    parts: tuple[IR, ...]


@dataclass(frozen=True)
class Env:
    """`os.getenv(var, default)` / `os.environ.get(var, default)` / `os.environ[var]`."""

    var: IR
    default: IR | None


@dataclass(frozen=True)
class CallIR:
    """A call of a known or unknown callable; `func` is its dotted name as written/imported."""

    func: IR
    args: tuple[IR, ...] = ()
    kwargs: tuple[tuple[str, IR], ...] = ()
    arg_locs: tuple[Loc, ...] = ()
    loc: Loc = NOWHERE
    kw_locs: tuple[tuple[str, Loc], ...] = ()


@dataclass(frozen=True)
class DictIR:
    """A dict display; `locs` are the key locations."""

    keys: tuple[IR, ...]
    values: tuple[IR, ...]
    locs: tuple[Loc, ...]


@dataclass(frozen=True)
class Subscript:
    """`base[index]` (a constant dict or list lookup)."""

    base: IR
    index: IR


@dataclass(frozen=True)
class Dyn:
    """Statically unknown; `reason` says why."""

    reason: str


IR = Lit | Glob | Local | Param | Imp | Star | AttrOf | SelfAttr | Concat | Env | CallIR | DictIR | Subscript | Dyn


# ---- consumer facts ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Construct:
    """A consumer class instantiated: `PushConsumer(...)`, `SimpleConsumer(...)`.

    `key` is the binding it is stored in (`main:consumer`, `Worker.consumer`, `consumer`) or
    "" when it is not stored; `scope` is the enclosing function ("" at module level).
    """

    index: int
    qualname: str
    key: str
    scope: str
    call: CallIR
    order: tuple[int, int]
    repeated: bool = False  # made in a loop, a comprehension or a lambda: once per item


@dataclass(frozen=True)
class MethodCall:
    """`<receiver>.method(...)`; `key` is the receiver's binding, or `#<construct index>` for a chain."""

    key: str
    method: str
    call: CallIR
    order: tuple[int, int]
    # the exclusive branches the call is in (a function defined in one is in it too), outermost first:
    # (the branching statement's number in the module, the arm taken) per `if` / `else`, `... if ... else ...`, `match` case
    branch: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class FuncCall:
    """A call of a repo function or class, recorded for factory linking.

    `target` is how the callee is named (Glob / Imp / AttrOf), `key` the binding the result goes to.
    """

    target: IR
    call: CallIR
    key: str
    scope: str
    order: tuple[int, int]
    arg_keys: tuple[str, ...] = ()  # the binding each positional argument names ("" when none)
    kw_keys: tuple[tuple[str, str], ...] = ()  # keyword -> the binding its argument names
    repeated: bool = False  # made in a loop, a comprehension or a lambda: once per item


@dataclass(frozen=True)
class Function:
    """A function or method of the module: its parameters (without self) and defaults."""

    qualname: str
    params: tuple[str, ...]
    defaults: tuple[tuple[str, IR], ...] = ()
    returns: tuple[str, ...] = ()  # binding keys / `#<construct index>` it returns (or yields)
    is_method: bool = False
    fixture: str = ""  # the pytest fixture name when decorated with @pytest.fixture


@dataclass(frozen=True)
class Option:
    """`parser.add_argument(...)` of argparse: the parser's binding key, the attribute (`dest`) it
    sets on the parsed namespace, its default (None when it has none) and the option as written."""

    parser: str
    dest: str
    default: IR | None
    flag: str
    loc: Loc = NOWHERE


@dataclass(frozen=True)
class ModuleFacts:
    """Everything the link step needs from one module."""

    path: str
    imports: tuple[tuple[str, str], ...] = ()  # local alias -> dotted (module-level)
    star_imports: tuple[str, ...] = ()
    globals: tuple[tuple[str, IR], ...] = ()  # module-level single-assignment names
    classes: tuple[tuple[str, tuple[tuple[str, IR], ...]], ...] = ()  # class -> class attributes
    bases: tuple[tuple[str, tuple[IR, ...]], ...] = ()  # class -> its base classes as written
    instance_attrs: tuple[tuple[str, tuple[IR, ...]], ...] = ()  # "Cls.attr" -> assigned values
    locals: tuple[tuple[str, tuple[tuple[tuple[int, int], IR], ...]], ...] = ()  # "scope:name" -> (pos, value)
    functions: tuple[Function, ...] = ()
    defs: tuple[str, ...] = ()  # top-level function and class names
    constructs: tuple[Construct, ...] = ()
    methods: tuple[MethodCall, ...] = ()
    calls: tuple[FuncCall, ...] = ()
    options: tuple[Option, ...] = ()  # argparse options added in this module
    # names hinting at the client package, sorted: a parse pickles to the same bytes in every process
    evidence: tuple[str, ...] = ()
    full: bool = True  # False for the light (constants-only) parse


@dataclass(frozen=True)
class Failure:
    """A file that could not be parsed: `status` is "failed" or "skipped"."""

    status: str
    reason: str


ParseOutcome = ModuleFacts | Failure


def consumer_kind(qualname: str) -> str | None:
    """The consumer API a qualified class name denotes: push4, pull04, grpc5, or None."""
    if qualname == "rocketmq.client.PushConsumer":
        return "push4"
    if qualname == "rocketmq.client.PullConsumer":
        return "pull04"
    last = qualname.rsplit(".", 1)[-1]
    if (
        qualname.startswith("rocketmq.")
        and not qualname.startswith("rocketmq.client.")
        and last
        in (
            "PushConsumer",
            "SimpleConsumer",
            "LitePushConsumer",
        )
    ):
        return "grpc5"
    return None
