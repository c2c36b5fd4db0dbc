"""The simulator's self-check (SG905): the policy engine's consistency verdict against the simulator.

The engine and the simulator are both real here; the positive path is driven by judging a group
with a policy set that lacks the consistency rules, which is exactly the disagreement SG905 exists
to expose.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from subguard.cli.main import main
from subguard.core.config import Config
from subguard.core.model import (
    ClientFamily,
    Consumer,
    Finding,
    Location,
    MessageModel,
    RuleDoc,
    Severity,
    Subscription,
    Value,
)
from subguard.rocketmq.expression import parse
from subguard.rules import selfcheck
from subguard.rules.impact import describer
from subguard.rules.judge import RuleSet
from subguard.rules.judge import self_check as judge_self_check
from subguard.rules.policy import Policy, load_policies, rule_docs
from subguard.scan.extraction import ScanResult, scan_repo
from subguard.simulate.impact import predict
from tests.report_json import all_findings

POLICIES = load_policies()
DOCS = dict(rule_docs(POLICIES))
WITHOUT_CONSISTENCY = [p for p in POLICIES if "consistency" not in p.roles]


def self_check(
    results: list[ScanResult], policies: list[Policy], config: Config, docs: dict[str, RuleDoc]
) -> list[Finding]:
    """The pipeline's self-check step with the default simulator (no memo, one process)."""
    return judge_self_check(results, RuleSet(tuple(policies), docs), config, describer())


CONSUMER = """from rocketmq.client import ConsumeStatus, PushConsumer

GROUP = "{group}"


def handle(msg):
    return ConsumeStatus.CONSUME_SUCCESS


consumer = PushConsumer(GROUP)
consumer.set_name_server_address("mq.internal:9876")
consumer.subscribe("orders", handle, expression="{expression}")
consumer.start()
"""


def write_repo(root: Path) -> Path:
    """Two groups of two members: GID_SAME agrees, GID_SPLIT subscribes tag1 and tag2."""
    for name, group, expression in (
        ("same_a.py", "GID_SAME", "created || paid"),
        ("same_b.py", "GID_SAME", "created || paid"),
        ("split_a.py", "GID_SPLIT", "tag1"),
        ("split_b.py", "GID_SPLIT", "tag2"),
    ):
        path = root / "app" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(CONSUMER.format(group=group, expression=expression), encoding="utf-8")
    return root


def test_the_engine_and_the_simulator_agree_on_a_real_repo(tmp_path: Path) -> None:
    result = scan_repo(write_repo(tmp_path), Config())
    assert selfcheck.flagged_groups([result], POLICIES, Config()) == {"GID_SPLIT"}
    assert self_check([result], POLICIES, Config(), DOCS) == []


def test_a_group_the_consistency_rules_did_not_judge_raises_sg905_at_its_members(tmp_path: Path) -> None:
    result = scan_repo(write_repo(tmp_path), Config())
    [finding] = self_check([result], WITHOUT_CONSISTENCY, Config(), DOCS)
    assert finding.rule == "SG905" and finding.severity is Severity.ERROR and finding.group == "GID_SPLIT"
    assert (finding.location.path, finding.location.line) == ("app/split_a.py", 12)
    assert [(r.location.path, r.location.line) for r in finding.related] == [("app/split_b.py", 12)]
    assert "consistency rules pass group 'GID_SPLIT'" in finding.message and "tag1" in finding.message
    assert "simulated (" in finding.message and "please report it" in finding.message


def test_select_and_ignore_do_not_change_the_verdict(tmp_path: Path) -> None:
    result = scan_repo(write_repo(tmp_path), Config())
    quiet = Config(ignore=("SG1",))
    assert selfcheck.flagged_groups([result], POLICIES, quiet) == {"GID_SPLIT"}
    assert self_check([result], POLICIES, quiet, DOCS) == []


def test_check_and_simulate_inventory_report_no_internal_error_when_rules_are_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = write_repo(tmp_path / "repo")
    assert main(["check", str(root), "--ignore", "SG102", "--format", "json", "--no-cache"]) == 0
    assert [f["rule"] for f in all_findings(capsys.readouterr().out)] == []
    (root / ".subguard.yaml").write_text("ignore: [SG102]\n", encoding="utf-8")
    code = main(["simulate", "--inventory", str(root), "--runs", "4", "--format", "json"])
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert code == 0 and data["internal_errors"] == [] and "SG905" not in captured.err
    assert {g["group"] for g in data["groups"] if g["loss"]} == {"GID_SPLIT"}


def test_unknown_members_are_not_self_checked() -> None:
    loc = Location(path="a.py", line=3)
    known = Subscription(topic=Value.literal("T"), expression=Value.literal("tag1"), tags=("tag1",), location=loc)
    unknown = Subscription(topic=Value.literal("T"), expression=Value.unknown("from env"), location=loc)
    members = [
        Consumer(
            consumer_id=str(i),
            group=Value.literal("g"),
            subscriptions=(sub,),
            location=loc,
            client=ClientFamily.PYTHON_NATIVE_4X,
        )
        for i, sub in enumerate((known, unknown))
    ]
    assert selfcheck.candidates(members, frozenset(), Config()) == {}
    assert selfcheck.candidates(members[:1], frozenset(), Config()) == {}  # a lone consumer cannot disagree


# --- the two models against each other on arbitrary declared groups ---------------------------------

