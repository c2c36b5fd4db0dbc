"""Subscriptions of one topic written in branches of one another (`subguard.core.branches`), read from
code shaped like public code (tests/fixtures/branches/): apache/rocketmq's benchmark consumer, whose
command-line flags pick '*', a tag or a SQL92 subscription; rocketmq-spring's listener container,
which switches on the selector type; a narrowing `if (tags != null)` after '*'; Python workers whose
flags pick the subscription with `if` / `elif` and `match`. The consumer registers one of them,
chosen at run time: its expression is unknown and no finding is built on it; the inventory lists
each alternative; the later call a run always makes after the others still overrides them."""

from __future__ import annotations

from pathlib import Path

import pytest

from subguard.audit.tasks import consumer_from_rows
from subguard.core.config import Config
from subguard.core.inventory import subscription_rows
from subguard.core.model import Consumer, Subscription
from subguard.rules import judge as pipeline
from subguard.rules.policy import load_policies
from subguard.scan.extraction import ScanResult, scan_repo

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "branches"
JAVA = "src/main/java/com/acme/bench/"


@pytest.fixture(scope="module")
def scanned() -> ScanResult:
    return scan_repo(ROOT, Config())


def consumer(result: ScanResult, group: str) -> Consumer:
    (found,) = [c for c in result.consumers if c.group.value == group]
    return found


def line_of(rel: str, needle: str, nth: int = 0) -> int:
    lines = (ROOT / rel).read_text(encoding="utf-8").splitlines()
    return [i + 1 for i, text in enumerate(lines) if needle in text][nth]


def declared(subs: tuple[Subscription, ...]) -> list[tuple[str | None, str, int]]:
    """(expression, type, line) of each subscription."""
    return [(s.expression.value, s.expression_type.value, s.location.line) for s in subs]


def test_the_benchmark_consumer_subscribes_one_of_three(scanned: ScanResult) -> None:
    c = consumer(scanned, "benchmark_consumer")
    rel = JAVA + "BenchmarkConsumer.java"
    lines = [line_of(rel, 'subscribe("BenchmarkTest"', k) for k in range(3)]
    (sub,) = c.subscriptions
    assert sub.topic.value == "BenchmarkTest"
    assert sub.expression.value is None and not sub.expression.known
    assert sub.expression.detail == (
        "one of 3 subscriptions of this topic, chosen at run time by the branch taken "
        f"(lines {lines[0]}, {lines[1]}, {lines[2]})"
    )
    assert declared(sub.alternatives) == [
        ("*", "TAG", lines[0]),
        ("TagA || TagB", "TAG", lines[1]),
        ("a > 5", "SQL92", lines[2]),
    ]
    assert sub.alternatives[1].tags == ("TagA", "TagB")
    assert not sub.type_known
    assert sub.location.line == lines[0]
    assert c.overridden == ()


def test_a_switch_on_the_selector_type(scanned: ScanResult) -> None:
    rel = JAVA + "SelectorConsumers.java"
    (sub,) = consumer(scanned, "orders_selector").subscriptions
    assert declared(sub.alternatives) == [
        ("created", "TAG", line_of(rel, '"created"')),
        ("amount > 10", "SQL92", line_of(rel, "amount > 10")),
    ]
    assert not sub.expression.known and not sub.type_known


def test_cases_that_fall_through_run_one_after_the_other(scanned: ScanResult) -> None:
    rel = JAVA + "SelectorConsumers.java"
    c = consumer(scanned, "fall_through")
    # case "a" runs on into case "b": its subscription is overridden; `default` subscribes the same
    assert declared(c.subscriptions) == [("b", "TAG", line_of(rel, 'subscribe("Payments", "b")', 1))]
    assert declared(c.overridden) == [("a", "TAG", line_of(rel, 'subscribe("Payments", "a")'))]


def test_a_narrowing_if_after_a_subscription_makes_it_one_of_two(scanned: ScanResult) -> None:
    rel = JAVA + "SelectorConsumers.java"
    (sub,) = consumer(scanned, "narrowed").subscriptions
    assert declared(sub.alternatives) == [
        ("*", "TAG", line_of(rel, 'subscribe("Refunds", "*")')),
        ("approved", "TAG", line_of(rel, '"approved"')),
    ]
    assert sub.type_known and sub.expression_type.value == "TAG"


def test_a_call_after_the_branches_overrides_them_all(scanned: ScanResult) -> None:
    rel = JAVA + "SelectorConsumers.java"
    c = consumer(scanned, "settled")
    assert declared(c.subscriptions) == [("paid", "TAG", line_of(rel, '"paid"'))]
    assert [s.expression.value for s in c.overridden] == ["total > 0", "issued"]


def test_the_same_expression_in_every_branch_is_known(scanned: ScanResult) -> None:
    rel = JAVA + "SelectorConsumers.java"
    c = consumer(scanned, "same_either_way")
    assert declared(c.subscriptions) == [("kept", "TAG", line_of(rel, '"kept"', 1))]
    assert c.subscriptions[0].alternatives == () and c.overridden == ()


def test_python_if_elif_and_match(scanned: ScanResult) -> None:
    rel = "workers/pricing.py"
    (flags,) = consumer(scanned, "pricing_worker").subscriptions
    assert declared(flags.alternatives) == [
        ("*", "TAG", line_of(rel, 'subscribe("Prices", on_message)')),
        ("updated || created", "TAG", line_of(rel, "updated || created")),
    ]
    assert not flags.expression.known
    (region,) = consumer(scanned, "pricing_regions").subscriptions
    assert [s.expression.value for s in region.alternatives] == ["eu", "us"]
    (narrowed,) = consumer(scanned, "pricing_narrowed").subscriptions
    assert [s.expression.value for s in narrowed.alternatives] == ["*", "firm"]


def test_python_a_later_call_overrides(scanned: ScanResult) -> None:
    rel = "workers/pricing.py"
    settled = consumer(scanned, "pricing_settled")
    assert declared(settled.subscriptions) == [("closed", "TAG", line_of(rel, '"closed"'))]
    assert declared(settled.overridden) == [("open", "TAG", line_of(rel, '"open"'))]


def test_the_inventory_lists_each_alternative_and_the_audit_reads_them_back(scanned: ScanResult) -> None:
    c = consumer(scanned, "benchmark_consumer")
    rows = subscription_rows([c])
    (sub,) = c.subscriptions
    assert [(r["expression"], r["expression_type"], r["line"]) for r in rows] == declared(sub.alternatives)
    assert {r["unresolved"]["expression"] for r in rows} == {sub.expression.detail}
    assert all(r["topic"] == "BenchmarkTest" and r["group"] == "benchmark_consumer" for r in rows)
    back = consumer_from_rows(rows, "repo")
    (again,) = back.subscriptions
    assert declared(again.alternatives) == declared(sub.alternatives)
    assert again.expression.detail == sub.expression.detail and not again.type_known


def test_no_finding_is_built_on_the_branch_taken(scanned: ScanResult) -> None:
    findings = pipeline.judge([scanned], pipeline.RuleSet.of(load_policies()), Config()).findings
    shown = {(f.rule, f.location.path, f.location.line) for f in findings if f.severity.value != "note"}
    java, py = JAVA + "SelectorConsumers.java", "workers/pricing.py"
    # only the subscriptions a later call always overrides (SG107); none of the alternatives
    assert shown == {
        ("SG107", java, line_of(java, 'subscribe("Payments", "a")')),
        ("SG107", java, line_of(java, "total > 0")),
        ("SG107", java, line_of(java, '"issued"')),
        ("SG107", py, line_of(py, '"open"')),
    }
