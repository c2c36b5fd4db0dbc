"""A generated multi-repository organisation, and an org map built from it without Spark (the same rows
`subguard.audit.orgmap.write_audit` writes from the audit's tables), for the `check --org-map` tests."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from subguard.audit import orgmap

CONSUMER = """from rocketmq.client import PushConsumer


def handle(msg):
    return None


consumer = PushConsumer("{group}")
consumer.subscribe("TopicOrders", handle, expression="{tags}")
consumer.start()
"""
LINE = 9  # the subscribe call's line in CONSUMER (the line a group finding points at)


def write_repo(root: Path, name: str, tags: str, group: str = "GID_ORDERS", path: str = "") -> Path:
    repo = root / name
    path = path or f"{name}/consumer.py"  # each repository's own package
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(CONSUMER.format(group=group, tags=tags), encoding="utf-8")
    return repo


def organisation(root: Path) -> Path:
    """Three repositories: orders and billing share GID_ORDERS with different tags (a cross-repository
    SG102), shipping has a group of its own."""
    org = root / "org"
    write_repo(org, "orders", "created||paid")
    write_repo(org, "billing", "created||refunded")
    write_repo(org, "shipping", "shipped", group="GID_SHIPPING")
    return org


def build_map(org: Path, out: Path, written: dt.datetime | None = None, hints: dict[str, str] | None = None) -> Path:
    """The org map of every repository (first-level folder) of `org`, as the audit would write it."""
    from subguard.core.config import Config, load_config
    from subguard.deploy.environment import with_environment
    from subguard.rules import waiver_sources
    from subguard.scan.discover import read_limited
    from subguard.scan.extraction import scan_repo

    rows: list[Any] = []
    waivers: list[Any] = []
    repos = []
    for repo in sorted(p for p in org.iterdir() if p.is_dir() and not p.name.startswith(".")):
        config = (
            load_config(None, repo)
            if (repo / "pyproject.toml").is_file() or (repo / ".subguard.yaml").is_file()
            else Config()
        )
        result = scan_repo(repo, config, repo=repo.name)
        hint = (hints or {}).get(repo.name, "")
        for c in result.consumers:
            rows.append(orgmap.consumer_row(with_environment(c, config).model_dump_json(), hint or None))

        def read(rel: str, base: Path = repo) -> bytes | None:
            try:
                return read_limited(str(base / rel), 1 << 22)
            except OSError:
                return None

        for w in waiver_sources.inline_of(result, read):
            payload = json.dumps(
                {
                    "rules": list(w.rules),
                    "reason": w.reason,
                    "location": w.location.model_dump(),
                    "covers": list(w.covers),
                }
            )
            waivers.append(orgmap.waiver_row(repo.name, payload))
        repos.append(orgmap.RepoRow(repo.name, None, f"file:{repo}", environment=hint))
    out.parent.mkdir(parents=True, exist_ok=True)
    orgmap.write(str(out), repos, rows, waivers, written=written, sources=[str(org)])
    return out
