"""Validate SQL92 filter expressions as the broker's `SelectorParser` does (for SG402).

The grammar is RocketMQ's JavaCC selector grammar (apache/rocketmq
`filter/src/main/java/org/apache/rocketmq/filter/parser/SelectorParser.jj`, derived from ActiveMQ
without LIKE, arithmetic, hex and octal): OR / AND / NOT; `=`, `<>`, `>`, `>=`, `<`, `<=`;
`[NOT] BETWEEN x AND y`; `[NOT] IN ('a', ...)` (string literals only); `IS [NOT] NULL`;
`[NOT] CONTAINS | STARTSWITH | ENDSWITH 'literal'` (5.1.3+); literals: 'strings' (`''` escapes a quote),
integers (optional L, must fit a Java long), floats, TRUE, FALSE, NULL; identifiers
`[A-Za-z_$][A-Za-z0-9_$]*`; `--` line and `/* */` block comments.

The checks the broker makes while building the expression tree (`ComparisonExpression`,
`ConstantExpression`, `asBooleanExpression`) are reproduced: `>`/`<`/BETWEEN only on numbers or
properties, `= NULL` rejected, IN only on a property, BETWEEN bounds in order, a float literal
must be > 0 (`Double.MIN_VALUE` check, so `0.0` is rejected), AND/OR/NOT operands must be boolean.

The generated parser has no end-of-input rule: text after the first complete expression is
silently ignored by the broker. That is reported too, as `truncated` (the filter is not what was
written). Nothing here is executed; it is a pure function over the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KEYWORDS = ("NOT", "AND", "OR", "BETWEEN", "IN", "TRUE", "FALSE", "NULL", "IS", "CONTAINS", "STARTSWITH", "ENDSWITH")
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_DOUBLE_MIN_VALUE = 5e-324

# (kind, pattern) in the grammar's definition order: ties on length go to the earlier one.
_TOKEN_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("space", re.compile(r"[ \t\n\r\f]")),
    ("comment", re.compile(r"--[^\n\r]*(?:\r\n|\n|\r)")),
    ("comment", re.compile(r"/\*[^*]*\*+(?:[^*/][^*]*\*+)*/")),
    *((kw, re.compile(kw, re.IGNORECASE)) for kw in KEYWORDS),
    ("decimal", re.compile(r"0|[1-9][0-9]*[lL]?")),
    ("float", re.compile(r"[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+")),
    ("string", re.compile(r"'(?:''|[^'])*'")),
    ("id", re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")),
    *((op, re.compile(re.escape(op))) for op in ("<>", ">=", "<=", "=", ">", "<", "(", ")", ",", "+", "-")),
)


@dataclass(frozen=True)
class SqlError:
    """Why an expression is not usable. `kind` is `rejected` (the broker refuses it; the consumer
    fails to start with SUBSCRIPTION_PARSE_FAILED) or `truncated` (accepted, but the broker only uses
    the text before `column`)."""

    kind: str
    message: str
    column: int  # 1-based offset into the expression text


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    pos: int


class _Reject(Exception):
    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos


class _Lexer:
    """Lazy tokenizer: like JavaCC, a lexical error only matters once the parser looks at it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.tokens: list[_Token] = []

    def _next(self) -> _Token:
        text, pos = self.text, self.pos
        while pos < len(text):
            best: tuple[int, str] | None = None
            for kind, pattern in _TOKEN_PATTERNS:
                m = pattern.match(text, pos)
                if m and m.end() > pos and (best is None or m.end() > best[0]):
                    best = (m.end(), kind)
            if best is None:
                raise _Reject(f"lexical error: unexpected character {text[pos]!r}", pos)
            end, kind = best
            if kind in ("space", "comment"):
                pos = end
                continue
            self.pos = end
            return _Token(kind, text[pos:end], pos)
        self.pos = pos
        return _Token("eof", "", pos)

    def peek(self, k: int = 0) -> _Token:
        while len(self.tokens) <= k:
            if self.tokens and self.tokens[-1].kind == "eof":
                return self.tokens[-1]
            self.tokens.append(self._next())
        return self.tokens[k]

    def take(self) -> _Token:
        tok = self.peek()
        if tok.kind != "eof":
            self.tokens.pop(0)
        return tok


