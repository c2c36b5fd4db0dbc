"""Per-file Java facts from a tree-sitter parse: imports, constants, listener annotations, consumers.

`java_facts(data)` is pure and returns picklable records (so the content cache can hold them).
Expressions stay unresolved (`Expr`); cross-file linking happens in `java_resolve`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache

from tree_sitter import Node, Parser

from subguard.extract.java.compact import compact
from subguard.extract.java.lifecycle import Lifecycle, lifecycle
from subguard.extract.java.tree import language, typed
from subguard.extract.java.tree import text as _text
from subguard.extract.java.tree import walk as _walk

CONSUMER_TYPES = frozenset(
    {"DefaultMQPushConsumer", "DefaultLitePullConsumer", "DefaultMQPullConsumer", "MQPullConsumerScheduleService"}
)
BUILDER_METHODS = frozenset({"newPushConsumerBuilder", "newSimpleConsumerBuilder", "newLitePushConsumerBuilder"})
# vendor factories that return a consumer: Aliyun ONS (`ONSFactory.createConsumer(properties)`) and
# OpenMessaging (`accessPoint.createPushConsumer(OMS.newKeyValue().put(OMSBuiltinKeys.CONSUMER_ID, g))`)
ONS_FACTORIES = {"createConsumer": "ons", "createOrderedConsumer": "ons-order", "createBatchConsumer": "ons-batch"}
OMS_FACTORIES = {"createPushConsumer": "oms-push", "createPullConsumer": "oms-pull"}
# Aliyun ONS's Spring beans (`com.aliyun.openservices.ons.api.bean`): `new ConsumerBean()`, given
# `setProperties(properties)` and `setSubscriptionTable(map of Subscription -> listener)`
ONS_BEANS = {"ConsumerBean": "ons-bean", "OrderConsumerBean": "ons-order-bean", "BatchConsumerBean": "ons-batch-bean"}
ONS_BEAN_PACKAGE = "com.aliyun.openservices.ons.api.bean"
# declared types of a variable that holds a consumer made elsewhere (a factory method's result)
CONSUMER_VAR_TYPES = CONSUMER_TYPES | frozenset(
    {
        "MQPushConsumer",
        "MQPullConsumer",
        "LitePullConsumer",
        "PushConsumer",
        "SimpleConsumer",
        "LitePushConsumer",
        *ONS_BEANS,
    }
)
# class annotations under which Spring or Lombok may set a non-final field without an assignment in the source
_BOUND_CLASS = frozenset({"ConfigurationProperties", "Data", "Setter", "Value", "Builder"})
LISTENER_ANNOTATIONS = frozenset(
    {"RocketMQMessageListener", "ExtRocketMQConsumerConfiguration", "ExtConsumerResetConfiguration"}
)
_SCOPES = frozenset(
    {
        "method_declaration",
        "constructor_declaration",
        "static_initializer",
        "lambda_expression",
        "compact_constructor_declaration",
    }
)
_CLASSES = frozenset(
    {
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "annotation_type_declaration",
    }
)
_ESC = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", "s": " ", '"': '"', "'": "'", "\\": "\\"}


@compact
@dataclass(frozen=True)
class Expr:
    """An unresolved Java expression.

    kind: str | num | bool | null | name | field | concat | call | new | map | set | when | other.
    `text`: literal value, identifier, field or method name, created type, or source text (other).
    `qual`: field qualifier or call receiver. `args`: concat parts, call/new arguments, set elements, or map
    entries flattened as key, value, key, value. `when`: a map value set on one arm (`text`: then or
    else) of a condition (`qual`), the value its only arg.
    """

    kind: str
    text: str = ""
    qual: Expr | None = None
    args: tuple[Expr, ...] = ()
    line: int = 0
    column: int = 0
    source: str = ""

    def dotted(self) -> str | None:
        """`a.b.C` for a name/field chain, else None."""
        if self.kind == "name":
            return self.text
        if self.kind == "field" and self.qual is not None:
            head = self.qual.dotted()
            return f"{head}.{self.text}" if head else None
        return None


@compact
@dataclass(frozen=True)
class Call:
    method: str
    args: tuple[Expr, ...]
    line: int
    column: int
    source: str = ""
    end_line: int = 0  # last line of the call, arguments included
    # the parameters of the method the call is written in, when that is not the method that made the
    # consumer (`registerPullTaskCallback(String topic, ...)` subscribing a field's consumer); else None
    params: tuple[str, ...] | None = None
    # the exclusive branches of its method the call is in, outermost first (`_branch`)
    branch: tuple[tuple[int, int], ...] = ()


@compact
@dataclass(frozen=True)
class ConsumerDecl:
    """A consumer created in code: constructor or 5.x builder chain, plus the calls made on it."""

    kind: str  # constructor type, or the builder method (newPushConsumerBuilder / newSimpleConsumerBuilder)
    target: str
    ctor_args: tuple[Expr, ...]
    calls: tuple[Call, ...]
    class_name: str
    line: int
    column: int
    method: str = ""  # the enclosing method ("<init>" for a constructor), "" at class level
    params: tuple[str, ...] = ()  # the enclosing method's parameter names, in order
    # made in a loop or lambda of its method, or in a method of its class called from one (`_repeated`)
    repeated: bool = False


@compact
@dataclass(frozen=True)
class Invocation:
    """A call that may instantiate a template: `Owner.factory(args)` assigned to a consumer-typed
    variable (with the calls made on it), a call of a same-class method, or `new Wrapper(args)`."""

    owner: str  # the qualifier as written ("" for an unqualified or `this.` call); the type for `new`
    method: str  # "<init>" for `new`
    args: tuple[Expr, ...]
    class_name: str
    line: int
    column: int
    target: str = ""
    calls: tuple[Call, ...] = ()
    params: tuple[str, ...] = ()  # the parameters of the method the call is written in
    repeated: bool = False  # written in a loop or lambda of its method (`_in_a_loop`)
    in_method: str = ""  # the method the call is written in ("<init>" a constructor, "" at class level)


@compact
@dataclass(frozen=True)
class AnnotationUse:
    name: str  # as written: simple or qualified
    elements: tuple[tuple[str, Expr], ...]
    class_name: str
    line: int
    column: int
    first_line: int = 0  # where the annotated declaration's modifiers start (its first annotation)
    end_line: int = 0  # the annotation's last line


@compact
@dataclass(frozen=True)
class ClassFacts:
    name: str  # Outer.Inner within the file
    constants: tuple[tuple[str, Expr], ...]
    supers: tuple[str, ...]
    # non-final fields whose literal initializer is never reassigned in the class (read as written)
    fields: tuple[tuple[str, Expr], ...] = ()
    # (field, parameter): `this.field = parameter` (or `= parameter.accessor()`) in a method or constructor
    param_fields: tuple[tuple[str, str], ...] = ()
    ctors: tuple[tuple[str, ...], ...] = ()  # each constructor's parameter names
    # command-line option fields: (field, option names, default or None) from picocli `@Option`
    options: tuple[tuple[str, str, Expr | None], ...] = ()
    # (field, parameter): a field computed from a parameter (`this.selector = Util.make(param.getX())`):
    # a template's input like the above, but never read as the parameter's value
    derived_fields: tuple[tuple[str, str], ...] = ()
    # fields the container injects (`@Autowired`, `@Resource`, `@Inject`): the application's own beans
    injected: tuple[str, ...] = ()
    field_types: tuple[tuple[str, str], ...] = ()  # every field -> its declared type (simple, no generics)
    config_prefix: Expr | None = None  # `@ConfigurationProperties(prefix = ...)` on the class
    # the annotations on the class declaration besides RocketMQ's listener ones: an in-house listener
    # annotation, which a registrar of the repository reads by reflection to build consumers
    marks: tuple[AnnotationUse, ...] = ()
    # an annotation type's elements, each with its default (None: none)
    elements: tuple[tuple[str, Expr | None], ...] = ()


@compact
@dataclass(frozen=True)
class JavaFacts:
    package: str = ""
    imports: tuple[str, ...] = ()
    wildcards: tuple[str, ...] = ()
    static_imports: tuple[str, ...] = ()
    static_wildcards: tuple[str, ...] = ()
    classes: tuple[ClassFacts, ...] = ()
    annotations: tuple[AnnotationUse, ...] = ()
    consumers: tuple[ConsumerDecl, ...] = ()
    invocations: tuple[Invocation, ...] = ()
    error: str | None = None
    error_line: int = 0
    lifecycle: Lifecycle = Lifecycle()  # expected failures, listener carriers, enhancers (lifecycle.py)


@lru_cache(maxsize=1)
def _parser() -> Parser:
    return Parser(language())


def _first_error(root: Node) -> Node | None:
    for n in _walk(root):
        if n.type == "ERROR" or n.is_missing:
            return n
    return None


_ESCAPE = re.compile(r"\\(?:u+[0-9a-fA-F]{4}|[0-3]?[0-7]{1,2}|\n|.)", re.DOTALL)


def _unescape(match: re.Match[str]) -> str:
    esc = match.group(0)[1:]
    if esc.startswith("u"):
        return chr(int(esc.lstrip("u")[:4], 16))
    if esc[:1].isdigit():
        return chr(int(esc, 8))
    if esc == "\n":  # a text block's line continuation
        return ""
    return _ESC.get(esc, esc)


def _text_block(body: str) -> str:
    """A text block's value as javac computes it (JLS 3.10.6): the opening line dropped, line ends
    normalised, incidental indentation (the least over non-blank lines and the closing line) and
    trailing spaces stripped, then escapes interpreted."""
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")[1:]
    if not lines:
        return ""
    significant = [ln for ln in lines[:-1] if ln.strip()] + [lines[-1]]
    indent = min(len(ln) - len(ln.lstrip(" \t\f")) for ln in significant)
    stripped = [ln[indent:].rstrip(" \t\f") if ln.strip() else "" for ln in lines]
    return _ESCAPE.sub(_unescape, "\n".join(stripped))


def _string(node: Node) -> str:
    text = _text(node)
    if text.startswith('"""') and text.endswith('"""') and len(text) >= 6:
        return _text_block(text[3:-3])
    return _ESCAPE.sub(_unescape, text[1:-1])


_CALLS = frozenset({"method_invocation"})
_SCOPE_NODES = frozenset({"variable_declarator", "enhanced_for_statement", "assignment_expression"})


class _Scope:
    """Local variables of one method body: name -> initializer, and names assigned again later."""

    def __init__(self, body: Node | None) -> None:
        self.inits: dict[str, Node] = {}
        self.reassigned: set[str] = set()
        self.assigns: dict[str, list[Node | None]] = {}  # name -> later assigned values (None: `+=` and alike)
        self.elements: dict[str, Node] = {}  # a for-each variable -> the collection it iterates
        self.node = body
        if body is None:
            return
        params = body.child_by_field_name("parameters")
        for p in params.named_children if params is not None and body.type in _BODIES else ():
            mods = _modifiers(p)
            value = _value_literal(mods) if mods is not None else None
            name = p.child_by_field_name("name")
            if value is not None and name is not None:  # `@Value("${key}") String topic`: Spring injects it
                self.inits[_text(name)] = value
        for n in typed(body, _SCOPE_NODES):
            if n.type == "variable_declarator":
                if n.parent is None or n.parent.type != "local_variable_declaration":
                    continue
                name, value = n.child_by_field_name("name"), n.child_by_field_name("value")
                if name is not None and value is not None:
                    self.inits.setdefault(_text(name), value)
            elif n.type == "enhanced_for_statement":  # `for (T s : items)`: `s` holds an element of `items`
                name, value = n.child_by_field_name("name"), n.child_by_field_name("value")
                if name is not None and value is not None:
                    self.elements.setdefault(_text(name), value)
            elif n.type == "assignment_expression":
                left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
                if left is not None and left.type == "identifier":
                    self.reassigned.add(_text(left))
                    op = n.child_by_field_name("operator")
                    plain = op is not None and op.type == "=" and right is not None
                    self.assigns.setdefault(_text(left), []).append(right if plain else None)


_MAX_VALUES = 4


def _scope_node(node: Node) -> Node | None:
    n = node.parent
    while n is not None:
        if n.type in _SCOPES:
            return n
        if n.type in _CLASSES or n.type == "class_body":
            return None
        n = n.parent
    return None


class _FileParser:
    def __init__(self) -> None:
        self.scopes: dict[int, _Scope] = {}

    def scope(self, node: Node) -> _Scope:
        owner = _scope_node(node)
        key = owner.id if owner is not None else -1
        if key not in self.scopes:
            self.scopes[key] = _Scope(owner)
        return self.scopes[key]

    def expr(self, node: Node | None, depth: int = 0) -> Expr:
        if node is None:
            return Expr("other", "<missing>")
        line, col = node.start_point[0] + 1, node.start_point[1] + 1
        t = node.type
        src = _text(node)
        if depth > 8:
            return Expr("other", src, line=line, column=col, source=src)
        if t == "string_literal":
            return Expr("str", _string(node), line=line, column=col, source=src)
        if t in ("decimal_integer_literal", "hex_integer_literal", "decimal_floating_point_literal"):
            return Expr("num", src.rstrip("lLfFdD"), line=line, column=col, source=src)
        if t in ("true", "false"):
            return Expr("bool", t, line=line, column=col, source=src)
        if t == "null_literal":
            return Expr("null", "null", line=line, column=col, source=src)
        if t in ("parenthesized_expression", "cast_expression"):
            inner = node.child_by_field_name("value") or (node.named_children[-1] if node.named_children else None)
            return self.expr(inner, depth + 1)
        if t == "identifier":
            return self._identifier(node, depth)
        if t == "field_access":
            obj = node.child_by_field_name("object")
            fld = node.child_by_field_name("field")
            if obj is not None and obj.type == "this" and fld is not None:
                return Expr("name", _text(fld), line=line, column=col, source=src)
            return Expr(
                "field",
                _text(fld) if fld is not None else "",
                self.expr(obj, depth + 1),
                line=line,
                column=col,
                source=src,
            )
        if t == "scoped_identifier":
            scope, name = node.child_by_field_name("scope"), node.child_by_field_name("name")
            return Expr(
                "field",
                _text(name) if name is not None else "",
                self.expr(scope, depth + 1),
                line=line,
                column=col,
                source=src,
            )
        if t == "binary_expression" and (op := node.child_by_field_name("operator")) is not None and op.type == "+":
            parts: list[Expr] = []
            for side in (node.child_by_field_name("left"), node.child_by_field_name("right")):
                e = self.expr(side, depth + 1)
                parts.extend(e.args if e.kind == "concat" else (e,))
            return Expr("concat", args=tuple(parts), line=line, column=col, source=src)
        if t == "method_invocation":
            obj = node.child_by_field_name("object")
            name = node.child_by_field_name("name")
            return Expr(
                "call",
                _text(name) if name is not None else "",
                self.expr(obj, depth + 1) if obj is not None else None,
                self._args(node, depth),
                line,
                col,
                src,
            )
        if t == "ternary_expression":
            return self._ternary(node, depth)
        if t == "object_creation_expression":
            typ = node.child_by_field_name("type")
            return Expr("new", _type_name(typ), None, self._args(node, depth), line, col, src)
        return Expr("other", src, line=line, column=col, source=src)

    def _ternary(self, node: Node, depth: int) -> Expr:
        """commons-cli `cl.hasOption('t') ? cl.getOptionValue('t')... : "dflt"` reads as `getOptionValue('t', "dflt")`."""
        cond, alt = node.child_by_field_name("condition"), node.child_by_field_name("alternative")
        src, line, col = _text(node), node.start_point[0] + 1, node.start_point[1] + 1
        if cond is not None and alt is not None and cond.type == "method_invocation" and _method(cond) == "hasOption":
            opt = self._args(cond, depth)
            if opt:
                return Expr("call", "getOptionValue", None, (opt[0], self.expr(alt, depth + 1)), line, col, src)
        return Expr("other", src, line=line, column=col, source=src)

    def _args(self, node: Node, depth: int) -> tuple[Expr, ...]:
        args = node.child_by_field_name("arguments")
        return tuple(self.expr(a, depth + 1) for a in args.named_children) if args is not None else ()

    def _identifier(self, node: Node, depth: int) -> Expr:
        name = _text(node)
        line, col = node.start_point[0] + 1, node.start_point[1] + 1
        scope = self.scope(node)
        init = scope.inits.get(name)
        if init is not None and name not in scope.reassigned:
            value = self.expr(init, depth + 1)
            if value.kind == "new" and scope.node is not None:
                if value.text == "Subscription" and not value.args:  # an ONS subscription bean: its setters
                    return Expr(
                        "map",
                        "Subscription",
                        args=self._setters(scope.node, name, depth),
                        line=line,
                        column=col,
                        source=name,
                    )
                if value.text.endswith("Map") or value.text == "Properties":
                    return Expr(
                        "map",
                        name,
                        args=self._puts(scope.node, name, depth, ("put", "setProperty"), 2),
                        line=line,
                        column=col,
                        source=name,
                    )
                if value.text.endswith(("Set", "List")):
                    added = self._puts(scope.node, name, depth, ("add",), 1)
                    return Expr("set", name, args=collection(value) + added, line=line, column=col, source=name)
            return value
        if name in scope.elements and name not in scope.inits and name not in scope.reassigned:
            # the collection's expression stands for where the value comes from; it is never read as the value
            items = self.expr(scope.elements[name], depth + 1)
            return Expr("name", name, args=(items,), line=line, column=col, source=name)
        if name in scope.reassigned and name in scope.assigns:
            return Expr("name", name, args=self._values(scope, name, depth), line=line, column=col, source=name)
        return Expr("name", name, line=line, column=col, source=name)

    def _values(self, scope: _Scope, name: str, depth: int) -> tuple[Expr, ...]:
        """The values a local assigned more than once may hold (its initializer and each `name = v`);
        empty when there are more than a few (a loop's accumulator), so nothing is read from them."""
        nodes = [*([scope.inits[name]] if name in scope.inits else []), *scope.assigns[name]]
        if len(nodes) > _MAX_VALUES or depth > 4 or None in nodes:
            return ()
        return tuple(self.expr(v, depth + 1) for v in nodes if v is not None)

    def _puts(self, body: Node, name: str, depth: int, methods: tuple[str, ...], arity: int) -> tuple[Expr, ...]:
        """The arguments of every `name.put(k, v)` (or `add(x)`, ...) in a method body, flattened."""
        out: list[Expr] = []
        for n in typed(body, _CALLS):
            if _method(n) in methods and _receiver(n) == name:
                args = self._args(n, depth)
                if len(args) == arity:  # an entry is placed at its put/add call (where it is created)
                    out.append(replace(args[0], line=n.start_point[0] + 1, column=n.start_point[1] + 1))
                    out.extend(self._when(n, body, a, depth) if arity == 2 else a for a in args[1:])
        return tuple(out)

    def _when(self, call: Node, body: Node, value: Expr, depth: int) -> Expr:
        """A map entry's value, wrapped once per `if` (or `?:`) of `body` whose arm `call` is in:
        `Expr("when", "then" | "else", condition, (value,))`, innermost first. Readers that know
        no condition unwrap it (`unwrapped`); the vendor properties judge it (`if (broadcast)
        props.put(MessageModel, BROADCASTING)` sets the model only when `broadcast` holds)."""
        child, n = call, call.parent
        while n is not None and n != body:
            if n.type in ("if_statement", "ternary_expression"):
                arm = (
                    "then"
                    if child == n.child_by_field_name("consequence")
                    else "else"
                    if child == n.child_by_field_name("alternative")
                    else ""
                )
                cond = n.child_by_field_name("condition")
                if arm and cond is not None:
                    inner = (
                        cond.named_children[0]
                        if cond.type == "parenthesized_expression" and cond.named_children
                        else cond
                    )
                    value = Expr(
                        "when", arm, self.expr(inner, depth + 1), (value,), value.line, value.column, _text(inner)
                    )
            child, n = n, n.parent
        return value

    def _setters(self, body: Node, name: str, depth: int) -> tuple[Expr, ...]:
        """`name.setTopic(t); name.setExpression(e)` in `body` as map entries ("topic", t, "expression", e)."""
        out: list[Expr] = []
        for n in typed(body, _CALLS):
            method = _method(n)
            if method.startswith("set") and len(method) > 3 and _receiver(n) == name:
                args = self._args(n, depth)
                if len(args) == 1:
                    key = method[3].lower() + method[4:]
                    out += [
                        Expr("str", key, line=n.start_point[0] + 1, column=n.start_point[1] + 1, source=key),
                        args[0],
                    ]
        return tuple(out)


def unwrapped(expr: Expr) -> Expr:
    """A value without the conditions it was set under (`Expr("when", ...)`, see `_FileParser._when`)."""
    while expr.kind == "when" and expr.args:
        expr = expr.args[0]
    return expr


def collection(expr: Expr) -> tuple[Expr, ...]:
    """The elements of `Set.of(a, b)`, `Arrays.asList(a)`, `new HashSet<>(Arrays.asList(a))`, `singleton(a)`."""
    if expr.kind == "new":
        return tuple(e for a in expr.args for e in collection(a))
    if expr.kind == "call" and expr.text in (
        "of",
        "asList",
        "singleton",
        "singletonList",
        "newHashSet",
        "newArrayList",
    ):
        return expr.args
    if expr.kind == "set":
        return expr.args
    return ()


def _type_name(node: Node | None) -> str:
    if node is None:
        return ""
    if node.type == "generic_type":
        return _type_name(node.named_children[0]) if node.named_children else ""
    return _text(node).split(".")[-1]


def _method(node: Node) -> str:
    name = node.child_by_field_name("name")
    return _text(name) if name is not None else ""


def _receiver(node: Node) -> str | None:
    """`x` for `x.m()` and `this.x.m()`, else None."""
    obj = node.child_by_field_name("object")
    if obj is None:
        return None
    if obj.type == "identifier":
        return _text(obj)
    if obj.type == "field_access":
        inner = obj.child_by_field_name("object")
        if inner is not None and inner.type == "this":
            fld = obj.child_by_field_name("field")
            return _text(fld) if fld is not None else None
    return None


def _annotation_name(node: Node) -> str:
    name = node.child_by_field_name("name")
    return _text(name) if name is not None else ""


def _class_name(node: Node) -> str:
    names: list[str] = []
    n: Node | None = node
    while n is not None:
        if n.type in _CLASSES:
            name = n.child_by_field_name("name")
            if name is not None:
                names.append(_text(name))
        n = n.parent
    return ".".join(reversed(names))


def _modifiers(node: Node) -> Node | None:
    for child in node.children:
        if child.type == "modifiers":
            return child
    return None


@dataclass
class _ClassDraft:
    """A class's facts while its body is still being walked (reassignments are only known at the end)."""

    name: str
    constants: list[tuple[str, Expr]]
    supers: tuple[str, ...]
    candidates: list[tuple[str, Expr]]  # non-final fields with a literal initializer
    ctors: list[tuple[str, ...]]
    options: list[tuple[str, str, Expr | None]]
    bound: bool  # Spring/Lombok may set its fields without an assignment in the source
    injected: list[str]  # fields annotated @Autowired, @Resource or @Inject
    field_types: list[tuple[str, str]]
    config_prefix: Expr | None
    marks: list[AnnotationUse] = field(default_factory=list)
    elements: list[tuple[str, Expr | None]] = field(default_factory=list)


@dataclass
class _Collect:
    package: str = ""
    imports: list[str] = field(default_factory=list)
    wildcards: list[str] = field(default_factory=list)
    static_imports: list[str] = field(default_factory=list)
    static_wildcards: list[str] = field(default_factory=list)
    classes: list[_ClassDraft] = field(default_factory=list)
    annotations: list[AnnotationUse] = field(default_factory=list)
    consumers: list[ConsumerDecl] = field(default_factory=list)
    invocations: list[Invocation] = field(default_factory=list)
    assigned: dict[str, set[str]] = field(default_factory=dict)  # class -> names assigned in it
    param_fields: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    derived_fields: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    plain_calls: list[Node] = field(default_factory=list)  # unqualified / this. calls: helper candidates

    def finish(self) -> tuple[ClassFacts, ...]:
        out: list[ClassFacts] = []
        for d in self.classes:
            assigned = self.assigned.get(d.name, set())
            fields = () if d.bound else tuple((n, e) for n, e in d.candidates if n not in assigned)
            pf = tuple(dict.fromkeys(self.param_fields.get(d.name, ())))
            derived = tuple(dict.fromkeys(self.derived_fields.get(d.name, ())))
            out.append(
                ClassFacts(
                    d.name,
                    tuple(d.constants),
                    d.supers,
                    fields,
                    pf,
                    tuple(d.ctors),
                    tuple(d.options),
                    derived,
                    tuple(d.injected),
                    tuple(d.field_types),
                    d.config_prefix,
                    tuple(d.marks),
                    tuple(d.elements),
                )
            )
        return tuple(out)


def _import(node: Node, out: _Collect) -> None:
    is_static = any(c.type == "static" for c in node.children)
    wildcard = any(c.type == "asterisk" for c in node.children)
    names = [c for c in node.named_children if c.type in ("scoped_identifier", "identifier")]
    if not names:
        return
    target = _text(names[0])
    lists = {
        (False, False): out.imports,
        (False, True): out.wildcards,
        (True, False): out.static_imports,
        (True, True): out.static_wildcards,
    }
    lists[(is_static, wildcard)].append(target)


def _supers(node: Node) -> tuple[str, ...]:
    supers: list[str] = []
    for fname in ("superclass", "interfaces"):
        sup = node.child_by_field_name(fname)
        if sup is not None:
            supers.extend(
                _type_name(t) if t.type == "generic_type" else _text(t)
                for t in _walk(sup)
                if t.type in ("type_identifier", "scoped_type_identifier", "generic_type")
                and t.parent is not None
                and t.parent.type in ("superclass", "type_list", "extends_interfaces", "super_interfaces")
            )
    return tuple(s for s in supers if s)


def _params(node: Node) -> tuple[str, ...]:
    """The parameter names of a method or constructor declaration, in order."""
    params = node.child_by_field_name("parameters")
    out: list[str] = []
    for p in params.named_children if params is not None else ():
        if p.type == "formal_parameter":
            name = p.child_by_field_name("name")
        elif p.type == "spread_parameter":
            decl = next((c for c in p.named_children if c.type == "variable_declarator"), None)
            name = decl.child_by_field_name("name") if decl is not None else None
        else:
            continue
        if name is not None:
            out.append(_text(name))
    return tuple(out)


def _enclosing_method(node: Node) -> tuple[str, tuple[str, ...]]:
    """("name" or "<init>", parameter names) of the method or constructor around `node`; ("", ()) at class level."""
    n = node.parent
    while n is not None and n.type not in _CLASSES:
        if n.type == "method_declaration":
            return _method(n), _params(n)
        if n.type in ("constructor_declaration", "compact_constructor_declaration"):
            return "<init>", _params(n)
        n = n.parent
    return "", ()


def _option(mods: Node, fp: _FileParser) -> tuple[str, Expr | None] | None:
    """picocli `@Option(names = {"-t", "--topic"}, defaultValue = "T")`: (names, default)."""
    for ann in mods.named_children:
        if ann.type != "annotation" or _annotation_name(ann).split(".")[-1] not in ("Option", "Parameters"):
            continue
        names, default = "", None
        args = ann.child_by_field_name("arguments")
        for pair in args.named_children if args is not None else ():
            key, value = pair.child_by_field_name("key"), pair.child_by_field_name("value")
            if pair.type != "element_value_pair" or key is None or value is None:
                continue
            if _text(key) == "names":
                names = "/".join(_string(v) for v in _walk(value) if v.type == "string_literal")
            elif _text(key) == "defaultValue":
                default = fp.expr(value)
        return names or "?", default
    return None


def _class_facts(node: Node, fp: _FileParser) -> _ClassDraft:
    name = _class_name(node)
    interface = node.type in ("interface_declaration", "annotation_type_declaration")
    mods = _modifiers(node)
    anns = {_annotation_name(a).split(".")[-1] for a in mods.named_children} if mods is not None else set()
    draft = _ClassDraft(
        name, [], _supers(node), [], [], [], bool(anns & _BOUND_CLASS), [], [], _config_prefix(mods, fp)
    )
    for ann in mods.named_children if mods is not None else ():
        if ann.type in ("annotation", "marker_annotation") and _annotation_name(ann).split(".")[-1] not in _NOT_MARKS:
            draft.marks.append(_annotation(ann, fp))
    body = node.child_by_field_name("body")
    for member in body.named_children if body is not None else ():
        if member.type == "constructor_declaration":
            draft.ctors.append(_params(member))
        elif member.type in ("field_declaration", "constant_declaration"):
            _field_facts(member, interface, draft, fp)
        elif member.type == "annotation_type_element_declaration":
            element, default = member.child_by_field_name("name"), member.child_by_field_name("value")
            if element is not None:
                draft.elements.append((_text(element), fp.expr(default) if default is not None else None))
    return draft


# annotations of the JDK, Spring and Lombok on a class: never an in-house listener annotation
_PLAIN_MARKS = frozenset(
    {
        "Component",
        "Service",
        "Configuration",
        "Repository",
        "Controller",
        "RestController",
        "SpringBootApplication",
        "Data",
        "Getter",
        "Setter",
        "Slf4j",
        "Builder",
        "NoArgsConstructor",
        "AllArgsConstructor",
        "RequiredArgsConstructor",
        "ToString",
        "EqualsAndHashCode",
        "Deprecated",
        "SuppressWarnings",
        "FunctionalInterface",
        "Documented",
        "Retention",
        "Target",
        "Inherited",
    }
)
_NOT_MARKS = LISTENER_ANNOTATIONS | _PLAIN_MARKS


_INJECT = frozenset({"Autowired", "Resource", "Inject"})


def _config_prefix(mods: Node | None, fp: _FileParser) -> Expr | None:
    """The prefix of a class's `@ConfigurationProperties("p")` / `(prefix = "p")` / `(value = "p")`."""
    for ann in mods.named_children if mods is not None else ():
        if ann.type in ("annotation", "marker_annotation") and _annotation_name(ann).split(".")[-1] == (
            "ConfigurationProperties"
        ):
            use = _annotation(ann, fp)
            return next((e for k, e in use.elements if k in ("prefix", "value")), None)
    return None


def _field_facts(member: Node, interface: bool, draft: _ClassDraft, fp: _FileParser) -> None:
    mods = _modifiers(member)
    words = {c.type for c in mods.children} if mods is not None else set()
    value_ann = _value_annotation(mods) if mods is not None else None
    option = _option(mods, fp) if mods is not None else None
    anns = {_annotation_name(a).split(".")[-1] for a in mods.named_children} if mods is not None else set()
    for decl in member.named_children:
        if decl.type != "variable_declarator":
            continue
        dname, dvalue = decl.child_by_field_name("name"), decl.child_by_field_name("value")
        if dname is None:
            continue
        if anns & _INJECT:
            draft.injected.append(_text(dname))
        draft.field_types.append((_text(dname), _type_name(member.child_by_field_name("type"))))
        if value_ann is not None:
            draft.constants.append((_text(dname), value_ann))
        elif option is not None:
            draft.options.append(
                (
                    _text(dname),
                    option[0],
                    option[1] if option[1] is not None else (fp.expr(dvalue) if dvalue is not None else None),
                )
            )
        elif dvalue is not None and (interface or member.type == "constant_declaration" or "final" in words):
            draft.constants.append((_text(dname), fp.expr(dvalue)))
        elif dvalue is not None and dvalue.type == "string_literal":
            draft.candidates.append((_text(dname), fp.expr(dvalue)))


def _root(node: Node | None) -> Node | None:
    """`p` for `p`, `p.x`, `p.get()`, `(T) p`: the identifier an expression reads from, else None."""
    while node is not None:
        if node.type in ("method_invocation", "field_access"):
            node = node.child_by_field_name("object")
        elif node.type == "cast_expression":
            node = node.child_by_field_name("value")
        elif node.type == "parenthesized_expression":
            node = node.named_children[0] if node.named_children else None
        else:
            return node
    return None


def _assignment(node: Node, out: _Collect) -> None:
    """Record the name an assignment writes (a field is then no longer read from its initializer) and,
    for `this.f = param` / `f = param.accessor()`, that the field is fed by a parameter."""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None:
        return
    if left.type == "identifier":
        name = _text(left)
    elif left.type == "field_access" and (obj := left.child_by_field_name("object")) is not None and obj.type == "this":
        fld = left.child_by_field_name("field")
        name = _text(fld) if fld is not None else ""
    else:
        return
    cls = _class_name(node)
    out.assigned.setdefault(cls, set()).add(name)
    params = _enclosing_method(node)[1]
    if not params or right is None:
        return
    root = _root(right)
    if root is not None and root.type == "identifier" and _text(root) in params:
        out.param_fields.setdefault(cls, []).append((name, _text(root)))
        return
    read = next((_text(n) for n in _walk(right) if n.type == "identifier" and _text(n) in params), None)
    if read is not None:  # computed from a parameter: `this.selector = Util.selector(param.getSub())`
        out.derived_fields.setdefault(cls, []).append((name, read))


def _value_literal(mods: Node) -> Node | None:
    """The string literal of an `@Value("${key}")` among `mods`, else None."""
    for ann in mods.named_children:
        if ann.type == "annotation" and _annotation_name(ann).split(".")[-1] == "Value":
            args = ann.child_by_field_name("arguments")
            if args is not None and args.named_children:
                first = args.named_children[0]
                if first.type == "element_value_pair":
                    first = first.child_by_field_name("value") or first
                if first.type == "string_literal":
                    return first
    return None


def _value_annotation(mods: Node) -> Expr | None:
    """`@Value("${key}")` on a field: the field holds the placeholder's value."""
    first = _value_literal(mods)
    if first is None:
        return None
    return Expr(
        "str", _string(first), line=first.start_point[0] + 1, column=first.start_point[1] + 1, source=_text(first)
    )


def _annotation(node: Node, fp: _FileParser) -> AnnotationUse:
    elements: list[tuple[str, Expr]] = []
    args = node.child_by_field_name("arguments")
    for child in args.named_children if args is not None else ():
        if child.type == "element_value_pair":
            key, value = child.child_by_field_name("key"), child.child_by_field_name("value")
            elements.append((_text(key) if key is not None else "value", fp.expr(value)))
        else:
            elements.append(("value", fp.expr(child)))
    owner = node.parent.parent if node.parent is not None and node.parent.parent is not None else node
    modifiers = node.parent if node.parent is not None and node.parent.type == "modifiers" else node
    return AnnotationUse(
        _annotation_name(node),
        tuple(elements),
        _class_name(owner) if owner.type in _CLASSES else _class_name(node),
        node.start_point[0] + 1,
        node.start_point[1] + 1,
        modifiers.start_point[0] + 1,
        node.end_point[0] + 1,
    )


def _receiving(node: Node) -> tuple[Node | None, str]:
    """The declarator or assignment that receives `node`'s value (through parentheses and casts),
    and the variable or field name it assigns ("" if none)."""
    parent = node.parent
    while parent is not None and parent.type in ("parenthesized_expression", "cast_expression"):
        parent = parent.parent
    if parent is not None and parent.type == "variable_declarator":
        name = parent.child_by_field_name("name")
        return parent, _text(name) if name is not None else ""
    if parent is not None and parent.type == "assignment_expression":
        left = parent.child_by_field_name("left")
        if left is not None and left.type == "identifier":
            return parent, _text(left)
        fld = left.child_by_field_name("field") if left is not None and left.type == "field_access" else None
        return parent, _text(fld) if fld is not None else ""
    return None, ""


def _target(node: Node, fp: _FileParser) -> tuple[str, bool]:
    """(variable or field name, is_local) the created object is assigned to; ("", False) if none."""
    parent, name = _receiving(node)
    if parent is None or not name:
        return "", False
    if parent.type == "variable_declarator":
        return name, parent.parent is not None and parent.parent.type == "local_variable_declaration"
    left = parent.child_by_field_name("left")
    if left is not None and left.type == "identifier":
        return name, name in fp.scope(node).inits  # the file's scope of the method, read once
    return name, False


def _call(n: Node, fp: _FileParser) -> Call:
    """A call record positioned at the method name (chained calls keep their own lines)."""
    name = n.child_by_field_name("name") or n
    return Call(
        _method(n),
        fp._args(n, 0),
        name.start_point[0] + 1,
        name.start_point[1] + 1,
        _text(n)[:200],
        n.end_point[0] + 1,
        branch=_branch(n),
    )


# what ends a `case` group without falling into the next one
_STOPS = frozenset({"break_statement", "return_statement", "throw_statement", "continue_statement", "yield_statement"})
_BODIES = frozenset({"method_declaration", "constructor_declaration", "compact_constructor_declaration"})


def _branch(node: Node) -> tuple[tuple[int, int], ...]:
    """The exclusive branches of its method that `node` is in (a lambda written in one is in it too),
    outermost first: per `if` / `else`, `?:` and `switch` around it, (the branching node's start
    byte, the arm taken). Cases that fall through share the arm of the case they fall into: one runs
    after the other."""
    out: list[tuple[int, int]] = []
    child, n = node, node.parent
    while n is not None and n.type not in _BODIES and n.type not in _CLASSES:
        if n.type in ("if_statement", "ternary_expression"):
            if child == n.child_by_field_name("consequence"):
                out.append((n.start_byte, 0))
            elif child == n.child_by_field_name("alternative"):
                out.append((n.start_byte, 1))
        elif n.type in ("switch_block_statement_group", "switch_rule") and n.parent is not None:
            out.append((n.parent.start_byte, _case_arm(n, n.parent)))
        child, n = n, n.parent
    return tuple(reversed(out))


def _case_arm(case: Node, block: Node) -> int:
    """The index of the case `case` runs to the end of: itself, or the first later one that does not
    fall through (a statement group without a closing break, return, throw, continue or yield)."""
    cases = [c for c in block.named_children if c.type in ("switch_block_statement_group", "switch_rule")]
    i = next((k for k, c in enumerate(cases) if c == case), 0)
    while i < len(cases) - 1 and cases[i].type == "switch_block_statement_group" and not _stops(cases[i]):
        i += 1
    return i


def _stops(group: Node) -> bool:
    """Whether a `case` statement group's last statement (or its block's) leaves the switch."""
    last = group.named_children[-1] if group.named_children else None
    while last is not None and last.type == "block":
        last = last.named_children[-1] if last.named_children else None
    return last is not None and last.type in _STOPS


def _calls_on(root: Node, name: str, fp: _FileParser, home: Node) -> list[Call]:
    """Every call on `name` under `root`; one written in another method than `home`'s carries that
    method's parameters (its names are those parameters there, not the home method's)."""
    out: list[Call] = []
    here = _enclosing_method(home)
    for n in typed(root, _CALLS):
        if _receiver(n) == name:
            call = _call(n, fp)
            there = _enclosing_method(n)
            out.append(call if there == here else replace(call, params=there[1]))
    return out


def _enclosing_class(node: Node) -> Node:
    n = node.parent
    while n is not None and n.type not in _CLASSES:
        n = n.parent
    return n if n is not None else node


def _calls_on_target(node: Node, fp: _FileParser) -> tuple[str, list[Call]]:
    """The variable or field `node`'s value is assigned to, and every call made on it in its scope."""
    target, local = _target(node, fp)
    if not target:
        return "", []
    root = _scope_node(node) if local else _enclosing_class(node)
    return target, _calls_on(root if root is not None else node, target, fp, node)


def _vendor_kind(node: Node, name: str) -> str | None:
    """ons / ons-order / ons-batch / oms-push / oms-pull for a vendor factory call, else None."""
    if name in ONS_FACTORIES:
        obj = node.child_by_field_name("object")
        return ONS_FACTORIES[name] if obj is not None and _text(obj).endswith("ONSFactory") else None
    if name in OMS_FACTORIES:
        args = node.child_by_field_name("arguments")
        return OMS_FACTORIES[name] if args is not None and b"CONSUMER_ID" in (args.text or b"") else None
    return None


def _decl(node: Node, kind: str, fp: _FileParser) -> ConsumerDecl:
    """The consumer a construction (`new T(...)`) or a vendor factory call declares, of `kind`."""
    target, calls = _calls_on_target(node, fp)
    method, params = _enclosing_method(node)
    return ConsumerDecl(
        kind,
        target,
        fp._args(node, 0),
        tuple(calls),
        _class_name(node),
        node.start_point[0] + 1,
        node.start_point[1] + 1,
        method,
        params,
        _in_a_loop(node),
    )


def _declared_type(node: Node) -> str:
    """The declared type of the variable a call's result initialises ("" when not a declaration)."""
    parent = node.parent
    if parent is not None and parent.type == "variable_declarator" and parent.parent is not None:
        return _type_name(parent.parent.child_by_field_name("type"))
    return ""


def _owner(node: Node) -> str | None:
    """The qualifier of a call as written: "" for `m()` / `this.m()`, `A.B` for `A.B.m()`, None otherwise."""
    obj = node.child_by_field_name("object")
    if obj is None or obj.type == "this":
        return ""
    if obj.type in ("identifier", "field_access", "scoped_identifier") and all(
        c.type in ("identifier", ".", "field_access", "scoped_identifier") for c in _walk(obj) if c is not obj
    ):
        return _text(obj)
    return None


def _factory_call(node: Node, fp: _FileParser) -> Invocation | None:
    """`T c = Owner.make(args)` with T a consumer type (or `c = make...Consumer(args)`), with the calls on
    c; or any call with arguments of a static method of a class (`RocketMqContainer.orderly(args)`, whose
    result may wrap the consumer it makes), assigned, returned or not: the linker follows those of the
    repository's classes."""
    declared = _declared_type(node)
    name = _method(node)
    owner = _owner(node)
    if owner is None:
        return None
    target = _receiving(node)[1]  # the name alone: telling a local from a field reads the method's scope
    # the calls made on the result are collected (a walk of its scope) where it reads as a consumer:
    # a consumer type, `var`, or an assignment to a name that says so (`this.consumer = make(...)`)
    if target and (
        declared in CONSUMER_VAR_TYPES
        or declared == "var"
        or (not declared and ("Consumer" in name or "consumer" in target.lower()))
    ):
        _, calls = _calls_on_target(node, fp)
        return replace(_plain_invocation(node, fp, owner, name), target=target, calls=tuple(calls))
    if not _static_call_of_a_class(node, owner):
        return None
    # a repository class's static method may make (or relay to) a consumer it returns wrapped: the
    # linker follows it with the arguments bound
    return replace(_plain_invocation(node, fp, owner, name), target=target)


def _static_call_of_a_class(node: Node, owner: str) -> bool:
    """`Owner.method(args)` whose owner reads as a class (capitalized, not an ALL_CAPS constant such
    as `LOG`) and is not one of the JDK's or a test library's (`_LIBRARY_OWNERS`)."""
    args = node.child_by_field_name("arguments")
    simple = owner.rsplit(".", 1)[-1]
    return (
        args is not None
        and bool(args.named_children)
        and simple[:1].isupper()
        and not simple.isupper()
        and simple not in _LIBRARY_OWNERS
        and not owner.startswith(("java.", "javax."))
    )


# Owners of static calls that are never the repository's factories: read past without a question
_LIBRARY_OWNERS = frozenset(
    {
        "String",
        "Integer",
        "Long",
        "Boolean",
        "Double",
        "Float",
        "Short",
        "Byte",
        "Character",
        "Math",
        "System",
        "Thread",
        "Objects",
        "Arrays",
        "Collections",
        "List",
        "Map",
        "Set",
        "Optional",
        "Stream",
        "Collectors",
        "TimeUnit",
        "Executors",
        "CompletableFuture",
        "Files",
        "Paths",
        "Path",
        "Duration",
        "Instant",
        "LocalDateTime",
        "LocalDate",
        "UUID",
        "Pattern",
        "StandardCharsets",
        "Assert",
        "Assertions",
        "Mockito",
        "ArgumentMatchers",
        "Awaitility",
        "Preconditions",
        "StringUtils",
        "CollectionUtils",
        "JSON",
        "JSONObject",
        "Lists",
        "Maps",
        "Sets",
        "ImmutableList",
        "ImmutableMap",
        "ImmutableSet",
        "LoggerFactory",
        "LogManager",
        "BigDecimal",
        "BigInteger",
    }
)


def _plain_invocation(node: Node, fp: _FileParser, owner: str, method: str) -> Invocation:
    in_method, params = _enclosing_method(node)
    return Invocation(
        owner,
        method,
        fp._args(node, 0),
        _class_name(node),
        node.start_point[0] + 1,
        node.start_point[1] + 1,
        params=params,
        repeated=_in_a_loop(node),
        in_method=in_method,
    )


_VALUE_ARGS = frozenset({"string_literal", "field_access", "scoped_identifier", "binary_expression"})


def _wrapper_candidate(node: Node) -> bool:
    """`new X(...)` with an argument that reads like a name (a literal, a constant): a possible wrapper."""
    args = node.child_by_field_name("arguments")
    if args is None or not args.named_children:
        return False
    return any(a.type in _VALUE_ARGS or (a.type == "identifier" and _text(a).isupper()) for a in args.named_children)


def _helpers(out: _Collect, fp: _FileParser) -> None:
    """Calls of this file's own methods that build a consumer from their parameters, or that pass their
    own parameters on to such a method (a relay: `retrying(g)` calling `concurrent(g + "-retry", ...)`)."""
    helpers = {d.method for d in out.consumers if d.params and d.method not in ("", "<init>")}
    if not helpers:
        return
    calls = [(n, _method(n)) for n in out.plain_calls if _declared_type(n) not in CONSUMER_VAR_TYPES]
    made: set[int] = set()
    while True:
        known = len(helpers)
        for n, name in calls:
            if name in helpers and n.id not in made:
                made.add(n.id)
                out.invocations.append(_plain_invocation(n, fp, "", name))
        for inv in out.invocations:
            if not inv.owner and inv.method in helpers and inv.in_method not in ("", "<init>"):
                if any(reads(a, inv.params) for a in inv.args):
                    helpers.add(inv.in_method)
        if len(helpers) == known:
            return


def reads(expr: Expr, names: tuple[str, ...]) -> bool:
    """Whether `expr` reads one of `names` (a parameter)."""
    if expr.kind == "name":
        return expr.text in names
    return (expr.qual is not None and reads(expr.qual, names)) or any(reads(a, names) for a in expr.args)


_LOOPS = frozenset({"for_statement", "enhanced_for_statement", "while_statement", "do_statement", "lambda_expression"})


def _in_a_loop(node: Node) -> bool:
    """Whether `node` is in a loop or a lambda of its method (it may run once per item)."""
    n = node.parent
    while n is not None and n.type not in _BODIES and n.type not in _CLASSES:
        if n.type in _LOOPS:
            return True
        n = n.parent
    return False


def _repeated(out: _Collect) -> None:
    """Mark the constructions made in a method of their class that a loop or lambda of the class calls
    (an unqualified call: one whose result is a consumer, an invocation, or any other)."""
    looped = {(i.class_name, i.method) for i in out.invocations if not i.owner and i.repeated}
    looped |= {(_class_name(n), _method(n)) for n in out.plain_calls if _in_a_loop(n)}
    if looped:
        out.consumers = [
            replace(d, repeated=True) if not d.repeated and (d.class_name, d.method) in looped else d
            for d in out.consumers
        ]


def _ons_beans(out: _Collect) -> None:
    """Keep an `ons-*-bean` construction only when the file imports that type from ONS's bean package
    (a class of the repository may be called `ConsumerBean` too)."""
    imported = {i.rsplit(".", 1)[-1] for i in out.imports if i.startswith(ONS_BEAN_PACKAGE + ".")}
    if ONS_BEAN_PACKAGE in out.wildcards or out.package == ONS_BEAN_PACKAGE:
        imported |= set(ONS_BEANS)
    beans = {v: k for k, v in ONS_BEANS.items()}
    out.consumers = [d for d in out.consumers if d.kind not in beans or beans[d.kind] in imported]


def _builder(node: Node, fp: _FileParser) -> ConsumerDecl:
    calls: list[Call] = []
    top = node
    while (
        top.parent is not None
        and top.parent.type == "method_invocation"
        and top.parent.child_by_field_name("object") == top
    ):
        top = top.parent
        calls.append(_call(top, fp))
    target, local = _target(top, fp)
    if target and not any(c.method == "build" for c in calls):
        root = _scope_node(top) if local else _enclosing_class(top)
        calls.extend(_calls_on(root if root is not None else top, target, fp, node))
    method, params = _enclosing_method(node)
    return ConsumerDecl(
        _method(node),
        target,
        (),
        tuple(sorted(calls, key=lambda c: (c.line, c.column))),
        _class_name(node),
        node.start_point[0] + 1,
        node.start_point[1] + 1,
        method,
        params,
        _in_a_loop(node),
    )


_UNICODE_ESCAPE = re.compile(rb"(?<!\\)((?:\\\\)*)\\u+([0-9a-fA-F]{4})")


def _translate_unicode_escapes(data: bytes) -> bytes:
    """Java's first translation step (JLS 3.3): an eligible `\\uXXXX` (after an even number of
    backslashes) is the character it names, anywhere in the source. Line terminators are left
    escaped so that line numbers stay those of the file."""

    def one(m: re.Match[bytes]) -> bytes:
        char = chr(int(m.group(2), 16))
        return m.group(0) if char in "\r\n" else m.group(1) + char.encode("utf-8", "surrogatepass")

    return _UNICODE_ESCAPE.sub(one, data)


_LONE_CR = re.compile(rb"\r(?!\n)")


# the nodes `java_facts` reads
_READ = frozenset(
    {
        "method_invocation",
        "object_creation_expression",
        "assignment_expression",
        "package_declaration",
        "import_declaration",
        "annotation",
        "marker_annotation",
        *_CLASSES,
    }
)


def java_facts(data: bytes) -> JavaFacts:
    """Parse one Java file; a syntax error gives facts with `error` set (and nothing else). A lone CR
    ends a line, as javac reads it (old Mac line ends; the grammar knows LF only), and Unicode
    escapes are translated when the file only parses with them translated, as javac does."""
    if b"\r" in data and _LONE_CR.search(data):  # one byte for one: every offset stays, lines are javac's
        data = _LONE_CR.sub(b"\n", data)
    tree = _parser().parse(data)
    root = tree.root_node
    if root.has_error and b"\\u" in data:
        translated = _parser().parse(_translate_unicode_escapes(data))
        if not translated.root_node.has_error:
            tree, root = translated, translated.root_node
    if root.has_error:
        bad = _first_error(root)
        line = bad.start_point[0] + 1 if bad is not None else 1
        what = (
            f"missing '{bad.type}'"
            if bad is not None and bad.is_missing
            else f"unexpected '{_text(bad)[:40]}'"
            if bad is not None
            else "syntax error"
        )
        return JavaFacts(error=f"Java syntax error: {what}", error_line=line)
    fp = _FileParser()
    out = _Collect()
    for n in typed(root, _READ):
        t = n.type
        if t == "method_invocation":
            _method_facts(n, out, fp)
        elif t == "object_creation_expression":
            typ = _type_name(n.child_by_field_name("type"))
            if typ in CONSUMER_TYPES:
                out.consumers.append(_decl(n, typ, fp))
            elif typ in ONS_BEANS:
                out.consumers.append(_decl(n, ONS_BEANS[typ], fp))
            elif _wrapper_candidate(n):
                out.invocations.append(
                    _plain_invocation(n, fp, _text(n.child_by_field_name("type") or n).split("<")[0], "<init>")
                )
        elif t == "assignment_expression":
            _assignment(n, out)
        elif t == "package_declaration":
            named = [c for c in n.named_children if c.type in ("scoped_identifier", "identifier")]
            out.package = _text(named[0]) if named else ""
        elif t == "import_declaration":
            _import(n, out)
        elif t in _CLASSES:
            out.classes.append(_class_facts(n, fp))
        elif t in ("annotation", "marker_annotation") and _annotation_name(n).split(".")[-1] in LISTENER_ANNOTATIONS:
            out.annotations.append(_annotation(n, fp))
    _helpers(out, fp)
    _repeated(out)
    _ons_beans(out)
    return JavaFacts(
        out.package,
        tuple(out.imports),
        tuple(out.wildcards),
        tuple(out.static_imports),
        tuple(out.static_wildcards),
        out.finish(),
        tuple(out.annotations),
        tuple(out.consumers),
        tuple(out.invocations),
        lifecycle=lifecycle(root, LISTENER_ANNOTATIONS) if out.consumers or out.annotations else Lifecycle(),
    )


def _method_facts(n: Node, out: _Collect, fp: _FileParser) -> None:
    name = _method(n)
    if name in BUILDER_METHODS:
        out.consumers.append(_builder(n, fp))
    elif (kind := _vendor_kind(n, name)) is not None:
        out.consumers.append(_decl(n, kind, fp))
    elif (inv := _factory_call(n, fp)) is not None:
        out.invocations.append(inv)
    elif _owner(n) == "" and n.child_by_field_name("arguments") is not None:
        out.plain_calls.append(n)
