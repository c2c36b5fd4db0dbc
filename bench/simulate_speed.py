"""Benchmark: simulate N declared groups (1,000 messages each) in one process and report the time.

    python bench/simulate_speed.py [--groups 10000] [--runs 1] [--seed 0]

The corpus is generated: groups of 1-4 consumers mixing the common shapes (consistent, different
tags, different topics, tag order only, match-all vs tag, broadcasting, C++ and pop clients).
"""

from __future__ import annotations

import argparse
import random
import time

from subguard.core.model import ClientFamily, Consumer, Location, MessageModel, Subscription, Value
from subguard.rocketmq.expression import parse
from subguard.simulate.impact import simulate_group

SHAPES = (
    ("consistent", ("TagA || TagB", "TagA || TagB", "TagA || TagB")),
    ("different-tags", ("TagA", "TagB")),
    ("tag-order", ("TagA || TagB", "TagB||TagA")),
    ("star-vs-tag", ("*", "TagA")),
    ("single", ("TagA",)),
    ("four", ("TagA", "TagA", "TagA", "TagB")),
)
FAMILIES = (
    ClientFamily.JAVA_PUSH_4X,
    ClientFamily.SPRING_LISTENER,
    ClientFamily.PYTHON_NATIVE_4X,
    ClientFamily.PYTHON_GRPC_5X,
    ClientFamily.JAVA_LITE_PULL,
)


def corpus(groups: int, seed: int) -> list[list[Consumer]]:
    rng = random.Random(seed)
    out: list[list[Consumer]] = []
    for g in range(groups):
        shape, exprs = SHAPES[g % len(SHAPES)]
        family = FAMILIES[0] if rng.random() < 0.7 else rng.choice(FAMILIES)
        model = MessageModel.BROADCASTING if rng.random() < 0.1 else MessageModel.CLUSTERING
        two_topics = shape == "different-tags" and rng.random() < 0.3
        members = []
        for i, expr in enumerate(exprs):
            loc = Location(path=f"svc{g}/c{i}.py", line=i + 1)
            topic = f"T{g}-{i % 2}" if two_topics else f"T{g}"
            sub = Subscription(
                topic=Value.literal(topic), expression=Value.literal(expr), tags=parse(expr).tags, location=loc
            )
            members.append(
                Consumer(
                    consumer_id=f"{g}-{i}",
                    group=Value.literal(f"G{g}"),
                    subscriptions=(sub,),
                    message_model=Value.literal(model.value),
                    client=family,
                    location=loc,
                )
            )
        out.append(members)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--groups", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    groups = corpus(args.groups, args.seed)
    started = time.perf_counter()
    lossy = sum(1 for members in groups if simulate_group(members, args.runs, args.seed).has_loss)
    elapsed = time.perf_counter() - started
    per = elapsed / args.groups * 1000
    print(
        f"simulated {args.groups} groups x {args.runs} run(s), 1000 messages per topic: "
        f"{elapsed:.2f} s ({per:.2f} ms/group), {lossy} groups with predicted loss"
    )


if __name__ == "__main__":
    main()
