"""One finding per rule, place and message (`engine.merged`): subjects a reader cannot tell apart."""

from __future__ import annotations

from pathlib import Path

from subguard.core.config import Config
from subguard.core.model import Finding, Location, Related, Severity
from subguard.rules.engine import merged, run
from subguard.scan.extraction import scan_repo


def finding(fp: str, line: int, message: str, related: str) -> Finding:
    return Finding(
        rule="SG301",
        severity=Severity.ERROR,
        message=message,
        location=Location(path="docker-compose.yml", line=line),
        related=(Related(location=Location(path=related, line=3), message="the consumer it runs"),),
        group="g",
        fingerprint=fp,
    )


def test_findings_alike_in_rule_place_and_message_are_one_with_every_related_location() -> None:
    a, b = finding("b2", 4, "same", "A.java"), finding("a1", 4, "same", "B.java")
    other_line, other_text = finding("c3", 9, "same", "A.java"), finding("d4", 4, "other", "A.java")
    out = merged([a, b, other_line, other_text])
    assert len(out) == 3
    (one,) = [f for f in out if f.location.line == 4 and f.message == "same"]
    assert one.fingerprint == "a1"  # the smallest: a baseline holding any of them still knows it
    assert [r.location.path for r in one.related] == ["B.java", "A.java"]
    assert one.group == "g"  # the group they share
    two = merged([a.model_copy(update={"group": "orders"}), b.model_copy(update={"group": "prices"})])
    assert len(two) == 1 and two[0].group == ""  # one message naming no group, over two groups


LISTENER = """package com.acme;

import org.apache.rocketmq.spring.annotation.MessageModel;
import org.apache.rocketmq.spring.annotation.RocketMQMessageListener;
import org.apache.rocketmq.spring.core.RocketMQListener;

@RocketMQMessageListener(topic = "{topic}", consumerGroup = "{group}", messageModel = MessageModel.BROADCASTING)
public class {name} implements RocketMQListener<String> {{
    public void onMessage(String m) {{}}
}}
"""


def test_listeners_of_one_container_are_one_offset_store_finding(tmp_path: Path) -> None:
    """Two broadcasting listeners, one of a known group and one whose group is a placeholder no config
    sets, in one compose service without a volume: one SG301 at the service naming both, not one
    line per listener (the directory, and so the fix, is the container's)."""
    src = tmp_path / "src/main/java/com/acme"
    src.mkdir(parents=True)
    (tmp_path / "pom.xml").write_text("<project><artifactId>cache</artifactId></project>\n")
    for name, topic, group in (("PriceListener", "prices", "price-cache"), ("RateListener", "rates", "${app.group}")):
        (src / f"{name}.java").write_text(LISTENER.format(name=name, topic=topic, group=group))
    (tmp_path / "docker-compose.yml").write_text("services:\n  cache:\n    build: .\n")
    found = [f for f in run([scan_repo(tmp_path, Config())], Config()) if f.rule == "SG301"]
    assert len(found) == 1
    assert found[0].location.line == 2
    assert sorted(Path(r.location.path).name for r in found[0].related) == ["PriceListener.java", "RateListener.java"]
    assert found[0].group == ""
