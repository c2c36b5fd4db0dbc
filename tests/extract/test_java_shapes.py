"""Java shapes from public RocketMQ code (issue 19 items 1-7, issue 28 items 2-3), one fixture file per
shape in tests/fixtures/java-shapes/, each shaped like the public code it came from:

- factory in another class: TencentCloud/rocketmq-demo `ClientCreater.createPushConsumer(GROUP_NAME)`
- in-house wrapper class: `new RocketMqConsumerWrapper("g", "t").start()`
- private helper method: gnl00/springboot-rocketmq `register(name)` building a 5.x PushConsumer
- 5.x builders: apache/rocketmq-clients examples (locals, `bindTopic`, `SUB_ALL` statically imported)
- library constants: `MixAll.*`, `TopicValidator.*`
- pull and assign consumers: apache/rocketmq `simple/PullConsumer`, `PullScheduleService`, Tencent `AssignPullConsumer`
- namespaces; Aliyun ONS (AliwareMQ/mq-demo); OpenMessaging (apache/rocketmq example/openmessaging)
- rocketmq-spring: a listener implementing no listener interface, `@ExtConsumerResetConfiguration`, the
  `DefaultRocketMQListenerContainer` template beside an annotated listener
- command-line defaults (commons-cli, picocli) and a non-final field never reassigned
- framework plumbing (plumbing/): apache/rocketmq `MQPullConsumerScheduleService`, rocketmq-spring's
  auto-configuration + `RocketMQUtil` and 5.x `DefaultListenerContainer`, Spring Cloud Alibaba's
  `RocketMQMessageSource`, metaphysical-road's groups split from a config value in a loop, and wizhuo's
  reflective annotation registrar (a consumer per class carrying its annotation)

Every test asserts group, topic, expression, expression type, message model, registers, template and line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from subguard.core.config import Config
from subguard.core.model import ClientFamily, Consumer, Resolution
from subguard.extract import load_extractors
from subguard.rules import judge as pipeline
from subguard.rules.policy import load_policies
from subguard.scan.extraction import ScanResult, scan_repo

ROOT = Path(__file__).resolve().parent.parent / "fixtures" / "java-shapes"
SRC = "src/main/java/com/acme/demo/"


@pytest.fixture(scope="module")
def shapes() -> ScanResult:
    return scan_repo(ROOT, Config(), extractors=load_extractors(["spring", "java"]))


def line_of(rel: str, needle: str, nth: int = 0) -> int:
    lines = (ROOT / SRC / rel).read_text(encoding="utf-8").splitlines()
    hits = [i + 1 for i, text in enumerate(lines) if needle in text]
    assert hits, (rel, needle)
    return hits[nth]


def in_file(result: ScanResult, rel: str) -> list[Consumer]:
    return [
        c
        for c in result.consumers
        if c.location.path == SRC + rel or any(s.location.path == SRC + rel for s in c.subscriptions)
    ]


def one(result: ScanResult, group: str | None, rel: str) -> Consumer:
    found = [c for c in in_file(result, rel) if c.group.value == group and not c.template]
    assert len(found) == 1, [(c.group.value, c.location) for c in in_file(result, rel)]
    return found[0]


Row = tuple[str | None, str | None, str | None, str, str, bool, tuple[str, ...], int]


def row(c: Consumer, i: int = 0) -> Row:
    """(group, topic, expression, expression type, message model, registers, template, line)."""
    if not c.subscriptions:
        return (c.group.value, None, None, "-", c.message_model.value or "?", c.registers, c.template, c.location.line)
    s = c.subscriptions[i]
    return (
        c.group.value,
        s.topic.value,
        s.expression.value,
        s.expression_type.value,
        c.message_model.value or "?",
        c.registers,
        c.template,
        s.location.line,
    )


# ---- 1. factories in another class ----------------------------------------------------------------


def test_factory_in_another_class_binds_the_callers_constant(shapes: ScanResult) -> None:
    rel = "factory/BroadcastConsumer1.java"
    c = one(shapes, "group11", rel)
    assert row(c) == ("group11", "topic1", "*", "TAG", "BROADCASTING", True, (), line_of(rel, "subscribe(TOPIC_NAME"))
    assert c.location.line == line_of(rel, "ClientCreater.createPushConsumer(GROUP_NAME)")
    assert c.client is ClientFamily.JAVA_PUSH_4X
    assert c.group.resolution is Resolution.CONSTANT and "parameter groupName = GROUP_NAME" in c.group.detail
    # the factory's own setters apply to the instance
    assert c.name_server is not None and c.name_server.value == "http://rocketmq.example:9876"
    assert c.consume_from_where is not None and c.consume_from_where.value == "CONSUME_FROM_FIRST_OFFSET"


def test_factory_with_a_constant_of_a_third_class_and_sql(shapes: ScanResult) -> None:
    rel = "factory/SqlPushConsumer.java"
    c = one(shapes, "GID_SQL", rel)
    assert row(c) == (
        "GID_SQL",
        "TOPIC_SQL",
        "key1 IS NOT NULL AND key1='value1'",
        "SQL92",
        "CLUSTERING",
        True,
        (),
        line_of(rel, "subscribe(Names.SQL_TOPIC"),
    )
    assert c.group.resolution is Resolution.IMPORTED_CONSTANT
    assert c.consume_mode.value == "ORDERLY"


def test_lite_pull_factory_subscribe_and_assign(shapes: ScanResult) -> None:
    rel = "factory/SimplePullConsumer.java"
    c = one(shapes, "group", rel)
    assert row(c) == ("group", "topic", "*", "TAG", "CLUSTERING", True, (), line_of(rel, "subscribe(TOPIC_NAME"))
    assert c.client is ClientFamily.JAVA_LITE_PULL
    rel = "factory/AssignPullConsumer.java"
    c = one(shapes, "group", rel)
    assert row(c) == ("group", None, None, "-", "CLUSTERING", False, (), line_of(rel, "createPullConsumer(GROUP_NAME)"))
    assert any("assign mode" in n for n in c.notes)


def test_the_factory_itself_is_a_template(shapes: ScanResult) -> None:
    made = in_file(shapes, "common/ClientCreater.java")
    assert sorted(c.location.line for c in made) == [
        line_of("common/ClientCreater.java", "new DefaultMQPushConsumer(groupName"),
        line_of("common/ClientCreater.java", "new DefaultLitePullConsumer(groupName"),
    ]
    for c in made:
        assert c.template == ("groupName",) and c.group.value is None and not c.subscriptions


# ---- 2. wrapper classes and helpers ---------------------------------------------------------------


def test_wrapper_class_one_subscription_per_call_site(shapes: ScanResult) -> None:
    rel = "wrapper/ConsumerBootstrap.java"
    a = one(shapes, "GID_WRAP_A", rel)
    assert row(a) == ("GID_WRAP_A", "TOPIC_WRAP_A", "*", "TAG", "CLUSTERING", True, (), line_of(rel, '"GID_WRAP_A"'))
    b = one(shapes, "GID_WRAP_B", rel)
    assert row(b) == (
        "GID_WRAP_B",
        "TOPIC_WRAP_B",
        "*",
        "TAG",
        "CLUSTERING",
        True,
        (),
        line_of(rel, "Names.WRAP_GROUP"),
    )
    assert b.subscriptions[0].location.path == SRC + rel and b.location.path == SRC + rel
    # the wrapper's `tag = "*"` is a non-final field never reassigned: read as written, with provenance
    assert a.subscriptions[0].expression.detail == "RocketMqConsumerWrapper.tag (field initializer, never reassigned)"
    [tpl] = [c for c in in_file(shapes, "wrapper/RocketMqConsumerWrapper.java") if c.template]
    assert tpl.template == ("group", "topic") and tpl.location.line == line_of(
        "wrapper/RocketMqConsumerWrapper.java", "new DefaultMQPushConsumer(group)"
    )


def test_helper_method_called_per_consumer(shapes: ScanResult) -> None:
    rel = "helper/TagConsumers.java"
    line = line_of(rel, ".setSubscriptionExpressions(")
    for name in ("normal-order-consumer", "vip-order-consumer"):
        c = one(shapes, f"level8-{name}", rel)
        assert row(c) == (f"level8-{name}", "level8-order-topic", "*", "TAG", "CLUSTERING", True, (), line)
        assert c.client is ClientFamily.JAVA_5X
        assert c.location.line == line_of(rel, f'register("{name}")')
    [tpl] = [c for c in in_file(shapes, rel) if c.template]
    assert tpl.template == ("consumerName",)


# ---- 3. 5.x builders ------------------------------------------------------------------------------


def test_v5_builders_lines_locals_bind_topic_and_static_sub_all(shapes: ScanResult) -> None:
    rel = "v5/PushConsumerExample.java"
    push = one(shapes, "yourConsumerGroup", rel)
    # the local `topic` and the FilterExpression local are provenance; the line is the call's
    assert row(push) == (
        "yourConsumerGroup",
        "yourTopic",
        "yourMessageTagA",
        "TAG",
        "CLUSTERING",
        True,
        (),
        line_of(rel, ".setSubscriptionExpressions(Collections"),
    )
    lite = one(shapes, "yourLiteGroup", rel)
    assert row(lite) == (
        "yourLiteGroup",
        "yourParentTopic",
        "*",
        "TAG",
        "CLUSTERING",
        True,
        (),
        line_of(rel, ".bindTopic("),
    )
    assert lite.client is ClientFamily.JAVA_5X
    simple = one(shapes, "yourSimpleGroup", rel)
    # a map literal spanning lines: each entry at its own line
    assert row(simple, 0) == (
        "yourSimpleGroup",
        "simpleTopicA",
        "*",
        "TAG",
        "CLUSTERING",
        True,
        (),
        line_of(rel, '"simpleTopicA", SUB_ALL'),
    )
    assert row(simple, 1) == (
        "yourSimpleGroup",
        "simpleTopicB",
        "a > 1",
        "SQL92",
        "CLUSTERING",
        True,
        (),
        line_of(rel, '"simpleTopicB"'),
    )


# ---- 4. library constants -------------------------------------------------------------------------


def test_library_constants_with_their_source_file(shapes: ScanResult) -> None:
    rel = "lib/TraceDumpConsumer.java"
    c = one(shapes, "TOOLS_CONSUMER", rel)
    assert row(c, 0) == (
        "TOOLS_CONSUMER",
        "RMQ_SYS_TRACE_TOPIC",
        "*",
        "TAG",
        "CLUSTERING",
        True,
        (),
        line_of(rel, "RMQ_SYS_TRACE_TOPIC"),
    )
    assert row(c, 1) == ("TOOLS_CONSUMER", "%LMQ%123", "*", "TAG", "CLUSTERING", True, (), line_of(rel, "LMQ_PREFIX"))
    assert c.group.resolution is Resolution.IMPORTED_CONSTANT
    assert (
        c.group.detail
        == "MixAll.TOOLS_CONSUMER_GROUP (RocketMQ library constant, common/src/main/java/org/apache/rocketmq/common/MixAll.java)"
    )
    assert "TopicValidator.java" in c.subscriptions[0].topic.detail


# ---- 5. pull and assign ---------------------------------------------------------------------------


def test_pull_consumers_register_topics_or_nothing(shapes: ScanResult) -> None:
    rel = "pull/PullConsumer.java"
    c = one(shapes, "please_rename_unique_group_name_5", rel)
    assert row(c) == (
        "please_rename_unique_group_name_5",
        "TopicTest",
        "*",
        "TAG",
        "CLUSTERING",
        True,
        (),
        line_of(rel, "setRegisterTopics(topics)"),
    )
    assert c.client is ClientFamily.JAVA_PULL
    lmq = one(shapes, "CID_LMQ_PULL_1", rel)
    assert row(lmq) == (
        "CID_LMQ_PULL_1",
        "TopicLMQParent",
        "*",
        "TAG",
        "CLUSTERING",
        True,
        (),
        line_of(rel, "lmq.setRegisterTopics("),
    )
    plain = one(shapes, "GID_PLAIN_PULL", rel)
    assert row(plain) == ("GID_PLAIN_PULL", None, None, "-", "CLUSTERING", False, (), line_of(rel, '"GID_PLAIN_PULL"'))
    rel = "pull/PullScheduleService.java"
    sched = one(shapes, "GroupName1", rel)
    assert row(sched) == (
        "GroupName1",
        "TopicTest",
        "*",
        "TAG",
        "CLUSTERING",
        True,
        (),
        line_of(rel, "registerPullTaskCallback("),
    )
    assert sched.message_model.resolution is Resolution.LITERAL


# ---- 6. namespaces --------------------------------------------------------------------------------


def test_namespaces_keep_the_wire_name(shapes: ScanResult) -> None:
    rel = "ns/NamespaceConsumers.java"
    vendor = one(shapes, "MQ_INST_123|ns1%GID_VENDOR", rel)
    assert row(vendor) == (
        "MQ_INST_123|ns1%GID_VENDOR",
        "MQ_INST_123|ns1%TOPIC_VENDOR",
        "*",
        "TAG",
        "CLUSTERING",
        True,
        (),
        line_of(rel, "vendor.subscribe("),
    )
    assert vendor.namespace is not None and vendor.namespace.value == "MQ_INST_123|ns1"
    v1 = one(shapes, "ns2%GID_V1", rel)  # already prefixed: never ns2%ns2%GID_V1
    assert row(v1) == ("ns2%GID_V1", "TOPIC_V1", "*", "TAG", "CLUSTERING", True, (), line_of(rel, "v1.subscribe("))
    assert v1.namespace is not None and v1.namespace.value == "ns2"
    v2 = one(shapes, "GID_V2", rel)
    assert row(v2) == ("GID_V2", "TOPIC_V2", "*", "TAG", "CLUSTERING", True, (), line_of(rel, "v2.subscribe("))
    assert v2.namespace is not None and v2.namespace.value == "ns3"


def test_ons_and_openmessaging(shapes: ScanResult) -> None:
    rel = "ons/SimpleMQConsumer.java"
    c = one(shapes, "GID_ONS", rel)
    assert row(c) == (
        "GID_ONS",
        "TOPIC_ONS",
        "mq_test_tag",
        "TAG",
        "BROADCASTING",
        True,
        (),
        line_of(rel, "consumer.subscribe("),
    )
    order = one(shapes, "GID_ONS_ORDER", rel)
    assert row(order) == (
        "GID_ONS_ORDER",
        "TOPIC_ONS",
        "*",
        "TAG",
        "CLUSTERING",
        True,
        (),
        line_of(rel, "orderConsumer.subscribe("),
    )
    assert order.consume_mode.value == "ORDERLY"
    rel = "oms/SimplePushConsumer.java"
    oms = one(shapes, "OMS_CONSUMER", rel)
    assert row(oms) == (
        "OMS_CONSUMER",
        "OMS_HELLO_TOPIC",
        "*",
        "TAG",
        "CLUSTERING",
        True,
        (),
        line_of(rel, "consumer.attachQueue("),
    )


# ---- 7. rocketmq-spring ---------------------------------------------------------------------------


def test_listener_without_a_listener_interface_is_refused_at_startup(shapes: ScanResult) -> None:
    rel = "spring/AuditHandler.java"
    c = one(shapes, "GID_AUDIT", rel)
    assert (
        c.startup_failure is not None
        and "implements neither RocketMQListener nor RocketMQReplyListener" in c.startup_failure.reason
    )
    assert c.startup_failure.location is not None and c.startup_failure.location.line == line_of(
        rel, "@RocketMQMessageListener("
    )
    findings = pipeline.judge([shapes], pipeline.RuleSet.of(load_policies()), Config()).findings
    [refused] = [f for f in findings if f.location.path == SRC + rel]
    assert refused.rule == "SG906" and refused.location.line == line_of(rel, "@RocketMQMessageListener(")


def test_annotation_line_and_ext_consumer_reset(shapes: ScanResult) -> None:
    rel = "spring/OrderPaidListener.java"
    c = one(shapes, "GID_ORDER_PAID", rel)
    assert row(c) == (
        "GID_ORDER_PAID",
        "TOPIC_ORDER",
        "paid",
        "TAG",
        "CLUSTERING",
        True,
        (),
        line_of(rel, "@RocketMQMessageListener("),
    )
    assert c.startup_failure is None
    rel = "spring/ExtRocketMQTemplate.java"
    ext = one(shapes, "normalGroup", rel)  # group and tag fall back to rocketmq.simple-consumer.*
    assert row(ext) == (
        "normalGroup",
        "delayTopic",
        "*",
        "TAG",
        "CLUSTERING",
        True,
        (),
        line_of(rel, "@ExtConsumerResetConfiguration("),
    )
    assert ext.client is ClientFamily.SPRING_5X and ext.group.resolution is Resolution.PLACEHOLDER


def test_listener_container_is_a_template_without_a_note(shapes: ScanResult) -> None:
    rel = "spring/DefaultRocketMQListenerContainer.java"
    made = in_file(shapes, rel)
    assert made and all(c.template == ("consumerGroup", "anno", "topic") for c in made)
    findings = pipeline.judge([shapes], pipeline.RuleSet.of(load_policies()), Config()).findings
    assert not [f for f in findings if f.location.path == SRC + rel]
    assert row(one(shapes, "GID_ORDER_PAID", "spring/OrderPaidListener.java"))[:3] == (
        "GID_ORDER_PAID",
        "TOPIC_ORDER",
        "paid",
    )


# ---- issue 28 item 3: command-line defaults and fields never reassigned ----------------------------


def test_command_line_defaults_and_literal_fields(shapes: ScanResult) -> None:
    rel = "cli/BenchConsumer.java"
    fields = one(shapes, "benchmark_consumer", rel)
    assert row(fields) == (
        "benchmark_consumer",
        "BenchmarkTest",
        None,
        "TAG",
        "CLUSTERING",
        True,
        (),
        line_of(rel, "fromFields.subscribe("),
    )
    assert fields.group.detail == "BenchConsumer.group (field initializer, never reassigned)"
    topic = fields.subscriptions[0].topic
    assert (
        topic.resolution is Resolution.OPTION_DEFAULT
        and topic.detail == "command-line option -t/--topic (its default; set at run time)"
    )
    assert fields.subscriptions[0].expression.detail == "set at run time by the command-line option -e/--expression"
    cli = one(shapes, None, rel)
    assert row(cli) == (None, "BenchmarkCli", "*", "TAG", "CLUSTERING", True, (), line_of(rel, "fromCli.subscribe("))
    assert cli.group.detail == "set at run time by the command-line option 'g'"
    assert cli.subscriptions[0].topic.resolution is Resolution.OPTION_DEFAULT


# ---- issue 28 item 2: framework plumbing shapes are templates, never noted ---------------------------


def _notes(shapes: ScanResult, rel: str) -> list[str]:
    findings = pipeline.judge([shapes], pipeline.RuleSet.of(load_policies()), Config()).findings
    return [f"{f.rule}:{f.location.line}" for f in findings if f.location.path == SRC + rel]


def test_a_call_in_another_method_reads_that_methods_parameters(shapes: ScanResult) -> None:
    """MQPullConsumerScheduleService: the topic is a parameter of `registerPullTaskCallback`, not the
    same-named field with a literal initializer, and the consumer is a template of both parameters."""
    rel = "plumbing/ScheduleService.java"
    [c] = in_file(shapes, rel)
    assert row(c) == (
        None,
        None,
        "*",
        "TAG",
        "CLUSTERING",
        True,
        ("consumerGroup", "topic"),
        line_of(rel, "registerMessageQueueListener("),
    )
    assert not _notes(shapes, rel)


def test_a_call_site_passing_injected_properties_is_a_template_too(shapes: ScanResult) -> None:
    """RocketMQAutoConfiguration -> RocketMQUtil: the util's construction is a template, the bean method
    that feeds it from an injected properties object is one as well; a caller passing literals is a consumer."""
    util, config = "plumbing/ConsumerUtil.java", "plumbing/AcmeAutoConfiguration.java"
    templates = {c.template for c in in_file(shapes, util) + in_file(shapes, config) if c.template}
    assert templates == {("groupName", "selectorExpression", "topicName"), ("properties",), ("acmeProperties",)}
    assert row(one(shapes, "GID_AUDIT", config)) == (
        "GID_AUDIT",
        "TOPIC_AUDIT",
        "a > 1",
        "SQL92",
        "CLUSTERING",
        True,
        (),
        line_of(config, '"GID_AUDIT"'),
    )
    assert not _notes(shapes, util) and not _notes(shapes, config)


def test_setter_fed_container_with_a_local_assigned_twice(shapes: ScanResult) -> None:
    """The 5.x DefaultListenerContainer: `filterExpression` is null or a helper's result of getters of
    setter-fed fields; the group and topic are those getters."""
    rel = "plumbing/ListenerContainer.java"
    [c] = in_file(shapes, rel)
    assert c.template == ("this",) and c.group.value is None
    assert not _notes(shapes, rel)


def test_binder_source_with_a_field_computed_from_a_parameter(shapes: ScanResult) -> None:
    """Spring Cloud Alibaba's RocketMQMessageSource: `this.messageSelector = Utils.selector(props.getX())`
    is fed by the constructor's parameter, and the factory's group by the properties passed to it."""
    rel = "plumbing/MessageSource.java"
    [c] = [c for c in in_file(shapes, rel) if c.location.path == SRC + rel]
    assert c.template == ("properties", "name") and c.registers
    assert not _notes(shapes, rel)


def test_an_in_house_annotation_read_by_reflection_makes_a_consumer_of_each_carrier(shapes: ScanResult) -> None:
    """wizhuo/springboot-rocketmq's in-house `@RocketMqListener`, read at run time by a registrar that
    builds one consumer per bean carrying it: the registrar's construction is a template fed by the
    annotation, and each class carrying it (read even when the prefilter passed it over) is a consumer
    located at the annotation, with the values it writes (constants of nested classes) or the
    annotation's defaults. No note: nothing goes unread."""
    rel = "plumbing/AnnotationRegistrar.java"
    [c] = in_file(shapes, rel)
    assert c.template == ("@AcmeListener",) and c.group.value is None
    assert not _notes(shapes, rel)
    order = one(shapes, "GID_ORDER_ACME", "plumbing/OrderListener.java")
    at = line_of("plumbing/OrderListener.java", "@AnnotationRegistrar.AcmeListener")
    assert row(order) == ("GID_ORDER_ACME", "TOPIC_ORDER_ACME", "*", "TAG", "CLUSTERING", True, (), at)
    pay = one(shapes, "GID_PAY_ACME", "plumbing/PayListener.java")
    at = line_of("plumbing/PayListener.java", "@AnnotationRegistrar.AcmeListener")
    assert row(pay) == ("GID_PAY_ACME", "TOPIC_PAY_ACME", "*", "TAG", "CLUSTERING", True, (), at)
    assert pay.subscriptions[0].expression.detail.startswith('annotation element @AcmeListener.tag = "*" at ')
    assert pay.group.resolution is Resolution.IMPORTED_CONSTANT
    assert not _notes(shapes, "plumbing/PayListener.java") and not _notes(shapes, "plumbing/OrderListener.java")


