"""Acceptance for SG2xx/SG3xx/SG904 beyond the shared harness (tests/engine/test_rule_fixtures.py runs
every case in tests/rules/SG2*, SG3*, SG904, the clean ones included): the messages say
what was assumed and why."""

from __future__ import annotations

from pathlib import Path

from subguard.core.config import Config
from subguard.core.model import Finding
from subguard.rules.engine import evaluate
from subguard.rules.policy import load_policies
from subguard.scan.extraction import scan_repo

RULES = Path(__file__).resolve().parents[1] / "rules"


def run(root: Path) -> list[Finding]:
    return evaluate([scan_repo(root, Config())], load_policies(), Config())


def test_sg201_message_names_both_environments_and_cluster() -> None:
    [f] = [f for f in run(RULES / "SG201" / "one-cluster") if f.rule == "SG201"]
    assert "production (prod)" in f.message and "non-production (test)" in f.message and "mq.internal:9876" in f.message
    assert [r.location.path for r in f.related] == ["order-sync/src/main/resources/application-test.yml"]


def test_sg302_messages_say_why_the_id_changes() -> None:
    [fixed] = [f for f in run(RULES / "SG302" / "pvc-fixed-instance") if f.rule == "SG302"]
    assert "pod IP" in fixed.message and "instance name 'price-cache'" in fixed.message
    [podname] = [f for f in run(RULES / "SG302" / "deployment-podname") if f.rule == "SG302"]
    assert "the Deployment pod's name, new for every pod" in podname.message
    assert podname.related[0].location.path == "src/main/java/com/example/PriceCache.java"
