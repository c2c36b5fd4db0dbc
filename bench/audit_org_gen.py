"""Generate a synthetic organisation for the audit benchmark.

    python bench/audit_org_gen.py OUT [--scale 1.0] [--seed 7] [--git]

At scale 1: 1,000 repositories, ~200,000 files, 1% of the files declaring consumers (Python, Java,
Spring YAML), the rest ordinary source, config and docs. Planted conflicts: groups shared by two
repos with different tag sets (SG102) and groups shared by two services (SG203); they are listed in
OUT/planted.json as {group: [rule, ...]} so `audit_speed.py` can tell whether all were found.

`--git` makes every repository a git clone as a nightly fetch job leaves it: one commit of all its
files, objects packed, no sample hooks, and OUT/inventory.csv naming each repository's commit (the
audit's inventory `commit` column: a clone at the commit named is stamped without a walk).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}

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


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env={**os.environ, **GIT_ENV}
    )
    return proc.stdout.strip()


def commit(repo: Path, message: str) -> str:
    """Everything in `repo` committed and packed (a fetched clone holds packs, not loose objects);
    returns the new HEAD."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    git(repo, "repack", "-adq")
    git(repo, "prune-packed")
    return git(repo, "rev-parse", "HEAD")


def write_inventory(out: Path, commits: dict[str, str]) -> None:
    """OUT/inventory.csv: each repository's commit (the audit's inventory `commit` column)."""
    rows = "".join(f"{name},{sha}\n" for name, sha in sorted(commits.items()))
    (out / "inventory.csv").write_text("repo,commit\n" + rows)


def gitify(out: Path, jobs: int = 2) -> dict[str, str]:
    """Every repository of `out` made a git work tree with one commit; OUT/inventory.csv names them."""

    def one(repo: Path) -> tuple[str, str]:
        git(repo, "init", "-q", "--template=", "-b", "main")
        return repo.name, commit(repo, "generated")

    repos = sorted(p for p in out.iterdir() if p.is_dir() and not (p / ".git").exists())
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        commits = dict(pool.map(one, repos))
    write_inventory(out, commits)
    return commits


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path)
    p.add_argument("--scale", type=float, default=1.0, help="1.0 = 1,000 repos / ~200,000 files")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument(
        "--git", action="store_true", help="every repository a git clone, OUT/inventory.csv naming its commit"
    )
    a = p.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    planted = generate(a.out, a.scale, a.seed)
    if a.git:
        print(f"git: {len(gitify(a.out))} repositories committed", flush=True)
    files = sum(len(names) for _, _, names in os.walk(a.out))
    print(f"generated {a.out}: {files} files, {len(planted)} planted conflicts")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
