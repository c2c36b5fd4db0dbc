"""Generate a synthetic organisation for the audit benchmark.

    python bench/audit_org_gen.py OUT [--scale 1.0] [--seed 7]

At scale 1: 1,000 repositories, ~200,000 files, 1% of the files declaring consumers (Python, Java,
Spring YAML), the rest ordinary source, config and docs. Planted conflicts: groups shared by two
repos with different tag sets (SG102) and groups shared by two services (SG203); they are listed in
OUT/planted.json as {group: [rule, ...]} so `audit_speed.py` can tell whether all were found.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

FILLER = {
    "py": '"""Module {n}."""\n\n\ndef handler_{n}(event):\n    return {{"id": {n}, "ok": True, "items": list(range(3))}}\n',
    "java": "package com.acme.r{r};\n\npublic class Util{n} {{\n    public static int twice(int x) {{ return 2 * x + {n}; }}\n}}\n",
    "yaml": "server:\n  port: {port}\nlogging:\n  level: INFO\nfeature{n}: true\n",
    "md": "# Notes {n}\n\nNothing about messaging here.\n",
    "json": '{{"name": "asset-{n}", "size": {port}}}\n',
}
PY_CONSUMER = (
    "from rocketmq.client import PushConsumer\n\n\ndef start_{n}(handle):\n"
    '    c = PushConsumer("{group}")\n    c.set_name_server_address("ns.bench:9876")\n'
    '    c.subscribe("{topic}", handle, "{tags}")\n    c.start()\n'
)
JAVA_CONSUMER = (
    "package com.acme.r{r};\n\nimport org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;\n\n"
    "public class Consumer{n} {{\n    public static void start() throws Exception {{\n"
    '        DefaultMQPushConsumer c = new DefaultMQPushConsumer("{group}");\n'
    '        c.setNamesrvAddr("ns.bench:9876");\n        c.subscribe("{topic}", "{tags}");\n        c.start();\n    }}\n}}\n'
)


def generate(out: Path, scale: float, seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    repos = max(6, int(1000 * scale))
    files_per_repo = 200
    consumer_share = 0.01
    planted: dict[str, list[str]] = {}
    n = 0
    for r in range(repos):
        root = out / f"repo-{r:04d}"
        (root / "src").mkdir(parents=True, exist_ok=True)
        (root / "pyproject.toml").write_text(f'[project]\nname = "repo-{r:04d}"\nversion = "1.0.{r}"\n')
        for _ in range(files_per_repo - 1):
            n += 1
            if rng.random() < consumer_share:
                kind = rng.choice(("py", "java"))
                text = (PY_CONSUMER if kind == "py" else JAVA_CONSUMER).format(
                    n=n, r=r, group=f"GID_R{r}_{n}", topic=f"TOPIC_{rng.randrange(50)}", tags="a||b"
                )
                path = root / "src" / f"consumer_{n}.{kind}"
            else:
                kind = rng.choice(tuple(FILLER))
                path = root / "src" / f"mod_{n}.{'yml' if kind == 'yaml' else kind}"
                text = FILLER[kind].format(n=n, r=r, port=8000 + n % 1000)
            path.write_text(text)
    conflicts = max(2, int(20 * scale))
    for k in range(conflicts):
        a, b = rng.sample(range(repos), 2)
        group = f"GID_PLANTED_{k}"
        for repo, tags, kind in ((a, "created||paid", "py"), (b, "created||refunded", "java")):
            template = PY_CONSUMER if kind == "py" else JAVA_CONSUMER
            text = template.format(n=f"P{k}", r=repo, group=group, topic="TOPIC_PLANTED", tags=tags)
            (out / f"repo-{repo:04d}" / "src" / f"planted_{k}.{kind}").write_text(text)
        planted[group] = ["SG102", "SG203"]
    (out / "planted.json").write_text(json.dumps(planted, indent=2, sort_keys=True) + "\n")
    return planted


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("--scale", type=float, default=1.0, help="1.0 = 1,000 repos / ~200,000 files")
    p.add_argument("--seed", type=int, default=7)
    a = p.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    planted = generate(a.out, a.scale, a.seed)
    files = sum(1 for _ in a.out.rglob("*") if _.is_file())
    print(f"generated {a.out}: {files} files, {len(planted)} planted conflicts")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