def test_an_annotation_nobody_carries_makes_a_template(shapes: ScanResult) -> None:
    """hiwepy/rocketmq-plus-spring-boot-starter reads its own `@RocketmqPullConsumer` by reflection, and no
    class of the repository carries it: nothing goes unchecked, so the construction is a template fed by
    the annotation, without a note."""
    rel = "plumbing/PullRegistrar.java"
    [c] = in_file(shapes, rel)
    assert c.template == ("@PullListener",) and not _notes(shapes, rel)


def test_the_applications_injected_config_is_read_at_run_time_and_noted_once(shapes: ScanResult) -> None:
    """metaphysical-road/rocketmq-practice: `for (String g : config.getGroups().split(",")) start(g)` with
    `@Autowired AppConfig config`: the application's own configuration, read at run time, is a blind spot
    (not a template: nothing calls the helper with values of its own), noted once at the construction."""
    rel = "plumbing/ConsumerTask.java"
    [c] = in_file(shapes, rel)
    assert c.template == () and c.group.value is None and c.subscriptions[0].topic.value is None
    assert _notes(shapes, rel) == [f"SG902:{line_of(rel, 'new DefaultMQPushConsumer(item)')}"]


# ---- Aliyun ONS Spring beans, relays and injected parameters (keepRealTech/madagascar, FoodMate-Agent) ----


