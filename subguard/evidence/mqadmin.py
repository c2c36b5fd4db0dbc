"""mqadmin text output -> events (`consumerConnection`, `consumerStatus` with and without `-i`,
`consumerProgress` with and without `-g`), following the tools' printf layouts.

These outputs are tables, so parsing is per file (a small state machine over lines), not per line.
The group comes from the output itself (`consumerGroup` property, consumerProgress rows), from an
`mqadmin ... -g GROUP` prompt line in the file, or from `default_group`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from subguard.evidence import events as ev
from subguard.evidence.events import Event

_PROMPT = re.compile(r"\b(?:consumerConnection|consumerStatus|consumerProgress)\b.*?\s-g\s*(\S+)")
_PROPERTY = re.compile(r"(\S+)\s*: (.*)$")
_RUNNING_SUB = re.compile(r"\d{3} Topic: (\S+)\s+ClassFilter: \w+\s+SubExpression: (.*)$")
_STATUS_ROW = re.compile(r"(\d+)\s+(\S+)\s+(\S+)\s+(\S+)$")
_MODELS = ("CLUSTERING", "BROADCASTING")
_DIFFERENT = "WARN: Different subscription in the same group of consumer"


def _subscription_row(line: str) -> tuple[str, str]:
    """`%-20s %s` of topic and raw subString: the expression starts after the padding, exactly."""
    topic = line.split(" ", 1)[0]
    start = max(len(topic), 20) + 1
    return topic, line[start:]


def _progress_row(line: str, headers: list[str], group: str) -> Event | None:
    """A consumerProgress -g row; the optional #Client IP column is known from the header."""
    parts = line.split()
    if len(parts) < 6 or not parts[2].isdigit():
        return None
    try:
        broker_offset, consumer_offset = int(parts[3]), int(parts[4])
    except ValueError:
        return None
    client = parts[5] if "#Client IP" in headers and parts[5] != "N/A" else ""
    return Event(ev.QUEUE_PROGRESS, None, group, parts[0], broker=parts[1], queue_id=int(parts[2]),
                 broker_offset=broker_offset, request_offset=consumer_offset, client=client, side="mqadmin")


def _group_row(line: str) -> Event | None:
    """A consumerProgress (no -g) row: group, count, version, type, model, tps, diff."""
    parts = line.split()
    if len(parts) < 4 or not parts[1].isdigit():
        return None
    model = next((p for p in parts[2:] if p in _MODELS), "")
    return Event(ev.GROUP_INFO, None, parts[0], message_model=model, code=int(parts[1]), side="mqadmin")


def parse_mqadmin(lines: Iterable[tuple[int, str]], default_group: str = "") -> Iterator[Event]:
    """Events of one mqadmin output file; `lines` are (line number, text without newline)."""
    group = default_group
    section = ""
    headers: list[str] = []
    client = ""
    for no, raw in lines:
        line = raw.rstrip("\r\n")
        text = line.strip()
        prompt = _PROMPT.search(line)
        if prompt is not None:
            group, section = prompt.group(1), ""
            continue
        if not text or text == "Below is subscription:":
            section = ""  # every table ends at a blank line
            continue
        if text.startswith("#"):
            if text.startswith("#ClientId") and "#ClientAddr" in text:
                section = "connections"
            elif text.startswith("#Index") and "#ClientId" in text:
                section = "status"
            elif text == "#Consumer Properties#":
                section, client = "properties", ""
            elif text == "#Consumer Subscription#":
                section = "running_subs"
            elif text.startswith("#Topic") and "#SubExpression" in text:
                section = "subscriptions"
            elif text.startswith("#Topic") and "#Broker Offset" in text:
                section, headers = "progress", re.split(r"\s{2,}|\s(?=#)", text)
            elif text.startswith("#Group") and "#Diff Total" in text:
                section = "groups"
            elif text.startswith("#"):
                section = "other"
            continue
        out: Event | None = None
        if section == "connections":
            parts = text.split()
            if len(parts) >= 3:
                out = Event(ev.LIVE_CLIENT, None, group, client=parts[0], side="mqadmin")
        elif section == "status":
            m = _STATUS_ROW.match(text)
            if m is not None:
                out = Event(ev.LIVE_CLIENT, None, group, client=m.group(2), side="mqadmin")
        elif section == "subscriptions":
            topic, expression = _subscription_row(line)
            out = Event(ev.LIVE_SUBSCRIPTION, None, group, topic, expression, "TAG", side="mqadmin")
        elif section == "properties":
            m = _PROPERTY.match(text)
            if m is not None:
                key, value = m.group(1), m.group(2).strip()
                if key == "consumerGroup":
                    group = value
                elif key == "messageModel":
                    out = Event(ev.GROUP_INFO, None, group, message_model=value, side="mqadmin")
                elif key == "clientIP" or key == "instanceName":
                    client = f"{client}@{value}" if client else value
        elif section == "running_subs":
            m = _RUNNING_SUB.match(text)
            if m is not None:
                out = Event(ev.LIVE_SUBSCRIPTION, None, group, m.group(1), m.group(2), "TAG", client=client, side="mqadmin")
        elif section == "progress":
            out = _progress_row(text, headers, group)
        elif section == "groups":
            out = _group_row(text)
        if out is None:
            if text.startswith("MessageModel: "):
                out = Event(ev.GROUP_INFO, None, group, message_model=text.split(": ", 1)[1], side="mqadmin")
            elif text.startswith(_DIFFERENT):
                out = Event(ev.SUB_DIFFERENT, None, group, side="mqadmin")
        if out is not None:
            yield out.at("", no)
