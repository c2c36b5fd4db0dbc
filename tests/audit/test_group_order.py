"""A group is judged the same whichever order its members reach the group task in (the order rows
arrive in after a shuffle is not fixed): `tasks.group_task` puts them in the group map's order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from subguard.audit import tasks
from subguard.audit import transforms as T
from subguard.core.config import Config
from subguard.core.inventory import group_name
from subguard.core.model import Consumer
from subguard.scan.extraction import scan_repo

pytestmark = pytest.mark.slow

CONSUMER = """from rocketmq.client import ConsumeStatus, PushConsumer


def handle(msg):
    return ConsumeStatus.CONSUME_SUCCESS


consumer = PushConsumer("GID_ORDER")
consumer.set_name_server_address("mq.internal:9876")
consumer.subscribe("Orders", handle, expression="{tags}")
consumer.start()
"""


def members(tmp_path: Path) -> list[Consumer]:
    """Three members of one group in two repos, subscribing three different tag sets."""
    out: list[Consumer] = []
    for repo, files in (
        ("billing", {"consumer.py": "paid"}),
        ("orders", {"consumer.py": "created || paid", "worker.py": "created"}),
    ):
        for name, tags in files.items():
            (tmp_path / repo / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / repo / name).write_text(CONSUMER.format(tags=tags), encoding="utf-8")
        out += scan_repo(tmp_path / repo, Config(), repo=repo).consumers
    assert len(out) == 3
    return out


def judged(spark: Any, consumers: list[Consumer]) -> list[tuple[str, str, str]]:
    rows = [(c.repo, group_name(c), c.location.path, c.location.line, c.model_dump_json(), "") for c in consumers]
    frame = spark.createDataFrame(
        rows, "repo string, group string, path string, line int, json string, env_hint string"
    )
    waivers = spark.createDataFrame([], "repo string, payload string")
    out = T.judge_groups(frame, waivers, tasks.AuditOptions(config=Config())).collect()
    return sorted((r.kind, r.key, r.payload) for r in out)


def test_member_order_does_not_change_findings_or_impact(spark: Any, tmp_path: Path) -> None:
    found = members(tmp_path)
    forward, backward = judged(spark, found), judged(spark, found[::-1])
    assert forward == backward
    rules = {p.split('"rule": "')[1][:5] for k, _, p in forward if k == "finding" and '"rule": "' in p}
    assert "SG102" in rules and any(k == "group" for k, _, _ in forward)  # findings plus the simulated impact
