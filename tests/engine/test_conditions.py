"""The three-valued condition evaluator."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from subguard.rules.conditions import UNKNOWN, ConditionHolder, evaluate


def cond(data: Any) -> Any:
    return ConditionHolder.model_validate({"condition": data}).condition


@pytest.mark.parametrize(
    ("leaf", "value", "verdict"),
    [
        ({"op": "eq", "value": "x"}, "x", True),
        ({"op": "ne", "value": "x"}, "x", False),
        ({"op": "gt", "value": 1}, 2, True),
        ({"op": "ge", "value": 2}, 2, True),
        ({"op": "lt", "value": 2}, 2, False),
        ({"op": "le", "value": 2}, 2, True),
        ({"op": "gt", "value": 1}, "2", False),
        ({"op": "in", "value": ["a", "b"]}, "b", True),
        ({"op": "not_in", "value": ["a", "b"]}, "b", False),
        ({"op": "contains", "value": "pop-5x"}, ["cpp-4x", "pop-5x"], True),
        ({"op": "contains", "value": "ell"}, "hello", True),
        ({"op": "matches", "value": "^prod"}, "production", True),
        ({"op": "matches", "value": "^prod"}, ["dev", "prod-eu"], True),
        ({"op": "exists"}, "", False),
        ({"op": "exists"}, [], False),
        ({"op": "exists"}, "why", True),
        ({"op": "unknown"}, UNKNOWN, True),
        ({"op": "unknown"}, "x", False),
        ({"op": "eq", "value": "x"}, UNKNOWN, None),
        ({"op": "exists"}, UNKNOWN, None),
    ],
)
def test_leaf(leaf: dict[str, Any], value: Any, verdict: Any) -> None:
    assert evaluate(cond({"field": "f", **leaf}), {"f": value}) is verdict


def test_kleene_logic() -> None:
    unknown = {"field": "u", "op": "eq", "value": 1}
    true = {"field": "t", "op": "eq", "value": 1}
    false = {"field": "t", "op": "eq", "value": 2}
    fields = {"u": UNKNOWN, "t": 1}
    assert evaluate(cond({"all": [unknown, false]}), fields) is False
    assert evaluate(cond({"all": [unknown, true]}), fields) is None
    assert evaluate(cond({"any": [unknown, true]}), fields) is True
    assert evaluate(cond({"any": [unknown, false]}), fields) is None
    assert evaluate(cond({"not": unknown}), fields) is None
    assert evaluate(cond({"not": false}), fields) is True
    assert evaluate(None, fields) is True


@pytest.mark.parametrize(
    "bad",
    [
        {"field": "f", "op": "like", "value": 1},
        {"field": "f", "op": "exists", "value": 1},
        {"field": "f", "op": "in", "value": "a"},
        {"field": "f", "op": "matches", "value": "("},
        {"field": "f", "op": "eq"},
        {"all": []},
        {"field": "f", "op": "eq", "value": 1, "extra": 2},
        ["not", "a", "mapping"],
    ],
)
def test_invalid_conditions(bad: Any) -> None:
    with pytest.raises(ValidationError):
        cond(bad)
