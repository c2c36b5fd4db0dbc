"""Subscription expressions parsed exactly as the broker does (`FilterAPI.buildSubscriptionData`).

Every rule and the simulator use this module; see rocketmq-semantics.md §1.2-1.4 and §3.3.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from subguard.core.model import ExpressionType

SUB_ALL = "*"
_DELIMITER = "||"


def java_trim(text: str) -> str:
    """Java `String.trim()`: strip characters <= U+0020 from both ends (not Unicode whitespace)."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def java_split(text: str, delimiter: str = _DELIMITER) -> list[str]:
    """Java `String.split` on a literal delimiter: trailing empty fields are dropped."""
    fields = text.split(delimiter)
    while fields and fields[-1] == "":
        fields.pop()
    return fields


@functools.lru_cache(maxsize=8192)  # pure: a run hashes each tag of every subscription several times
def java_hash(text: str) -> int:
    """Java `String.hashCode` over UTF-16 code units, as a signed int32."""
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")  # a lone surrogate is one code unit, as in Java
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - 0x100000000 if h & 0x80000000 else h


def cpp_atoi(text: str) -> int:
    """C `atoi` as the C++ core uses it for tag codes: leading integer prefix, else 0."""
    stripped = text.lstrip(" \t\n\r\v\f")
    sign, digits = 1, ""
    if stripped[:1] in ("+", "-"):
        sign = -1 if stripped[0] == "-" else 1
        stripped = stripped[1:]
    for ch in stripped:
        if not ("0" <= ch <= "9"):
            break
        digits += ch
    if not digits:
        return 0
    value = sign * int(digits)
    return ((value + 2**31) % 2**32) - 2**31


@dataclass(frozen=True)
class ParsedExpression:
    """The broker's view of one expression.

    `sub_string` is what the broker stores (`*` for match-all inputs, otherwise the raw text,
    untrimmed). `tags` keeps the written order of first occurrences; `codes` are their Java hashes.
    `error` is set when the client would throw at `subscribe()` (then tags are empty).
    """

    raw: str | None
    expression_type: ExpressionType
    sub_string: str
    tags: tuple[str, ...]
    codes: tuple[int, ...]
    error: str | None = None

    @property
    def match_all(self) -> bool:
        return self.expression_type is ExpressionType.TAG and self.sub_string == SUB_ALL and self.error is None

    @property
    def delivers_nothing(self) -> bool:
        """A TAG expression that is not match-all and has no tag (e.g. " "): nothing is delivered."""
        return self.expression_type is ExpressionType.TAG and not self.match_all and not self.tags

    def matches_tag(self, tag: str | None) -> bool:
        """Broker hash match then the Java client's exact string re-filter (TAG only)."""
        if self.error is not None:
            return False
        if self.expression_type is not ExpressionType.TAG or self.match_all:
            return True
        return bool(tag) and tag in self.tags


@functools.lru_cache(maxsize=8192)  # pure, and its result immutable: each rule parses every expression again
def parse(raw: str | None, expression_type: ExpressionType = ExpressionType.TAG) -> ParsedExpression:
    """Parse an expression as `FilterAPI.build(topic, raw, type)` does."""
    if expression_type is ExpressionType.SQL92:
        if raw is None or raw == "":
            return ParsedExpression(
                raw, expression_type, "", (), (), f"Expression can't be null! {expression_type.value}"
            )
        return ParsedExpression(raw, expression_type, raw, (), ())
    if raw is None or raw == "" or raw == SUB_ALL:
        return ParsedExpression(raw, expression_type, SUB_ALL, (), ())
    fields = java_split(raw)
    if not fields:
        return ParsedExpression(raw, expression_type, raw, (), (), "subString split error")
    tags: list[str] = []
    for field in fields:
        tag = java_trim(field)
        if tag and tag not in tags:
            tags.append(tag)
    return ParsedExpression(raw, expression_type, raw, tuple(tags), tuple(java_hash(t) for t in tags))


def raw_equal(a: str | None, b: str | None) -> bool:
    """What mqadmin's consistency check compares: `topic@subString`, raw text (null/""/* all `*`)."""
    return parse(a).sub_string == parse(b).sub_string if a != b else True


def tag_set_equal(a: ParsedExpression, b: ParsedExpression) -> bool:
    """Same delivery at the broker: same type, same match-all-ness, same tag set / same SQL text."""
    if a.expression_type is not b.expression_type:
        return False
    if a.expression_type is ExpressionType.SQL92:
        return a.sub_string == b.sub_string
    return a.match_all == b.match_all and set(a.tags) == set(b.tags)


def tag_order_equal(a: ParsedExpression, b: ParsedExpression) -> bool:
    """Same tags in the same written order (what Alibaba Cloud and TDMQ require)."""
    return tag_set_equal(a, b) and a.tags == b.tags


@dataclass(frozen=True)
class Smell:
    """A suspicious expression: `code` is stable (used by SG401), `severity` error or warning."""

    code: str
    severity: str
    message: str


@functools.lru_cache(maxsize=8192)  # pure, as `parse`
def smells(raw: str | None) -> tuple[Smell, ...]:
    """Lint smells of a TAG expression (§1.2): things that parse but do not do what they look like."""
    if raw is None or raw == "" or raw == SUB_ALL:
        return ()
    parsed = parse(raw)
    found: list[Smell] = []
    if parsed.error:
        found.append(
            Smell("split-error", "error", f"'{raw}' has no tag: the client throws \"{parsed.error}\" at subscribe()")
        )
        return tuple(found)
    if not parsed.tags:
        found.append(Smell("blank", "error", f"'{raw}' is blank but not '*': the broker delivers nothing"))
        return tuple(found)
    if SUB_ALL in parsed.tags:
        if len(parsed.tags) == 1:
            found.append(Smell("padded-star", "error", f"'{raw}' is not match-all: only the literal tag '*' matches"))
        else:
            found.append(Smell("star-in-list", "error", f"'*' inside '{raw}' is a literal tag, not match-all"))
    for tag in parsed.tags:
        if "|" in tag:
            found.append(Smell("single-pipe", "error", f"tag '{tag}' contains '|': the separator is '||'"))
    stripped = java_trim(raw)
    if stripped.startswith(_DELIMITER) or stripped.endswith(_DELIMITER) or (_DELIMITER * 2) in raw:
        found.append(Smell("empty-field", "warning", f"'{raw}' has an empty field between separators"))
    written = [java_trim(f) for f in java_split(raw) if java_trim(f)]
    if len(written) != len(parsed.tags):
        found.append(Smell("duplicate-tag", "warning", f"'{raw}' repeats a tag"))
    if raw != stripped:
        found.append(
            Smell(
                "padded",
                "warning",
                f"'{raw}' has leading or trailing blanks: the raw text differs from the same tags unpadded",
            )
        )
    collisions = _collisions(parsed.tags)
    if collisions:
        found.append(
            Smell(
                "hash-collision",
                "warning",
                f"tags {' and '.join(collisions)} share a hash code: the broker cannot tell them apart",
            )
        )
    return tuple(found)


def _collisions(tags: tuple[str, ...]) -> list[str]:
    seen: dict[int, str] = {}
    out: list[str] = []
    for tag in tags:
        code = java_hash(tag)
        if code in seen:
            out.extend([f"'{seen[code]}'", f"'{tag}'"])
        seen[code] = tag
    return out
