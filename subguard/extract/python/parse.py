"""Per-file parse of Python source into picklable `ModuleFacts` (libcst; scanned code is never run).

`parse_full` records consumer constructions, method calls on them, factory calls and every name
binding the link step may need. Names are resolved as libcst's ScopeProvider/QualifiedNameProvider
would, by `py_scope.ScopeIndex` (one cheap pass); a module using a construct that index does not
replay is resolved by the libcst providers themselves (same answers, ~10x slower). `parse_light` is for constants modules loaded only to resolve an imported
name: module-level statements and class bodies, no metadata.
"""

from __future__ import annotations

import ast
import gc
import io
import re
import sys
import tokenize
import warnings
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol, cast

import libcst as cst
from libcst._metadata_dependent import LazyValue
from libcst.metadata import (
    ClassScope,
    ComprehensionScope,
    FunctionScope,
    GlobalScope,
    MetadataWrapper,
    QualifiedNameProvider,
    QualifiedNameSource,
    Scope,
    ScopeProvider,
)

from subguard.extract.python import scope as py_scope
from subguard.extract.python.ir import (
    IR,
    NOWHERE,
    AttrOf,
    CallIR,
    Concat,
    Construct,
    DictIR,
    Dyn,
    Env,
    Failure,
    FuncCall,
    Function,
    Glob,
    Imp,
    Lit,
    Loc,
    Local,
    MethodCall,
    ModuleFacts,
    Option,
    Param,
    ParseOutcome,
    SelfAttr,
    Star,
    Subscript,
    consumer_kind,
)

# Methods of consumer objects whose calls are recorded (receivers are filtered at link time).
CONSUMER_METHODS = frozenset(
    {
        "subscribe",
        "unsubscribe",
        "pull",
        "set_message_model",
        "set_instance_name",
        "set_group",
        "set_name_server_address",
        "set_name_server_domain",
        "set_namesrv_addr",
        "set_namesrv_domain",
        "set_session_credentials",
        "startup",
        "start",
    }
)
# Names imported from `rocketmq.client` that tell the two 4.x packages apart (semantics §6.3).
EVIDENCE_NAMES = frozenset({"RecvMessage", "ReceivedMessage", "ConsumeStatus", "PullConsumer", "TransactionMQProducer"})
ENV_CALLS = frozenset({"os.getenv", "os.environ.get", "os.environ.setdefault"})


# ---- decoding and failures ----------------------------------------------------------------------


def decode(data: bytes) -> str | Failure:
    """Source text by PEP 263 (coding cookie, BOM, default UTF-8), or why the file cannot be read."""
    if not data.strip():
        return Failure("skipped", "empty file")
    nul = data.find(b"\x00")
    if nul >= 0:
        return Failure("skipped", f"binary file (NUL byte at offset {nul})")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if "invalid or missing encoding declaration" not in str(exc):
            return Failure("failed", f"bad encoding declaration: {exc}")
        encoding = "utf-8"  # undecodable bytes in the first lines: report them below
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return Failure(
            "failed",
            f"not valid {encoding} (byte 0x{data[exc.start]:02x} at line {line}) and no matching coding declaration",
        )
    except LookupError:
        return Failure("failed", f"unknown source encoding '{encoding}'")


MAX_DEPTH = 120  # syntax-tree depth; real code stays far below, hostile input crashes parsers
_RECURSION_LIMIT = 8000


def _guard(text: str) -> tuple[Failure | None, SyntaxError | None]:
    """Reject input that would overflow libcst's native parser or visitors (a crash, not an error).

    CPython's own parser is used only as a depth probe: it is fast, bounded and never runs code.
    A SyntaxError it raises for other reasons is returned, and libcst (which may know newer
    syntax) gets the final word.
    """
    try:
        with warnings.catch_warnings():  # invalid escapes in scanned code are not ours to report
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (RecursionError, MemoryError):
        return Failure("failed", "too deeply nested to parse (recursion limit)"), None
    except SyntaxError as exc:
        if "too many nested" in str(exc.msg) or "too complex" in str(exc.msg) or _long_chain(text):
            # no depth probe for a file CPython rejects: libcst only sees it when no statement is long
            return Failure("failed", f"syntax error at line {exc.lineno}, column {exc.offset or 1}: {exc.msg}"), None
        return None, exc
    except ValueError as exc:  # e.g. source with NUL bytes that slipped through
        return Failure("failed", f"cannot parse: {exc}"), None
    stack: list[tuple[ast.AST, int, int]] = [(tree, 1, 1)]
    while stack:
        node, depth, line = stack.pop()
        line = getattr(node, "lineno", line)
        if depth > MAX_DEPTH:
            return Failure(
                "failed", f"too deeply nested to analyse (syntax tree deeper than {MAX_DEPTH} at line {line})"
            ), None
        # libcst nests `a and b and c` as binary operations; CPython keeps one flat BoolOp
        step = len(node.values) if isinstance(node, ast.BoolOp) else 1
        stack.extend((child, depth + step, line) for child in ast.iter_child_nodes(node))
    return None, None


_CHAIN_TOKENS = frozenset(
    {
        "+",
        "-",
        "*",
        "/",
        "//",
        "%",
        "**",
        "@",
        "<<",
        ">>",
        "&",
        "|",
        "^",
        "~",
        ".",
        "(",
        "[",
        "{",
        "and",
        "or",
        "not",
        "if",
        "lambda",
    }
)