def test_ons_consumer_beans_read_their_properties_and_subscription_table(shapes: ScanResult) -> None:
    rel = "onsbean/FeedEventConsumerConfiguration.java"
    feed = one(shapes, "GID-feed", rel)
    # `this.getTopic()` / a field of the bound class: the class's own @ConfigurationProperties prefix
    assert row(feed) == (
        "GID-feed",
        "feed-event",
        "created || deleted",
        "TAG",
        "CLUSTERING",
        True,
        (),
        line_of(rel, "subscription.setTopic("),
    )
    assert feed.location.line == line_of(rel, "new ConsumerBean()")
    assert feed.client is ClientFamily.JAVA_PUSH_4X and feed.consume_mode.value == "CONCURRENTLY"
    audit = one(shapes, "GID-audit", rel)
    assert [row(audit, i) for i in range(2)] == [
        ("GID-audit", "audit-event", "level > 2", "SQL92", "BROADCASTING", True, (), line_of(rel, "audit.setTopic(")),
        ("GID-audit", "audit-all", "*", "TAG", "BROADCASTING", True, (), line_of(rel, "all.setTopic(")),
    ]
    assert audit.consume_mode.value == "ORDERLY"
    # the repository's own `ConsumerBean` (not ONS's) makes no consumer
    assert in_file(shapes, "onsbean/Registry.java") == []


