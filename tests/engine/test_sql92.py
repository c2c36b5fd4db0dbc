"""SQL92 validation against the broker's selector grammar and compile-time checks."""

from __future__ import annotations

import pytest

from subguard.rocketmq.sql92 import validate

VALID = [
    "a=3 and b<>4 And c>5 AND d<=4",  # from apache/rocketmq ParserTest
    "a=3 or b<>4 Or c>5 OR d<=4",
    "a in ('3', '4', '5')",
    "(a not in ('6', '4', '5')) or (b in ('3', '4', '5'))",
    "(a between 2 and 10) AND (b not between 6 and 9)",
    "a is null",
    "a is not null",
    "a=3 and b contains 'xxx' and c not contains 'xxx'",
    "x startswith 'a' or y not endswith 'b'",
    "color in ('red1') and price>3",  # spring-cloud-alibaba#3612
    "a = 'it''s'",
    "a > -1.5 AND b < 10L AND c = TRUE",
    "a",  # a property is cast to boolean
    "NOT (a = 1) /* block */ AND b = 2 -- line comment\n",
    "$weird_name_1 = 1",
]

REJECTED = [
    ("a and between 2 and 10", "found 'between'"),  # ParserTest invalidExpression
    (" a between 10 and 0", "lower bound"),  # ParserTest illegalBetween
    ("a > 100000000000000000000000", "Java long"),  # decimal overflow
    ("a > 0.0", "Double.MIN_VALUE"),
    ("a = NULL", "IS NULL"),
    ("a > 'x'", "cannot be compared"),
    ("a > TRUE", "cannot be compared"),
    ("TRUE = 1", "cannot be compared"),
    ("1 AND a = 1", "boolean"),
    ("NOT 5", "boolean"),
    ("'x' in ('a')", "property"),
    ("a in (1, 2)", "string"),
    ("a # b", "lexical error"),
    ("a.b = 1", "lexical error"),
    ("a = ", "found end of expression"),
    ("(a = 1", "expected ')'"),
    ("a is b", "expected NULL"),
    ("", "empty"),
    ("   ", "empty"),
    ("a = 'unterminated", "lexical error"),
]


@pytest.mark.parametrize("text", VALID)
def test_valid(text: str) -> None:
    assert validate(text) is None


@pytest.mark.parametrize(("text", "why"), REJECTED)
def test_rejected(text: str, why: str) -> None:
    problem = validate(text)
    assert problem is not None and problem.kind == "rejected", problem
    assert why in problem.message


@pytest.mark.parametrize(("text", "column"), [("a = 1 b = 2", 7), ("region = 'eu' amount > 100", 15), ("a = 007", 6)])
def test_truncated(text: str, column: int) -> None:
    problem = validate(text)
    assert problem is not None and problem.kind == "truncated" and problem.column == column


def test_lexical_error_beyond_the_parse_is_truncation_not_rejection() -> None:
    problem = validate("a = 1 b # c")
    assert problem is not None and problem.kind == "truncated"
