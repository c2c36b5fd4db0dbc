"""The inventory: flat subscription rows (a stable interface other tools read) and the group map."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from subguard.core.model import Consumer, Subscription

# Keep these names and their order stable: other tools (and the audit) read them.
ROW_KEYS = (
    "group",
    "topic",
    "expression",
    "expression_type",
    "tags",
    "message_model",
    "consume_mode",
    "client",
    "service",
    "environment",
    "path",
    "line",
    "column",
    "consumer_id",
    "resolution",
    "repo",
    "name_server",
    "namespace",
    "instance_name",
    "unresolved",
    "registers",
    "template",
    "startup_failure",
)


def _resolution(consumer: Consumer, sub: Subscription) -> dict[str, str]:
    return {
        "group": consumer.group.resolution.value,
        "topic": sub.topic.resolution.value,
        "expression": sub.expression.resolution.value,
    }


def subscription_rows(consumers: Iterable[Consumer]) -> list[dict[str, Any]]:
    """One flat dict per subscription (consumers without one give a row with topic None; a topic
    subscribed as one of several alternatives, one per alternative, its `unresolved` expression saying so)."""
    rows: list[dict[str, Any]] = []
    for c in consumers:
        subs = c.subscriptions or ()
        common = {
            "group": c.group.value,
            "message_model": c.message_model.value,
            "consume_mode": c.consume_mode.value,
            "client": c.client.value,
            "service": c.service,
            "environment": c.environment,
            "consumer_id": c.consumer_id,
            "repo": c.repo,
            "name_server": c.name_server.value if c.name_server else None,
            "namespace": c.namespace.value if c.namespace else None,
            "instance_name": c.instance_name.value if c.instance_name else None,
            "registers": c.registers,
            "template": list(c.template),
            "startup_failure": c.startup_failure.reason if c.startup_failure else None,
        }
        if not subs:
            rows.append(
                {
                    **dict.fromkeys(ROW_KEYS),
                    **common,
                    "tags": [],
                    "path": c.location.path,
                    "line": c.location.line,
                    "column": c.location.column,
                    "resolution": {"group": c.group.resolution.value},
                    "unresolved": _unresolved(c, None),
                }
            )
            continue
        for sub in subs:
            # a topic subscribed as one of several: a row for each, which says so
            for s in sub.alternatives or (sub,):
                unresolved = _unresolved(c, s)
                if s is not sub:
                    own = unresolved.get("expression")
                    unresolved["expression"] = sub.expression.detail + (f"; this one: {own}" if own else "")
                rows.append(
                    {
                        **common,
                        "topic": s.topic.value,
                        "expression": s.expression.value,
                        "expression_type": s.expression_type.value,
                        "tags": list(s.tags),
                        "path": s.location.path,
                        "line": s.location.line,
                        "column": s.location.column,
                        "resolution": _resolution(c, s),
                        "unresolved": unresolved,
                    }
                )
    return [{k: r.get(k) for k in ROW_KEYS} for r in rows]


def _unresolved(consumer: Consumer, sub: Subscription | None) -> dict[str, str]:
    """Reasons for every unknown value of the row, by field."""
    out: dict[str, str] = {}
    if not consumer.group.known:
        out["group"] = consumer.group.detail
    if sub is not None:
        if not sub.topic.known:
            out["topic"] = sub.topic.detail
        if not sub.expression.known:
            out["expression"] = sub.expression.detail
    if not consumer.message_model.known:
        out["message_model"] = consumer.message_model.detail
    return out


def sort_consumers(consumers: Sequence[Consumer]) -> list[Consumer]:
    return sorted(consumers, key=lambda c: (c.repo, c.location.path, c.location.line, c.location.column, c.consumer_id))


# --- the group map -------------------------------------------------------------------------------
# RocketMQ keeps one ConsumerGroupInfo per group on each broker: one consumer-id list and one
# subscription table for every topic of the group (rocketmq-semantics.md §2, §4.1). The group map
# therefore joins consumers by group name across every scanned repo and language. A namespace, when
# one is known, is part of the name the broker sees (`namespace%group`).


@dataclass(frozen=True)
class Group:
    """Every declared consumer of one group, in a stable order (repo, path, line, column, id); for a
    group map that keeps samples apart, those of one `sample` (example code) only."""

    name: str
    members: tuple[Consumer, ...]
    sample: str = ""

    def subscriptions(self, topic: str) -> list[tuple[Consumer, Subscription]]:
        """(member, subscription) for each member subscription of `topic`, in member order."""
        return list(self._by_topic.get(topic, ()))

    @cached_property
    def _by_topic(self) -> dict[str | None, list[tuple[Consumer, Subscription]]]:
        """One pass over the members: a group with many topics was quadratic with a scan per topic."""
        out: dict[str | None, list[tuple[Consumer, Subscription]]] = {}
        for c in self.members:
            for s in c.subscriptions:
                out.setdefault(s.topic.value, []).append((c, s))
        return out

    @property
    def topics(self) -> tuple[str, ...]:
        """Every known topic any member subscribes, sorted."""
        return tuple(
            sorted({s.topic.value for c in self.members for s in c.subscriptions if s.topic.value is not None})
        )


@dataclass(frozen=True)
class GroupMap:
    """Groups by key (`group_key`: the name, plus the sample for a group of sample code kept apart), plus consumers whose group is unknown (never grouped; SG902 names them) and
    consumers that register no subscription with the broker, are templates or fail at startup (listed,
    never a member)."""

    groups: dict[str, Group]
    ungrouped: tuple[Consumer, ...]
    passive: tuple[Consumer, ...] = ()


def group_name(consumer: Consumer) -> str | None:
    """The group name the broker sees, or None when the group is not statically known."""
    group = consumer.group.value
    if group is None:
        return None
    ns = consumer.namespace.value if consumer.namespace is not None else None
    if not ns or group.startswith(f"{ns}%"):  # a group written with its namespace is never prefixed twice
        return group
    return f"{ns}%{group}"


def group_key(name: str, sample: str = "") -> str:
    """A group map's key: the name the broker sees, plus the sample its members are confined to (a
    sample program runs on its own: `rules.code_scope.sample_of`). Sorts right after the plain name."""
    return f"{name}\x1f{sample}" if sample else name


def split_key(key: str) -> tuple[str, str]:
    """(name, sample) of a `group_key`."""
    name, _, sample = key.partition("\x1f")
    return name, sample


def group_map(consumers: Iterable[Consumer], sample: Callable[[Consumer], str] | None = None) -> GroupMap:
    """Join consumers (from any number of repos) into groups; with `sample`, consumers of different
    samples (a non-empty value) are kept apart from each other and from the rest of their group."""
    by_key: dict[str, list[Consumer]] = {}
    ungrouped: list[Consumer] = []
    passive: list[Consumer] = []
    for consumer in sort_consumers(list(consumers)):
        name = group_name(consumer)
        if not consumer.registers or consumer.template or consumer.startup_failure:
            passive.append(consumer)
        elif name is None:
            ungrouped.append(consumer)
        else:
            by_key.setdefault(group_key(name, sample(consumer) if sample else ""), []).append(consumer)
    groups: dict[str, Group] = {}
    for key, members in sorted(by_key.items()):
        name, where = split_key(key)
        groups[key] = Group(name, tuple(members), where)
    return GroupMap(groups, tuple(ungrouped), tuple(passive))
