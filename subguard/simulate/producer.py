"""The producer: round-robin over a topic's queues from a random start queue (§ default producer).

`TopicPublishInfo.selectOneMessageQueue` keeps one counter per producer thread, seeded with a random
value, and takes it modulo the queue count; each `producer` name in the mix is one such counter.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from subguard.simulate.spec import Batch


@dataclass(frozen=True)
class TopicPlan:
    """The messages of one topic, per queue, in offset order: send times and tag indices into `tags`."""

    tags: tuple[str | None, ...]
    times: tuple[list[int], ...]
    seqs: tuple[list[int], ...]

    def sent_by_tag(self) -> list[int]:
        out = [0] * len(self.tags)
        for seq in self.seqs:
            for k in range(len(self.tags)):
                out[k] += seq.count(k)
        return out


def plan_topic(topic: str, queue_count: int, batches: Sequence[Batch], rng: random.Random) -> TopicPlan:
    """Assign every message of `topic` to a queue; one random start per producer (drawn in batch order)."""
    tags: list[str | None] = []
    for b in batches:
        if b.topic == topic and b.tag not in tags:
            tags.append(b.tag)
    counters: dict[str, int] = {}
    times: list[list[int]] = [[] for _ in range(queue_count)]
    seqs: list[list[int]] = [[] for _ in range(queue_count)]
    last = [-1] * queue_count
    ordered = True
    for b in (x for x in batches if x.topic == topic):
        if b.producer not in counters:
            counters[b.producer] = rng.randrange(queue_count)
        first = counters[b.producer]
        counters[b.producer] = first + b.count
        k_tag = tags.index(b.tag)
        for q in range(queue_count):
            k0 = (q - first) % queue_count
            if k0 >= b.count:
                continue
            ks = range(k0, b.count, queue_count)
            if b.interval_ms == int(b.interval_ms):
                step = int(b.interval_ms)
                ts = (
                    list(range(b.at + k0 * step, b.at + b.count * step, queue_count * step))
                    if step
                    else [b.at] * len(ks)
                )
            else:
                ts = [b.at + int(k * b.interval_ms) for k in ks]
            if ts[0] < last[q]:
                ordered = False
            last[q] = ts[-1]
            times[q].extend(ts)
            seqs[q].extend([k_tag] * len(ts))
    if not ordered:  # batches overlap in time: merge each queue by send time (stable)
        for q in range(queue_count):
            order = sorted(range(len(times[q])), key=times[q].__getitem__)
            times[q] = list(map(times[q].__getitem__, order))
            seqs[q] = list(map(seqs[q].__getitem__, order))
    return TopicPlan(tuple(tags), tuple(times), tuple(seqs))
