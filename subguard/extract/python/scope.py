"""Name resolution and positions for the full Python parse, without libcst's metadata wrapper.

`py_parse` used `MetadataWrapper` with ScopeProvider + QualifiedNameProvider + PositionProvider:
four whole-module visitor passes through libcst's generic (and slow) visit machinery, about 30x
a plain parse. This module answers the same three questions with one hand-rolled scope pass and
one codegen pass:

- `ScopeIndex` replays libcst's `ScopeVisitor` (same scopes, same assignment order counter, same
  "earlier assignment" rule for accesses, same dotted-import accesses) so that
  `qualified_names(node)` and `assignments(name)` return exactly what
  `Scope.get_qualified_names_for` and `scope[name]` would. Constructs whose libcst semantics are
  intricate and rare in consumer code (`global`/`nonlocal`, `:=`, `match`, PEP 695 type
  parameters, `NewType`/`TypeVar` calls, statement-like string annotations) raise `Unsupported`;
  the caller then falls back to libcst's providers, so results never change.
- `positions(module)` is libcst's `PositionProvider` codegen with a lighter state.
- `children(node)` lists a node's children in libcst's visit order (learned once per node type).
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.helpers import get_full_name_for_node

# QualifiedName sources as plain strings (libcst's QualifiedNameSource names, lower case)
IMPORT, BUILTIN, LOCAL = "import", "builtin", "local"
QName = tuple[str, str]  # (qualified name, source)


class Unsupported(Exception):
    """The module uses a construct this index does not replay; use libcst's providers."""


# ---- visit order ------------------------------------------------------------------------------


class _FieldRecorder(cst.CSTVisitor):
    def __init__(self, root: cst.CSTNode) -> None:
        super().__init__()
        self.root = root
        self.fields: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return node is self.root

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if node is self.root and attribute not in self.fields:
            self.fields.append(attribute)


ORDER: dict[type, tuple[str, ...]] = {}
# leaves and formatting nodes: never hold a name, a call or a statement
_SKIP_BASES = frozenset(
    {
        cst.BaseParenthesizableWhitespace,
        cst.Comment,
        cst.EmptyLine,
        cst.Newline,
        cst.TrailingWhitespace,
        cst.ParenthesizedWhitespace,
        cst.LeftParen,
        cst.RightParen,
        cst.LeftSquareBracket,
        cst.RightSquareBracket,
        cst.LeftCurlyBrace,
        cst.RightCurlyBrace,
        cst.Comma,
        cst.Dot,
        cst.Semicolon,
        cst.Colon,
        cst.AssignEqual,
        cst.ImportStar,
        cst.Asynchronous,
        cst.BaseBinaryOp,
        cst.BaseBooleanOp,
        cst.BaseCompOp,
        cst.BaseUnaryOp,
        cst.BaseAugOp,
        cst.Integer,
        cst.Float,
        cst.Imaginary,
        cst.Ellipsis,
        cst.ParamSlash,
    }
)
# by each class's own MRO: libcst registers no virtual subclasses, and issubclass on these ABCs
# costs about a tenth of a second at import
SKIP: frozenset[type] = frozenset(
    t
    for t in vars(cst).values()
    if isinstance(t, type) and cst.CSTNode in t.__mro__ and not _SKIP_BASES.isdisjoint(t.__mro__)
)


def order(node: cst.CSTNode) -> tuple[str, ...]:
    t = type(node)
    fields = ORDER.get(t)
    if fields is None:
        rec = _FieldRecorder(node)
        node.visit(rec)
        fields = ORDER[t] = tuple(rec.fields)
    return fields


def children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Child nodes in libcst's visit order, without formatting-only nodes and leaves."""
    for name in ORDER.get(type(node)) or order(node):
        value = getattr(node, name)
        if isinstance(value, (tuple, list)):
            for v in value:
                if type(v) not in SKIP:
                    yield v
        elif isinstance(value, cst.CSTNode) and type(value) not in SKIP:
            yield value


