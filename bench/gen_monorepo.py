"""Generate a synthetic monorepo for benchmarks: many services, mixed languages, a few consumers.

    python bench/gen_monorepo.py OUT [--files 20000] [--consumer-share 0.02] [--seed 1]

About `consumer-share` of the files declare RocketMQ consumers (Python, Java, Spring YAML); the rest
is ordinary code, config and docs. One group per 50 consumer files is planted inconsistent (tag order
or tag set), so a check over the tree has something to find.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

PY_PLAIN = '''"""Module {i} of service {svc}."""
import json
import logging

LOG = logging.getLogger(__name__)
LIMIT_{i} = {i}


def handle_{i}(payload: dict) -> dict:
    """Normalise one payload."""
    out = {{k.lower(): v for k, v in payload.items() if v is not None}}
    if len(out) > LIMIT_{i}:
        LOG.warning("too many keys: %d", len(out))
    return json.loads(json.dumps(out))


class Worker{i}:
    def __init__(self, name: str) -> None:
        self.name = name
        self.count = 0

    def run(self, items: list[int]) -> int:
        for item in items:
            self.count += item % 7
        return self.count
'''

PY_CONSUMER = '''"""Consumer {i} of service {svc}."""
from rocketmq.client import PushConsumer, ConsumeStatus

GROUP = "{group}"
TOPIC = "{topic}"


def on_message(msg):
    return ConsumeStatus.CONSUME_SUCCESS


def start() -> PushConsumer:
    consumer = PushConsumer(GROUP)
    consumer.set_name_server_address("ns.internal:9876")
    consumer.subscribe(TOPIC, on_message, expression="{expr}")
    consumer.start()
    return consumer
'''

JAVA_PLAIN = """package com.example.{pkg};

import java.util.List;
import java.util.Map;

public class Service{i} {{
    private static final int LIMIT = {i};

    public int total(List<Integer> items) {{
        int sum = 0;
        for (int v : items) {{
            sum += v % LIMIT;
        }}
        return sum;
    }}

    public String describe(Map<String, String> attrs) {{
        return attrs.getOrDefault("name", "unknown-" + LIMIT);
    }}
}}
"""

JAVA_CONSUMER = """package com.example.{pkg};

import org.apache.rocketmq.spring.annotation.RocketMQMessageListener;
import org.apache.rocketmq.spring.core.RocketMQListener;
import org.springframework.stereotype.Component;

@Component
@RocketMQMessageListener(consumerGroup = "{group}", topic = "{topic}", selectorExpression = "{expr}")
public class Listener{i} implements RocketMQListener<String> {{
    @Override
    public void onMessage(String message) {{
        System.out.println(message);
    }}
}}
"""

YAML_PLAIN = """server:
  port: {port}
logging:
  level:
    root: INFO
feature:
  flag-{i}: true
"""

MD = "# Notes {i}\n\nNothing about messaging here, just prose for service {svc}.\n"


def generate(out: Path, files: int, share: float, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    n_consumers = max(2, int(files * share))
    services = max(1, files // 200)
    made = {"files": 0, "consumers": 0, "planted": 0}
    consumer_slots = set(rng.sample(range(files), n_consumers))
    k = 0
    for i in range(files):
        svc = f"svc{i % services:03d}"
        base = out / svc
        if i in consumer_slots:
            group_no = k // 2
            group = f"group-{group_no}"
            topic = f"Topic{group_no % 97}"
            expr = "TagA||TagB"
            if group_no % 25 == 0 and k % 2 == 1:
                expr = "TagB||TagA" if group_no % 50 == 0 else "TagC"
                made["planted"] += 1
            kind = k % 2
            if kind == 0:
                path = base / "consumers" / f"consumer_{i}.py"
                text = PY_CONSUMER.format(i=i, svc=svc, group=group, topic=topic, expr=expr)
            else:
                path = base / "src/main/java/com/example" / svc / f"Listener{i}.java"
                text = JAVA_CONSUMER.format(i=i, pkg=svc, group=group, topic=topic, expr=expr)
            k += 1
            made["consumers"] += 1
        else:
            r = i % 10
            if r < 5:
                path = base / "app" / f"mod_{i}.py"
                text = PY_PLAIN.format(i=i, svc=svc)
            elif r < 8:
                path = base / "src/main/java/com/example" / svc / f"Service{i}.java"
                text = JAVA_PLAIN.format(i=i, pkg=svc)
            elif r < 9:
                path = base / "config" / f"settings-{i}.yaml"
                text = YAML_PLAIN.format(i=i, port=8000 + i % 1000)
            else:
                path = base / "docs" / f"note_{i}.md"
                text = MD.format(i=i, svc=svc)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        made["files"] += 1
    return made


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--consumer-share", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    made = generate(args.out, args.files, args.consumer_share, args.seed)
    print(
        f"wrote {made['files']} files ({made['consumers']} consumers, {made['planted']} planted conflicts) to {args.out}"
    )


if __name__ == "__main__":
    main()