def _long_chain(text: str) -> bool:
    """Whether some statement has more operators, calls or brackets than MAX_DEPTH (or cannot be
    tokenized): the shape that overflows libcst's native parser when CPython's cannot probe it."""
    count = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                count = 0
            elif tok.string in _CHAIN_TOKENS and tok.type in (tokenize.OP, tokenize.NAME):
                count += 1
                if count > MAX_DEPTH:
                    return True
    except (tokenize.TokenError, SyntaxError, ValueError):
        return True
    return False


class _DeepStack:
    """Raise the recursion limit while libcst walks a (depth-checked) tree, and pause the cyclic
    garbage collector: a syntax tree is tens of thousands of acyclic objects, and the collections
    their allocation triggers cost a third of a large file's parse."""

    def __enter__(self) -> None:
        self.old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(self.old, _RECURSION_LIMIT))
        self.gc = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        sys.setrecursionlimit(self.old)
        if self.gc:
            gc.enable()


def _parse_module(text: str) -> cst.Module | Failure:
    guard, syntax = _guard(text)
    if guard is not None:
        return guard
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        if syntax is not None and syntax.lineno:
            return Failure("failed", f"syntax error at line {syntax.lineno}, column {syntax.offset or 1}: {syntax.msg}")
        msg = str(exc.message).splitlines()[0] if exc.message else "invalid syntax"
        return Failure("failed", f"syntax error at line {exc.raw_line}, column {exc.raw_column + 1}: {msg}")
    except RecursionError:
        return Failure("failed", "too deeply nested to parse (recursion limit)")
    except Exception as exc:  # noqa: BLE001 - libcst raises a few non-syntax errors on odd input
        return Failure("failed", f"cannot parse: {type(exc).__name__}: {exc}")


@contextmanager
def quiet() -> Iterator[None]:
    """Evaluating a scanned literal with an invalid escape (a backslash before 9, say) warns, and from
    Python 3.12 the SyntaxWarning is printed by default: that is the scanned code's business, never
    subguard's output."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# ---- expression conversion ----------------------------------------------------------------------


def _fstring_text(node: cst.FormattedString, text: str) -> str:
    """Evaluate the escapes of an f-string literal part."""
    plain = text.replace("{{", "{").replace("}}", "}")
    prefix = "".join(ch for ch in node.prefix if ch.lower() != "f")
    try:
        with quiet():
            value = ast.literal_eval(f"{prefix}{node.end}{plain}{node.end}")
    except (SyntaxError, ValueError):
        return plain
    return value if isinstance(value, str) else plain


def _string_value(node: cst.SimpleString) -> str | bytes:
    """`node.evaluated_value` without `ast.literal_eval` for a plain literal with no escapes."""
    raw = node.value
    quote = raw[:3] if raw[:3] in ('"""', "'''") else raw[:1]
    if quote in ('"', "'", '"""', "'''") and "\\" not in raw and "\r" not in raw:
        return raw[len(quote) : -len(quote)]
    with quiet():
        return node.evaluated_value


_DOTTED_CALLS = {"format": "<format>", "join": "<join>", "upper": "<upper>", "lower": "<lower>", "strip": "<strip>"}


