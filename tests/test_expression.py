"""subguard.rocketmq.expression against every row of rocketmq-semantics.md §1.2 and its hash references."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from subguard.core.model import ExpressionType
from subguard.rocketmq.expression import (
    cpp_atoi,
    java_hash,
    java_split,
    java_trim,
    parse,
    raw_equal,
    smells,
    tag_order_equal,
    tag_set_equal,
)

# (input, tagsSet in written order, stored subString, error?)
TABLE = [
    (None, (), "*", None),
    ("", (), "*", None),
    ("*", (), "*", None),
    ("tag1 || tag2", ("tag1", "tag2"), "tag1 || tag2", None),
    (" tag1||tag2 ", ("tag1", "tag2"), " tag1||tag2 ", None),
    ("TagA||", ("TagA",), "TagA||", None),
    ("||TagA", ("TagA",), "||TagA", None),
    ("TagA||||TagB", ("TagA", "TagB"), "TagA||||TagB", None),
    ("||", (), "||", "subString split error"),
    ("||||", (), "||||", "subString split error"),
    (" ", (), " ", None),
    (" * ", ("*",), " * ", None),
    ("TagA || *", ("TagA", "*"), "TagA || *", None),
    ("TagA|TagB", ("TagA|TagB",), "TagA|TagB", None),
    ("TagA||TagA", ("TagA",), "TagA||TagA", None),
    ("\tTagA\n||TagB", ("TagA", "TagB"), "\tTagA\n||TagB", None),
]


@pytest.mark.parametrize("raw,tags,sub,error", TABLE)
def test_table_row(raw: str | None, tags: tuple[str, ...], sub: str, error: str | None) -> None:
    p = parse(raw)
    assert p.tags == tags
    assert p.sub_string == sub
    assert p.error == error
    assert p.codes == tuple(java_hash(t) for t in tags)


def test_effects() -> None:
    assert parse(None).match_all and parse("").match_all and parse("*").match_all
    assert not parse(" * ").match_all
    assert parse(" ").delivers_nothing and not parse(" ").matches_tag("TagA")
    assert parse(" * ").matches_tag("*") and not parse(" * ").matches_tag("TagA")
    assert parse("TagA || *").matches_tag("TagA") and not parse("TagA || *").matches_tag("TagB")
    assert not parse("TagA").matches_tag(None), "untagged messages never match a tag subscription"
    assert parse("*").matches_tag(None)
    assert not parse("||").matches_tag("TagA")


def test_hash_references() -> None:
    assert java_hash("*") == 42
    assert java_hash("TagA") == 2598919
    assert java_hash("TagB") == 2598920
    assert java_hash("Aa") == java_hash("BB") == 2112
    assert java_hash("") == 0
    # int32 wraparound to negative, and UTF-16 code units (surrogate pairs hash per unit)
    assert java_hash("polygenelubricants") == -2147483648
    assert java_hash("\U0001f600") == 31 * 0xD83D + 0xDE00


def test_java_helpers() -> None:
    assert java_trim("\x00 a \x1f") == "a"
    assert java_trim("\u00a0a\u00a0") == "\u00a0a\u00a0", "trim() strips only chars <= U+0020"
    assert java_split("a||") == ["a"]
    assert java_split("||a") == ["", "a"]
    assert java_split("||") == []
    assert java_split("a|||b") == ["a", "|b"]


def test_cpp_atoi() -> None:
    assert cpp_atoi("TagA") == 0
    assert cpp_atoi("123") == 123
    assert cpp_atoi(" -7x") == -7
    assert cpp_atoi("4294967297") == 1


def test_sql92_kept_raw() -> None:
    p = parse("a > 1 AND b = 'x'", ExpressionType.SQL92)
    assert p.sub_string == "a > 1 AND b = 'x'" and p.tags == () and p.error is None
    assert parse("", ExpressionType.SQL92).error == "Expression can't be null! SQL92"
    assert parse(None, ExpressionType.SQL92).error is not None


def test_three_comparisons() -> None:
    ab, ba, spaced = parse("TagA||TagB"), parse("TagB||TagA"), parse("TagA || TagB")
    assert tag_set_equal(ab, ba) and not tag_order_equal(ab, ba)
    assert tag_order_equal(ab, spaced) and not raw_equal("TagA||TagB", "TagA || TagB")
    assert raw_equal("", "*") and raw_equal(None, "*")
    assert not tag_set_equal(parse("*"), parse("TagA"))
    assert not tag_set_equal(parse("a>1", ExpressionType.SQL92), parse("a>1"))
    assert tag_set_equal(parse("a>1", ExpressionType.SQL92), parse("a>1", ExpressionType.SQL92))


@pytest.mark.parametrize(
    "raw,code",
    [
        ("||", "split-error"),
        (" ", "blank"),
        (" * ", "padded-star"),
        ("a || *", "star-in-list"),
        ("a|b", "single-pipe"),
        ("a||", "empty-field"),
        ("||a", "empty-field"),
        ("a||a", "duplicate-tag"),
        (" a||b", "padded"),
        ("Aa||BB", "hash-collision"),
    ],
)
def test_smells(raw: str, code: str) -> None:
    assert code in {s.code for s in smells(raw)}


@pytest.mark.parametrize("raw", [None, "", "*", "TagA", "TagA||TagB", "TagA || TagB"])
def test_no_smells(raw: str | None) -> None:
    assert smells(raw) == ()


@given(st.lists(st.text(alphabet="ab |*\t", max_size=6), max_size=5))
def test_parse_total(parts: list[str]) -> None:
    raw = "||".join(parts)
    p = parse(raw)
    assert all(t == java_trim(t) and t for t in p.tags)
    assert len(set(p.tags)) == len(p.tags)
    assert (p.error is None) or p.tags == ()
