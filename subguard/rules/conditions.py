"""Policy conditions: a tree of `all` / `any` / `not` over leaves `{field, op, value}`, three-valued.

A subject's field may hold `UNKNOWN` (a value that cannot be known statically). Evaluation is
Kleene logic: a leaf on an unknown field is unknown (None) except for the ops `unknown` and
`exists`-on-known; `all` is False if any child is False, else unknown if any child is unknown;
`any` is True if any child is True, else unknown if any is; `not` keeps unknown. The engine turns
an unknown verdict into an SG902 note, never into a silent pass.

Ops: eq, ne, gt, ge, lt, le (numbers), in, not_in (value is a list), contains (list membership or
substring), matches (Python regex, `re.search`), exists (present and not empty), unknown.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator


class _Unknown:
    """The value of a field that could not be determined statically (one instance: `UNKNOWN`)."""

    def __reduce__(self) -> str:  # unpickles to the module's UNKNOWN (Spark tasks), keeping `is` checks valid
        return "UNKNOWN"

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __str__(self) -> str:
        return "?"


UNKNOWN: Any = _Unknown()

Op = Literal["eq", "ne", "gt", "ge", "lt", "le", "in", "not_in", "contains", "matches", "exists", "unknown"]
OPS: tuple[str, ...] = ("eq", "ne", "gt", "ge", "lt", "le", "in", "not_in", "contains", "matches", "exists", "unknown")
_NUMERIC = ("gt", "ge", "lt", "le")
_NO_VALUE = ("exists", "unknown")

Verdict = bool | None  # True, False, or None for "unknown"


class _Node(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


class Leaf(_Node):
    """`{field, op, value}`: compare one subject field."""

    field: str
    op: Op
    value: Any = None

    @model_validator(mode="after")
    def _check_value(self) -> Leaf:
        if self.op in _NO_VALUE and self.value is not None:
            raise ValueError(f"op '{self.op}' takes no value")
        if self.op in _NUMERIC and (isinstance(self.value, bool) or not isinstance(self.value, (int, float))):
            raise ValueError(f"op '{self.op}' needs a number as value, got {self.value!r}")
        if self.op in ("in", "not_in") and not isinstance(self.value, list):
            raise ValueError(f"op '{self.op}' needs a list as value, got {self.value!r}")
        if self.op == "matches":
            if not isinstance(self.value, str):
                raise ValueError(f"op 'matches' needs a regex string as value, got {self.value!r}")
            try:
                re.compile(self.value)
            except re.error as exc:
                raise ValueError(f"invalid regex {self.value!r}: {exc}") from None
        if self.op in ("eq", "ne", "contains") and self.value is None:
            raise ValueError(f"op '{self.op}' needs a value")
        return self


class AllOf(_Node):
    all: tuple[Condition, ...] = Field(min_length=1)


class AnyOf(_Node):
    any: tuple[Condition, ...] = Field(min_length=1)


class NotOf(_Node):
    not_: Condition = Field(alias="not")


def _kind(data: Any) -> str | None:
    if isinstance(data, _Node):
        return {Leaf: "leaf", AllOf: "all", AnyOf: "any", NotOf: "not"}.get(type(data))
    if not isinstance(data, Mapping):
        return None
    for key in ("all", "any", "not"):
        if key in data:
            return key
    return "leaf"


Condition = Annotated[
    Annotated[Leaf, Tag("leaf")]
    | Annotated[AllOf, Tag("all")]
    | Annotated[AnyOf, Tag("any")]
    | Annotated[NotOf, Tag("not")],
    Discriminator(
        _kind,
        custom_error_type="condition",
        custom_error_message="a condition must be a mapping: {field, op, value} or all/any/not",
    ),
]

AllOf.model_rebuild()
AnyOf.model_rebuild()
NotOf.model_rebuild()


class ConditionHolder(BaseModel):
    """Validates a bare condition (used by tests and tools)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    condition: Condition


def leaves(cond: Any) -> Iterator[Leaf]:
    """Every leaf of a condition tree."""
    if isinstance(cond, Leaf):
        yield cond
    elif isinstance(cond, AllOf):
        for child in cond.all:
            yield from leaves(child)
    elif isinstance(cond, AnyOf):
        for child in cond.any:
            yield from leaves(child)
    elif isinstance(cond, NotOf):
        yield from leaves(cond.not_)


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, tuple, set, frozenset, dict)) and len(value) == 0)


def _leaf(leaf: Leaf, fields: Mapping[str, Any]) -> Verdict:
    value = fields.get(leaf.field)
    if leaf.op == "unknown":
        return value is UNKNOWN
    if value is UNKNOWN:
        return None
    op, want = leaf.op, leaf.value
    if op == "exists":
        return not _empty(value)
    if op == "eq":
        return bool(_norm(value) == _norm(want))
    if op == "ne":
        return bool(_norm(value) != _norm(want))
    if op in _NUMERIC:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return bool({"gt": value > want, "ge": value >= want, "lt": value < want, "le": value <= want}[op])
    if op == "in":
        return _norm(value) in [_norm(w) for w in want]
    if op == "not_in":
        return _norm(value) not in [_norm(w) for w in want]
    if op == "contains":
        if isinstance(value, str):
            return isinstance(want, str) and want in value
        if isinstance(value, (list, tuple, set, frozenset)):
            return want in value
        return False
    if op == "matches":
        items = value if isinstance(value, (list, tuple, set, frozenset)) else [value]
        return any(item is not None and re.search(want, str(item)) is not None for item in items)
    raise AssertionError(f"unhandled op {op}")  # pragma: no cover (Op is a closed Literal)


def _norm(value: Any) -> Any:
    if isinstance(value, (tuple, set, frozenset)):
        return sorted(value, key=repr) if not isinstance(value, tuple) else list(value)
    return value


def evaluate(cond: Any, fields: Mapping[str, Any]) -> Verdict:
    """Three-valued verdict of `cond` over a subject's fields (None: depends on an unknown value)."""
    if cond is None:
        return True
    if isinstance(cond, Leaf):
        return _leaf(cond, fields)
    if isinstance(cond, NotOf):
        inner = evaluate(cond.not_, fields)
        return None if inner is None else not inner
    if isinstance(cond, AllOf):
        verdicts = [evaluate(c, fields) for c in cond.all]
        if any(v is False for v in verdicts):
            return False
        return None if any(v is None for v in verdicts) else True
    if isinstance(cond, AnyOf):
        verdicts = [evaluate(c, fields) for c in cond.any]
        if any(v is True for v in verdicts):
            return True
        return None if any(v is None for v in verdicts) else False
    raise TypeError(f"not a condition: {cond!r}")
