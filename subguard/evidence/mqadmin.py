"""mqadmin text output -> events (`consumerConnection`, `consumerStatus` with and without `-i`,
`consumerProgress` with and without `-g`), following the tools' printf layouts.

These outputs are tables, so parsing is per file (a small state machine over lines), not per line.
The group comes from the output itself (`consumerGroup` property, consumerProgress rows), from an
`mqadmin ... -g GROUP` prompt line in the file, or from `default_group`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from subguard.evidence import events as ev
from subguard.evidence.events import Event

_PROMPT = re.compile(r"\b(?:consumerConnection|consumerStatus|consumerProgress)\b.*?\s-g\s*(\S+)")
_PROPERTY = re.compile(r"(\S+)\s*: (.*)$")
_RUNNING_SUB = re.compile(r"\d{3} Topic: (\S+)\s+ClassFilter: \w+\s+SubExpression: (.*)$")
_STATUS_ROW = re.compile(r"(\d+)\s+(\S+)\s+(\S+)\s+(\S+)$")
_MODELS = ("CLUSTERING", "BROADCASTING")
_DIFFERENT = "WARN: Different subscription in the same group of consumer"


# table header -> section: the header starts with `first` and holds `also`, or (no `also`) is exactly `first`
_TABLES: tuple[tuple[str, str | None, str], ...] = (
    ("#ClientId", "#ClientAddr", "connections"),
    ("#Index", "#ClientId", "status"),
    ("#Consumer Properties#", None, "properties"),
    ("#Consumer Subscription#", None, "running_subs"),
    ("#Topic", "#SubExpression", "subscriptions"),
    ("#Topic", "#Broker Offset", "progress"),
    ("#Group", "#Diff Total", "groups"),
)


def _section(header: str) -> str:
    """The section a `#...` line starts: a table from `_TABLES`, else `other` (one that yields nothing)."""
    for first, also, section in _TABLES:
        if (header == first) if also is None else (header.startswith(first) and also in header):
            return section
    return "other"


@dataclass
class _State:
    """Where the parse is: the group, the table being read (`section`), its header, the client it describes."""

    group: str
    section: str = ""
    headers: list[str] = field(default_factory=list)
    client: str = ""

    def enter(self, header: str) -> None:
        """A `#...` line: its section, and that table's own state (client, column headers)."""
        self.section = _section(header)
        if self.section == "properties":
            self.client = ""
        elif self.section == "progress":
            self.headers = re.split(r"\s{2,}|\s(?=#)", header)


# row readers, one per section: (state, line, stripped line) -> event or None
def _connection_row(s: _State, line: str, text: str) -> Event | None:
    parts = text.split()
    return Event(ev.LIVE_CLIENT, None, s.group, client=parts[0], side="mqadmin") if len(parts) >= 3 else None


def _status_row(s: _State, line: str, text: str) -> Event | None:
    m = _STATUS_ROW.match(text)
    return None if m is None else Event(ev.LIVE_CLIENT, None, s.group, client=m.group(2), side="mqadmin")


def _subscription_row(s: _State, line: str, text: str) -> Event:
    """`%-20s %s` of topic and raw subString: the expression starts after the padding, exactly."""
    topic = line.split(" ", 1)[0]
    start = max(len(topic), 20) + 1
    return Event(ev.LIVE_SUBSCRIPTION, None, s.group, topic, line[start:], "TAG", side="mqadmin")


def _property_row(s: _State, line: str, text: str) -> Event | None:
    """`key : value`: the group, the message model, or the client (IP, then @instance name)."""
    m = _PROPERTY.match(text)
    if m is None:
        return None
    key, value = m.group(1), m.group(2).strip()
    if key == "consumerGroup":
        s.group = value
    elif key == "messageModel":
        return Event(ev.GROUP_INFO, None, s.group, message_model=value, side="mqadmin")
    elif key == "clientIP" or key == "instanceName":
        s.client = f"{s.client}@{value}" if s.client else value
    return None


def _running_sub_row(s: _State, line: str, text: str) -> Event | None:
    m = _RUNNING_SUB.match(text)
    if m is None:
        return None
    return Event(ev.LIVE_SUBSCRIPTION, None, s.group, m.group(1), m.group(2), "TAG", client=s.client, side="mqadmin")


def _progress_row(s: _State, line: str, text: str) -> Event | None:
    """A consumerProgress -g row; the optional #Client IP column is known from the header."""
    parts = text.split()
    if len(parts) < 6 or not parts[2].isdigit():
        return None
    try:
        broker_offset, consumer_offset = int(parts[3]), int(parts[4])
    except ValueError:
        return None
    client = parts[5] if "#Client IP" in s.headers and parts[5] != "N/A" else ""
    return Event(
        ev.QUEUE_PROGRESS,
        None,
        s.group,
        parts[0],
        broker=parts[1],
        queue_id=int(parts[2]),
        broker_offset=broker_offset,
        request_offset=consumer_offset,
        client=client,
        side="mqadmin",
    )


def _group_row(s: _State, line: str, text: str) -> Event | None:
    """A consumerProgress (no -g) row: group, count, version, type, model, tps, diff."""
    parts = text.split()
    if len(parts) < 4 or not parts[1].isdigit():
        return None
    model = next((p for p in parts[2:] if p in _MODELS), "")
    return Event(ev.GROUP_INFO, None, parts[0], message_model=model, code=int(parts[1]), side="mqadmin")


_ROWS: dict[str, Callable[[_State, str, str], Event | None]] = {
    "connections": _connection_row,
    "status": _status_row,
    "subscriptions": _subscription_row,
    "properties": _property_row,
    "running_subs": _running_sub_row,
    "progress": _progress_row,
    "groups": _group_row,
}


def _loose_line(group: str, text: str) -> Event | None:
    """A line no table row took: `MessageModel: ...` or the different-subscription warning."""
    if text.startswith("MessageModel: "):
        return Event(ev.GROUP_INFO, None, group, message_model=text.split(": ", 1)[1], side="mqadmin")
    if text.startswith(_DIFFERENT):
        return Event(ev.SUB_DIFFERENT, None, group, side="mqadmin")
    return None


def parse_mqadmin(lines: Iterable[tuple[int, str]], default_group: str = "") -> Iterator[Event]:
    """Events of one mqadmin output file; `lines` are (line number, text without newline)."""
    state = _State(default_group)
    for no, raw in lines:
        line = raw.rstrip("\r\n")
        text = line.strip()
        prompt = _PROMPT.search(line)
        if prompt is not None:
            state.group, state.section = prompt.group(1), ""
        elif not text or text == "Below is subscription:":
            state.section = ""  # every table ends at a blank line
        elif text.startswith("#"):
            state.enter(text)
        else:
            row = _ROWS.get(state.section)
            out = row(state, line, text) if row is not None else None
            if out is None:
                out = _loose_line(state.group, text)
            if out is not None:
                yield out.at("", no)
