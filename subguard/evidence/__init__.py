"""Runtime evidence: broker/client logs and mqadmin output, classified per consumer group (SG5xx).

Spark-facing entry points (pure, picklable): `parse_line(text) -> dict | None` turns one log line
into a flat row (see `events.SCHEMA`), `classify(rows) -> list[Finding]` classifies rows (one group's
or many). The CLI streams files with `reader.EvidenceFile` and folds the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from subguard.core.model import Finding
from subguard.evidence.classify import classify_groups
from subguard.evidence.events import SCHEMA, Event, from_dict
from subguard.evidence.ledger import fold
from subguard.evidence.logline import split_header
from subguard.evidence.messages import parse_message

__all__ = ["SCHEMA", "classify", "parse_event", "parse_line"]


def parse_event(text: str) -> Event | None:
    """The event of one log line (or one record, continuation lines joined), if it states one.

    A headerless line is parsed as a bare message (so the `CODE: 25` line of a stack trace still
    counts, without a timestamp).
    """
    line = text.rstrip("\r\n")
    header = split_header(line)
    if header is None:
        return parse_message(line, None)
    return parse_message(header[1], header[0])


def parse_line(text: str) -> dict[str, Any] | None:
    """`parse_event` as a flat dict (every key of `SCHEMA`), or None."""
    event = parse_event(text)
    return event.to_dict() if event is not None else None


def classify(rows: Iterable[Mapping[str, Any] | Event]) -> list[Finding]:
    """Findings SG501-SG506 for the given event rows (dicts from `parse_line` with `path`/`line`
    filled in, or events). Rows of several groups are fine; each group is classified on its own."""
    events = (r if isinstance(r, Event) else from_dict(r) for r in rows)
    return classify_groups(fold(events).resolve())
