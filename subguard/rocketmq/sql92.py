"""Validate SQL92 filter expressions as the broker's `SelectorParser` does (for SG402).

The grammar is RocketMQ's JavaCC selector grammar (apache/rocketmq
`filter/src/main/java/org/apache/rocketmq/filter/parser/SelectorParser.jj`, derived from ActiveMQ
without LIKE, arithmetic, hex and octal): OR / AND / NOT; `=`, `<>`, `>`, `>=`, `<`, `<=`;
`[NOT] BETWEEN x AND y`; `[NOT] IN ('a', ...)` (string literals only); `IS [NOT] NULL`;
`[NOT] CONTAINS | STARTSWITH | ENDSWITH 'literal'` (5.1.3+); unary `+`, `-`, NOT; literals:
'strings' (`''` escapes a quote), integers (optional L, must fit a Java long), floats, TRUE, FALSE,
NULL; identifiers `[A-Za-z_$][A-Za-z0-9_$]*`; `--` line and `/* */` block comments.

The model follows the generated parser, not just the grammar:
- Lexing is lazy and ASCII-only, like JavaCC's token manager: keywords are case-insensitive for
  ASCII letters only (`ıS`, `Iſ`, the Kelvin sign are not `IS`, `IS`, `K`), a non-ASCII character
  outside a string literal or comment is a lexical error, and only when the parser asks for that
  token (a bad character after the point where the parser stops is never seen).
- Each `( ... )*` loop is entered on one token of lookahead and then committed, except the
  two-token LOOKAHEADs of `IS NULL` and `NOT CONTAINS|STARTSWITH|ENDSWITH|BETWEEN|IN`. So a NOT
  after an operand that is not one of those five (`a NOT b`, `a = 1 NOT b`) is a parse error, while
  `a IS NULL NOT b` stops before NOT (the equality loop does not look at NOT).
- The checks made while building the tree are reproduced (`ComparisonExpression`,
  `ConstantExpression`, `asBooleanExpression`): `>`/`<`/BETWEEN only on numbers, properties and
  negations; `= NULL` rejected; `TRUE = 1` rejected; IN only on a property; constant BETWEEN
  bounds in order, compared as `__compare` does (two integers exactly, else both as doubles); a
  float literal must be >= `Double.MIN_VALUE` (so `0.0` is rejected) and finite; AND/OR/NOT
  operands must be boolean or a property.
- The parser has no end-of-input rule: text after the first complete expression is silently
  ignored by the broker. That is reported as `truncated` at the first ignored token.

Depth: the broker's parser recurses once per nesting level (parenthesis, NOT, unary `-` or `+`;
a parenthesis costs it about six frames). On a default 1 MB thread stack it was seen overflowing
(a wrapped StackOverflowError: rejected) from about 930 nested parentheses, and accepting 5,000 once
JIT-compiled: near and past 1,000 levels the broker's own verdict depends on its stack and JIT state.
This module parses with an explicit stack (each rule is a generator driven by one loop, never Python
recursion), judges expressions with up to MAX_DEPTH (1,000) levels open at once by the grammar, and
beyond that answers `too_deep` ("too deep to check"). Time and memory are linear in the input;
`validate` never raises and is a pure function over the text.
"""

from __future__ import annotations

import re
import string
from collections.abc import Generator
from dataclasses import dataclass

KEYWORDS = ("NOT", "AND", "OR", "BETWEEN", "IN", "TRUE", "FALSE", "NULL", "IS", "CONTAINS", "STARTSWITH", "ENDSWITH")
MAX_DEPTH = 1000
"""Levels (parentheses, NOT, unary - and +) open at once that are judged; beyond: `too_deep`."""

_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_DOUBLE_MIN_VALUE = 5e-324
_SPACE = frozenset(" \t\n\r\f")
_ID_START = frozenset(string.ascii_letters + "_$")
_ID_PART = _ID_START | frozenset(string.digits)
_DIGITS = frozenset(string.digits)
_KEYWORDS = frozenset(KEYWORDS)
_DECIMAL = re.compile(r"0|[1-9][0-9]*[lL]?")
_FLOAT = re.compile(r"[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+")
_LINE_BREAK = re.compile(r"\r\n|\n|\r")
_OPERATORS = ("<>", ">=", "<=", "=", ">", "<", "(", ")", ",", "+", "-")
_NOT_FOLLOWERS = ("CONTAINS", "STARTSWITH", "ENDSWITH", "BETWEEN", "IN")


