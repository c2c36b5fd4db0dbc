"""Log messages -> events: one pure function per message family, in the exact RocketMQ wording.

Broker: `ConsumerGroupInfo.updateChannel/updateSubscription`, `ConsumerManager.scanNotActiveChannel`
and `unregisterConsumer`, `PullMessageProcessor` (codes 24/25, offset too small, PULL_OFFSET_MOVED),
`ConsumerFilterManager.register`. Client: `DefaultMQPushConsumerImpl` (start, pull exception / code 25
in the <= 5.1 and >= 5.2 wordings), `RebalancePushImpl.messageQueueChanged`, `RebalanceImpl`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from subguard.evidence import events as ev
from subguard.evidence.events import Event
from subguard.evidence.subdata import parse_all

# one C-level scan decides whether a record can matter at all (most broker lines cannot)
INTERESTING = re.compile(
    r"subscription changed|subscription is not latest|subscription not|group info not exist|offset too small|"
    r"PULL_OFFSET_MOVED|store no queue data|consumer connected|expired channel|remove consumer group|Ignore consumer|"
    r"Rebalance changed|rebalanced result|CODE: 25|code:25|the consumer \["
)

_ADD = re.compile(r"subscription changed, add new topic, group: (\S+) ")
_CHANGED = re.compile(r"subscription changed, group: (\S+) OLD: ")
_REMOVE = re.compile(r"subscription changed, group: (\S+) remove topic (\S+) ")
_NOT_LATEST_BROKER = re.compile(r"The broker's subscription is not latest, group: (\S+) ?(.*)")
_NOT_EXIST = re.compile(r"the consumer's subscription not exist, group: ([^,\s]+), topic: ?(\S+)")
_GROUP_NOT_EXIST = re.compile(r"the consumer's group info not exist, group: (\S+)")
_TOO_SMALL = re.compile(
    r"the request offset too small\. group=([^,]*), topic=([^,]*), requestOffset=(-?\d+), "
    r"brokerMinOffset=(-?\d+), clientIp=(\S*)"
)
_MOVED = re.compile(
    r"PULL_OFFSET_MOVED:correction offset\. topic=([^,]*), groupId=([^,]*), requestOffset=(-?\d+), newOffset=(-?\d+)"
)
# NO_MATCHED_LOGIC_QUEUE / NO_MESSAGE_IN_QUEUE: the broker has no data for the queue and moves the
# pull offset (to the queue's next begin offset) as PULL_OFFSET_MOVED does
_NO_QUEUE_DATA = re.compile(
    r"the broker store no queue data, fix the request offset (-?\d+) to (-?\d+), Topic: (\S+) QueueId: (\d+) "
    r"Consumer Group: (\S+)"
)
_CONNECTED = re.compile(r"new consumer connected, group: (\S+) (\w+) (\w+) channel: .*?clientId=([^,\]]*)")
_EXPIRED = re.compile(
    r"SCAN: remove expired channel from ConsumerManager consumerTable(?:\. channel=([^,]*),|, all clear,) consumerGroup=(\S+)"
)
# "ungister" is the older brokers' spelling (ConsumerManager.doChannelCloseEvent)
_GROUP_REMOVED = re.compile(r"(?:unregister|ungister) consumer ok, no any connection, and remove consumer group, (\S+)")
_FILTER = re.compile(r"Ignore consumer\((.+?) ?: ?(.+?)\) filter.*?old=(\w+):(.*), ignored=(\w+):(.*)$")
_NOT_LATEST_CLIENT = re.compile(
    r"the subscription is not latest, group=([^,]*), messageQueue=MessageQueue \[topic=([^,]*), brokerName=([^,]*), queueId=(\d+)\]"
)
_CODE25_SOFT = re.compile(r"consumer:(\S+) execute the pull request, code:25\b")
_CODE25_TRACE = re.compile(r"CODE: 25\s+DESC: the consumer's subscription not latest")
_PULL_EXC_GROUP = re.compile(
    r"execute the pull request exception, group=([^,]*), messageQueue=MessageQueue \[topic=([^,]*), brokerName=([^,]*), queueId=(\d+)\]"
)
_START = re.compile(r"the consumer \[(.+?)\] start (?:beginning\. messageModel=(\w+)|OK)")
_REB_CHANGED = re.compile(r"(\S+) Rebalance changed, also update version: (-?\d+), (-?\d+)")
_REB_RESULT = re.compile(
    r"rebalanced result changed\. allocateMessageQueueStrategyName=[^,]*, group=([^,]*), topic=([^,]*), clientId=([^,]*)"
)


def _sub_changed(msg: str, ts: float | None) -> Event | None:
    m = _CHANGED.match(msg)
    if m is None:
        return None
    subs = list(parse_all(msg))
    if len(subs) < 2:
        return None
    old, new = subs[0], subs[1]
    return Event(
        ev.SUB_CHANGED,
        ts,
        m.group(1),
        new.topic,
        new.expression,
        new.expression_type,
        new.tags,
        new.sub_version,
        old.expression,
        old.expression_type,
        old.tags,
        old.sub_version,
        side="broker",
    )


def _sub_added(msg: str, ts: float | None) -> Event | None:
    m = _ADD.match(msg)
    sub = next(parse_all(msg), None) if m else None
    if m is None or sub is None:
        return None
    return Event(
        ev.SUB_ADDED,
        ts,
        m.group(1),
        sub.topic,
        sub.expression,
        sub.expression_type,
        sub.tags,
        sub.sub_version,
        side="broker",
    )


def _topic_removed(msg: str, ts: float | None) -> Event | None:
    m = _REMOVE.match(msg)
    if m is None:
        return None
    sub = next(parse_all(msg), None)
    if sub is None:
        return Event(ev.TOPIC_REMOVED, ts, m.group(1), m.group(2), side="broker")
    return Event(
        ev.TOPIC_REMOVED,
        ts,
        m.group(1),
        m.group(2),
        sub.expression,
        sub.expression_type,
        sub.tags,
        sub.sub_version,
        side="broker",
    )


def _broker_pull(msg: str, ts: float | None) -> Event | None:
    m = _NOT_LATEST_BROKER.match(msg)
    if m is not None:
        return Event(ev.NOT_LATEST, ts, m.group(1), expression=m.group(2) or None, code=25, side="broker")
    m = _NOT_EXIST.match(msg)
    if m is not None:
        return Event(ev.SUB_NOT_EXIST, ts, m.group(1), m.group(2), code=24, side="broker")
    m = _GROUP_NOT_EXIST.match(msg)
    if m is not None:
        return Event(ev.SUB_NOT_EXIST, ts, m.group(1), code=24, side="broker")
    return None


def _offsets(msg: str, ts: float | None) -> Event | None:
    m = _TOO_SMALL.match(msg)
    if m is not None:
        return Event(
            ev.OFFSET_TOO_SMALL,
            ts,
            m.group(1),
            m.group(2),
            request_offset=int(m.group(3)),
            broker_offset=int(m.group(4)),
            client=m.group(5).lstrip("/"),
            code=21,
            side="broker",
        )
    m = _MOVED.match(msg)
    if m is not None:
        return Event(
            ev.OFFSET_MOVED,
            ts,
            m.group(2),
            m.group(1),
            request_offset=int(m.group(3)),
            broker_offset=int(m.group(4)),
            code=21,
            side="broker",
        )
    m = _NO_QUEUE_DATA.match(msg)
    if m is not None:
        return Event(
            ev.OFFSET_MOVED,
            ts,
            m.group(5),
            m.group(3),
            request_offset=int(m.group(1)),
            broker_offset=int(m.group(2)),
            queue_id=int(m.group(4)),
            code=21,
            side="broker",
        )
    return None


def _membership(msg: str, ts: float | None) -> Event | None:
    m = _CONNECTED.match(msg)
    if m is not None:
        return Event(ev.CONNECTED, ts, m.group(1), client=m.group(4), message_model=m.group(3), side="broker")
    m = _EXPIRED.match(msg)
    if m is not None:
        return Event(ev.CHANNEL_EXPIRED, ts, m.group(2), client=(m.group(1) or "").lstrip("/"), side="broker")
    m = _GROUP_REMOVED.match(msg)
    if m is not None:
        return Event(ev.GROUP_REMOVED, ts, m.group(1), side="broker")
    return None


def _filter(msg: str, ts: float | None) -> Event | None:
    m = _FILTER.match(msg)
    if m is None:
        return None
    return Event(
        ev.FILTER_IGNORED,
        ts,
        m.group(1),
        m.group(2),
        m.group(6),
        m.group(5),
        old_expression=m.group(4),
        old_expression_type=m.group(3),
        side="broker",
    )


def _client_not_latest(m: re.Match[str], ts: float | None) -> Event:
    """Code 25 seen by a client, from a match whose groups are group, topic, broker and queue id."""
    return Event(
        ev.NOT_LATEST, ts, m.group(1), m.group(2), broker=m.group(3), queue_id=int(m.group(4)), code=25, side="client"
    )


def _client(msg: str, ts: float | None) -> Event | None:
    m = _NOT_LATEST_CLIENT.search(msg)
    if m is not None:
        return _client_not_latest(m, ts)
    m = _CODE25_SOFT.search(msg)
    if m is not None:
        return Event(ev.NOT_LATEST, ts, m.group(1), code=25, side="client")
    if _CODE25_TRACE.search(msg) is not None:
        g = _PULL_EXC_GROUP.search(msg)
        if g is not None:
            return _client_not_latest(g, ts)
        return Event(ev.NOT_LATEST, ts, code=25, side="client")
    m = _START.match(msg)
    if m is not None:
        return Event(ev.CLIENT_START, ts, m.group(1), message_model=m.group(2) or "", side="client")
    m = _REB_CHANGED.match(msg)
    if m is not None:
        return Event(
            ev.REBALANCE_CHANGED,
            ts,
            topic=m.group(1),
            old_sub_version=int(m.group(2)),
            sub_version=int(m.group(3)),
            side="client",
        )
    m = _REB_RESULT.search(msg)
    if m is not None:
        return Event(ev.REBALANCE_RESULT, ts, m.group(1), m.group(2), client=m.group(3), side="client")
    return None


# message prefix -> parser; anything else goes to the client parsers (their wording is not anchored)
_BY_PREFIX: tuple[tuple[str, Callable[[str, float | None], Event | None]], ...] = (
    ("subscription changed, add new topic", _sub_added),
    (
        "subscription changed, group: ",
        lambda m, t: _topic_removed(m, t) if " remove topic " in m else _sub_changed(m, t),
    ),
    ("The broker's subscription", _broker_pull),
    ("the consumer's", _broker_pull),
    ("the request offset too small", _offsets),
    ("PULL_OFFSET_MOVED:correction", _offsets),
    ("the broker store no queue data", _offsets),
    ("new consumer connected", _membership),
    ("SCAN: remove expired channel from ConsumerManager", _membership),
    ("unregister consumer ok", _membership),
    ("ungister consumer ok", _membership),
    ("Ignore consumer(", _filter),
)


def parse_message(msg: str, ts: float | None) -> Event | None:
    """The event a log message (a whole record, continuation lines joined) states, if any."""
    if INTERESTING.search(msg) is None:
        return None
    for prefix, parser in _BY_PREFIX:
        if msg.startswith(prefix):
            return parser(msg, ts)
    return _client(msg, ts)
