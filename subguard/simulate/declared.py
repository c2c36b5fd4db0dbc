"""A group as declared in code, turned into a simulation: default mix, staggered starts."""

from __future__ import annotations

from collections.abc import Sequence

from subguard.core.model import Consumer, ExpressionType, MessageModel
from subguard.rocketmq.expression import ParsedExpression, parse
from subguard.simulate.spec import Batch, GroupSpec, Life, MemberSpec

OTHER_TAG = "(other tags)"  # a tag nobody names: what match-all and SQL92 members also want
STAGGER_MS = 5_000
SETTLE_MS = 25_000
DRAIN_MS = 30_000
INTERVAL_MS = 20


def member_label(consumer: Consumer) -> str:
    return f"{consumer.location.path}:{consumer.location.line}"


def _subscriptions(consumer: Consumer) -> tuple[tuple[str, ParsedExpression], ...]:
    """Known, parseable subscriptions; a later subscribe() of a topic overwrites an earlier one."""
    subs: dict[str, ParsedExpression] = {}
    for s in consumer.subscriptions:
        if s.topic.value is None or s.expression.value is None:
            continue  # unknown values are not guessed
        parsed = parse(s.expression.value, s.expression_type)
        if parsed.error is None:
            subs[s.topic.value] = parsed
    return tuple(subs.items())


def default_mix(members: Sequence[tuple[tuple[str, ParsedExpression], ...]]) -> dict[str, list[str | None]]:
    """Per topic: every subscribed tag, plus an unnamed tag when a member takes everything."""
    mix: dict[str, list[str | None]] = {}
    for subs in members:
        for topic, parsed in subs:
            tags = mix.setdefault(topic, [])
            wide = parsed.match_all or parsed.expression_type is ExpressionType.SQL92
            for tag in (OTHER_TAG,) if wide else parsed.tags:
                if tag not in tags:
                    tags.append(tag)
    for tags in mix.values():
        if not tags:
            tags.append(OTHER_TAG)
    return mix


def declared_group(consumers: Sequence[Consumer], messages: int = 1_000, queues: int = 4) -> GroupSpec | None:
    """Simulate the group as declared: members start `STAGGER_MS` apart, then `messages` messages per
    topic, the subscribed tags interleaved evenly (one producer per tag). None when nothing is simulable."""
    members: list[MemberSpec] = []
    all_subs = []
    labels: dict[str, int] = {}
    for i, c in enumerate(consumers):
        subs = _subscriptions(c)
        if not subs:
            continue
        label = member_label(c)
        labels[label] = labels.get(label, 0) + 1
        name = label if labels[label] == 1 else f"{label}#{labels[label]}"
        all_subs.append(subs)
        members.append(
            MemberSpec(
                name=name,
                family=c.client,
                broadcasting=c.message_model.value == MessageModel.BROADCASTING.value,
                lives=(Life(i * STAGGER_MS, None, subs),),
                ip=f"10.0.{i // 250}.{i % 250 + 1}",
                label=label,
            )
        )
    if not members:
        return None
    mix = default_mix(all_subs)
    start = (len(consumers) - 1) * STAGGER_MS + SETTLE_MS
    batches: list[Batch] = []
    end = start
    for topic, tags in mix.items():
        per_tag, extra = divmod(messages, len(tags))
        for n, tag in enumerate(tags):
            count = per_tag + (1 if n < extra else 0)
            batches.append(Batch(topic, tag, count, start + n * INTERVAL_MS, len(tags) * INTERVAL_MS, f"p-{tag}"))
        end = max(end, start + messages * INTERVAL_MS)
    group = consumers[0].group.value or "(unknown group)"
    return GroupSpec(group, tuple((t, queues) for t in mix), tuple(members), tuple(batches), end + DRAIN_MS)
