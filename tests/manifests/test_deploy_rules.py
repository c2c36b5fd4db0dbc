"""Acceptance for SG2xx/SG3xx/SG904 beyond the shared harness (tests/engine/test_rule_fixtures.py runs
the positive cases in tests/fixtures/rules/SG2*, SG3*, SG904-*): the clean repos under
tests/fixtures/deploy/cases give no findings at all (and none at their `ok:` lines), and the
messages say what was assumed and why."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from subguard.config import Config
from subguard.engine import evaluate
from subguard.model import Finding
from subguard.policy import load_policies
from subguard.scan import scan_repo

CASES = Path(__file__).resolve().parents[1] / "fixtures" / "deploy" / "cases"
RULES = Path(__file__).resolve().parents[1] / "fixtures" / "rules"
MARK = re.compile(r"(?:#|//)\s*(ruleid|ok):\s*(SG\d+)")
MINE = ("SG2", "SG3", "SG904")


def expectations(root: Path) -> tuple[set[tuple[str, str, int]], set[tuple[str, str, int]]]:
    want: set[tuple[str, str, int]] = set()
    ok: set[tuple[str, str, int]] = set()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            m = MARK.search(line)
            if not m:
                continue
            target = i + 1
            while target < len(lines) and lines[target].strip().startswith(("#", "//")):
                target += 1
            entry = (m.group(2), path.relative_to(root).as_posix(), target + 1)
            (want if m.group(1) == "ruleid" else ok).add(entry)
    return want, ok


def run(root: Path) -> list[Finding]:
    return evaluate([scan_repo(root, Config())], load_policies(), Config())


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_case(case: str) -> None:
    root = CASES / case
    findings = run(root)
    want, ok = expectations(root)
    got = {(f.rule, f.location.path, f.location.line) for f in findings if f.rule.startswith(MINE)}
    assert got == want
    assert not (got & ok)
    assert ok, f"{case} has no `ok:` annotation"
    assert findings == [], [f.message for f in findings]


def test_sg201_message_names_both_environments_and_cluster() -> None:
    [f] = [f for f in run(RULES / "SG201-one-cluster") if f.rule == "SG201"]
    assert "production (prod)" in f.message and "non-production (test)" in f.message and "mq.internal:9876" in f.message
    assert [r.location.path for r in f.related] == ["order-sync/src/main/resources/application-test.yml"]


def test_sg302_messages_say_why_the_id_changes() -> None:
    [fixed] = [f for f in run(RULES / "SG302-pvc-fixed-instance") if f.rule == "SG302"]
    assert "pod IP" in fixed.message and "instance name 'price-cache'" in fixed.message
    [podname] = [f for f in run(RULES / "SG302-deployment-podname") if f.rule == "SG302"]
    assert "the Deployment pod's name, new for every pod" in podname.message
    assert podname.related[0].location.path == "src/main/java/com/example/PriceCache.java"
