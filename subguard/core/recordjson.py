"""A record's JSON, serialised once per record object in a process: the memo keys of a run's
judgements (`rules.evalmemo.Parts`) and simulated impacts (`rules.impact`) read the same consumers."""

from __future__ import annotations

from collections.abc import Iterable

import pydantic_core

from subguard.core.model import Record

_LIMIT = 65536
_MADE: dict[int, tuple[Record, bytes]] = {}  # id -> (the record, kept alive so the id is not reused; its JSON)


def json_of(record: Record) -> bytes:
    """`pydantic_core.to_json(record)`, made once per record object."""
    hit = _MADE.get(id(record))
    if hit is not None and hit[0] is record:
        return hit[1]
    if len(_MADE) >= _LIMIT:
        _MADE.clear()
    data = pydantic_core.to_json(record)
    _MADE[id(record)] = (record, data)
    return data


def json_list(records: Iterable[Record]) -> bytes:
    """`pydantic_core.to_json(records)` for a list, from each record's `json_of`."""
    return b"[" + b",".join(map(json_of, records)) + b"]"