# Expression node kinds, mirroring the broker's classes:
# bool (BooleanExpression), boolconst (TRUE/FALSE), null (NULL), prop (property), num, str, neg (unary minus).
@dataclass(frozen=True)
class _Node:
    kind: str
    text: str
    value: object = None

    @property
    def constant(self) -> bool:
        return self.kind in ("boolconst", "null", "num", "str")

    @property
    def boolean(self) -> bool:
        return self.kind in ("bool", "boolconst", "null")


_BOOL = "bool"


class _Parser:
    def __init__(self, text: str) -> None:
        self.lex = _Lexer(text)

    def expect(self, kind: str) -> _Token:
        tok = self.lex.peek()
        if tok.kind != kind:
            shown = "end of expression" if tok.kind == "eof" else repr(tok.text)
            raise _Reject(f"expected {kind if kind in KEYWORDS else repr(kind) if len(kind) <= 2 else kind} but found {shown}", tok.pos)
        return self.lex.take()

    def as_boolean(self, node: _Node, pos: int) -> _Node:
        if node.boolean or node.kind == "prop":
            return node
        raise _Reject(f"expression will not result in a boolean value: {node.text}", pos)

    def selector(self) -> _Node:
        start = self.lex.peek().pos
        return self.as_boolean(self.or_expr(), start)

    def or_expr(self) -> _Node:
        start = self.lex.peek().pos
        left = self.and_expr()
        while self.lex.peek().kind == "OR":
            self.lex.take()
            right_pos = self.lex.peek().pos
            right = self.and_expr()
            self.as_boolean(left, start)
            self.as_boolean(right, right_pos)
            left = _Node(_BOOL, f"{left.text} OR {right.text}")
        return left

    def and_expr(self) -> _Node:
        start = self.lex.peek().pos
        left = self.equality()
        while self.lex.peek().kind == "AND":
            self.lex.take()
            right_pos = self.lex.peek().pos
            right = self.equality()
            self.as_boolean(left, start)
            self.as_boolean(right, right_pos)
            left = _Node(_BOOL, f"{left.text} AND {right.text}")
        return left

    def equality(self) -> _Node:
        left = self.comparison()
        while True:
            tok = self.lex.peek()
            if tok.kind in ("=", "<>"):
                self.lex.take()
                right = self.comparison()
                _check_equal(left, right, tok.pos)
                left = _Node(_BOOL, f"{left.text} {tok.text} {right.text}")
            elif tok.kind == "IS":
                self.lex.take()
                if self.lex.peek().kind == "NOT":
                    self.lex.take()
                self.expect("NULL")
                left = _Node(_BOOL, f"{left.text} IS NULL")
            else:
                return left

    def comparison(self) -> _Node:
        left = self.unary()
        while True:
            tok = self.lex.peek()
            negated = tok.kind == "NOT" and self.lex.peek(1).kind in ("CONTAINS", "STARTSWITH", "ENDSWITH", "BETWEEN", "IN")
            if negated:
                self.lex.take()
                tok = self.lex.peek()
            if tok.kind in (">", ">=", "<", "<="):
                self.lex.take()
                right = self.unary()
                _check_ordered(left, tok.pos)
                _check_ordered(right, tok.pos)
            elif tok.kind in ("CONTAINS", "STARTSWITH", "ENDSWITH"):
                self.lex.take()
                self.expect("string")
            elif tok.kind == "BETWEEN":
                self.lex.take()
                low = self.unary()
                self.expect("AND")
                high = self.unary()
                if not negated:
                    _check_between(low, high, tok.pos)
                for node in (left, low, high):
                    _check_ordered(node, tok.pos)
            elif tok.kind == "IN":
                self.lex.take()
                self.expect("(")
                self.expect("string")
                while self.lex.peek().kind == ",":
                    self.lex.take()
                    self.expect("string")
                self.expect(")")
                if left.kind != "prop":
                    raise _Reject(f"IN needs a property on its left, got {left.text}", tok.pos)
            else:
                return left
            left = _Node(_BOOL, f"{left.text} {tok.text} ...")

    def unary(self) -> _Node:
        tok = self.lex.peek()
        if tok.kind == "+":
            self.lex.take()
            return self.unary()
        if tok.kind == "-":
            self.lex.take()
            operand = self.unary()
            return _Node("neg", f"-{operand.text}")
        if tok.kind == "NOT":
            self.lex.take()
            pos = self.lex.peek().pos
            operand = self.unary()
            self.as_boolean(operand, pos)
            return _Node(_BOOL, f"NOT {operand.text}")
        return self.primary()

    def primary(self) -> _Node:
        tok = self.lex.peek()
        if tok.kind == "(":
            self.lex.take()
            inner = self.or_expr()
            self.expect(")")
            return inner
        if tok.kind == "id":
            self.lex.take()
            return _Node("prop", tok.text)
        if tok.kind == "string":
            self.lex.take()
            return _Node("str", tok.text, tok.text[1:-1].replace("''", "'"))
        if tok.kind == "decimal":
            self.lex.take()
            return _Node("num", tok.text, _decimal(tok))
        if tok.kind == "float":
            self.lex.take()
            return _Node("num", tok.text, _float(tok))
        if tok.kind in ("TRUE", "FALSE"):
            self.lex.take()
            return _Node("boolconst", tok.text.upper(), tok.kind == "TRUE")
        if tok.kind == "NULL":
            self.lex.take()
            return _Node("null", "NULL")
        shown = "end of expression" if tok.kind == "eof" else repr(tok.text)
        raise _Reject(f"expected a value, a property or '(' but found {shown}", tok.pos)