class Converter:
    """Turns a libcst expression into the value IR. Subclasses decide how names are bound."""

    def __init__(self, loc: Callable[[cst.CSTNode], Loc]) -> None:
        self.loc = loc

    def call_ir(self, func: IR, node: cst.Call) -> CallIR:
        """A CallIR of `node` with argument locations."""
        pos, kws, locs, kw_locs = self.args(node)
        return CallIR(func, pos, kws, locs, self.loc(node), kw_locs)

    # hooks ------------------------------------------------------------------------------------
    def qualname(self, node: cst.BaseExpression) -> str | None:
        raise NotImplementedError

    def name(self, node: cst.Name) -> IR:
        raise NotImplementedError

    def self_attr(self, node: cst.Attribute) -> IR | None:
        return None

    def binding(self, node: cst.BaseExpression) -> str:
        """The binding key a receiver denotes ("" when not trackable)."""
        return ""

    # conversion -------------------------------------------------------------------------------
    def conv(self, node: cst.BaseExpression) -> IR:
        if isinstance(node, cst.SimpleString):
            val = _string_value(node)
            return Lit(val) if isinstance(val, str) else Dyn("bytes literal")
        if isinstance(node, cst.ConcatenatedString):
            return Concat((self.conv(node.left), self.conv(node.right)))
        if isinstance(node, cst.FormattedString):
            return self._fstring(node)
        if isinstance(node, cst.Integer):
            return Lit(int(node.evaluated_value))
        if isinstance(node, cst.Float):
            return Lit(float(node.evaluated_value))
        if isinstance(node, cst.Name):
            if node.value in ("True", "False", "None"):
                return Lit({"True": True, "False": False, "None": None}[node.value])
            return self.name(node)
        if isinstance(node, cst.Attribute):
            return self._attribute(node)
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, cst.Add):
                return Concat((self.conv(node.left), self.conv(node.right)))
            if isinstance(node.operator, cst.Modulo):
                right = node.right
                args = right.elements if isinstance(right, cst.Tuple) else None
                parts = tuple(self.conv(e.value) for e in args) if args is not None else (self.conv(right),)
                return CallIR(Lit("<percent>"), (self.conv(node.left), *parts), loc=self.loc(node))
            return Dyn(f"arithmetic expression at line {self.loc(node).line}")
        if isinstance(node, cst.Call):
            return self.call(node)
        if isinstance(node, cst.Dict):
            return self._dict(node)
        if isinstance(node, (cst.Tuple, cst.List)):
            if any(isinstance(e, cst.StarredElement) for e in node.elements):
                return Dyn("starred element in a sequence")
            return CallIR(Lit("<tuple>"), tuple(self.conv(e.value) for e in node.elements), loc=self.loc(node))
        if isinstance(node, cst.Subscript):
            return self._subscript(node)
        if isinstance(node, cst.IfExp):
            return Dyn(f"conditional expression at line {self.loc(node).line}")
        if isinstance(node, cst.BooleanOperation) and isinstance(node.operator, cst.Or):
            # `os.getenv("G") or "default"`, `GROUP or "fallback"`: the first truthy operand
            return CallIR(Lit("<or>"), (self.conv(node.left), self.conv(node.right)), loc=self.loc(node))
        return Dyn(f"{type(node).__name__} expression at line {self.loc(node).line}")

    def _fstring(self, node: cst.FormattedString) -> IR:
        parts: list[IR] = []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                parts.append(Lit(_fstring_text(node, part.value)))
            elif not isinstance(part, cst.FormattedStringExpression):
                return Dyn(f"unsupported f-string part at line {self.loc(node).line}")
            elif part.format_spec is not None or part.conversion not in (None, "s"):
                return Dyn(f"f-string with a format spec or conversion at line {self.loc(node).line}")
            else:
                parts.append(self.conv(part.expression))
        return Concat(tuple(parts))

    def _attribute(self, node: cst.Attribute) -> IR:
        qn = self.qualname(node)
        if qn is not None:
            return Imp(qn)
        own = self.self_attr(node)
        if own is not None:
            return own
        return AttrOf(self.conv(node.value), node.attr.value)

    def _dict(self, node: cst.Dict) -> IR:
        keys: list[IR] = []
        values: list[IR] = []
        locs: list[Loc] = []
        for el in node.elements:
            if not isinstance(el, cst.DictElement):
                return Dyn(f"dict with ** unpacking at line {self.loc(node).line}")
            keys.append(self.conv(el.key))
            values.append(self.conv(el.value))
            locs.append(self.loc(el.key))
        return DictIR(tuple(keys), tuple(values), tuple(locs))

    def _subscript(self, node: cst.Subscript) -> IR:
        base_qn = self.qualname(node.value)
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return Dyn(f"slice expression at line {self.loc(node).line}")
        index = self.conv(node.slice[0].slice.value)
        if base_qn == "os.environ":
            return Env(index, None)
        if base_qn == "sys.argv":
            at = node.slice[0].slice.value
            which = f"sys.argv[{at.value}]" if isinstance(at, cst.Integer) else "sys.argv"
            return Dyn(f"command-line argument {which}, set at run time")
        return Subscript(self.conv(node.value), index)

    def args(
        self, call: cst.Call
    ) -> tuple[tuple[IR, ...], tuple[tuple[str, IR], ...], tuple[Loc, ...], tuple[tuple[str, Loc], ...]]:
        """Positional IR, keyword IR, positional locations, keyword locations."""
        pos: list[IR] = []
        kws: list[tuple[str, IR]] = []
        locs: list[Loc] = []
        kw_locs: list[tuple[str, Loc]] = []
        for arg in call.args:
            if arg.star:
                if arg.keyword is None and not kws:
                    pos.append(Dyn(f"*args at line {self.loc(arg).line}"))
                continue
            if arg.keyword is not None:
                kws.append((arg.keyword.value, self.conv(arg.value)))
                kw_locs.append((arg.keyword.value, self.loc(arg.value)))
            else:
                pos.append(self.conv(arg.value))
                locs.append(self.loc(arg.value))
        return tuple(pos), tuple(kws), tuple(locs), tuple(kw_locs)

    def call(self, node: cst.Call) -> IR:
        qn = self.qualname(node.func)
        pos, kws, locs, kw_locs = self.args(node)
        if qn in ENV_CALLS:
            if not pos:
                return Dyn(f"{qn}() without a variable name")
            default = pos[1] if len(pos) > 1 else dict(kws).get("default")
            return Env(pos[0], default)
        if qn in ("str", "builtins.str") and len(pos) == 1:
            return pos[0]
        if isinstance(node.func, cst.Attribute) and qn is None and node.func.attr.value == "parse_args":
            parser = self.binding(node.func.value)
            if parser:  # argparse: `args = parser.parse_args()`, options looked up at link time
                return CallIR(Lit("<parse_args>"), (Lit(parser),), loc=self.loc(node))
        func: IR
        if isinstance(node.func, cst.Attribute) and qn is None and node.func.attr.value in _DOTTED_CALLS:
            # a string method: "{}_{}".format(a, b), "_".join(...), X.upper()
            func = Lit(_DOTTED_CALLS[node.func.attr.value])
            pos = (self.conv(node.func.value), *pos)
        else:
            func = Imp(qn) if qn is not None else self.conv(node.func)
        return CallIR(func, pos, kws, locs, self.loc(node), kw_locs)


class _LightConverter(Converter):
    """Names are module globals; dotted names go through the module's import table."""

    def __init__(self, imports: dict[str, str]) -> None:
        super().__init__(lambda _n: NOWHERE)
        self.imports = imports

    def qualname(self, node: cst.BaseExpression) -> str | None:
        if isinstance(node, cst.Name):
            return self.imports.get(node.value)
        if isinstance(node, cst.Attribute):
            base = self.qualname(node.value)
            return f"{base}.{node.attr.value}" if base else None
        return None

    def name(self, node: cst.Name) -> IR:
        return Glob(node.value)


