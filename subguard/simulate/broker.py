"""The broker's view of one group (`ConsumerGroupInfo`, rocketmq-semantics.md §2.1, §3.1)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from subguard.simulate.spec import BrokerFilter

OK = 0
SUBSCRIPTION_NOT_EXIST = 24
SUBSCRIPTION_NOT_LATEST = 25


@dataclass(frozen=True)
class Entry:
    """One stored subscription G[T]: its subVersion, the member whose heartbeat carried it, its filter."""

    sub_version: int
    source: int
    filter: BrokerFilter


def merge_subscriptions(table: Mapping[str, Entry], heartbeat: Mapping[str, Entry]) -> tuple[dict[str, Entry], bool]:
    """`updateSubscription`: insert new topics, replace only on a strictly greater subVersion, drop
    topics the heartbeat lacks. Returns the new table and the `updated` flag (insert or removal only)."""
    out: dict[str, Entry] = {}
    updated = False
    for topic, incoming in heartbeat.items():
        old = table.get(topic)
        if old is None:
            out[topic] = incoming
            updated = True
        elif incoming.sub_version > old.sub_version:
            out[topic] = incoming
        else:
            out[topic] = old
    if any(topic not in heartbeat for topic in table):
        updated = True
    return out, updated


class GroupInfo:
    """Channels (one per running member incarnation) and the group's subscription table."""

    def __init__(self) -> None:
        self.channels: dict[int, str] = {}  # member index -> client id
        self.table: dict[str, Entry] = {}

    def heartbeat(self, member: int, client_id: str, subscriptions: Mapping[str, Entry]) -> tuple[bool, bool]:
        """Register a heartbeat; returns (table changed, notify the group)."""
        new_channel = self.channels.get(member) != client_id
        self.channels[member] = client_id
        table, updated = merge_subscriptions(self.table, subscriptions)
        changed = table != self.table
        self.table = table
        return changed, new_channel or updated

    def would_change(self, member: int, client_id: str, subscriptions: Mapping[str, Entry]) -> bool:
        return self.channels.get(member) != client_id or merge_subscriptions(self.table, subscriptions)[0] != self.table

    def unregister(self, member: int) -> bool:
        """A clean shutdown: drop the channel; an empty group is forgotten. True: notify the others."""
        if self.channels.pop(member, None) is None:
            return False
        if not self.channels:
            self.table = {}
            return False
        return True

    def client_ids(self) -> list[str]:
        """`getConsumerListByGroup`, sorted as the client sorts it (a duplicated id stays twice)."""
        return sorted(self.channels.values())

    def check(self, topic: str, sub_version: int) -> tuple[int, Entry | None]:
        """The pull checks for a request without the SUBSCRIPTION bit: code 24, 25 or OK with G[T]."""
        entry = self.table.get(topic)
        if entry is None:
            return SUBSCRIPTION_NOT_EXIST, None
        if entry.sub_version < sub_version:
            return SUBSCRIPTION_NOT_LATEST, entry
        return OK, entry