# ---- positions --------------------------------------------------------------------------------

_NEWLINE = re.compile(r"\r\n?|\n")
Span = tuple[int, int, int, int]  # start line, start column (0-based), end line, end column


@dataclass(frozen=False)
class _PositionState(CodegenState):
    """libcst's PositionProvidingCodegenState, with plain tuples and no token list."""

    line: int = 1
    column: int = 0
    computed: dict[cst.CSTNode, Span] = field(default_factory=dict)
    stack: list[tuple[int, int]] = field(default_factory=list)

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        if "\n" in value or "\r" in value:
            segments = _NEWLINE.split(value)
            self.line += len(segments) - 1
            self.column = len(segments[-1])
        else:
            self.column += len(value)

    def pop_trailing_newline(self) -> None:
        pass

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.stack.append((self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        line, column = self.stack.pop()
        if node not in self.computed:
            self.computed[node] = (line, column, self.line, self.column)

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> _Syntactic:
        return _Syntactic(self, node, start_node, end_node)


class _Syntactic:
    """`record_syntactic_position` as a plain context manager (a generator one costs 3x more)."""

    __slots__ = ("column", "end_node", "line", "node", "start_node", "state")

    def __init__(
        self, state: _PositionState, node: cst.CSTNode, start_node: cst.CSTNode | None, end_node: cst.CSTNode | None
    ) -> None:
        self.state = state
        self.node = node
        self.start_node = start_node
        self.end_node = end_node

    def __enter__(self) -> None:
        self.line, self.column = self.state.line, self.state.column

    def __exit__(self, *exc: object) -> None:
        state = self.state
        line, column, end_line, end_column = self.line, self.column, state.line, state.column
        if self.start_node is not None:
            line, column = state.computed[self.start_node][:2]
        if self.end_node is not None:
            end_line, end_column = state.computed[self.end_node][2:]
        state.computed[self.node] = (line, column, end_line, end_column)


def positions(module: cst.Module) -> dict[cst.CSTNode, Span]:
    """What libcst's PositionProvider computes, for every node."""
    state = _PositionState(default_indent=module.default_indent, default_newline=module.default_newline)
    module._codegen(state)
    return state.computed


# ---- scopes -----------------------------------------------------------------------------------


class Scope:
    """One libcst scope: kind is global, function, class, comprehension or builtin."""

    __slots__ = ("assigns", "count", "kind", "node", "parent", "prefix")

    def __init__(
        self, kind: str, parent: Scope | None, node: cst.CSTNode | None = None, name: str | None = None
    ) -> None:
        self.kind = kind
        self.parent: Scope = parent if parent is not None else self
        self.node = node
        self.assigns: dict[str, list[Assign]] = {}
        self.count = 0
        up: str = parent.prefix if parent is not None and parent.kind != "builtin" else ""
        tails: dict[str, list[str | None]] = {
            "function": [name, "<locals>"],
            "class": [name],
            "comprehension": ["<comprehension>"],
        }
        tail = tails.get(kind, [])
        self.prefix: str = ".".join(p for p in [up, *tail] if p)

    def visible_parent(self, first: Scope | None = None) -> Scope:
        """libcst's `_next_visible_parent`: class scopes are invisible to nested scopes."""
        parent = first if first is not None else self.parent
        while parent.kind == "class":
            parent = parent.parent
        return parent

    def __contains__(self, name: str) -> bool:
        if self.kind == "builtin":
            return hasattr(builtins, name)
        if name in self.assigns:
            return True
        return name in self.visible_parent()

    def resolve(self, name: str) -> list[Assign]:
        """`scope[name]`: the assignments of the nearest visible scope that binds `name`."""
        scope = self
        while True:
            if scope.kind == "builtin":
                return [_builtin(name, scope)] if hasattr(builtins, name) else []
            found = scope.assigns.get(name)
            if found:
                return found
            scope = scope.visible_parent()


@dataclass(eq=False)
class Assign:
    """An assignment; `node` is None for builtins, `imp` the Import/ImportFrom for import aliases."""

    name: str
    scope: Scope
    node: cst.CSTNode | None
    index: int
    imp: cst.Import | cst.ImportFrom | None = None

    def qualified_names(self, full_name: str) -> set[QName]:
        if self.node is None:
            return {(f"builtins.{self.name}", BUILTIN)}
        if self.imp is not None:
            return _import_qnames(self.imp, full_name)
        prefix = self.scope.prefix
        return {(f"{prefix}.{full_name}" if prefix else full_name, LOCAL)}


def _builtin(name: str, scope: Scope) -> Assign:
    return Assign(name, scope, None, -1)


def _import_qnames(node: cst.Import | cst.ImportFrom, full_name: str) -> set[QName]:
    """libcst's `ImportAssignment.get_qualified_names_for`."""
    module = ""
    if isinstance(node, cst.ImportFrom):
        if node.module:
            module = get_full_name_for_node(node.module) or ""
        if node.relative:
            module = "." * len(node.relative) + module
    results: set[QName] = set()
    if isinstance(node.names, cst.ImportStar):
        return results
    for alias in node.names:
        real = get_full_name_for_node(alias.name)
        if not real:
            continue
        parts = real.split(".")
        for real_name in [".".join(parts[:i]) for i in range(len(parts), 0, -1)]:
            as_name = real_name
            if module and module.endswith("."):
                real_name = f"{module}{real_name}"
            elif module:
                real_name = f"{module}.{real_name}"
            if alias and alias.asname:
                evaluated = alias.evaluated_alias
                if evaluated is not None:
                    as_name = evaluated
            if full_name.startswith(as_name):
                remaining = full_name.split(as_name, 1)[1]
                if remaining and not remaining.startswith("."):
                    continue
                remaining = remaining.lstrip(".")
                results.add((f"{real_name}.{remaining}" if remaining else real_name, IMPORT))
                break
    return results


def _dotted_names(node: cst.Attribute | cst.Name) -> Iterator[tuple[str, cst.CSTNode]]:
    """libcst's `_gen_dotted_names`."""
    if isinstance(node, cst.Name):
        yield node.value, node
        return
    value = node.value
    if isinstance(value, cst.Call):
        func = value.func
        if isinstance(func, (cst.Attribute, cst.Name)):
            yield from _dotted_names(func)
    elif isinstance(value, (cst.Attribute, cst.Name)):
        inner = _dotted_names(value)
        first = next(inner, None)
        if first is None:
            return
        yield f"{first[0]}.{node.attr.value}", node
        yield first
        yield from inner


@dataclass(eq=False)
class _Access:
    node: cst.CSTNode
    name: str
    scope: Scope
    index: int


_STRING_RISK = re.compile(r"[=:]|import|global|nonlocal")
_ASSIGNMENT_LIKE: frozenset[type] = frozenset(
    {
        cst.AnnAssign,
        cst.AsName,
        cst.Assign,
        cst.AugAssign,
        cst.CompFor,
        cst.Import,
        cst.ImportFrom,
        cst.Parameters,
        cst.WithItem,
    }
)
_BAIL = (cst.Global, cst.Nonlocal, cst.NamedExpr, cst.Match, cst.TypeAlias, cst.TypeParameters)


class ScopeIndex:
    """libcst's ScopeProvider + QualifiedNameProvider answers for one module (see module doc)."""

    def __init__(self, module: cst.Module) -> None:
        self.scope_of: dict[int, Scope] = {}
        self.globals = Scope("global", Scope("builtin", None))
        self.globals.parent.parent = self.globals.parent
        self._scope = self.globals
        self._top: list[cst.Attribute | None] = [None]
        self._hint = 0  # inside an annotation, a subscript or a cast(): strings may be parsed by libcst
        self._pending: list[tuple[cst.Name, Scope, int, cst.Attribute | None]] = []
        self._walk(module)
        self._accesses: dict[int, _Access] = {}
        for name_node, scope, index, attribute in self._pending:
            name = name_node.value
            acc_node: cst.CSTNode = name_node
            if attribute is not None:
                for dotted, dnode in _dotted_names(attribute):
                    if dotted in scope:
                        acc_node, name = dnode, dotted
                        break
            self._accesses[id(acc_node)] = _Access(acc_node, name, scope, index)
        del self._pending

    # queries ----------------------------------------------------------------------------------
    def scope(self, node: cst.CSTNode) -> Scope | None:
        return self.scope_of.get(id(node))

    def assignments(self, node: cst.Name) -> list[tuple[Scope, cst.CSTNode]]:
        """`scope[name]` for the scope of `node`, without builtins: (scope, assigned node)."""
        scope = self.scope_of.get(id(node))
        if scope is None:
            return []
        return [(a.scope, a.node) for a in scope.resolve(node.value) if a.node is not None]

    def qualified_names(self, node: cst.CSTNode) -> set[QName]:
        """libcst's `Scope.get_qualified_names_for(node)` in the node's scope."""
        scope = self.scope_of.get(id(node))
        if scope is None:
            return set()
        access = self._accesses.get(id(node))
        if access is not None:
            return {q for r in self._referents(access) for q in r.qualified_names(r.name)}
        full_name = get_full_name_for_node(node)
        if full_name is None:
            return set()
        assigns: list[Assign] = []
        prefix: str | None = full_name
        while prefix:
            if prefix in scope:
                assigns = scope.resolve(prefix)
                break
            idx = prefix.rfind(".")
            prefix = None if idx == -1 else prefix[:idx]
        for a in assigns:
            if a.node is not None and _is_assignment(node, a.node):
                return a.qualified_names(full_name)
        return {q for a in assigns for q in a.qualified_names(full_name)}

    def _referents(self, access: _Access) -> list[Assign]:
        scope = access.scope
        assigns = scope.resolve(access.name)
        previous = [a for a in assigns if a.scope is not scope or a.index < access.index]
        if not previous and assigns and scope.parent is not scope:
            previous = _resolve_from(scope.parent, access.name)
        return previous

    # the scope pass ---------------------------------------------------------------------------
    def _record(self, name: str, node: cst.CSTNode, imp: cst.Import | cst.ImportFrom | None = None) -> None:
        scope = self._scope
        scope.assigns.setdefault(name, []).append(Assign(name, scope, node, scope.count, imp))

    def _new(self, kind: str, node: cst.CSTNode, name: str | None) -> Scope:
        return Scope(kind, self._scope, node, name)

    def _store(self, node: cst.CSTNode) -> None:
        """An assignment target (libcst's STORE expression context)."""
        if isinstance(node, cst.Name):
            self._record(node.value, node)
            self.scope_of[id(node)] = self._scope
        elif isinstance(node, (cst.Tuple, cst.List)):
            for el in node.elements:
                self._store(el)
            self.scope_of[id(node)] = self._scope
        elif isinstance(node, (cst.Element, cst.StarredElement)):
            self._store(node.value)
            self.scope_of[id(node)] = self._scope
        else:
            self._walk(node)

    def _walk(self, node: cst.CSTNode) -> None:
        """Visit `node` by its `_VISIT` handler (none: its children), then record its scope."""
        t = type(node)
        visit = _VISIT.get(t)
        if visit is None:
            self._children(node)
        elif visit(self, node):
            return
        self.scope_of[id(node)] = self._scope
        if t in _ASSIGNMENT_LIKE:
            self._scope.count += 1

    def _children(self, node: cst.CSTNode) -> None:
        for child in children(node):
            self._walk(child)

    # `_VISIT` handlers; one returning True has recorded its node itself (or leaves it unscoped)
    def _string(self, node: cst.SimpleString) -> bool:
        if self._hint and _STRING_RISK.search(node.value):
            raise Unsupported("string annotation")
        return True

    def _name(self, node: cst.Name) -> bool:
        scope = self._scope
        self._pending.append((node, scope, scope.count, self._top[-1]))
        self.scope_of[id(node)] = scope
        return True

    def _attribute(self, node: cst.Attribute) -> None:
        top = self._top
        if top[-1] is None:
            top[-1] = node
        self._walk(node.value)
        if top[-1] is node:
            top[-1] = None

    def _call(self, node: cst.Call) -> None:
        func = node.func
        last = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
        if last in ("NewType", "TypeVar"):
            raise Unsupported(last)
        self._top.append(None)
        hint = last == "cast"
        self._hint += hint
        self._children(node)
        self._hint -= hint
        self._top.pop()

    def _import(self, node: cst.Import | cst.ImportFrom) -> None:
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                target = alias.asname.name if alias.asname is not None else alias.name
                if not isinstance(target, (cst.Name, cst.Attribute)):
                    raise Unsupported("import alias")
                for dotted, _n in _dotted_names(target):
                    self._record(dotted, node, node)

    def _function(self, node: cst.FunctionDef) -> None:
        if node.type_parameters is not None:
            raise Unsupported("type parameters")
        self._record(node.name.value, node)
        self.scope_of[id(node.name)] = self._scope
        outer = self._scope
        self._scope = self._new("function", node, get_full_name_for_node(node.name))
        self._walk(node.params)
        self._walk(node.body)
        self._scope = outer
        for d in node.decorators:
            self._walk(d)
        if node.returns is not None:
            self._walk(node.returns)
        outer.count += 1

    def _class(self, node: cst.ClassDef) -> None:
        if node.type_parameters is not None:
            raise Unsupported("type parameters")
        self._record(node.name.value, node)
        self.scope_of[id(node.name)] = self._scope
        for d in node.decorators:
            self._walk(d)
        for arg in (*node.bases, *node.keywords):
            self._walk(arg)
        outer = self._scope
        self._scope = self._new("class", node, get_full_name_for_node(node.name))
        for stmt in node.body.body:
            self._walk(stmt)
        self._scope = outer
        outer.count += 1

    def _lambda(self, node: cst.Lambda) -> None:
        outer = self._scope
        self._scope = self._new("function", node, None)
        self._walk(node.params)
        self._walk(node.body)
        self._scope = outer

    def _param(self, node: cst.Param) -> None:
        self._record(node.name.value, node)
        self.scope_of[id(node.name)] = self._scope
        inner = self._scope
        self._scope = inner.parent
        if node.default is not None:
            self._walk(node.default)
        if node.annotation is not None:
            self._hint += 1
            self._walk(node.annotation)
            self._hint -= 1
        self._scope = inner

    def _arg(self, node: cst.Arg) -> None:
        self._walk(node.value)

    def _comprehension(self, node: cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp) -> None:
        for_in = node.for_in
        self._walk(for_in.iter)
        self.scope_of[id(for_in)] = self._scope
        outer = self._scope
        self._scope = self._new("comprehension", node, None)
        self._store(for_in.target)
        self._scope.count += 1
        for cond in for_in.ifs:
            self._walk(cond)
        if for_in.inner_for_in is not None:
            self._walk(for_in.inner_for_in)
        if isinstance(node, cst.DictComp):
            self._walk(node.key)
            self._walk(node.value)
        else:
            self._walk(node.elt)
        self._scope = outer

    def _comp_for(self, node: cst.CompFor) -> None:
        self._store(node.target)
        self._walk(node.iter)
        for cond in node.ifs:
            self._walk(cond)
        if node.inner_for_in is not None:
            self._walk(node.inner_for_in)

    def _for(self, node: cst.For) -> None:
        self._store(node.target)
        self._scope.count += 1
        self._walk(node.iter)
        self._walk(node.body)
        if node.orelse is not None:
            self._walk(node.orelse)

    def _assign(self, node: cst.Assign) -> None:
        for assign_target in node.targets:
            self._store(assign_target.target)
            self.scope_of[id(assign_target)] = self._scope
        self._walk(node.value)

    def _ann_assign(self, node: cst.AnnAssign) -> None:
        self._store(node.target)
        self._hint += 1
        self._walk(node.annotation)
        self._hint -= 1
        if node.value is not None:
            self._walk(node.value)

    def _aug_assign(self, node: cst.AugAssign) -> None:
        self._store(node.target)
        self._walk(node.value)

    def _as_name(self, node: cst.AsName) -> None:
        self._store(node.name)

    def _hinted(self, node: cst.Annotation | cst.Subscript) -> None:
        """An annotation or a subscript: strings inside may be type hints."""
        self._hint += 1
        self._children(node)
        self._hint -= 1

    def _concatenated(self, node: cst.ConcatenatedString) -> None:
        if self._hint and _STRING_RISK.search(_code(node)):
            raise Unsupported("string annotation")
        self._children(node)

    def _bail(self, node: cst.CSTNode) -> None:
        raise Unsupported(type(node).__name__)


_N = TypeVar("_N", bound=cst.CSTNode)
_Visit = Callable[[ScopeIndex, Any], "bool | None"]


def _on(node_type: type[_N], visit: Callable[[ScopeIndex, _N], bool | None]) -> tuple[type[cst.CSTNode], _Visit]:
    """One `_VISIT` entry, with the handler's node type checked against the key."""
    return node_type, visit


# how `ScopeIndex._walk` visits each node type (by exact type, as libcst builds them)
_VISIT: dict[type[cst.CSTNode], _Visit] = dict(
    [
        _on(cst.SimpleString, ScopeIndex._string),
        _on(cst.Name, ScopeIndex._name),
        _on(cst.Attribute, ScopeIndex._attribute),
        _on(cst.Call, ScopeIndex._call),
        _on(cst.Import, ScopeIndex._import),
        _on(cst.ImportFrom, ScopeIndex._import),
        _on(cst.FunctionDef, ScopeIndex._function),
        _on(cst.ClassDef, ScopeIndex._class),
        _on(cst.Lambda, ScopeIndex._lambda),
        _on(cst.Param, ScopeIndex._param),
        _on(cst.Arg, ScopeIndex._arg),
        _on(cst.ListComp, ScopeIndex._comprehension),
        _on(cst.SetComp, ScopeIndex._comprehension),
        _on(cst.GeneratorExp, ScopeIndex._comprehension),
        _on(cst.DictComp, ScopeIndex._comprehension),
        _on(cst.CompFor, ScopeIndex._comp_for),
        _on(cst.For, ScopeIndex._for),
        _on(cst.Assign, ScopeIndex._assign),
        _on(cst.AnnAssign, ScopeIndex._ann_assign),
        _on(cst.AugAssign, ScopeIndex._aug_assign),
        _on(cst.AsName, ScopeIndex._as_name),
        _on(cst.Annotation, ScopeIndex._hinted),
        _on(cst.Subscript, ScopeIndex._hinted),
        _on(cst.ConcatenatedString, ScopeIndex._concatenated),
        # unsupported: _BAIL and every match pattern (found by MRO, as for SKIP)
        *((t, ScopeIndex._bail) for t in _BAIL),
        *((t, ScopeIndex._bail) for t in vars(cst).values() if isinstance(t, type) and cst.MatchPattern in t.__mro__),
    ]
)


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _resolve_from(scope: Scope, name: str) -> list[Assign]:
    """`parent._resolve_scope_for_access(name, child)`: starts at `scope` itself, class or not."""
    if scope.kind == "builtin":
        return scope.resolve(name)
    found = scope.assigns.get(name)
    if found:
        return found
    return scope.visible_parent().resolve(name)


def _is_assignment(node: cst.CSTNode, assigned: cst.CSTNode) -> bool:
    if node is assigned:
        return True
    if isinstance(assigned, (cst.Import, cst.ImportFrom)) and not isinstance(assigned.names, cst.ImportStar):
        for alias in assigned.names:
            if alias.name is node or (alias.asname is not None and alias.asname.name is node):
                return True
    return False