EXPRESSIONS = ["*", "tagA", "tagB", "tagA || tagB", "tagB||tagA", "tagA||tagA", " tagA ", "Aa", "BB"]
FAMILIES = [
    ClientFamily.JAVA_PUSH_4X,
    ClientFamily.SPRING_LISTENER,
    ClientFamily.JAVA_LITE_PULL,
    ClientFamily.PYTHON_NATIVE_4X,
    ClientFamily.PYTHON_GRPC_5X,
]
member = st.tuples(
    st.sampled_from(EXPRESSIONS),
    st.sampled_from(["T1", "T2"]),
    st.sampled_from(FAMILIES),
    st.sampled_from([MessageModel.CLUSTERING, MessageModel.BROADCASTING]),
)


def declared(i: int, expr: str, topic: str, client: ClientFamily, model: MessageModel) -> Consumer:
    loc = Location(path=f"m{i}.py", line=10)
    sub = Subscription(topic=Value.literal(topic), expression=Value.literal(expr), tags=parse(expr).tags, location=loc)
    return Consumer(
        consumer_id=f"m{i}",
        group=Value.literal("g"),
        subscriptions=(sub,),
        message_model=Value.literal(model.value),
        client=client,
        name_server=Value.literal("ns:9876"),
        location=loc,
    )


@settings(max_examples=80, deadline=None)
@given(st.lists(member, min_size=2, max_size=4))
def test_a_group_the_engine_passes_never_simulates_with_loss(
    members: list[tuple[str, str, ClientFamily, MessageModel]],
) -> None:
    consumers = [declared(i, *m) for i, m in enumerate(members)]
    result = ScanResult(root="", repo="", files=(), consumers=tuple(consumers), deployments=())
    if "g" in selfcheck.flagged_groups([result], POLICIES, Config()):
        return
    impact = predict(consumers, runs=3, seed=len(members))
    assert not impact.has_loss, (members, impact)


NAMESPACED = """package com.acme;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;

public class Workers {{
    void start() throws Exception {{
        DefaultMQPushConsumer a = new DefaultMQPushConsumer("{ns_a}", "GID_ORDERS");
        a.setNamesrvAddr("mq.internal:9876");
        a.subscribe("orders", "created");
        a.start();
        DefaultMQPushConsumer b = new DefaultMQPushConsumer("{ns_b}", "GID_ORDERS");
        b.setNamesrvAddr("mq.internal:9876");
        b.subscribe("orders", "paid");
        b.start();
    }}
}}
"""


def _namespaced_repo(root: Path, ns_a: str, ns_b: str) -> Path:
    path = root / "src/main/java/com/acme/Workers.java"
    path.parent.mkdir(parents=True)
    path.write_text(NAMESPACED.format(ns_a=ns_a, ns_b=ns_b), encoding="utf-8")
    return root


def test_two_namespaces_are_two_groups_for_the_rules_the_impact_and_the_self_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ns1%GID_ORDERS` and `ns2%GID_ORDERS` are different groups on the broker: no SG102, nothing
    to simulate together, and no SG905 (the self-check must group members as the rules do)."""
    root = _namespaced_repo(tmp_path / "two", "ns1", "ns2")
    assert main(["check", str(root), "--format", "json", "--no-cache"]) == 0
    assert [f["rule"] for f in all_findings(capsys.readouterr().out) if f["rule"] in ("SG102", "SG905")] == []


def test_one_namespace_disagreeing_gets_sg102_with_its_simulated_impact(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _namespaced_repo(tmp_path / "one", "ns1", "ns1")
    assert main(["check", str(root), "--format", "json", "--no-cache"]) == 1
    [finding] = [f for f in all_findings(capsys.readouterr().out) if f["rule"] == "SG102"]
    assert finding["group"] == "ns1%GID_ORDERS" and (finding["impact"] or "").startswith("simulated (")


def test_a_namespaced_group_finding_lists_its_members_side_by_side(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _namespaced_repo(tmp_path / "one", "ns1", "ns1")
    monkeypatch.chdir(root)
    assert main(["check", ".", "--no-cache", "--no-simulate"]) == 1
    out = capsys.readouterr().out
    member_lines = [
        line for line in out.splitlines() if "Workers.java" in line and ('"created"' in line or '"paid"' in line)
    ]
    assert len(member_lines) == 2, out


def test_flagged_groups_reuse_the_engines_findings_only_when_every_consistency_rule_ran(tmp_path: Path) -> None:
    """The check's own evaluation answers the self-check when nothing was deselected; under a
    selection that leaves a consistency rule out, the rules are evaluated again, all of them on."""
    from subguard.rules.engine import evaluate

    results = [scan_repo(write_repo(tmp_path), Config())]
    full = Config()
    evaluated = evaluate(results, POLICIES, full)
    assert selfcheck.flagged_groups(results, POLICIES, full, evaluated) == {"GID_SPLIT"}
    assert selfcheck.flagged_groups(results, POLICIES, full, []) == frozenset()  # given findings are the answer
    narrow = Config(select=("SG301",))
    assert selfcheck.flagged_groups(results, POLICIES, narrow, evaluate(results, POLICIES, narrow)) == {"GID_SPLIT"}
    assert selfcheck.flagged_groups(results, POLICIES, narrow, []) == {"GID_SPLIT"}  # re-evaluated, all rules on
