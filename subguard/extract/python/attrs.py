"""Class facts of a module that defines a base class: what `self.attr` is assigned in its methods.

A consumer built in a subclass reads attributes its base class assigns (funboost's `_queue_name`,
set in `AbstractConsumer.__init__` from a parameter). Only the base class's module is needed, and
only its imports, constants, class attributes, bases and `self.attr = ...` assignments, so it is
read with the standard library's `ast` (about twenty times faster than a libcst parse of the same
file; base classes of frameworks are large modules). Values become the same IR as the full parse;
what this reader does not follow is `Dyn` with a reason, never a guess. Scanned code is never run.
"""

from __future__ import annotations

import ast
import warnings

from subguard.extract.python.ir import (
    IR,
    AttrOf,
    Concat,
    Dyn,
    Env,
    Failure,
    Glob,
    Lit,
    ModuleFacts,
    Param,
    ParseOutcome,
    SelfAttr,
)

_ENV = frozenset({"os.getenv", "os.environ.get"})


class _Values:
    """ast expression -> IR, inside one method (its parameters and local names) or at module level."""

    def __init__(
        self,
        cls: str = "",
        func: str = "",
        self_name: str = "",
        params: frozenset[str] = frozenset(),
        local: frozenset[str] = frozenset(),
    ) -> None:
        self.cls = cls
        self.func = func
        self.self_name = self_name
        self.params = params
        self.local = local

    def conv(self, node: ast.expr) -> IR:
        if isinstance(node, ast.Constant):
            value = node.value
            return (
                Lit(value)
                if isinstance(value, (str, int, float, bool)) or value is None
                else Dyn(f"{type(value).__name__} literal")
            )
        if isinstance(node, ast.Name):
            return self._name(node.id)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == self.self_name and self.self_name:
                return SelfAttr(self.cls, node.attr)
            return AttrOf(self.conv(node.value), node.attr)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return Concat((self.conv(node.left), self.conv(node.right)))
        if isinstance(node, ast.JoinedStr):
            parts: list[IR] = []
            for part in node.values:
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    parts.append(Lit(part.value))
                elif isinstance(part, ast.FormattedValue) and part.format_spec is None and part.conversion in (-1, 115):
                    parts.append(self.conv(part.value))
                else:
                    return Dyn(f"f-string with a format spec or conversion at line {node.lineno}")
            return Concat(tuple(parts))
        if isinstance(node, ast.Call) and _dotted(node.func) in _ENV and node.args:
            default = (
                node.args[1]
                if len(node.args) > 1
                else next((k.value for k in node.keywords if k.arg == "default"), None)
            )
            return Env(self.conv(node.args[0]), self.conv(default) if default is not None else None)
        if isinstance(node, ast.Call):
            return Dyn(f"result of a call at line {node.lineno} of {self.func or 'module level'}")
        return Dyn(f"{type(node).__name__} expression at line {getattr(node, 'lineno', 0)}")

    def _name(self, name: str) -> IR:
        if name in ("True", "False", "None"):
            return Lit({"True": True, "False": False, "None": None}[name])
        if name in self.params:
            return Param(self.func, name)
        if name in self.local:
            return Dyn(f"local variable '{name}' of {self.func}")
        return Glob(name)


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr}" if head else ""
    return ""


def _imports(stmt: ast.Import | ast.ImportFrom) -> list[tuple[str, str]]:
    if isinstance(stmt, ast.Import):
        return [(a.asname or a.name.split(".")[0], a.name if a.asname else a.name.split(".")[0]) for a in stmt.names]
    base = "." * stmt.level + (stmt.module or "")
    sep = "" if base.endswith(".") or not base else "."
    return [(a.asname or a.name, f"{base}{sep}{a.name}") for a in stmt.names if a.name != "*"]


def _targets(stmt: ast.stmt) -> list[tuple[ast.expr, ast.expr]]:
    if isinstance(stmt, ast.Assign):
        return [(t, stmt.value) for t in stmt.targets]
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        return [(stmt.target, stmt.value)]
    return []


def _method(cls: str, fn: ast.FunctionDef | ast.AsyncFunctionDef, out: dict[str, list[IR]]) -> None:
    """`self.attr = value` anywhere in the method (nested blocks included, nested functions not)."""
    args = [*fn.args.posonlyargs, *fn.args.args]
    static = any(_dotted(d) == "staticmethod" for d in fn.decorator_list)
    if static or not args or any(_dotted(d) == "classmethod" for d in fn.decorator_list):
        return
    self_name = args[0].arg
    params = frozenset(a.arg for a in [*args[1:], *fn.args.kwonlyargs])
    body: list[ast.stmt] = list(fn.body)
    assigns: list[tuple[ast.expr, ast.expr]] = []
    local: set[str] = set()
    while body:
        stmt = body.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for target, value in _targets(stmt):
            chain = [target]
            while chain:
                t = chain.pop()
                if isinstance(t, ast.Name):
                    local.add(t.id)
                elif isinstance(t, (ast.Tuple, ast.List)):
                    chain.extend(t.elts)
            assigns.append((target, value))
        for name in ("body", "orelse", "finalbody", "handlers"):
            body.extend(getattr(stmt, name, ()) or ())
    values = _Values(cls, f"{cls}.{fn.name}", self_name, params, frozenset(local - params))
    for target, value in assigns:
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == self_name:
            out.setdefault(f"{cls}.{target.attr}", []).append(values.conv(value))


def parse_attrs(path: str, data: bytes) -> ParseOutcome:
    """Imports, constants, classes (attributes, bases, instance attributes) of a module, by `ast`."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return Failure("failed", f"cannot parse: {type(exc).__name__}")
    try:
        return _facts(path, tree)
    except RecursionError:
        return Failure("failed", "too deeply nested to analyse (recursion limit)")


def _facts(path: str, tree: ast.Module) -> ModuleFacts:
    module = _Values()
    imports: dict[str, str] = {}
    globs: dict[str, list[IR]] = {}
    classes: list[tuple[str, tuple[tuple[str, IR], ...]]] = []
    bases: list[tuple[str, tuple[IR, ...]]] = []
    instance: dict[str, list[IR]] = {}
    defs: list[str] = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            imports.update(_imports(stmt))
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.append(stmt.name)
        elif isinstance(stmt, ast.ClassDef):
            defs.append(stmt.name)
            based = tuple(module.conv(b) for b in stmt.bases)
            if based:
                bases.append((stmt.name, based))
            attrs: dict[str, list[IR]] = {}
            for inner in stmt.body:
                for target, value in _targets(inner):
                    if isinstance(target, ast.Name):
                        attrs.setdefault(target.id, []).append(module.conv(value))
                if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    _method(stmt.name, inner, instance)
            classes.append((stmt.name, _frozen(attrs, "class attribute")))
        for target, value in _targets(stmt):
            if isinstance(target, ast.Name):
                globs.setdefault(target.id, []).append(module.conv(value))
    return ModuleFacts(
        path=path,
        imports=tuple(imports.items()),
        globals=_frozen(globs, "module constant"),
        classes=tuple(classes),
        bases=tuple(bases),
        instance_attrs=tuple((k, tuple(v)) for k, v in instance.items()),
        defs=tuple(defs),
        full=False,
    )


def _frozen(table: dict[str, list[IR]], what: str) -> tuple[tuple[str, IR], ...]:
    return tuple(
        (
            name,
            vals[0]
            if all(v == vals[0] for v in vals)
            else Dyn(f"{what} '{name}' is assigned {len(vals)} times with different values"),
        )
        for name, vals in table.items()
    )
