"""Findings in test or example code, and about placeholder group names, are marked in every format and
do not fail the run by default; notes in test code are off unless asked (issue 18 item 5, issue 28 item 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from subguard.cli.main import main
from subguard.core.config import Config
from subguard.core.model import CODE_SCOPE, Consumer
from subguard.rules import judge as pipeline
from subguard.rules.code_scope import code_kind
from subguard.rules.policy import load_policies
from tests.engine.records import consumer, result, sub

RULES = pipeline.RuleSet.of(load_policies())


def _found(*consumers: Consumer, config: Config | None = None) -> list[tuple[str, str, str | None]]:
    judged = pipeline.judge([result(*consumers)], RULES, config or Config())
    return [(f.rule, f.message, dict(f.properties).get(CODE_SCOPE)) for f in judged.findings]


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("src/test/java/org/acme/OrderConsumerTest.java", "test"),
        ("orders/src/test/java/Foo.java", "test"),
        ("tests/test_consumer.py", "test"),
        ("app/conftest.py", "test"),
        ("pkg/consumer_test.py", "test"),
        ("service/src/main/java/org/acme/OrderIT.java", "test"),
        ("example/src/main/java/org/apache/rocketmq/example/simple/PushConsumer.java", "example"),
        ("rocketmq-spring-boot-samples/rocketmq-consume-demo/src/main/java/Consumer.java", "example"),
        ("samples/python/consumer.py", "example"),
        ("orders/src/main/java/org/acme/OrderConsumer.java", ""),
        ("app/consumer.py", ""),
        ("contest/consumer.py", ""),
        # a Java package named example or demo is no example module (Spring Initializr's com.example.demo)
        ("src/main/java/com/example/demo/OrderConsumer.java", ""),
        ("orders/src/main/java/com/acme/demo/OrderConsumer.java", ""),
        ("src/test/java/com/example/demo/OrderConsumerTest.java", "test"),
        ("samples/orders/src/main/java/com/acme/OrderConsumer.java", "example"),
        ("java/client/src/main/java/org/apache/rocketmq/client/java/example/PushConsumerExample.java", "example"),
        ("src/main/java/com/example/demo/consumer/OrderConsumer.java", ""),
        ("latest/consumer.py", ""),
    ],
)
def test_code_kind_defaults(path: str, kind: str) -> None:
    assert code_kind(path, Config()) == kind


@pytest.mark.parametrize(
    ("repo", "kind"),
    [
        ("rocketmq-demo", "example"),
        ("rocketmq_demo", "example"),
        ("springcloud-rocketmq-example", "example"),
        ("rocketmq-learning", "example"),
        ("rocketmq-practice", "example"),
        ("RocketMQ-study", "example"),
        ("learn-rocketmq", "example"),
        ("SpringBoot-Labs", "example"),
        ("kafka-tutorials", "example"),
        ("labsync-service", ""),
        ("samples", "example"),
        ("learning-platform", ""),
        ("practice-api", ""),
        ("orders-service", ""),
        ("demolition-svc", ""),
    ],
)
def test_a_repository_named_as_a_sample_is_example_code(repo: str, kind: str) -> None:
    assert code_kind("v4/java/src/main/java/com/acme/shop/Consumer.java", Config(), repo) == kind


def test_a_conflict_only_in_test_code_is_marked_and_does_not_fail_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = consumer("GID_T", sub("TopicA", "tag1", "src/test/a_test.py", 5), path="src/test/a_test.py", line=4)
    b = consumer("GID_T", sub("TopicA", "tag2", "src/test/b_test.py", 5), path="src/test/b_test.py", line=4)
    [(rule, message, kind)] = [f for f in _found(a, b) if f[0] == "SG102"]
    assert kind == "test" and message.endswith("[test code]")
    assert [f for f in _found(a, b, config=Config(test_code="ignore")) if f[0] == "SG102"] == []
    [(_, plain, none)] = [f for f in _found(a, b, config=Config(test_code="fail")) if f[0] == "SG102"]
    assert none == "test" and plain.endswith("[test code]")


def test_one_production_member_makes_it_a_production_finding() -> None:
    a = consumer("GID_P", sub("TopicA", "tag1", "src/test/a_test.py", 5), path="src/test/a_test.py", line=4)
    b = consumer("GID_P", sub("TopicA", "tag2", "app/b.py", 5), path="app/b.py", line=4)
    [(_, message, kind)] = [f for f in _found(a, b) if f[0] == "SG102"]
    assert kind is None and not message.endswith("]")


def test_placeholder_group_names_are_reported_as_such() -> None:
    a = consumer("please_rename_unique_group_name_4", sub("TopicA", "tag1", "app/a.py", 5), path="app/a.py", line=4)
    b = consumer("please_rename_unique_group_name_4", sub("TopicA", "tag2", "app/b.py", 5), path="app/b.py", line=4)
    [(_, message, kind)] = [f for f in _found(a, b) if f[0] == "SG102"]
    assert kind == "placeholder" and message.endswith("[placeholder group name]")


def test_notes_in_test_code_are_off_unless_asked() -> None:
    unknown = consumer(None, sub("TopicA", "*", "src/test/x_test.py", 5), path="src/test/x_test.py", line=4)
    other = consumer("G", sub("TopicA", "*", "src/test/y_test.py", 5), path="src/test/y_test.py", line=4)
    assert [f for f in _found(unknown, other) if f[0] == "SG902"] == []
    assert [f for f in _found(unknown, other, config=Config(test_notes=True)) if f[0] == "SG902"]


def test_check_exit_code_and_json_carry_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = 'from rocketmq.client import PushConsumer\n\nc = PushConsumer("GID_T")\nc.subscribe("TopicA", None, expression="{}")\n'
    for name, tag in (("a_test.py", "tag1"), ("b_test.py", "tag2")):
        path = tmp_path / "tests" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(body.format(tag))
    assert main(["check", str(tmp_path), "--no-cache", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    [f] = [f for f in data["findings"] if f["rule"] == "SG102"]
    assert f["code"] == "test"
    (tmp_path / ".subguard.yaml").write_text("test-code: fail\n")
    assert main(["check", str(tmp_path), "--no-cache"]) == 1


def test_deployment_topology_rules_do_not_judge_code_that_is_never_deployed() -> None:
    """Two sample apps sharing a group are alternatives, not two services splitting its queues: a
    topology rule (SG203, roles: [topology]) gives nothing when every member is example code."""

    def member(folder: str) -> Consumer:
        path = f"{folder}/app.py"
        return consumer("GID_DEMO", sub("TopicA", "*", path, 5), path=path, line=4).model_copy(
            update={"service": folder}
        )

    assert [f for f in _found(member("samples/push-demo"), member("samples/pull-demo")) if f[0] == "SG203"] == []
    assert [f[0] for f in _found(member("push-service"), member("pull-service")) if f[0] == "SG203"] == ["SG203"]


def test_terminal_output_counts_test_code_findings_and_sarif_suppresses_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sarif_validator: object
) -> None:
    """What a user acts on is shown; a conflict only in test code is counted on one line (listed with
    --show-notes), and SARIF carries it as a suppressed result, so code scanning raises no alert."""
    body = 'from rocketmq.client import PushConsumer\n\nc = PushConsumer("GID_T")\nc.subscribe("TopicA", None, expression="{}")\n'
    for name, tag in (("a_test.py", "tag1"), ("b_test.py", "tag2")):
        path = tmp_path / "tests" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(body.format(tag))
    assert main(["check", str(tmp_path), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "GID_T" not in out
    assert (
        "1 finding only in test or example code not shown (1 SG102 group-tag-set-mismatch); --show-notes lists them"
        in out
    )
    assert main(["check", str(tmp_path), "--no-cache", "--show-notes"]) == 0
    assert "[test code]" in capsys.readouterr().out
    assert main(["check", str(tmp_path), "--no-cache", "--format", "sarif"]) == 0
    log = json.loads(capsys.readouterr().out)
    [result] = [r for r in log["runs"][0]["results"] if r["ruleId"] == "SG102"]
    assert result["suppressions"][0]["justification"].startswith("only test code declares it")
    assert not list(sarif_validator.iter_errors(log))  # type: ignore[attr-defined]
    (tmp_path / ".subguard.yaml").write_text("test-code: fail\n")
    assert main(["check", str(tmp_path), "--no-cache"]) == 1
    assert "GID_T" in capsys.readouterr().out


def _sample(folder: str, group: str, topic: str, tag: str, service: str = "", name: str = "app.py") -> Consumer:
    path = f"{folder}/{name}"
    return consumer(group, sub(topic, tag, path, 5), path=path, line=4).model_copy(
        update={"service": service or "repo"}
    )


def test_two_samples_are_never_one_group() -> None:
    """Sample trees hold programs meant to run one at a time (alternative demo apps, one script per
    feature): members of two samples are not compared; members of one sample are, and marked."""
    push = _sample("samples/push-demo", "GID_DEMO", "TopicA", "a", service="repo/samples/push-demo")
    pull = _sample("samples/pull-demo", "GID_DEMO", "TopicB", "b", service="repo/samples/pull-demo")
    assert [f for f in _found(push, pull) if f[0].startswith("SG10")] == []
    twin = _sample("samples/push-demo", "GID_DEMO", "TopicB", "b", service="repo/samples/push-demo", name="b.py")
    [(rule, message, kind)] = [f for f in _found(push, pull, twin) if f[0].startswith("SG10")]
    assert (rule, kind) == ("SG101", "example")
    assert "samples/pull-demo" not in message and "samples/push-demo/b.py" in message
    # `samples-apart = false`: every sample of the repository is one group's member, as before
    joined = [f[0] for f in _found(push, pull, config=Config(samples_apart=False)) if f[0].startswith("SG10")]
    assert joined == ["SG101"]


def test_outside_every_module_a_sample_is_its_folder() -> None:
    """Standalone sample scripts (no build file): one folder is one sample; the root's Maven/Gradle
    layout is one sample as a whole (a single-module sample app spans its packages)."""
    grpc = _sample("examples/grpc", "G", "TopicA", "*")
    remoting = _sample("examples/remoting", "G", "TopicB", "*")
    assert [f for f in _found(grpc, remoting) if f[0] == "SG101"] == []
    here = _sample("examples/grpc", "G", "TopicB", "*", name="other.py")
    assert [f[0] for f in _found(grpc, remoting, here) if f[0] == "SG101"] == ["SG101"]
    a = _sample("src/main/java/org/acme/example/a", "G", "TopicA", "*", name="A.java")
    b = _sample("src/main/java/org/acme/example/b", "G", "TopicB", "*", name="B.java")
    assert [f[0] for f in _found(a, b) if f[0] == "SG101"] == ["SG101"]


def test_a_sample_is_not_a_member_of_a_production_group() -> None:
    prod = _sample("orders", "GID_ORDERS", "TopicA", "a", service="repo/orders")
    demo = _sample("orders/examples", "GID_ORDERS", "TopicA", "b", service="repo/orders")
    assert [f for f in _found(prod, demo) if f[0].startswith("SG10")] == []
    other = _sample("billing", "GID_ORDERS", "TopicA", "b", service="repo/billing")
    assert [f[0] for f in _found(prod, demo, other) if f[0].startswith("SG10")] == ["SG102"]


def test_the_simulator_self_check_keeps_samples_apart_too() -> None:
    """SG905 must not fire for a group the rules judge per sample: the simulator sees the same members."""
    from subguard.rules import impact

    push = _sample("samples/push-demo", "GID_DEMO", "TopicA", "a", service="repo/samples/push-demo")
    pull = _sample("samples/pull-demo", "GID_DEMO", "TopicA", "b", service="repo/samples/pull-demo")
    judged = pipeline.judge([result(push, pull)], RULES, Config(), describe=impact.describer(jobs=1))
    assert [f.rule for f in judged.findings] == []
    joined = pipeline.judge([result(push, pull)], RULES, Config(samples_apart=False), describe=impact.describer(jobs=1))
    [f] = [f for f in joined.findings if f.rule == "SG102"]
    assert "lost" in f.impact
