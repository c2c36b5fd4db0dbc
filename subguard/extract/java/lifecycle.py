"""Whether the code runs a consumer: what a Java file's tree says about `start()` beyond the calls.

- **Expected failures.** What a test expects to throw: the last statement of a `@Test(expected =
  ...)` method (JUnit 4; TestNG `expectedExceptions`), the code given to `assertThrows`,
  `assertThrowsExactly`, `expectThrows`, `assertThatThrownBy` or `isThrownBy` (JUnit 5, AssertJ,
  TestNG), and the statement right before `fail(...)` / `failBecauseExceptionWasNotThrown(...)` in a
  `try` that catches. A consumer whose every `start()` lies there is one the test asserts is refused:
  it never runs. (A `start()` earlier in an expecting method, then a call that times out, ran.)
- **Listener classes that are never beans.** A listener-annotated class nested in another one, with
  no other annotation, that is inner (non-static: no scan or `@Import` can make one without its
  enclosing instance) or nested in a test class (Spring Boot's TestTypeExcludeFilter keeps those out
  of component scans), and whose every use in its file is reflection (`X.class.getAnnotation(...)`),
  lies in an expected failure, or lies in another nested class that is itself never registered (the
  `@Configuration` whose `@Bean` makes it, used only by a `@Test(expected = ...)` method), is an
  annotation carrier for a test, never a listener that starts.
- **Annotation enhancers.** A file that declares a rocketmq-spring `AnnotationEnhancer` rewrites the
  listener annotations' attributes at run time: the names written in its own listeners are not the
  names the consumers use.

Pure functions of the tree; the result is part of the file's picklable facts.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from subguard.extract.java.compact import compact
from subguard.extract.java.tree import text as _text
from subguard.extract.java.tree import typed

Span = tuple[int, int, int, int]  # first line, first column, last line, last column (1-based)

# calls whose function argument a test expects to throw
THROWS = frozenset({"assertThrows", "assertThrowsExactly", "expectThrows", "assertThatThrownBy", "isThrownBy"})
# calls that fail a test when reached: in a `try`, the statements before one are expected to throw
FAILS = frozenset({"fail", "failBecauseExceptionWasNotThrown", "shouldHaveThrown"})
_EXPECTED_KEYS = frozenset({"expected", "expectedExceptions"})
# reading a class's annotations is not registering it
REFLECTION = frozenset(
    {
        "getAnnotation",
        "getDeclaredAnnotation",
        "getAnnotations",
        "getDeclaredAnnotations",
        "getAnnotationsByType",
        "isAnnotationPresent",
        "findAnnotation",
        "findMergedAnnotation",
        "getMergedAnnotation",
    }
)
_CLASSES = frozenset({"class_declaration", "interface_declaration", "enum_declaration", "record_declaration"})


@compact
@dataclass(frozen=True)
class Lifecycle:
    """What one file's tree says about running its consumers."""

    expected_failures: tuple[Span, ...] = ()
    carriers: tuple[str, ...] = ()  # listener-annotated nested classes (Outer.Inner) that are never beans
    started_by_reference: tuple[tuple[str, str, int, int], ...] = ()  # (variable, method, line, column) of `x::start`
    enhancer: bool = False  # the file declares a rocketmq-spring AnnotationEnhancer

    def expected_to_fail(self, line: int, column: int) -> bool:
        """Whether the code at (line, column) lies where a test expects an exception."""
        return any((a, b) <= (line, column) <= (c, d) for a, b, c, d in self.expected_failures)


def _span(node: Node) -> Span:
    return (node.start_point[0] + 1, node.start_point[1] + 1, node.end_point[0] + 1, node.end_point[1] + 1)


def _annotations(decl: Node) -> list[Node]:
    mods = next((c for c in decl.children if c.type == "modifiers"), None)
    return [a for a in (mods.children if mods is not None else ()) if a.type in ("annotation", "marker_annotation")]


