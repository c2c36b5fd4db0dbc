"""SG101's member table shows every topic each member declares, so the rows that differ are there
(GID_INVENTORY_SYNC: {TOPIC_STOCK, TOPIC_WAREHOUSE} vs {TOPIC_STOCK} used to show only TOPIC_STOCK)."""

from __future__ import annotations

from pathlib import Path

import pytest

from subguard.cli.main import main

ORG = Path(__file__).resolve().parents[2] / "examples" / "org"


def test_sg101_rows_show_the_topic_only_one_member_has(capsys: pytest.CaptureFixture[str]) -> None:
    main(["check", str(ORG), "--select", "SG101", "--no-cache", "--no-simulate", "--fail-on", "none"])
    out = capsys.readouterr().out
    block = out.split("group GID_INVENTORY_SYNC", 1)[1].split("\n\n", 1)[0]
    rows = [line.split() for line in block.splitlines()[2:] if line.strip()]
    assert [(r[-3], r[-2]) for r in rows] == [
        ("TOPIC_STOCK", '"reserved||released"'),
        ("TOPIC_WAREHOUSE", '"*"'),
        ("TOPIC_STOCK", '"reserved||released"'),
    ], block
    assert rows[0][0].endswith("inventory-worker/worker/sync.py:10") and len(rows[1]) == 3  # same member, next topic
    assert rows[2][0].endswith("shipping-stream/src/main/resources/application.yml:14")