def _import_bindings(node: cst.Import | cst.ImportFrom) -> list[tuple[str, str]]:
    """(local alias, dotted target) for every name an import binds; `*` for star imports."""
    out: list[tuple[str, str]] = []
    if isinstance(node, cst.Import):
        for alias in node.names:
            dotted = cst.helpers.get_full_name_for_node(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                out.append((alias.asname.name.value, dotted))
            else:
                head = dotted.split(".")[0]
                out.append((head, head))
        return out
    module = cst.helpers.get_full_name_for_node(node.module) if node.module is not None else ""
    base = "." * len(node.relative) + (module or "")
    if isinstance(node.names, cst.ImportStar):
        return [("*", base)]
    for alias in node.names:
        name = cst.helpers.get_full_name_for_node(alias.name) or ""
        local = (
            alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
        )
        sep = "" if base.endswith(".") else "."
        out.append((local, f"{base}{sep}{name}" if base else name))
    return out


def _targets(stmt: cst.BaseSmallStatement) -> list[tuple[cst.BaseAssignTargetExpression, cst.BaseExpression]]:
    """(target, value) pairs of a simple assignment, tuple targets paired element-wise."""
    pairs: list[tuple[cst.BaseAssignTargetExpression, cst.BaseExpression]] = []
    if isinstance(stmt, cst.Assign):
        for t in stmt.targets:
            pairs.extend(_pair(t.target, stmt.value))
    elif isinstance(stmt, cst.AnnAssign) and stmt.value is not None:
        pairs.extend(_pair(stmt.target, stmt.value))
    return pairs


def _pair(
    target: cst.BaseAssignTargetExpression, value: cst.BaseExpression
) -> list[tuple[cst.BaseAssignTargetExpression, cst.BaseExpression]]:
    if (
        isinstance(target, (cst.Tuple, cst.List))
        and isinstance(value, (cst.Tuple, cst.List))
        and len(target.elements) == len(value.elements)
    ):
        return [p for t, v in zip(target.elements, value.elements) for p in _pair(t.value, v.value)]  # type: ignore[arg-type]
    return [(target, value)]


class _Table:
    """name -> values collected in order; a name bound twice to different values is ambiguous."""

    def __init__(self) -> None:
        self.values: dict[str, list[IR]] = {}

    def add(self, name: str, value: IR) -> None:
        self.values.setdefault(name, []).append(value)

    def frozen(self, what: str) -> tuple[tuple[str, IR], ...]:
        out: list[tuple[str, IR]] = []
        for name, vals in self.values.items():
            if all(v == vals[0] for v in vals):
                out.append((name, vals[0]))
            else:
                out.append((name, Dyn(f"{what} '{name}' is assigned {len(vals)} times with different values")))
        return tuple(out)


def _module_level(body: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """Statements executed at import time, descending into if/try/with blocks."""
    out: list[cst.BaseStatement] = []
    for stmt in body:
        out.append(stmt)
        if isinstance(stmt, (cst.If, cst.Try, cst.With)):
            blocks: list[cst.BaseSuite] = [stmt.body]
            if isinstance(stmt, cst.If) and stmt.orelse is not None:
                blocks.append(
                    stmt.orelse.body if isinstance(stmt.orelse, cst.Else) else cst.IndentedBlock(body=[stmt.orelse])
                )
            if isinstance(stmt, cst.Try):
                blocks.extend(h.body for h in stmt.handlers)
                if stmt.orelse is not None:
                    blocks.append(stmt.orelse.body)
            for b in blocks:
                if isinstance(b, cst.IndentedBlock):
                    out.extend(_module_level(b.body))
    return out


def parse_light(path: str, data: bytes) -> ParseOutcome:
    """Module-level constants, class constants and imports only (no metadata)."""
    text = decode(data)
    if isinstance(text, Failure):
        return text
    try:
        with _DeepStack():
            module = _parse_module(text)
            if isinstance(module, Failure):
                return module
            return _light_facts(path, module)
    except RecursionError:
        return Failure("failed", "too deeply nested to analyse (recursion limit)")


def _light_facts(path: str, module: cst.Module) -> ModuleFacts:
    imports: dict[str, str] = {}
    stars: list[str] = []
    stmts = _module_level(module.body)
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    for local, dotted in _import_bindings(small):
                        if local == "*":
                            stars.append(dotted)
                        else:
                            imports[local] = dotted
    conv = _LightConverter(imports)
    globs = _Table()
    classes: list[tuple[str, tuple[tuple[str, IR], ...]]] = []
    bases: list[tuple[str, tuple[IR, ...]]] = []
    defs: list[str] = []
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                for target, value in _targets(small):
                    if isinstance(target, cst.Name):
                        globs.add(target.value, conv.conv(value))
        elif isinstance(stmt, cst.ClassDef):
            defs.append(stmt.name.value)
            based = tuple(conv.conv(a.value) for a in stmt.bases if a.keyword is None and not a.star)
            if based:
                bases.append((stmt.name.value, based))
            attrs = _Table()
            for inner in stmt.body.body if isinstance(stmt.body, cst.IndentedBlock) else ():
                if isinstance(inner, cst.SimpleStatementLine):
                    for small in inner.body:
                        for target, value in _targets(small):
                            if isinstance(target, cst.Name):
                                attrs.add(target.value, conv.conv(value))
            classes.append((stmt.name.value, attrs.frozen("class attribute")))
        elif isinstance(stmt, cst.FunctionDef):
            defs.append(stmt.name.value)
    return ModuleFacts(
        path=path,
        imports=tuple(imports.items()),
        star_imports=tuple(stars),
        globals=globs.frozen("module constant"),
        classes=tuple(classes),
        bases=tuple(bases),
        defs=tuple(defs),
        full=False,
    )


# ---- full parse ---------------------------------------------------------------------------------


_QN_LOCAL = re.compile(r"<locals>\.")


class _FullConverter(Converter):
    def __init__(self, visitor: _Collector) -> None:
        super().__init__(visitor.loc)
        self.v = visitor

    def qualname(self, node: cst.BaseExpression) -> str | None:
        best: str | None = None
        for name, source in self.v.names.qualified_names(node):
            if source == py_scope.IMPORT:
                best = name if best is None else min(best, name)
            elif source == py_scope.BUILTIN and best is None and isinstance(node, cst.Name):
                best = name
        if best is None and isinstance(node, (cst.Name, cst.Attribute)) and self.v.stars:
            head: cst.BaseExpression = node
            while isinstance(head, cst.Attribute):
                head = head.value
            if isinstance(head, cst.Name) and not self.v.assignments(head):
                dotted = cst.helpers.get_full_name_for_node(node)
                for star in self.v.stars:
                    if star.startswith("rocketmq") and dotted:
                        return f"{star}.{dotted}"
        return best

    def name(self, node: cst.Name) -> IR:
        assigns = self.v.assignments(node)
        if not assigns:
            if self.v.stars:
                return Star(node.value, tuple(self.v.stars))
            return Dyn(f"name '{node.value}' is not defined in this module")
        kinds = sorted(assigns, key=lambda a: 0 if a[0] == "function" else 1)
        kind, scope_node, anode = kinds[0]
        if kind == "function":
            func = self.v.func_names.get(id(scope_node), "<function>")
            if isinstance(anode, cst.Param):
                return Param(func, node.value)
            return Local(func, node.value, self.v.pos(node))
        if kind == "global":
            return Glob(node.value)
        if kind == "class":
            cls = self.v.class_names.get(id(scope_node))
            return AttrOf(Glob(cls), node.value) if cls else Dyn(f"class attribute '{node.value}'")
        if kind == "comprehension":
            return Dyn(f"comprehension variable '{node.value}'")
        return Dyn(f"name '{node.value}'")

    def binding(self, node: cst.BaseExpression) -> str:
        return self.v.key_of(node)

    def self_attr(self, node: cst.Attribute) -> IR | None:
        if isinstance(node.value, cst.Name) and self.v.method_self:
            cls, self_name, is_cls = self.v.method_self[-1]
            if cls and node.value.value == self_name:
                return AttrOf(Glob(cls), node.attr.value) if is_cls else SelfAttr(cls, node.attr.value)
        return None


class _Names(Protocol):
    """What the collector asks about names and positions (see `_FastNames`, `_LibcstNames`)."""

    def qualified_names(self, node: cst.CSTNode) -> Collection[py_scope.QName]: ...

    def assignments(self, node: cst.Name) -> list[_Binding]: ...


_Binding = tuple[str, "cst.CSTNode | None", cst.CSTNode]  # scope kind, node opening the scope, assigned node


class _FastNames:
    def __init__(self, module: cst.Module) -> None:
        self.index = py_scope.ScopeIndex(module)

    def qualified_names(self, node: cst.CSTNode) -> Collection[py_scope.QName]:
        return self.index.qualified_names(node)

    def assignments(self, node: cst.Name) -> list[_Binding]:
        return [(scope.kind, scope.node, anode) for scope, anode in self.index.assignments(node)]


_SOURCES = {
    QualifiedNameSource.IMPORT: py_scope.IMPORT,
    QualifiedNameSource.BUILTIN: py_scope.BUILTIN,
    QualifiedNameSource.LOCAL: py_scope.LOCAL,
}


def _kind(scope: object) -> str:
    if isinstance(scope, FunctionScope):
        return "function"
    if isinstance(scope, GlobalScope):
        return "global"
    if isinstance(scope, ClassScope):
        return "class"
    if isinstance(scope, ComprehensionScope):
        return "comprehension"
    return "other"


class _LibcstNames:
    """libcst's own ScopeProvider and QualifiedNameProvider (the fallback)."""

    def __init__(self, module: cst.Module) -> None:
        meta = MetadataWrapper(module, unsafe_skip_copy=True).resolve_many((ScopeProvider, QualifiedNameProvider))
        self.scopes = meta[ScopeProvider]
        self.qnames = meta[QualifiedNameProvider]

    def qualified_names(self, node: cst.CSTNode) -> Collection[py_scope.QName]:
        value: Any = self.qnames.get(node, ())
        if isinstance(value, LazyValue):
            value = value()
        return {(qn.name, _SOURCES[qn.source]) for qn in value}

    def assignments(self, node: cst.Name) -> list[_Binding]:
        scope = cast("Scope | None", self.scopes.get(node))
        if scope is None:
            return []
        out: list[_Binding] = []
        for a in scope[node.value]:
            anode = getattr(a, "node", None)
            if anode is not None:
                out.append((_kind(a.scope), getattr(a.scope, "node", None), anode))
        return out


class _Collector:
    """One pass over a module collecting `ModuleFacts` (hooks named like libcst visitor methods)."""

    def __init__(self, path: str, stars: list[str], names: _Names, spans: dict[cst.CSTNode, py_scope.Span]) -> None:
        self.path = path
        self.names = names
        self.spans = spans
        self.stars = stars
        self.conv = _FullConverter(self)
        self.imports: dict[str, str] = {}
        self.globals = _Table()
        self.classes: dict[str, _Table] = {}
        self.instance: dict[str, list[IR]] = {}
        self.locals: dict[str, list[tuple[tuple[int, int], IR]]] = {}
        self.functions: dict[str, dict[str, object]] = {}
        self.defs: list[str] = []
        self.constructs: list[Construct] = []
        self.methods: list[MethodCall] = []
        self.calls: list[FuncCall] = []
        self.options: list[Option] = []
        self.parser_alias: dict[str, str] = {}  # argument group binding -> its parser's binding
        self.bases: dict[str, tuple[IR, ...]] = {}
        self.evidence: set[str] = set()
        self.func_names: dict[int, str] = {}
        self.class_names: dict[int, str] = {}
        self.stack: list[str] = []  # qualified names of enclosing classes/functions
        self.func_stack: list[str] = []
        self.method_self: list[tuple[str, str, bool]] = []  # (class, self name, is classmethod)
        self.pending_key: dict[int, str] = {}
        self.pending_return: dict[int, str] = {}
        self.construct_of: dict[int, int] = {}
        self.branch: list[tuple[int, int]] = []  # the exclusive branches the walk is in (`MethodCall.branch`)
        self.branchings = 0  # branching statements met so far: the next one's number
        self.loops = 0  # loops, comprehensions and lambdas the walk is in (`Construct.repeated`)

    # helpers ----------------------------------------------------------------------------------
    def loc(self, node: cst.CSTNode) -> Loc:
        span = self.spans.get(node)
        if span is None:
            return NOWHERE
        return Loc(span[0], span[1] + 1, span[2], span[3] + 1)

    def pos(self, node: cst.CSTNode) -> tuple[int, int]:
        loc = self.loc(node)
        return (loc.line, loc.column)

    def assignments(self, node: cst.Name) -> list[_Binding]:
        return self.names.assignments(node)

    @property
    def scope(self) -> str:
        return self.func_stack[-1] if self.func_stack else ""

    def key_of(self, node: cst.BaseExpression) -> str:
        """The binding a receiver or assignment target denotes ("" when not trackable)."""
        if isinstance(node, cst.Name):
            assigns = self.assignments(node)
            for kind, scope_node, _anode in sorted(assigns, key=lambda a: 0 if a[0] == "function" else 1):
                if kind == "function":
                    return f"{self.func_names.get(id(scope_node), '<function>')}:{node.value}"
                if kind == "global":
                    return node.value
            return f"{self.scope}:{node.value}" if self.scope else node.value
        if isinstance(node, cst.Attribute):
            own = self.conv.self_attr(node)
            if isinstance(own, SelfAttr):
                return f"{own.cls}.{own.attr}"
            if isinstance(own, AttrOf) and isinstance(own.base, Glob):
                return f"{own.base.name}.{own.attr}"
        if isinstance(node, cst.Call) and id(node) in self.construct_of:
            return f"#{self.construct_of[id(node)]}"
        return ""

    # imports ----------------------------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        self._imports(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._imports(node)

    def _imports(self, node: cst.Import | cst.ImportFrom) -> None:
        for local, dotted in _import_bindings(node):
            if dotted.startswith("rocketmq.client.") and local != "*":
                name = dotted.rsplit(".", 1)[-1]
                if name in EVIDENCE_NAMES:
                    self.evidence.add(f"import:{name}")
            if not self.func_stack and local != "*":
                self.imports[local] = dotted

    # scopes -----------------------------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        qual = ".".join([*self.stack, node.name.value])
        self.class_names[id(node)] = qual
        if not self.stack:
            self.defs.append(node.name.value)
        self.stack.append(qual)
        table = self.classes.setdefault(qual, _Table())
        bases = tuple(self.conv.conv(a.value) for a in node.bases if a.keyword is None and not a.star)
        if bases:
            self.bases[qual] = bases
        if isinstance(node.body, cst.IndentedBlock):
            for stmt in node.body.body:
                if isinstance(stmt, cst.SimpleStatementLine):
                    for small in stmt.body:
                        for target, value in _targets(small):
                            if isinstance(target, cst.Name):
                                table.add(target.value, self.conv.conv(value))

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.stack.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        qual = ".".join([*self.stack, node.name.value])
        self.func_names[id(node)] = qual
        if not self.stack:
            self.defs.append(node.name.value)
        enclosing_class = self.stack[-1] if self.stack and self.stack[-1] in self.classes else ""
        decorators = {cst.helpers.get_full_name_for_node(d.decorator) for d in node.decorators}
        params = [p for p in (*node.params.posonly_params, *node.params.params)]
        is_method = bool(enclosing_class) and "staticmethod" not in decorators
        self_name = ""
        if is_method and params:
            self_name = params[0].name.value
            params = params[1:]
        params += list(node.params.kwonly_params)
        self.method_self.append((enclosing_class, self_name, "classmethod" in decorators))
        self.functions[qual] = {
            "params": tuple(p.name.value for p in params),
            "defaults": tuple((p.name.value, self.conv.conv(p.default)) for p in params if p.default is not None),
            "returns": [],
            "is_method": is_method,
            "fixture": self._fixture_name(node),
        }
        self.stack.append(qual)
        self.func_stack.append(qual)

    def _fixture_name(self, node: cst.FunctionDef) -> str:
        """The name a pytest fixture is injected by: `@pytest.fixture` / `@pytest.fixture(name=...)`."""
        for d in node.decorators:
            dec = d.decorator
            call = dec if isinstance(dec, cst.Call) else None
            if self.conv.qualname(call.func if call is not None else dec) not in (
                "pytest.fixture",
                "pytest.yield_fixture",
            ):
                continue
            for arg in call.args if call is not None else ():
                if arg.keyword is not None and arg.keyword.value == "name" and isinstance(arg.value, cst.SimpleString):
                    name = _string_value(arg.value)
                    return name if isinstance(name, str) else node.name.value
            return node.name.value
        return ""

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.stack.pop()
        self.func_stack.pop()
        self.method_self.pop()

    # bindings ---------------------------------------------------------------------------------
    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression | None, how: str) -> None:
        """Record `target = value`; a call's result goes to `pending_key` for the call visit."""
        if isinstance(value, cst.Call):
            key = self.key_of(target)
            if key:
                self.pending_key[id(value)] = key
                func = value.func
                if isinstance(func, cst.Attribute) and func.attr.value in (
                    "add_argument_group",
                    "add_mutually_exclusive_group",
                ):
                    parser = self.key_of(func.value)
                    if parser:
                        self.parser_alias[key] = self.parser_alias.get(parser, parser)
        ir: IR = self.conv.conv(value) if value is not None else Dyn(how)
        if isinstance(target, cst.Name):
            if not self.func_stack:
                if not self.stack:
                    self.globals.add(target.value, ir)
                return
            key = self.key_of(target)
            if ":" in key:
                self.locals.setdefault(key, []).append((self.pos(target), ir))
        elif isinstance(target, cst.Attribute):
            own = self.conv.self_attr(target)
            if isinstance(own, SelfAttr):
                self.instance.setdefault(f"{own.cls}.{own.attr}", []).append(ir)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target, value in _targets(node):
            self._bind(target, value, "")
        for t in node.targets:
            if isinstance(t.target, (cst.Tuple, cst.List)) and not isinstance(node.value, (cst.Tuple, cst.List)):
                for el in t.target.elements:
                    self._bind(el.value, None, "tuple unpacking")

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, node.value, "")

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target, None, "augmented assignment")

    def visit_For(self, node: cst.For) -> None:
        targets = node.target.elements if isinstance(node.target, (cst.Tuple, cst.List)) else None
        for t in [e.value for e in targets] if targets is not None else [node.target]:
            self._bind(t, None, f"loop variable at line {self.loc(node).line}")

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            if isinstance(node.item, cst.Call):
                self._bind(node.asname.name, node.item, "")
            else:
                self._bind(node.asname.name, None, "with-statement target")

    def visit_Yield(self, node: cst.Yield) -> None:
        if isinstance(node.value, cst.BaseExpression):
            self._returns(node.value)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self._returns(node.value)

    def _returns(self, value: cst.BaseExpression) -> None:
        """`return x` / `yield x`: the function hands out what x is bound to (a fixture, a factory)."""
        if not self.func_stack:
            return
        returns = self.functions[self.scope]["returns"]
        assert isinstance(returns, list)
        if isinstance(value, cst.Call):
            self.pending_return[id(value)] = self.scope
        else:
            key = self.key_of(value)
            if key:
                returns.append(key)

    # calls ------------------------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        qn = self.conv.qualname(node.func)
        kind = consumer_kind(qn) if qn else None
        if qn is None or kind is None:
            return
        index = len(self.constructs)
        self.construct_of[id(node)] = index
        call = self.conv.call_ir(Imp(qn), node)
        self.constructs.append(
            Construct(index, qn, self.pending_key.get(id(node), ""), self.scope, call, self.pos(node), self.loops > 0)
        )
        ret_func = self.pending_return.get(id(node))
        if ret_func is not None:
            returns = self.functions[ret_func]["returns"]
            assert isinstance(returns, list)
            returns.append(f"#{index}")

    def leave_Call(self, original_node: cst.Call) -> None:
        node = original_node
        if id(node) in self.construct_of:
            return
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in CONSUMER_METHODS:
            key = self.key_of(func.value)
            if key:
                self.methods.append(
                    MethodCall(
                        key,
                        func.attr.value,
                        self.conv.call_ir(Lit(func.attr.value), node),
                        self.pos(node),
                        tuple(self.branch),
                    )
                )
            return
        if isinstance(func, cst.Attribute) and func.attr.value == "add_argument":
            self._option(func.value, node)
            return
        target = self._repo_callee(func)
        if target is None:
            return
        call = self.conv.call_ir(target, node)
        key = self.pending_key.get(id(node), "")
        ret_func = self.pending_return.get(id(node))
        if ret_func is not None:
            key = key or f"{ret_func}:<return>"
            returns = self.functions[ret_func]["returns"]
            assert isinstance(returns, list)
            returns.append(key)
        arg_keys = tuple(
            self.key_of(a.value) if a.keyword is None and not a.star else "" for a in node.args if a.keyword is None
        )
        kw_keys = tuple(
            (a.keyword.value, k) for a in node.args if a.keyword is not None for k in [self.key_of(a.value)] if k
        )
        self.calls.append(
            FuncCall(
                target,
                call,
                key,
                self.scope,
                self.pos(node),
                arg_keys if any(arg_keys) else (),
                kw_keys,
                self.loops > 0,
            )
        )

    def _option(self, receiver: cst.BaseExpression, node: cst.Call) -> None:
        """`parser.add_argument("--topic", default=...)`: the attribute it sets and its default."""
        parser = self.key_of(receiver)
        if not parser:
            return
        flags = [a.value for a in node.args if a.keyword is None and isinstance(a.value, cst.SimpleString)]
        names = [n for n in (_string_value(f) for f in flags) if isinstance(n, str)]
        if not names:
            return
        kw = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        longest = next((n for n in names if n.startswith("--")), names[0])
        dest_node = kw.get("dest")
        dest = (
            _string_value(dest_node)
            if isinstance(dest_node, cst.SimpleString)
            else longest.lstrip("-").replace("-", "_")
        )
        if not isinstance(dest, str):
            return
        default = kw.get("default")
        ir = self.conv.conv(default) if default is not None else None
        self.options.append(Option(self.parser_alias.get(parser, parser), dest, ir, longest, self.loc(node)))

    def _repo_callee(self, func: cst.BaseExpression) -> IR | None:
        """Callees that may be repo functions or classes: module-level names and imported names."""
        if isinstance(func, cst.Name):
            # sorted: a name both imported and assigned has two candidates (libcst gives a set)
            for name, source in sorted(self.names.qualified_names(func)):
                if source == py_scope.IMPORT and not name.startswith(("rocketmq", "os.")):
                    return Imp(name)
                if source == py_scope.LOCAL and not _QN_LOCAL.search(name) and "." not in name:
                    return Glob(name)
            return None
        if isinstance(func, cst.Attribute):
            dotted = self.conv.qualname(func)
            if dotted is not None and "." in dotted and not dotted.startswith(("rocketmq", "os.", "builtins")):
                return Imp(dotted)
            if dotted is None:  # a method of an object the module holds (`self.service.create_consumer(...)`)
                receiver = self.conv.conv(func.value)
                if isinstance(receiver, (SelfAttr, Local, Glob)):
                    return AttrOf(receiver, func.attr.value)
        return None

    def facts(self) -> ModuleFacts:
        return ModuleFacts(
            path=self.path,
            imports=tuple(self.imports.items()),
            star_imports=tuple(self.stars),
            globals=self.globals.frozen("module constant"),
            classes=tuple((c, t.frozen("class attribute")) for c, t in self.classes.items()),
            instance_attrs=tuple((k, tuple(v)) for k, v in self.instance.items()),
            locals=tuple((k, tuple(v)) for k, v in self.locals.items()),
            functions=tuple(
                Function(
                    q,
                    f["params"],  # type: ignore[arg-type]
                    f["defaults"],  # type: ignore[arg-type]
                    tuple(f["returns"]),  # type: ignore[arg-type]
                    bool(f["is_method"]),
                    str(f["fixture"]),
                )
                for q, f in self.functions.items()
            ),
            defs=tuple(self.defs),
            constructs=tuple(self.constructs),
            methods=tuple(self.methods),
            calls=tuple(self.calls),
            options=tuple(self.options),
            bases=tuple(self.bases.items()),
            evidence=tuple(sorted(self.evidence)),
            full=True,
        )