def _simple(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _expects_exception(method: Node) -> bool:
    """`@Test(expected = X.class)` / TestNG `@Test(expectedExceptions = ...)` on a method."""
    for ann in _annotations(method):
        if _simple(_text(ann.child_by_field_name("name"))) != "Test":
            continue
        args = ann.child_by_field_name("arguments")
        for pair in args.named_children if args is not None else ():
            if pair.type == "element_value_pair" and _text(pair.child_by_field_name("key")) in _EXPECTED_KEYS:
                return True
    return False


_COMMENTS = frozenset({"line_comment", "block_comment"})


def _statements(block: Node) -> list[Node]:
    return [c for c in block.named_children if c.type not in _COMMENTS]


def _before_fail(try_node: Node) -> Span | None:
    """In a catching `try`, the statement right before its `fail(...)`: what the test expects to throw."""
    body = try_node.child_by_field_name("body")
    if body is None or not any(c.type == "catch_clause" for c in try_node.children):
        return None
    stmts = _statements(body)
    for i, stmt in enumerate(stmts):
        call = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_children else None
        if call is not None and call.type == "method_invocation" and _text(call.child_by_field_name("name")) in FAILS:
            return _span(stmts[i - 1]) if i > 0 else None
    return None


def expected_failures(root: Node) -> tuple[Span, ...]:
    """Where a test expects an exception: the last statement of a `@Test(expected = ...)` method (what
    runs before it is expected to succeed), the code given to an assertion that it throws, and the
    statement right before `fail(...)` in a catching `try`."""
    out: list[Span] = []
    for n in typed(root, _FAILING):
        if n.type == "method_declaration" and _expects_exception(n):
            body = n.child_by_field_name("body")
            stmts = _statements(body) if body is not None else []
            if stmts:
                out.append(_span(stmts[-1]))
        elif n.type == "method_invocation" and _text(n.child_by_field_name("name")) in THROWS:
            args = n.child_by_field_name("arguments")
            out += [_span(a) for a in (args.named_children if args is not None else ()) if a.type in _CODE_ARGS]
        elif n.type in ("try_statement", "try_with_resources_statement"):
            span = _before_fail(n)
            if span is not None:
                out.append(span)
    return tuple(out)


_CODE_ARGS = frozenset({"lambda_expression", "method_reference"})
# the nodes each reading looks at
_FAILING = frozenset({"method_declaration", "method_invocation", "try_statement", "try_with_resources_statement"})
_METHODS = frozenset({"method_declaration"})
_NAMES = frozenset({"identifier", "type_identifier"})
_REFERENCES = frozenset({"method_reference"})
_TYPES = frozenset({"type_identifier"})


def _class_path(node: Node) -> str:
    names: list[str] = []
    n: Node | None = node
    while n is not None:
        if n.type in _CLASSES:
            names.append(_text(n.child_by_field_name("name")))
        n = n.parent
    return ".".join(reversed(names))


def _nested(decl: Node) -> bool:
    """A class declared in another class's body."""
    parent = decl.parent
    return parent is not None and parent.type == "class_body"


def _inner(decl: Node) -> bool:
    """A non-static class declared in another class's body (not in an interface, where it is static)."""
    parent = decl.parent
    if not _nested(decl) or parent is None or parent.parent is None:
        return False
    if parent.parent.type not in ("class_declaration", "enum_declaration", "record_declaration"):
        return False
    mods = next((c for c in decl.children if c.type == "modifiers"), None)
    return not any(c.type == "static" for c in (mods.children if mods is not None else ()))


def _reflective(use: Node) -> bool:
    """`X.class.getAnnotation(...)`, or `X.class` given to `findAnnotation(...)` and alike."""
    literal = use.parent
    if literal is None or literal.type != "class_literal":
        return False
    up = literal.parent
    if up is not None and up.type == "method_invocation" and up.child_by_field_name("object") == literal:
        return _text(up.child_by_field_name("name")) in REFLECTION
    if up is not None and up.type == "argument_list" and up.parent is not None:
        return _text(up.parent.child_by_field_name("name")) in REFLECTION
    return False


def _is_test(method: Node) -> bool:
    return method.type == "method_declaration" and any(
        _simple(_text(a.child_by_field_name("name"))) == "Test" for a in _annotations(method)
    )


def _enclosing_class(node: Node) -> Node | None:
    n = node.parent
    while n is not None and n.type not in _CLASSES:
        n = n.parent
    return n


def carriers(root: Node, listener_annotations: frozenset[str]) -> tuple[str, ...]:
    """Listener-annotated nested classes that never become beans: their only annotations are listener
    annotations, they are inner (non-static: Spring cannot make one) or nested in a test class (Spring
    Boot's TestTypeExcludeFilter keeps those out of component scans), and every use of them in the file
    is reflection, lies where a test expects an exception, or lies in another nested class that is
    itself never registered (a `@Configuration` whose `@Bean` makes one, used only by a
    `@Test(expected = ...)` method; not when the test class is annotated: `@SpringBootTest` loads its
    nested configurations by itself)."""
    nested: dict[str, Node] = {}
    for n in typed(root, _CLASSES):
        if _nested(n):
            name = _text(n.child_by_field_name("name"))
            nested[name] = n if name not in nested else root  # a name declared twice: never judged
    listeners = [
        d
        for d in nested.values()
        if d != root
        and _annotations(d)
        and all(_simple(_text(a.child_by_field_name("name"))) in listener_annotations for a in _annotations(d))
    ]
    if not listeners:
        return ()
    test_file = any(_is_test(n) for n in typed(root, _METHODS))
    uses: dict[str, list[Node]] = {name: [] for name in nested}
    for n in typed(root, _NAMES):
        if _text(n) in uses and n.parent not in nested.values():
            uses[_text(n)].append(n)
    expected = Lifecycle(expected_failures(root)).expected_to_fail

    # a test class with a class-level annotation (@SpringBootTest, @ContextConfiguration, @Import, ...)
    # may load its nested configuration classes by itself: those count as registered
    loads_nested = any(_annotations(n) for n in root.named_children if n.type in _CLASSES)

    def unregistered(name: str, seen: frozenset[str]) -> bool:
        decl = nested[name]
        if seen and loads_nested and _annotations(decl):
            return False
        if not uses[name] and not _inner(decl):
            return False  # a static class no line of its file uses: another file may register it
        for use in uses[name]:
            if _reflective(use) or expected(use.start_point[0] + 1, use.start_point[1] + 1):
                continue
            holder = _enclosing_class(use)
            while holder is not None and holder != decl and _text(holder.child_by_field_name("name")) not in nested:
                holder = _enclosing_class(holder)
            if holder == decl:
                continue  # the class names itself
            held_by = _text(holder.child_by_field_name("name")) if holder is not None else ""
            if not held_by or held_by in seen or len(seen) > 3 or nested[held_by] != holder:
                return False
            if not unregistered(held_by, seen | {name}):
                return False
        return True

    return tuple(
        _class_path(d)
        for d in listeners
        if (_inner(d) or test_file) and unregistered(_text(d.child_by_field_name("name")), frozenset())
    )


def _method_of(node: Node) -> str:
    """The name of the method or constructor ("<init>") around `node`; "" at class level."""
    n = node.parent
    while n is not None and n.type not in _CLASSES:
        if n.type == "method_declaration":
            return _text(n.child_by_field_name("name"))
        if n.type in ("constructor_declaration", "compact_constructor_declaration"):
            return "<init>"
        n = n.parent
    return ""


def started_by_reference(root: Node) -> tuple[tuple[str, str, int, int], ...]:
    """(variable, method, line, column) of each `x::start` (the start of `x` passed on as a method
    reference), `method` being the one it is written in."""
    out = set()
    for n in typed(root, _REFERENCES):
        if n.named_children and _text(n.named_children[-1]) == "start":
            target = n.named_children[0]
            name = _text(target.child_by_field_name("field")) if target.type == "field_access" else _text(target)
            if target.type in ("identifier", "field_access"):
                out.add((name, _method_of(n), n.start_point[0] + 1, n.start_point[1] + 1))
    return tuple(sorted(out))


def lifecycle(root: Node, listener_annotations: frozenset[str]) -> Lifecycle:
    """The file's lifecycle facts (empty for a file without a consumer or listener)."""
    enhancer = any(_text(n) == "AnnotationEnhancer" for n in typed(root, _TYPES))
    return Lifecycle(
        expected_failures(root), carriers(root, listener_annotations), started_by_reference(root), enhancer
    )