@dataclass(frozen=True)
class SqlError:
    """Why an expression is not usable, or cannot be judged. `kind` is `rejected` (the broker refuses
    it; the consumer fails to start with SUBSCRIPTION_PARSE_FAILED), `truncated` (accepted, but the
    broker only uses the text before `column`) or `too_deep` (nested beyond MAX_DEPTH levels: not
    judged, the broker's own parser may overflow its stack)."""

    kind: str
    message: str
    column: int  # 1-based offset into the expression text


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    pos: int


class _Reject(Exception):
    def __init__(self, message: str, pos: int, kind: str = "rejected") -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos
        self.kind = kind


class _Lexer:
    """Lazy tokenizer: like JavaCC, a lexical error only matters once the parser looks at it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.tokens: list[_Token] = []
        self.index = 0  # the next token not yet consumed
        self.last_break = max(text.rfind("\n"), text.rfind("\r"))

    def _next(self) -> _Token:
        text, pos, n = self.text, self.pos, len(self.text)
        while pos < n:
            ch = text[pos]
            if ch in _SPACE:
                pos += 1
            elif text.startswith("--", pos) and pos + 2 <= self.last_break:  # else no line break ends it: "-" "-"
                found = _LINE_BREAK.search(text, pos + 2)
                pos = found.end() if found else n
            elif text.startswith("/*", pos) and (end := text.find("*/", pos + 2)) != -1:
                pos = end + 2
            else:
                break
        if pos >= n:
            self.pos = n
            return _Token("eof", "", n)
        ch = text[pos]
        if ch in _ID_START:
            end = pos + 1
            while end < n and text[end] in _ID_PART:
                end += 1
            word = text[pos:end]
            kind = word.upper() if word.upper() in _KEYWORDS else "id"
        elif ch in _DIGITS or ch == ".":
            dec, flt = _DECIMAL.match(text, pos), _FLOAT.match(text, pos)
            dec_end = dec.end() if dec else pos
            flt_end = flt.end() if flt else pos
            if dec_end == pos and flt_end == pos:
                raise _Reject(f"lexical error: unexpected character {ch!r}", pos)
            kind, end = ("decimal", dec_end) if dec_end >= flt_end else ("float", flt_end)
        elif ch == "'":
            end = pos + 1
            while True:
                end = text.find("'", end)
                if end == -1:
                    raise _Reject("lexical error: unterminated string literal", pos)
                if text.startswith("''", end):
                    end += 2
                    continue
                end += 1
                break
            kind = "string"
        else:
            op = next((o for o in _OPERATORS if text.startswith(o, pos)), None)
            if op is None:
                raise _Reject(f"lexical error: unexpected character {ch!r}", pos)
            kind, end = op, pos + len(op)
        self.pos = end
        return _Token(kind, text[pos:end], pos)

    def peek(self, k: int = 0) -> _Token:
        while len(self.tokens) <= self.index + k:
            if self.tokens and self.tokens[-1].kind == "eof":
                return self.tokens[-1]
            self.tokens.append(self._next())
        return self.tokens[self.index + k]

    def take(self) -> _Token:
        tok = self.peek()
        if tok.kind != "eof":
            self.index += 1
        return tok


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


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
# A grammar rule is a generator: it yields the sub-rule it needs, is sent that rule's node back, and
# returns its own node. `_run` drives them with a list as the stack, so depth costs heap, not frames.
_Rule = Generator["_Rule", _Node, _Node]


def _run(root: _Rule) -> _Node:
    stack: list[_Rule] = [root]
    sent: _Node | None = None
    while True:
        try:
            child = stack[-1].send(sent)  # type: ignore[arg-type]  # None only starts a fresh rule
        except StopIteration as done:
            stack.pop()
            if not stack:
                result: _Node = done.value
                return result
            sent = done.value
            continue
        stack.append(child)
        sent = None


class _Parser:
    def __init__(self, text: str) -> None:
        self.lex = _Lexer(text)
        self.depth = 0

    def enter(self, tok: _Token) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _Reject(
                f"nested more than {MAX_DEPTH} levels deep (parentheses, NOT, unary - and +): too deep to check; "
                "the broker's parser recurses once per level and may overflow its thread stack",
                tok.pos,
                "too_deep",
            )

    def expect(self, kind: str) -> _Token:
        tok = self.lex.peek()
        if tok.kind != kind:
            shown = "end of expression" if tok.kind == "eof" else repr(_short(tok.text))
            raise _Reject(
                f"expected {kind if kind in KEYWORDS else repr(kind) if len(kind) <= 2 else kind} but found {shown}",
                tok.pos,
            )
        return self.lex.take()

    def as_boolean(self, node: _Node, pos: int) -> _Node:
        if node.boolean or node.kind == "prop":
            return node
        raise _Reject(f"expression will not result in a boolean value: {node.text}", pos)

    def selector(self) -> _Rule:
        start = self.lex.peek().pos
        node = yield self.or_expr()
        return self.as_boolean(node, start)

    def or_expr(self) -> _Rule:
        start = self.lex.peek().pos
        left = yield self.and_expr()
        while self.lex.peek().kind == "OR":
            self.lex.take()
            right_pos = self.lex.peek().pos
            right = yield self.and_expr()
            self.as_boolean(left, start)
            self.as_boolean(right, right_pos)
            left = _Node(_BOOL, "... OR ...")
        return left

    def and_expr(self) -> _Rule:
        start = self.lex.peek().pos
        left = yield self.equality()
        while self.lex.peek().kind == "AND":
            self.lex.take()
            right_pos = self.lex.peek().pos
            right = yield self.equality()
            self.as_boolean(left, start)
            self.as_boolean(right, right_pos)
            left = _Node(_BOOL, "... AND ...")
        return left

    def equality(self) -> _Rule:
        left = yield self.comparison()
        while True:
            tok = self.lex.peek()
            if tok.kind in ("=", "<>"):
                self.lex.take()
                right = yield self.comparison()
                _check_equal(left, right, tok.pos)
                left = _Node(_BOOL, _short(f"{left.text} {tok.text} {right.text}"))
            elif tok.kind == "IS":  # LOOKAHEAD(2) "IS" "NULL", else "IS" "NOT" "NULL"
                if self.lex.peek(1).kind == "NULL":
                    self.lex.take()
                    self.lex.take()
                else:
                    self.lex.take()
                    after = self.lex.peek()
                    if after.kind != "NOT":
                        shown = "end of expression" if after.kind == "eof" else repr(_short(after.text))
                        raise _Reject(f"expected NULL or NOT NULL after IS but found {shown}", after.pos)
                    self.lex.take()
                    self.expect("NULL")
                left = _Node(_BOOL, _short(f"{left.text} IS NULL"))
            else:
                return left

    def comparison(self) -> _Rule:
        left = yield self.unary()
        while True:
            tok = self.lex.peek()
            negated = tok.kind == "NOT"
            if negated:  # the loop is entered on NOT; only the two-token forms can follow
                if self.lex.peek(1).kind not in _NOT_FOLLOWERS:
                    raise _Reject(
                        "NOT after an operand must be followed by BETWEEN, IN, CONTAINS, STARTSWITH or ENDSWITH",
                        tok.pos,
                    )
                self.lex.take()
                tok = self.lex.peek()
            if tok.kind in (">", ">=", "<", "<="):
                self.lex.take()
                right = yield self.unary()
                _check_ordered(left, tok.pos)
                _check_ordered(right, tok.pos)
            elif tok.kind in ("CONTAINS", "STARTSWITH", "ENDSWITH"):
                self.lex.take()
                self.expect("string")
            elif tok.kind == "BETWEEN":
                self.lex.take()
                low = yield self.unary()
                self.expect("AND")
                high = yield self.unary()
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
            left = _Node(_BOOL, _short(f"{left.text} {tok.text} ..."))

    def unary(self) -> _Rule:
        tok = self.lex.peek()
        if tok.kind in ("+", "-", "NOT"):
            self.lex.take()
            self.enter(tok)
            pos = self.lex.peek().pos
            operand = yield self.unary()
            self.depth -= 1
            if tok.kind == "+":
                return operand
            if tok.kind == "-":
                return _Node("neg", _short(f"-{operand.text}"))
            self.as_boolean(operand, pos)
            return _Node(_BOOL, _short(f"NOT {operand.text}"))
        node = yield self.primary()
        return node

    def primary(self) -> _Rule:
        tok = self.lex.peek()
        if tok.kind == "(":
            self.lex.take()
            self.enter(tok)
            inner = yield self.or_expr()
            self.expect(")")
            self.depth -= 1
            return inner
        self.lex.take()
        if tok.kind == "id":
            return _Node("prop", _short(tok.text))
        if tok.kind == "string":
            return _Node("str", _short(tok.text), tok.text[1:-1].replace("''", "'"))
        if tok.kind == "decimal":
            return _Node("num", _short(tok.text), _decimal(tok))
        if tok.kind == "float":
            return _Node("num", _short(tok.text), _float(tok))
        if tok.kind in ("TRUE", "FALSE"):
            return _Node("boolconst", tok.text.upper(), tok.kind == "TRUE")
        if tok.kind == "NULL":
            return _Node("null", "NULL")
        shown = "end of expression" if tok.kind == "eof" else repr(_short(tok.text))
        raise _Reject(f"expected a value, a property or '(' but found {shown}", tok.pos)


def _decimal(tok: _Token) -> int:
    digits = tok.text[:-1] if tok.text[-1] in "lL" else tok.text
    value = int(digits) if len(digits) <= 20 else _LONG_MAX + 1  # int() refuses > 4,300 digits
    if not _LONG_MIN <= value <= _LONG_MAX:
        raise _Reject(f"number {_short(tok.text)} does not fit a Java long", tok.pos)
    return value


def _float(tok: _Token) -> float:
    value = float(tok.text)
    if value == float("inf"):
        raise _Reject(f"{_short(tok.text)} is greater than Double.MAX_VALUE", tok.pos)
    if value < _DOUBLE_MIN_VALUE:
        raise _Reject(
            f"{_short(tok.text)} is less than Double.MIN_VALUE: the broker rejects float literals <= 0 (write 0 as an integer)",
            tok.pos,
        )
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
    """`createBetween`: constant bounds must be in order, compared like `__compare` (Long with
    Double as doubles). Non-numeric constants fail `_check_ordered` afterwards anyway."""
    if low.constant and high.constant:
        if low.kind == "null" or high.kind == "null":
            raise _Reject("BETWEEN bounds cannot be NULL", pos)
        lo, hi = low.value, high.value
        if (
            isinstance(lo, (int, float))
            and isinstance(hi, (int, float))
            and not isinstance(lo, bool)
            and not isinstance(hi, bool)
        ):
            if isinstance(lo, float) or isinstance(hi, float):
                lo, hi = float(lo), float(hi)
            if hi < lo:
                raise _Reject(
                    f"BETWEEN {low.text} AND {high.text}: the lower bound must not exceed the upper bound", pos
                )


def validate(text: str) -> SqlError | None:
    """None if the broker compiles `text` to exactly the written filter, else why not. Never raises."""
    if text.strip(" \t\n\r\f") == "":
        return SqlError("rejected", "the SQL92 expression is empty", 1)
    parser = _Parser(text)
    try:
        _run(parser.selector())
        rest = parser.lex.peek()
    except _Reject as exc:
        return SqlError(exc.kind, exc.message, exc.pos + 1)
    if rest.kind != "eof":
        tail = text[rest.pos :].strip()
        shown = tail if len(tail) <= 80 else tail[:77] + "..."
        return SqlError(
            "truncated", f"the broker stops parsing at column {rest.pos + 1} and ignores {shown!r}", rest.pos + 1
        )
    return None