def parse_full(path: str, data: bytes) -> ParseOutcome:
    """Full per-file facts with libcst metadata; failures carry a reason (line number for syntax)."""
    text = decode(data)
    if isinstance(text, Failure):
        return text
    try:
        with _DeepStack():
            return _full_facts(path, text)
    except RecursionError:
        return Failure("failed", "too deeply nested to analyse (recursion limit)")


def _full_facts(path: str, text: str) -> ParseOutcome:
    module = _parse_module(text)
    if isinstance(module, Failure):
        return module
    stars = [
        dotted
        for s in module.body
        if isinstance(s, cst.SimpleStatementLine)
        for small in s.body
        if isinstance(small, cst.ImportFrom)
        for local, dotted in _import_bindings(small)
        if local == "*"
    ]
    names: _Names
    try:
        names = _FastNames(module)
    except py_scope.Unsupported:
        names = _LibcstNames(module)
    collector = _Collector(path, stars, names, py_scope.positions(module))
    _walk(collector, module)
    return collector.facts()


_HOOKS: dict[str, tuple[type, bool]] = {
    name: (getattr(cst, name.split("_", 1)[1]), name.startswith("leave_"))
    for name in vars(_Collector)
    if name.startswith(("visit_", "leave_"))
}


# what runs its body once per item: a construction in one is `repeated`
_LOOPS = frozenset({cst.For, cst.While, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp})
# the children of a branching node that are its exclusive arms (`_walk`); a `match`'s cases each one
_ARMS: dict[type, tuple[str, ...]] = {cst.If: ("body", "orelse"), cst.IfExp: ("body", "orelse"), cst.Match: ("cases",)}


