"""The text of a JSON report: what `json.dumps(value, indent=2, ensure_ascii=False)` writes, written
by pydantic's serializer (Rust), a tenth of the time at a few hundred findings.

For strings, integers, booleans, None, lists and dicts (all a report holds) the two write the same
text, byte for byte (`tests/report/test_jsontext.py` compares them). They differ on some floats
(`1e-05` against `1e-5`), so a value holding one is written by `json` itself, as is one pydantic
cannot write (a lone surrogate: reports are scrubbed of them).
"""

from __future__ import annotations

import json
from typing import Any

import pydantic_core


def pretty(value: Any) -> str:
    """`value` as indented JSON text, non-ASCII characters as they are, ending in a newline."""
    if not _holds_float(value):
        try:
            return pydantic_core.to_json(value, indent=2).decode("utf-8") + "\n"
        except (pydantic_core.PydanticSerializationError, ValueError, TypeError):
            pass
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _holds_float(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            stack.extend(item)
        elif isinstance(item, float):
            return True
    return False
