"""Python consumer shapes of public code (issue 19 items 12-14, issue 28 items 2-3), one fixture
repo shaped like the code each came from: tests/fixtures/python/patterns."""

from __future__ import annotations

import os
import shutil
from functools import cache
from pathlib import Path

import pytest

from subguard.core.config import Config
from subguard.core.inventory import sort_consumers, subscription_rows
from subguard.core.model import Consumer, Resolution
from subguard.extract.python.extractor import EXTRACTOR
from subguard.extract.python.ir import AttrOf, Glob, Param
from subguard.rules.engine import run
from subguard.scan.extraction import ScanResult, scan_repo

REPO = Path(__file__).resolve().parents[1] / "fixtures" / "python" / "patterns"


@cache
def scan() -> ScanResult:
    return scan_repo(REPO, Config(), repo="patterns", extractors=[EXTRACTOR])


def rows() -> list[dict[str, object]]:
    return subscription_rows(sort_consumers(scan().consumers))


def consumer(consumer_id: str) -> Consumer:
    found = [c for c in scan().consumers if c.consumer_id == consumer_id]
    assert len(found) == 1, [c.consumer_id for c in scan().consumers]
    return found[0]


CL, BC = "CLUSTERING", "BROADCASTING"
NO: tuple[str, ...] = ()

# path, line, group, topic, expression, type, model, registers, template
CASES = [
    # 13: LitePushConsumer(config, group, bind_topic, ...) = {bind_topic: FilterExpression()}: the bind-topic argument's line
    ("lite/lite_push_consumer.py", 21, "ConsumerGroup", "parentTopic", "*", "TAG", CL, True, NO),
    ("lite/lite_push_consumer.py", 23, "ConsumerGroup", "parentTopic", "*", "TAG", CL, True, NO),
    # 13: FilterExpression() / FilterType.SQL of the SDK's own (vendored) tree
    ("example/push_consumer_example.py", 12, "consumer-group", "topic", "*", "TAG", CL, True, NO),
    # line policy: a map constant defined elsewhere gives the constructor argument's line (14), not the constant's (5)
    ("example/push_consumer_example.py", 14, "audit-group", "audit_topic", "level > 3", "SQL92", CL, True, NO),
    # issue 28 item 3: Django settings dict, through the repo's settings module and through django.conf
    ("logs/log_receive.py", 18, "logReceive", "LOG", "*", "TAG", CL, True, NO),
    ("logs/audit.py", 8, "GID_audit", "AUDIT_LOG", "*", "TAG", CL, True, NO),
    # 12: pytest fixtures injected by parameter name (conftest.py and the same module), one consumer per test
    ("tests/test_orders.py", 9, "GID_fixture", "orders", "paid||refunded", "TAG", CL, True, NO),
    ("tests/test_orders.py", 15, "GID_fixture", "refunds", "*", "TAG", CL, True, NO),
    ("tests/test_plain.py", 2, "GID_fixture", "plain_topic", "*", "TAG", CL, True, NO),
    ("tests/test_audit.py", 11, "GID_fixture_audit", "audit", "*", "TAG", BC, True, NO),
    # 12: a consumer passed to a function that subscribes it (positional and keyword)
    ("helpers/worker.py", 12, "GID_passed", "shipments", "created||shipped", "TAG", CL, True, NO),
    ("helpers/worker.py", 13, "GID_passed", "returns", "*", "TAG", CL, True, NO),
    # issue 28 item 2: templates (funboost's base-class attribute; a decorator registry) and a wrapper's instances
    ("framework/rocketmq_consumer.py", 21, None, None, "*", "TAG", CL, True, ("consumer_params",)),
    ("wrappers/mq_consumer.py", 33, None, None, None, "TAG", CL, True, ("prefix", "handler", "topic", "expression")),
    ("wrappers/app.py", 3, "GID_wrap_orders", "wrap_orders", "*", "TAG", CL, True, NO),
    ("wrappers/app.py", 6, "GID_wrap_payments", "wrap_payments", "paid||settled", "TAG", CL, True, NO),
    # issue 28 item 3: argparse defaults; an option without default and sys.argv are set at run time
    ("cli/consume.py", 16, "GID_cli", None, "*", "TAG", CL, True, NO),
    ("cli/consume.py", 22, None, "bench_topic", "*", "TAG", CL, True, NO),
    # class attributes with a literal initializer; `x or "fallback"`; reassigned attributes stay unknown
    ("misc/workers.py", 15, "GID_or_fallback", "stock", "in||out", "TAG", CL, True, NO),
    ("misc/workers.py", 27, "GID_reassigned", None, "*", "TAG", CL, True, NO),
    # 14: nothing resolvable, still emitted
    ("misc/workers.py", 37, None, None, None, "TAG", CL, True, NO),
    # PullConsumer registers no subscription with the broker
    ("misc/workers.py", 45, "GID_pull_only", "pull_topic", "a||b", "TAG", CL, False, NO),
    # a service class's method as the factory (refreshing-wind/agent_prod): called on an attribute
    # holding an instance, with settings read through an instance of a settings class, and on a local
    ("services/rocketmq_service.py", 17, "GID_AGENT_PYTHON", "TopicTest", "*", "TAG", CL, True, NO),
    ("services/rocketmq_service.py", 17, "GID_AUDIT_PYTHON", "TopicAudit", "created||paid", "TAG", CL, True, NO),
]