def test_a_factory_followed_through_the_methods_that_pass_their_parameters_on(shapes: ScanResult) -> None:
    rel = "relay/MqBeans.java"
    event = one(shapes, "GID_RELAY_EVENT", rel)
    # MqBeans -> RocketMqContainer.orderly -> baseConsumer: the calls made on the way apply (orderly)
    assert row(event) == (
        "GID_RELAY_EVENT",
        "relay-event",
        "*",
        "TAG",
        "CLUSTERING",
        True,
        (),
        line_of(rel, ".orderly("),
    )
    assert event.consume_mode.value == "ORDERLY"
    # three calls deep, through `retrying` calling `concurrent` of its own class
    retry = one(shapes, "GID_RELAY_EVENT-retry", rel)
    assert row(retry)[1:3] == ("%RETRY%GID_RELAY_EVENT", "*") and retry.consume_mode.value == "CONCURRENTLY"
    assert retry.location.line == line_of(rel, ".retrying(")
    # `@Value` parameters of a @Bean method are the placeholders' values
    result = one(shapes, "GID_RELAY_RESULT", rel)
    assert row(result)[:3] == ("GID_RELAY_RESULT", "relay-result", "*")
    # the relays themselves are templates, never judged
    relays = [c for c in in_file(shapes, "relay/RocketMqContainer.java") if c.template]
    assert {c.location.line for c in relays} == {
        line_of("relay/RocketMqContainer.java", n, nth)
        for n, nth in (("= baseConsumer(", 0), ("= baseConsumer(", 1), ("return concurrent(", 0), ("new DefaultMQ", 0))
    }
    assert not [c for c in in_file(shapes, "relay/RocketMqContainer.java") if not c.template]


