"""A record's JSON, serialised once per record object in a process: the scan's check for lone
surrogates (`core.limits.scrub`) writes every consumer as JSON, and the memo keys of the run's
judgements (`rules.evalmemo.Parts`) and simulated impacts (`rules.impact`) read the same consumers."""

from __future__ import annotations

from collections.abc import Iterable

import pydantic_core

from subguard.core.model import Record

_LIMIT = 4096  # records kept alive (a long process, an audit's worker, keeps the newest only)
_MADE: dict[int, tuple[Record, bytes]] = {}  # id -> (the record, kept alive so the id is not reused; its JSON)


def json_of(record: Record) -> bytes:
    """`pydantic_core.to_json(record)`, made once per record object."""
    hit = _MADE.get(id(record))
    if hit is not None and hit[0] is record:
        return hit[1]
    if len(_MADE) >= _LIMIT:
        del _MADE[next(iter(_MADE))]
    data = pydantic_core.to_json(record)
    _MADE[id(record)] = (record, data)
    return data


def json_list(records: Iterable[Record]) -> bytes:
    """`pydantic_core.to_json(records)` for a list, from each record's `json_of`."""
    return b"[" + b",".join(map(json_of, records)) + b"]"