@pytest.mark.parametrize("path,line,group,topic,expression,etype,model,registers,template", CASES)
def test_pattern_table(
    path: str,
    line: int,
    group: str | None,
    topic: str | None,
    expression: str | None,
    etype: str,
    model: str,
    registers: bool,
    template: tuple[str, ...],
) -> None:
    matches = [r for r in rows() if r["path"] == path and r["line"] == line and r["group"] == group]
    assert len(matches) == 1, f"{path}:{line} -> {[(r['path'], r['line']) for r in rows()]}"
    row = matches[0]
    assert (row["group"], row["topic"], row["expression"], row["expression_type"]) == (group, topic, expression, etype)
    assert (row["message_model"], row["registers"], tuple(row["template"])) == (model, registers, template)  # type: ignore[arg-type]


def test_every_row_is_in_the_table() -> None:
    assert sorted((str(r["path"]), int(str(r["line"]))) for r in rows()) == sorted((c[0], c[1]) for c in CASES)


def test_a_service_method_as_factory_reads_settings_through_instances() -> None:
    """agent_prod: `self.mq_service = RocketMQService()` in `__init__`, then
    `self.mq_service.create_consumer(consumer_group=Config.mq.GROUP_AGENT, ...)` where `Config.mq` is a
    `RocketMQConfig()`: the method's parameters bound at the call, the settings' environment defaults
    read through the instance's class attributes."""
    c = consumer("services/rocketmq_service.py::RocketMQService.consumer@services/proxy_agent.py::ProxyAgent.start#1")
    assert (c.group.value, c.group.resolution, c.group.detail) == (
        "GID_AGENT_PYTHON",
        Resolution.ENV_DEFAULT,
        "MQ_GROUP_AGENT",
    )
    assert c.name_server is not None and c.name_server.value == "127.0.0.1:8081"
    assert c.template == ()


def test_every_construction_is_emitted_with_its_reasons() -> None:
    """Item 14: a construction nothing can resolve is a consumer with unknown parts, each with a reason."""
    c = consumer("misc/workers.py::dynamic:consumer")
    assert c.group.detail == "return value of group_from_registry()"
    [sub] = c.subscriptions
    assert not sub.topic.known and "next_topic" in (sub.topic.detail or "")
    assert not sub.expression.known and "compute_tags" in (sub.expression.detail or "")


def test_lite_push_consumer_binds_its_topic_with_all_tags() -> None:
    c = consumer("lite/lite_push_consumer.py::client1")
    [sub] = c.subscriptions
    assert (sub.topic.value, sub.topic.resolution, sub.topic.detail) == (
        "parentTopic",
        Resolution.CONSTANT,
        "bind_topic",
    )
    assert sub.expression.resolution is Resolution.DEFAULT and sub.tags == ()
    assert c.client.value == "python-grpc-5x" and c.name_server is not None
    assert c.name_server.value == "rmq-xxxx.rocketmq.gz.qcloud.tencenttdmq.com:8080"