def test_a_vendor_property_put_on_one_arm_of_a_condition_holds_only_where_the_condition_does(
    shapes: ScanResult,
) -> None:
    rel = "ons/VendorConsumers.java"
    # `create(g, false)` / `create(g, true)`: the bound parameter decides which `put` runs
    assert one(shapes, "GID_VENDOR_QUEUE", rel).message_model.value == "CLUSTERING"
    assert one(shapes, "GID_VENDOR_FANOUT", rel).message_model.value == "BROADCASTING"
    # a field's value is not known: the model is unknown, with the condition named, never a guess
    maybe = one(shapes, "GID_VENDOR_MAYBE", rel).message_model
    assert maybe.value is None and "if (fanOut)" in maybe.detail


def test_a_class_behind_a_property_condition_the_config_does_not_meet_never_runs(shapes: ScanResult) -> None:
    rel = "vendor/VendorSwitch.java"
    runs = {c.group.value: c.never_runs for c in in_file(shapes, rel)}
    assert set(runs) == {
        "GID_SWITCH_ACTIVE",
        "GID_SWITCH_ALIYUN",
        "GID_SWITCH_FANOUT",
        "GID_SWITCH_AUDIT",
        "GID_SWITCH_RABBIT",
    }
    assert runs["GID_SWITCH_ACTIVE"] == runs["GID_SWITCH_AUDIT"] == ""  # met (ignoring case); not set: may be
    for group, key in (
        ("GID_SWITCH_ALIYUN", "shop.mq.vendor = aliYunRocketMQ"),
        ("GID_SWITCH_FANOUT", "shop.mq.broadcast.enabled"),  # set to false
        ("GID_SWITCH_RABBIT", "shop.mq.vendor = rabbitMQ"),  # a consumer the class builds in code
    ):
        assert f"@ConditionalOnProperty({key})" in runs[group] and "application.properties:" in runs[group], group
    off = one(shapes, "GID_SWITCH_ALIYUN", rel)
    assert not off.registers  # listed, never a group member
