"""The JSON reports' text comes from pydantic's serializer (`subguard.report.jsontext`): it must be the
text `json.dumps(value, indent=2, ensure_ascii=False)` writes, byte for byte."""

from __future__ import annotations

import json
import random
from typing import Any

from subguard.report.jsontext import pretty

# every ASCII character (controls, quotes, backslash), and the characters JSON writers disagree on
ALPHABET = [chr(i) for i in range(0x80)] + ["\u0085", "\u00a0", "\u00e9", "\u200b", "\u2028", "\u2029", "\ufeff"]
ALPHABET += ["\ufffd", "\U0001f600", "\u202e"]


def _value(rng: random.Random, depth: int = 0, floats: bool = False) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.3:
        return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 12)))
    if roll < 0.4:
        return rng.choice([0, -1, 2**63, -(2**70), rng.randint(-(10**20), 10**20)])
    if roll < 0.45:
        return rng.choice([None, True, False])
    if roll < 0.5 and floats:
        return rng.choice([1e-05, 1e16, 0.1, -2.5, 1.0, 123456789.125])
    if roll < 0.75:
        return [_value(rng, depth + 1, floats) for _ in range(rng.randint(0, 4))]
    return {"".join(rng.choice(ALPHABET) for _ in range(4)): _value(rng, depth + 1, floats) for _ in range(4)}


def test_the_text_is_what_json_dumps_writes() -> None:
    rng = random.Random(7)
    for _ in range(5000):
        value = _value(rng, floats=rng.random() < 0.2)
        assert pretty(value) == json.dumps(value, indent=2, ensure_ascii=False) + "\n", repr(value)


def test_floats_and_surrogates_are_left_to_json() -> None:
    for value in ({"a": [1e-05, 1e16]}, {"b": "lone \ud800"}, [{"c": (1, 2)}]):
        assert pretty(value) == json.dumps(value, indent=2, ensure_ascii=False) + "\n"
