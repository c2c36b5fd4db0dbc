"""A SQL92 expression nested beyond the validator's limit: SG402 cannot judge it, and the SG902 note
says why (too deep to check), not that the expression is unknown."""

from __future__ import annotations

from pathlib import Path

import pytest

from subguard.cli.main import main
from subguard.rocketmq.sql92 import MAX_DEPTH
from tests.report_json import all_findings

JAVA = """package com.acme;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;

public class Deep {{
    public void start() throws Exception {{
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("GID_DEEP");
        consumer.subscribe("TOPIC_DEEP", MessageSelector.bySql("{expr}"));
        consumer.start();
    }}
}}
"""


def test_too_deep_sql92_is_a_note_that_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    depth = MAX_DEPTH + 1
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "Deep.java").write_text(JAVA.format(expr="(" * depth + "a = 1" + ")" * depth), encoding="utf-8")
    assert main(["check", str(tmp_path), "--format", "json", "--no-cache", "--fail-on", "note"]) == 1
    found = [
        (f["rule"], f["severity"], f["message"], f["path"], f["line"]) for f in all_findings(capsys.readouterr().out)
    ]
    assert found == [
        (
            "SG902",
            "note",
            "SQL92 expression for topic 'TOPIC_DEEP' is too deep to check (nesting beyond 1000 levels, the documented "
            "limit of subguard's SQL92 check): SG402 could not check it",
            "src/Deep.java",
            9,
        )
    ]


def test_within_the_limit_it_is_judged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "Deep.java").write_text(
        JAVA.format(expr="(" * MAX_DEPTH + "a = 1" + ")" * MAX_DEPTH), encoding="utf-8"
    )
    assert main(["check", str(tmp_path), "--format", "json", "--no-cache", "--fail-on", "note"]) == 0
    assert all_findings(capsys.readouterr().out) == []
