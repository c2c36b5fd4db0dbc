"""The evidence event: one recognised runtime fact (a log record or an mqadmin row), flat and immutable.

Every field is a scalar so that the same record is a Spark row (`to_dict`/`from_dict`, `SCHEMA`).
`tags` is the broker's tag set as printed, sorted and joined with `||` (empty for `*` and SQL92).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

# kinds: broker log
SUB_CHANGED = "sub_changed"  # "subscription changed, group: G OLD: ... NEW: ..."
SUB_ADDED = "sub_added"  # "subscription changed, add new topic, group: G ..."
TOPIC_REMOVED = "topic_removed"  # "subscription changed, group: G remove topic T ..."
NOT_LATEST = "not_latest"  # code 25, broker or client side
SUB_NOT_EXIST = "sub_not_exist"  # code 24
OFFSET_TOO_SMALL = "offset_too_small"  # "the request offset too small. group=..."
OFFSET_MOVED = "offset_moved"  # "PULL_OFFSET_MOVED:correction offset. ..."
CONNECTED = "connected"  # "new consumer connected, group: ..."
CHANNEL_EXPIRED = "channel_expired"  # "SCAN: remove expired channel ..."
GROUP_REMOVED = "group_removed"  # "unregister consumer ok, no any connection, and remove consumer group, G"
FILTER_IGNORED = "filter_ignored"  # ConsumerFilterManager "Ignore consumer(...) filter ..."
# kinds: client log
CLIENT_START = "client_start"  # "the consumer [G] start beginning. messageModel=..." / "start OK."
REBALANCE_CHANGED = "rebalance_changed"  # "T Rebalance changed, also update version: a, b"
REBALANCE_RESULT = "rebalance_result"  # "(client )rebalanced result changed. ... group=G, topic=T ..."
# kinds: mqadmin output
LIVE_CLIENT = "live_client"  # a connection row (consumerConnection / consumerStatus)
LIVE_SUBSCRIPTION = "live_subscription"  # a subscription row (consumerConnection / consumerStatus -i)
GROUP_INFO = "group_info"  # MessageModel / ConsumeType of a group (consumerConnection, consumerProgress)
SUB_DIFFERENT = "sub_different"  # consumerStatus "WARN: Different subscription in the same group"
QUEUE_PROGRESS = "queue_progress"  # consumerProgress -g row

# events that mark a join, a leave or a rebalance round: they explain transient code 25
MEMBERSHIP_KINDS = frozenset(
    {
        SUB_CHANGED,
        SUB_ADDED,
        TOPIC_REMOVED,
        CONNECTED,
        CHANNEL_EXPIRED,
        GROUP_REMOVED,
        CLIENT_START,
        REBALANCE_CHANGED,
        REBALANCE_RESULT,
    }
)


@dataclass(frozen=True)
class Event:
    """One runtime fact. `ts` is seconds (epoch of the naive log time; seconds of day when the log
    shows no date; None when unknown). `path`/`line` are filled by the reader, not by the parsers."""

    kind: str
    ts: float | None = None
    group: str = ""
    topic: str = ""
    expression: str | None = None
    expression_type: str = ""
    tags: str = ""
    sub_version: int | None = None
    old_expression: str | None = None
    old_expression_type: str = ""
    old_tags: str = ""
    old_sub_version: int | None = None
    client: str = ""
    broker: str = ""
    queue_id: int | None = None
    request_offset: int | None = None
    broker_offset: int | None = None
    code: int | None = None
    message_model: str = ""
    side: str = ""  # broker | client | mqadmin
    path: str = ""
    line: int = 0

    def at(self, path: str, line: int) -> Event:
        return replace(self, path=path, line=line)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


FIELD_NAMES = tuple(f.name for f in fields(Event))

# (name, Spark SQL type) for every field, in order: what `parse_line` dicts hold.
SCHEMA: tuple[tuple[str, str], ...] = tuple(
    (
        f.name,
        {
            "ts": "double",
            "sub_version": "bigint",
            "old_sub_version": "bigint",
            "queue_id": "int",
            "request_offset": "bigint",
            "broker_offset": "bigint",
            "code": "int",
            "line": "int",
        }.get(f.name, "string"),
    )
    for f in fields(Event)
)


def from_dict(row: Mapping[str, Any]) -> Event:
    """Rebuild an event from a flat dict (extra keys ignored, missing ones default)."""
    values = {k: row[k] for k in FIELD_NAMES if k in row and row[k] is not None}
    values.setdefault("kind", "")
    return Event(**values)
