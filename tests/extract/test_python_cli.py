"""`subguard inventory <fixture> --format jsonl --stats` end to end, through `subguard.cli.main.main`."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from subguard.cli.main import main

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "python" / "shop"
KEYS = (
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
)


def test_inventory_jsonl_and_stats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = tmp_path / "shop"
    shutil.copytree(FIXTURE, repo)
    (repo / "broken.py").write_bytes(b"import rocketmq\nif True\n")
    code = main(["inventory", str(repo), "--format", "jsonl", "--stats"])
    out, err = capsys.readouterr()
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 35
    for row in rows:
        assert set(KEYS) <= set(row)
        assert row["service"] == "shop"
    orders = [r for r in rows if r["group"] == "GID_orders"]
    assert {r["topic"] for r in orders} == {"dev_orders", "payments", "refunds"}
    assert orders[0]["resolution"]["group"] == "imported_constant"
    discovered = sum(1 for p in repo.rglob("*") if p.is_file() and ".subguard_cache" not in p.parts)  # not input
    m = re.search(r"files: (\d+) discovered, (\d+) parsed, (\d+) skipped, (\d+) failed", err)
    assert m is not None, err
    total, parsed, skipped, failed = map(int, m.groups())
    assert total == discovered == parsed + skipped + failed
    assert failed == 1 and "broken.py: syntax error at line 2" in err
