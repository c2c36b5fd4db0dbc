"""`--stats` names every file skipped for a reason a user would not guess (issue 18, item 6)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from subguard.cli.main import main

CONSUMER = 'from rocketmq.client import PushConsumer\nc = PushConsumer("G")\nc.subscribe("T", None)\n'


def test_stats_names_unusual_skips_and_counts_ordinary_ones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "a.py").write_text(CONSUMER)
    (tmp_path / "app" / "big.py").write_text("# rocketmq\n" + "x = 1\n" * 200)
    (tmp_path / "link.py").symlink_to(tmp_path / "app" / "a.py")
    os.mkfifo(tmp_path / "queue.py")
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "plain.py").write_text("print('no broker here')\n")
    (tmp_path / ".subguard.yaml").write_text("max-file-size: 1000\n")
    assert main(["check", str(tmp_path), "--stats", "--no-cache"]) == 0
    err = capsys.readouterr().err
    named = sorted(line.strip() for line in err.splitlines() if line.strip().startswith("skipped:"))
    assert named == [
        "skipped: app/big.py: larger than the size limit (1211 > 1000 bytes)",
        "skipped: link.py: symbolic link (not followed)",
        "skipped: queue.py: not a regular file (device, FIFO or socket)",
    ]
    assert "notes.txt" not in err and "plain.py" not in err  # ordinary skips are counted, not named
    assert "not a file type subguard reads" in err and "no RocketMQ reference" in err