def _decimal(tok: _Token) -> int:
    digits = tok.text[:-1] if tok.text[-1] in "lL" else tok.text
    value = int(digits)
    if not _LONG_MIN <= value <= _LONG_MAX:
        raise _Reject(f"number {tok.text} does not fit a Java long", tok.pos)
    return value


def _float(tok: _Token) -> float:
    value = float(tok.text)
    if value == float("inf"):
        raise _Reject(f"{tok.text} is greater than Double.MAX_VALUE", tok.pos)
    if value < _DOUBLE_MIN_VALUE:
        raise _Reject(f"{tok.text} is less than Double.MIN_VALUE: the broker rejects float literals <= 0 (write 0 as an integer)", tok.pos)
    return value


def _check_ordered(node: _Node, pos: int) -> None:
    """`ComparisonExpression.checkLessThanOperand`: only numbers, properties and negations."""
    if (node.constant and node.kind != "num") or node.boolean:
        raise _Reject(f"value {node.text} cannot be compared with >, >=, <, <= or BETWEEN", pos)


def _check_equal(left: _Node, right: _Node, pos: int) -> None:
    """`checkEqualOperand` and `checkEqualOperandCompatability`."""
    for node in (left, right):
        if node.kind == "null":
            raise _Reject("NULL cannot be compared with = or <>: use IS NULL / IS NOT NULL", pos)
    if left.kind == "boolconst" and right.constant and not right.boolean:
        raise _Reject(f"{left.text} cannot be compared with {right.text}", pos)


def _check_between(low: _Node, high: _Node, pos: int) -> None:
    if low.constant and high.constant:
        if low.kind == "null" or high.kind == "null":
            raise _Reject("BETWEEN bounds cannot be NULL", pos)
        lo, hi = low.value, high.value
        if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and hi < lo:
            raise _Reject(f"BETWEEN {low.text} AND {high.text}: the lower bound must not exceed the upper bound", pos)


def validate(text: str) -> SqlError | None:
    """None if the broker compiles `text` to exactly the written filter, else why not."""
    if text.strip(" \t\n\r\f") == "":
        return SqlError("rejected", "the SQL92 expression is empty", 1)
    parser = _Parser(text)
    try:
        parser.selector()
        rest = parser.lex.peek()
    except _Reject as exc:
        return SqlError("rejected", exc.message, exc.pos + 1)
    if rest.kind != "eof":
        tail = text[rest.pos:].strip()
        return SqlError("truncated", f"the broker stops parsing at column {rest.pos + 1} and ignores {tail!r}", rest.pos + 1)
    return None