def test_settings_dict_has_provenance() -> None:
    c = consumer("logs/log_receive.py::start_consume_log:log_consumer")
    assert (c.group.resolution, c.group.detail) == (
        Resolution.IMPORTED_CONSTANT,
        "mysite.settings.ROCKET_MQ['logConsumerName']",
    )
    assert c.name_server is not None and c.name_server.value == "127.0.0.1:9876"
    audit = consumer("logs/audit.py::start_audit:consumer")
    assert audit.subscriptions[0].topic.detail == "mysite.settings.ROCKET_MQ['auditTopic']"


def test_fixture_consumers_are_one_per_test_and_keep_the_fixture_setup() -> None:
    ids = sorted(c.consumer_id for c in scan().consumers if c.consumer_id.startswith("tests/conftest.py"))
    assert ids == [
        "tests/conftest.py::push_consumer:consumer@tests/test_orders.py::TestRefunds.test_refunds",
        "tests/conftest.py::push_consumer:consumer@tests/test_orders.py::test_orders_are_consumed",
        "tests/conftest.py::push_consumer:consumer@tests/test_plain.py::test_plain",
    ]
    c = consumer(ids[1])
    assert c.name_server is not None and c.name_server.value == "127.0.0.1:9876"  # set inside the fixture
    assert c.location.path == "tests/conftest.py" and c.location.line == 8


def test_templates_name_their_parameters_and_instances_are_the_call_sites() -> None:
    fw = consumer("framework/rocketmq_consumer.py::RocketmqConsumer._dispatch_task:consumer")
    assert fw.subscriptions[0].topic.detail == "parameter 'consumer_params' of function AbstractConsumer.__init__"
    wrapped = sorted(
        (c for c in scan().consumers if c.consumer_id.startswith("wrappers/mq_consumer.py::MQConsumer")),
        key=lambda c: c.location.line,
    )
    assert [(c.location.path, c.location.line, c.template) for c in wrapped] == [
        ("wrappers/app.py", 3, ()),
        ("wrappers/app.py", 4, ()),
    ]
    # the subscription's line is the topic argument of each call site (the wrapper's subscribe() is shared)
    assert [(s.location.line, s.location.column) for c in wrapped for s in c.subscriptions] == [(3, 40), (6, 5)]


def test_command_line_values_say_set_at_run_time() -> None:
    run = consumer("cli/consume.py::run:consumer@cli/consume.py::<module>#1")
    assert (run.group.value, run.group.resolution, run.group.detail) == (
        "GID_cli",
        Resolution.OPTION_DEFAULT,
        "--group",
    )
    [sub] = run.subscriptions
    assert sub.topic.detail == "command-line option --topic, set at run time (no default)"
    assert (sub.expression.value, sub.expression.resolution, sub.expression.detail) == (
        "*",
        Resolution.OPTION_DEFAULT,
        "--tag-expression",
    )
    bench = consumer("cli/consume.py::bench:consumer")
    assert bench.group.detail == "command-line argument sys.argv[1], set at run time"


def test_class_attributes_and_fallbacks_resolve_with_provenance() -> None:
    c = consumer("misc/workers.py::StockWorker.start:consumer")
    assert (c.group.resolution, c.group.detail) == (Resolution.ENV_DEFAULT, "MQ_CONSUMER_GROUP")
    [sub] = c.subscriptions
    assert (sub.topic.resolution, sub.topic.detail) == (Resolution.CONSTANT, "StockWorker.TOPIC")
    moved = consumer("misc/workers.py::ReassignedWorker.start:consumer")
    assert "assigned other values" in (moved.subscriptions[0].topic.detail or "")


def test_a_pull_consumer_is_listed_but_registers_nothing() -> None:
    c = consumer("misc/workers.py::pull_only:consumer")
    assert c.registers is False and c.client.value == "python-rocketmq-0.4"


def test_sdk_files_are_no_consumers() -> None:
    """The vendored SDK defines PushConsumer; its own modules declare no consumer."""
    assert not [c for c in scan().consumers if c.consumer_id.startswith("vendor/")]