def _walk(collector: _Collector, module: cst.Module) -> None:
    """Call the collector's visit_X / leave_X hooks in libcst's visit order (without its machinery)."""
    visits: dict[type, Callable[[Any], None]] = {}
    leaves: dict[type, Callable[[Any], None]] = {}
    for name, (node_type, leave) in _HOOKS.items():
        (leaves if leave else visits)[node_type] = getattr(collector, name)
    orders = py_scope.ORDER
    order_of = py_scope.order
    skip = py_scope.SKIP

    def walk(node: cst.CSTNode) -> None:
        t = type(node)
        hook = visits.get(t)
        if hook is not None:
            hook(node)
        arms = _ARMS.get(t)
        looped = t in _LOOPS
        if looped:
            collector.loops += 1
        if arms is not None:
            branched(node, arms)
        else:
            for name in orders.get(t) or order_of(node):
                value = getattr(node, name)
                if type(value) is tuple or type(value) is list:
                    for v in value:
                        if type(v) not in skip:
                            walk(v)
                elif isinstance(value, cst.CSTNode) and type(value) not in skip:
                    walk(value)
        if looped:
            collector.loops -= 1
        hook = leaves.get(t)
        if hook is not None:
            hook(node)

    def branched(node: cst.CSTNode, arms: tuple[str, ...]) -> None:
        """A branching statement's children, each arm's in the collector's branch (`MethodCall.branch`):
        the arms named by `arms` (each element of a case list an arm of its own)."""
        collector.branchings += 1
        number = collector.branchings
        for name in orders.get(type(node)) or order_of(node):
            value = getattr(node, name)
            if value is None:
                continue
            parts = value if type(value) is tuple or type(value) is list else (value,)
            for i, v in enumerate(parts):
                if type(v) in skip or not isinstance(v, cst.CSTNode):
                    continue
                arm = arms.index(name) + i if name in arms else -1
                if arm >= 0:
                    collector.branch.append((number, arm))
                walk(v)
                if arm >= 0:
                    collector.branch.pop()

    walk(module)