def test_base_class_reader_never_raises() -> None:
    """The quick base-class read (stdlib ast) turns bad and hostile input into a failure."""
    from subguard.extract.python.attrs import parse_attrs
    from subguard.extract.python.ir import Failure, ModuleFacts

    assert isinstance(parse_attrs("bad.py", b"class A(:\n"), Failure)
    deep = b"class A:\n    def __init__(self, p):\n        self.x = " + b" + ".join([b"p"] * 20000) + b"\n"
    assert isinstance(parse_attrs("deep.py", deep), (Failure, ModuleFacts))
    facts = parse_attrs(
        "ok.py", b"class A(B):\n    T = 't'\n    def __init__(self, q):\n        if q:\n            self.x = q.name\n"
    )
    assert isinstance(facts, ModuleFacts)
    assert dict(facts.instance_attrs)["A.x"] == (AttrOf(Param("A.__init__", "q"), "name"),)
    assert dict(facts.bases)["A"] == (Glob("B"),)


def test_a_service_method_factory_follows_every_edit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cached scan of the service-method shape equals a cold one after each edit: the settings
    class's default, the method's default tag, the call's arguments, the attribute's class."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("SUBGUARD_CACHE_DIR", raising=False)
    root = tmp_path / "repo"
    shutil.copytree(REPO / "services", root / "services")
    clock = [1_700_000_000_000_000_000]

    def edit(rel: str, old: str, new: str) -> None:
        path = root / "services" / rel
        text = path.read_text(encoding="utf-8")
        assert old in text, (rel, old)
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
        clock[0] += 1_000_000_000
        os.utime(path, ns=(clock[0], clock[0]))

    def groups() -> set[tuple[str | None, str | None, str | None]]:
        warm = scan_repo(root, Config(), cache_key="k", extractors=[EXTRACTOR])
        assert warm == scan_repo(root, Config(), extractors=[EXTRACTOR])
        return {
            (c.group.value, c.subscriptions[0].topic.value, c.subscriptions[0].expression.value) for c in warm.consumers
        }

    assert ("GID_AGENT_PYTHON", "TopicTest", "*") in groups()
    edit("config.py", '"GID_AGENT_PYTHON"', '"GID_AGENT_2"')
    assert ("GID_AGENT_2", "TopicTest", "*") in groups()
    edit("rocketmq_service.py", 'tag: str = "*"', 'tag: str = "fresh"')
    assert ("GID_AGENT_2", "TopicTest", "fresh") in groups()
    edit("proxy_agent.py", '"TopicAudit"', '"TopicAudit2"')
    assert ("GID_AUDIT_PYTHON", "TopicAudit2", "created||paid") in groups()
    edit("proxy_agent.py", "self.mq_service = RocketMQService()", "self.mq_service = None")
    assert {g for g, _, _ in groups()} == {"GID_AUDIT_PYTHON"}  # that call site no longer reaches the method


REPEATED = """\
from rocketmq.client import PushConsumer

from settings import CONSUMERS, GROUPS


def on_message(msg):
    return None


def make(group):
    consumer = PushConsumer(group)
    consumer.subscribe("Made", on_message)
    return consumer


for cfg in CONSUMERS:
    looped = PushConsumer(cfg.group)
    looped.subscribe("Looped", on_message)

made = [make(g) for g in GROUPS]
single = PushConsumer("GID_SINGLE")
single.subscribe("Single", on_message)
"""


def test_a_construction_made_per_item_is_repeated(tmp_path: Path) -> None:
    """A construction in a loop, and a factory's instance called from a comprehension, make several
    consumers at run time (`repeated`); a construction made once does not. Alone in a repository, a
    repeated one with an unknown group is still noted: its own consumers can share that group."""
    (tmp_path / "workers.py").write_text(REPEATED, encoding="utf-8")
    (tmp_path / "settings.py").write_text("CONSUMERS = load()\nGROUPS = load()\n", encoding="utf-8")
    result = scan_repo(tmp_path, Config(), extractors=[EXTRACTOR])
    by_topic = {c.subscriptions[0].topic.value: c.repeated for c in result.consumers}
    assert by_topic == {"Looped": True, "Made": True, "Single": False}
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "worker.py").write_text(REPEATED.split("\n\nmade = ")[0] + "\n", encoding="utf-8")
    [looped] = [c for c in scan_repo(alone, Config(), extractors=[EXTRACTOR]).consumers if c.repeated]
    assert looped.group.value is None
    notes = [f for f in run([scan_repo(alone, Config(), extractors=[EXTRACTOR])], Config()) if f.rule == "SG902"]
    assert [(f.location.path, f.location.line) for f in notes] == [("worker.py", 17)]
