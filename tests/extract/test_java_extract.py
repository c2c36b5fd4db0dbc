"""Java + Spring extraction over a multi-module Maven fixture shaped like a real shop system."""

from __future__ import annotations

from pathlib import Path

import pytest

from subguard.core.config import Config
from subguard.core.model import ClientFamily, Consumer, FileStatus, Resolution
from subguard.extract import load_extractors
from subguard.scan.extraction import ScanResult, scan_repo

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "java"
SHOP = FIXTURES / "shop"


def line_of(rel: str, needle: str, root: Path = SHOP) -> int:
    """1-based line of the only occurrence of `needle` in a fixture file."""
    lines = (root / rel).read_text(encoding="utf-8").splitlines()
    hits = [i + 1 for i, text in enumerate(lines) if needle in text]
    assert len(hits) == 1, (rel, needle, hits)
    return hits[0]


@pytest.fixture(scope="module")
def shop() -> ScanResult:
    return scan_repo(SHOP, Config(), extractors=load_extractors(["spring", "java"]))


def by_group(result: ScanResult, group: str | None, env: str | None = None) -> list[Consumer]:
    return [c for c in result.consumers if c.group.value == group and (env is None or c.environment == env)]


def one(result: ScanResult, group: str, env: str | None = None) -> Consumer:
    found = by_group(result, group, env)
    assert len(found) == 1, [(c.group.value, c.environment) for c in result.consumers]
    return found[0]


ORDER = "order-service/src/main/java/com/acme/shop/order/"
INV = "inventory-service/src/main/java/com/acme/shop/inventory/"


# ---- rocketmq-spring listeners -------------------------------------------------------------------


def test_listener_with_imported_constants_and_concatenation(shop: ScanResult) -> None:
    consumers = by_group(shop, "shop_order_paid_cg")
    # nameServer defaults to ${rocketmq.name-server:}, which differs per profile -> one per profile
    assert sorted(c.environment for c in consumers) == ["dev", "prod", "test"]
    c = one(shop, "shop_order_paid_cg", "dev")
    assert c.client is ClientFamily.SPRING_LISTENER
    assert c.group.resolution is Resolution.IMPORTED_CONSTANT and c.group.detail == "MqConstants.ORDER_GROUP"
    sub = c.subscriptions[0]
    assert (sub.topic.value, sub.expression.value, sub.tags) == ("shop_order", "paid || refunded", ("paid", "refunded"))
    assert c.message_model.value == "BROADCASTING" and c.message_model.resolution is Resolution.LITERAL
    assert c.location.line == line_of(ORDER + "OrderPaidListener.java", "@RocketMQMessageListener(")
    # the annotation creates the subscription (line policy); where the topic came from is provenance
    assert sub.location.line == line_of(ORDER + "OrderPaidListener.java", "@RocketMQMessageListener(")
    assert sub.topic.location is not None and sub.topic.location.path.endswith("MqConstants.java")
    assert c.name_server is not None and c.name_server.value == "dev-ns:9876"
    assert one(shop, "shop_order_paid_cg", "prod").name_server.value == "prod-ns-1:9876;prod-ns-2:9876"  # type: ignore[union-attr]
    assert one(shop, "shop_order_paid_cg", "test").name_server.value == "127.0.0.1:9876"  # type: ignore[union-attr]


def test_listener_annotation_defaults(shop: ScanResult) -> None:
    c = one(shop, "shop_order_paid_cg", "dev")
    assert c.consume_mode.value == "CONCURRENTLY" and c.consume_mode.resolution is Resolution.DEFAULT
    assert (
        c.instance_name is not None
        and c.instance_name.value == "DEFAULT"
        and c.instance_name.resolution is Resolution.DEFAULT
    )
    assert c.consume_from_where is not None and c.consume_from_where.value == "CONSUME_FROM_LAST_OFFSET"
    assert c.subscriptions[0].expression_type.value == "TAG"


def test_placeholder_listener_one_consumer_per_profile(shop: ScanResult) -> None:
    placed = [c for c in shop.consumers if c.location.path.endswith("OrderPlacedListener.java")]
    groups = {c.environment: c.group.value for c in placed}
    assert groups == {"dev": "order_placed_cg_dev", "test": "order_placed_cg_test", "prod": "order_placed_cg"}
    for c in placed:
        assert c.group.resolution is Resolution.PLACEHOLDER
        assert c.consume_mode.value == "ORDERLY"
        assert c.subscriptions[0].expression_type.value == "SQL92"
        assert c.subscriptions[0].topic.value == "shop_order"


def test_placeholder_value_points_at_the_config_line(shop: ScanResult) -> None:
    dev = one(shop, "order_placed_cg_dev")
    yml = "order-service/src/main/resources/application.yml"
    assert dev.group.location is not None and dev.group.location.path == yml
    assert dev.group.location.line == line_of(yml, "placedGroup: order_placed_cg_dev")
    assert "shop.order.placed-group" in dev.group.detail
    test = one(shop, "order_placed_cg_test")
    assert test.group.location is not None and test.group.location.line == line_of(
        yml, "placed_group: order_placed_cg_test"
    )


def test_placeholder_default_and_properties_override(shop: ScanResult) -> None:
    assert one(shop, "order_placed_cg_dev").subscriptions[0].expression.value == "amount > 100"
    prod = one(shop, "order_placed_cg", "prod")
    assert prod.subscriptions[0].expression.value == "amount > 1000 AND region = 'EU'"  # continuation line joined


def test_unresolved_placeholder_is_its_raw_text_with_the_keys(shop: ScanResult) -> None:
    """rocketmq-spring resolves annotation attributes leniently: an unset placeholder is bound as written
    (issue 19, item 8), never null; the unresolved key is named in the resolution."""
    refunds = [c for c in shop.consumers if c.location.path.endswith("RefundListener.java")]
    assert {c.environment for c in refunds} == {"dev", "test", "prod"}
    prod = next(c for c in refunds if c.environment == "prod")
    assert prod.group.value == "refund_cg_prod"
    dev = next(c for c in refunds if c.environment == "dev")
    assert dev.group.value == "${shop.refund.group}" and dev.group.resolution is Resolution.PLACEHOLDER
    assert "unresolved ${shop.refund.group}" in dev.group.detail and "shop.refund.group" in dev.group.detail


def test_empty_selector_expression_keeps_star(shop: ScanResult) -> None:
    prod = one(shop, "refund_cg_prod")
    assert prod.subscriptions[0].expression.value == "*"
    assert prod.subscriptions[0].expression.resolution is Resolution.DEFAULT


# ---- plain client --------------------------------------------------------------------------------


def test_push_consumer_field_with_static_import_and_interface_constants(shop: ScanResult) -> None:
    c = one(shop, "shop_stock_cg")
    path = INV + "StockConsumerConfig.java"
    assert c.client is ClientFamily.JAVA_PUSH_4X
    assert c.group.resolution is Resolution.IMPORTED_CONSTANT
    assert c.location.line == line_of(path, "consumer = new DefaultMQPushConsumer(")
    topics = [(s.topic.value, s.expression.value, s.expression_type.value) for s in c.subscriptions]
    assert topics == [("shop_stock", "reserve || release", "TAG"), ("shop_audit", "level > 2", "SQL92")]
    assert c.subscriptions[0].location.line == line_of(path, "consumer.subscribe(STOCK_TOPIC, LOCAL_TAGS)")
    assert c.subscriptions[1].location.line == line_of(path, 'MessageSelector.bySql("level > 2")')


def test_resubscribe_records_the_overridden_call(shop: ScanResult) -> None:
    c = one(shop, "shop_stock_cg")
    assert [(s.topic.value, s.expression.value) for s in c.overridden] == [("shop_stock", "*")]
    assert c.overridden[0].location.line == line_of(
        INV + "StockConsumerConfig.java", 'consumer.subscribe(STOCK_TOPIC, "*")'
    )


def test_push_consumer_setters(shop: ScanResult) -> None:
    c = one(shop, "shop_stock_cg")
    assert c.message_model.value == "BROADCASTING"
    assert c.consume_mode.value == "ORDERLY"
    assert c.consume_from_where is not None and c.consume_from_where.value == "CONSUME_FROM_FIRST_OFFSET"
    assert c.instance_name is not None and c.instance_name.value == "stock-node"
    # @Value("${inventory.namesrv}") field resolved against the module's application.properties
    assert c.name_server is not None and c.name_server.value == "ns-a:9876;ns-b:9876"
    assert c.name_server.resolution is Resolution.PLACEHOLDER


def test_lite_pull_with_local_variable_and_client_ip(shop: ScanResult) -> None:
    c = one(shop, "stock_lite_cg")
    assert c.client is ClientFamily.JAVA_LITE_PULL
    assert (c.subscriptions[0].topic.value, c.subscriptions[0].expression.value) == ("shop_stock", "reserve")
    assert c.client_ip is not None and c.client_ip.value == "10.0.0.7"
    assert c.message_model.resolution is Resolution.DEFAULT


def test_pull_consumer_set_consumer_group(shop: ScanResult) -> None:
    c = one(shop, "stock_pull_cg")
    assert c.client is ClientFamily.JAVA_PULL and c.subscriptions == ()
    assert c.location.line == line_of(INV + "Pullers.java", "new DefaultMQPullConsumer()")


def test_namespace_constructor_and_null_expression(shop: ScanResult) -> None:
    c = one(shop, "stock_ns_cg")
    assert c.namespace is not None and c.namespace.value == "tenant_a" and c.namespace.resolution is Resolution.CONSTANT
    sub = c.subscriptions[0]
    assert sub.topic.value == "shop_notify" and sub.topic.detail == "MqConstants.Notify.TOPIC"
    assert sub.expression.value == "*" and sub.tags == ()


def test_rpc_hook_constructor_and_dynamic_topic(shop: ScanResult) -> None:
    c = one(shop, "stock_hook_cg")
    assert c.namespace is None
    sub = c.subscriptions[0]
    assert (
        sub.topic.value is None and sub.topic.resolution is Resolution.DYNAMIC and "dynamicTopic()" in sub.topic.detail
    )
    assert sub.tags == ("a", "b")


def test_grpc_push_builder_with_map_put(shop: ScanResult) -> None:
    c = one(shop, "stock_grpc_cg")
    assert c.client is ClientFamily.JAVA_5X
    assert c.group.resolution is Resolution.CONSTANT
    subs = [(s.topic.value, s.expression.value, s.expression_type.value) for s in c.subscriptions]
    assert subs == [("shop_stock", "reserve", "TAG"), ("shop_audit", "level > 3", "SQL92")]
    assert c.subscriptions[1].location.line == line_of(INV + "GrpcConsumers.java", 'subs.put("shop_audit"')


def test_grpc_simple_builder_with_singleton_map(shop: ScanResult) -> None:
    c = one(shop, "stock_simple_cg")
    assert c.client is ClientFamily.JAVA_5X
    assert [(s.topic.value, s.expression.value) for s in c.subscriptions] == [("shop_stock", "*")]


# ---- v5 starter and Ext configuration -------------------------------------------------------------


def test_v5_annotation_told_apart_by_import(shop: ScanResult) -> None:
    c = one(shop, "notify_v5_cg")
    assert c.client is ClientFamily.SPRING_5X
    assert c.subscriptions[0].topic.value == "shop_notify"
    assert c.subscriptions[0].tags == ("sms", "mail")
    assert c.name_server is not None and c.name_server.value == "proxy:8081"


def test_ext_consumer_configuration_is_lite_pull(shop: ScanResult) -> None:
    c = one(shop, "notify_pull_cg")
    assert c.client is ClientFamily.SPRING_LITE_PULL
    assert c.subscriptions[0].expression.value == "push"


# ---- files accounted for ---------------------------------------------------------------------------


def test_constants_class_skipped_by_prefilter_is_loaded_and_recorded(shop: ScanResult) -> None:
    rec = {r.path: r for r in shop.files}
    assert rec["common/src/main/java/com/acme/shop/common/MqConstants.java"].status is FileStatus.PARSED
    assert rec["common/src/main/java/com/acme/shop/common/Topics.java"].status is FileStatus.PARSED


def test_broken_java_fails_with_line_and_rest_extracted(shop: ScanResult) -> None:
    rec = {r.path: r for r in shop.files}
    broken = rec["legacy-service/src/main/java/com/acme/shop/legacy/Broken.java"]
    assert broken.status is FileStatus.FAILED and "syntax error" in broken.reason
    assert broken.reason.startswith(
        f"line {line_of('legacy-service/src/main/java/com/acme/shop/legacy/Broken.java', 'legacy_cg')}:"
    )
    assert by_group(shop, "legacy_cg") == []
    assert one(shop, "legacy_ok_cg").subscriptions[0].tags == ("old", "new")


def test_every_file_has_one_record(shop: ScanResult) -> None:
    on_disk = {p.relative_to(SHOP).as_posix() for p in SHOP.rglob("*") if p.is_file()}
    assert {r.path for r in shop.files} == on_disk


def test_comment_lines_keep_their_numbers(shop: ScanResult) -> None:
    c = one(shop, "shop_order_paid_cg", "dev")
    path = ORDER + "OrderPaidListener.java"
    waiver = line_of(path, "subguard: ignore[SG102]")
    assert waiver == line_of(path, "selectorExpression = MqConstants.TAG_PAID")
    assert c.subscriptions[0].expression.location is not None


# ---- constructor overloads and text blocks --------------------------------------------------------


def _scan_java(tmp_path: Path, source: str) -> ScanResult:
    path = tmp_path / "src/main/java/com/acme/Workers.java"
    path.parent.mkdir(parents=True)
    path.write_text(source, encoding="utf-8")
    return scan_repo(tmp_path, Config(), extractors=load_extractors(["spring", "java"]))


CTOR_SOURCE = """package com.acme;

import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;

public class Workers {
    static final String NS = "shop";

    DefaultMQPushConsumer fromParameter(String cg) {
        return new DefaultMQPushConsumer(cg);
    }

    DefaultMQPushConsumer fromEnvironment() {
        return new DefaultMQPushConsumer(System.getenv("CONSUMER_GROUP"));
    }

    DefaultMQPushConsumer fromCall() {
        return new DefaultMQPushConsumer(groupName());
    }

    void hookOnly() throws Exception {
        DefaultMQPushConsumer hooked = new DefaultMQPushConsumer(new AclClientRPCHook(null));
        hooked.start();  // started here: it runs with the client's default group
    }

    DefaultMQPushConsumer namespaced() {
        return new DefaultMQPushConsumer(NS, "GID_NAMESPACED");
    }

    DefaultMQPushConsumer withTrace() {
        return new DefaultMQPushConsumer("GID_TRACED", true);
    }

    DefaultMQPushConsumer ambiguous(String a, String b) {
        return new DefaultMQPushConsumer(a, b);
    }

    String groupName() {
        return "computed";
    }
}
"""


def test_constructor_overloads_never_guess_a_group(tmp_path: Path) -> None:
    """A group argument subguard cannot type is unknown with a reason, not the default group: a
    parameter, System.getenv and a method call are Strings, so the constructor is (String group)."""
    result = _scan_java(tmp_path, CTOR_SOURCE)
    found = {c.location.line: c for c in result.consumers}
    lines = CTOR_SOURCE.splitlines()

    def at(needle: str) -> Consumer:
        [line] = [i + 1 for i, text in enumerate(lines) if needle in text]
        return found[line]

    for needle, reason in (
        ("(cg)", "`cg` is a parameter of the enclosing method"),
        ("getenv", "only known at run time"),
        ("(groupName())", "groupName()"),
    ):
        group = at(needle).group
        assert group.value is None and group.resolution is Resolution.DYNAMIC, needle
        assert reason in (group.detail or ""), (needle, group.detail)
    assert at("AclClientRPCHook(null)").group.value == "DEFAULT_CONSUMER"
    namespaced = at('(NS, "GID_NAMESPACED")')
    assert namespaced.group.value == "GID_NAMESPACED" and namespaced.namespace is not None
    assert namespaced.namespace.value == "shop"
    assert at('("GID_TRACED", true)').group.value == "GID_TRACED"
    ambiguous = at("(a, b)").group
    assert ambiguous.value is None and "cannot tell whether the group" in (ambiguous.detail or "")
    assert not any(
        c.group.value == "DEFAULT_CONSUMER"
        for c in result.consumers
        if c.location.line != at("AclClientRPCHook(null)").location.line
    )


def test_text_blocks_are_stripped_as_javac_does(tmp_path: Path) -> None:
    source = '''package com.acme;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;

public class Workers {
    static final String TOPIC = """
        text_block_topic""";
    static final String TAGS = """
        created || \\
        paid
        """;

    void start() throws Exception {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("GID_TEXT_BLOCK");
        consumer.subscribe(TOPIC, TAGS);
        consumer.start();
    }
}
'''
    [consumer] = _scan_java(tmp_path, source).consumers
    [sub] = consumer.subscriptions
    assert sub.topic.value == "text_block_topic"
    assert sub.expression.value == "created || paid\n" and sub.tags == ("created", "paid")


def test_a_placeholder_of_a_module_whose_config_is_broken_says_so(tmp_path: Path) -> None:
    (tmp_path / "pom.xml").write_text("<project><artifactId>orders</artifactId></project>\n", encoding="utf-8")
    config = tmp_path / "src/main/resources/application.yml"
    config.parent.mkdir(parents=True)
    config.write_text("app:\n\ttopic: orders\n", encoding="utf-8")  # a tab: not YAML
    source = """package com.acme;

import org.apache.rocketmq.spring.annotation.RocketMQMessageListener;
import org.apache.rocketmq.spring.core.RocketMQListener;
import org.springframework.stereotype.Component;

@Component
@RocketMQMessageListener(consumerGroup = "GID_ORDERS", topic = "${app.topic}")
public class OrderListener implements RocketMQListener<String> {
    public void onMessage(String message) {
    }
}
"""
    [consumer] = _scan_java(tmp_path, source).consumers
    topic = consumer.subscriptions[0].topic
    assert topic.value == "${app.topic}" and "unresolved ${app.topic}" in (topic.detail or "")
    assert "src/main/resources/application.yml could not be parsed: see SG901" in (topic.detail or "")


def test_unicode_escapes_are_translated_as_javac_does(tmp_path: Path) -> None:
    """JavaCC-generated parsers write a backslash char as '\\u005c' (JLS 3.3: escapes are translated
    before lexing); such a file is valid Java, never an SG901, and its consumers are read."""
    source = r"""package com.acme;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;

public class Escaped {
    static final char BACKSLASH = '\u005c\';
    static final String NAME = "GID_\u0045SCAPED";
    public void start() throws Exception {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(NAME);
        consumer.subscribe("TOPIC_ESCAPED", "a || b");
    }
}
"""
    result = _scan_java(tmp_path, source)
    assert [f for f in result.files if f.status.value == "failed"] == []
    [consumer] = result.consumers
    assert consumer.group.value == "GID_ESCAPED"
    assert (consumer.subscriptions[0].topic.value, consumer.subscriptions[0].location.line) == ("TOPIC_ESCAPED", 10)


def test_old_mac_line_ends_are_line_ends_as_javac_reads_them(tmp_path: Path) -> None:
    """A file whose lines end with a lone CR (lilishop's TradeServiceImpl.java) is valid Java: a `//`
    comment ends at the CR, never an SG901, and every line is where an editor shows it."""
    source = "\r".join(
        [
            "package com.acme;",
            "",
            "import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;",
            "",
            "// written on a classic Mac",
            "public class OldMac {",
            "    public void start() throws Exception {",
            '        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("GID_OLD_MAC"); // the group',
            '        consumer.subscribe("TOPIC_OLD_MAC", "a || b");',
            "    }",
            "}",
            "",
        ]
    )
    result = _scan_java(tmp_path, source)
    assert [f for f in result.files if f.status.value == "failed"] == []
    [consumer] = result.consumers
    assert (consumer.group.value, consumer.location.line) == ("GID_OLD_MAC", 8)
    assert (consumer.subscriptions[0].topic.value, consumer.subscriptions[0].location.line) == ("TOPIC_OLD_MAC", 9)


def test_a_construction_made_per_item_is_repeated(tmp_path: Path) -> None:
    """doudoudrive's `MqPushConsumerFactory`: a private method builds each consumer and a lambda over
    the listeners calls it, so one declaration makes several consumers at run time (`repeated`); so
    does a construction in a loop. One made once is not."""
    source = """package com.acme;

import java.util.List;
import java.util.Map;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;

public class Workers {
    private Map<String, Listener> listeners;
    private List<String> groups;

    public void startAll() throws Exception {
        listeners.forEach((topic, listener) -> {
            DefaultMQPushConsumer consumer = create(listener);
        });
        for (String group : groups) {
            DefaultMQPushConsumer looped = new DefaultMQPushConsumer(group);
            looped.subscribe("TopicLooped", "*");
        }
        DefaultMQPushConsumer single = new DefaultMQPushConsumer("GID_SINGLE");
        single.subscribe("TopicSingle", "*");
    }

    private DefaultMQPushConsumer create(Listener listener) throws Exception {
        Config config = listener.getConfig();
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer();
        consumer.setConsumerGroup(config.getGroup());
        consumer.subscribe(config.getTopic(), String.join("||", config.getTags()));
        return consumer;
    }
}
"""
    result = _scan_java(tmp_path, source)
    by_line = {c.location.line: c.repeated for c in result.consumers}
    # repeated: the lambda's call of the helper (its instance), the helper's own construction (called
    # from the lambda) and the loop's construction; the single one is not
    assert by_line == {14: True, 17: True, 20: False, 26: True}, by_line


def test_a_consumer_built_from_a_getter_of_its_own_state_is_a_template(tmp_path: Path) -> None:
    """A framework's container builds its consumer from a configuration object someone else fills
    (`this.getConsumerGroup()`, `properties.getGroup()`): a template, listed and never noted."""
    source = """package com.acme;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;

public class ListenerContainer {
    private ConsumerProperties properties;

    public void start() throws Exception {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(this.getConsumerGroup());
        consumer.subscribe(properties.getTopic(), "*");
        consumer.start();
    }
}
"""
    [consumer] = _scan_java(tmp_path, source).consumers
    assert consumer.template == ("this", "properties")


_BOUND_CONFIG = """package com.acme.config;

import org.springframework.boot.context.properties.ConfigurationProperties;

@ConfigurationProperties(prefix = "acme.mq")
public class MqConfig {
    private String consumerGroup;
    private String topic;

    public String getConsumerGroup() {
        return consumerGroup;
    }

    public String getTopic() {
        return topic;
    }
}
"""

_BOUND_TASK = """package com.acme.task;

import com.acme.config.MqConfig;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.springframework.beans.factory.annotation.Autowired;

public class ConsumerTask {
    @Autowired
    private MqConfig mqConfig;

    public void start() throws Exception {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(mqConfig.getConsumerGroup());
        consumer.subscribe(mqConfig.getTopic(), "paid");
        consumer.start();
    }
}
"""


def test_a_configuration_properties_getter_reads_its_modules_config(tmp_path: Path) -> None:
    """`@Autowired MqConfig config; config.getConsumerGroup()` with `@ConfigurationProperties("acme.mq")`:
    the module's `acme.mq.consumer-group` (relaxed binding), each module with its own same-named class and
    config; a module that does not set the key keeps the value unknown, naming the key and the field."""
    modules = {
        "order-service": "acme:\n  mq:\n    consumer-group: GID_ORDER\n    topic: TOPIC_ORDER\n",
        "billing-service": "acme.mq.consumerGroup=GID_BILLING\nacme.mq.topic=TOPIC_BILLING\n",
        "audit-service": "",
    }
    for name, config in modules.items():
        root = tmp_path / name
        (root / "pom.xml").parent.mkdir(parents=True)
        (root / "pom.xml").write_text("<project/>\n", encoding="utf-8")
        for rel, text in (("config/MqConfig.java", _BOUND_CONFIG), ("task/ConsumerTask.java", _BOUND_TASK)):
            path = root / "src/main/java/com/acme" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        resources = root / "src/main/resources"
        resources.mkdir(parents=True)
        ext = "yml" if config.startswith("acme:") else "properties"
        (resources / f"application.{ext}").write_text(config or "server.port=8080\n", encoding="utf-8")
    result = scan_repo(tmp_path, Config(), extractors=load_extractors(["spring", "java"]))
    by_module = {c.location.path.split("/")[0]: c for c in result.consumers}
    order, billing, audit = by_module["order-service"], by_module["billing-service"], by_module["audit-service"]
    assert (order.group.value, order.subscriptions[0].topic.value) == ("GID_ORDER", "TOPIC_ORDER")
    assert order.group.resolution is Resolution.PLACEHOLDER
    assert order.group.location is not None and order.group.location.path.endswith("application.yml")
    assert (billing.group.value, billing.subscriptions[0].topic.value) == ("GID_BILLING", "TOPIC_BILLING")
    assert audit.group.value is None and audit.template == ()
    assert "placeholder ${acme.mq.consumer-group} is not set" in (audit.group.detail or "")
    assert "MqConfig.consumerGroup, @ConfigurationProperties prefix 'acme.mq'" in (audit.group.detail or "")


def test_an_empty_expression_is_inventoried_as_the_star_it_registers(tmp_path: Path) -> None:
    """`subscribe(topic, "")` (or a constant holding "") registers SUB_ALL: FilterAPI.buildSubscriptionData
    turns an empty subString into '*', so the inventory shows what the broker keeps."""
    source = """package com.acme;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;

public class Empty {
    static final String NO_TAGS = "";
    public void start() throws Exception {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("GID_EMPTY");
        consumer.subscribe("TOPIC_A", "");
        consumer.subscribe("TOPIC_B", NO_TAGS);
        consumer.subscribe("TOPIC_C", "a||b");
        consumer.start();
    }
}
"""
    [consumer] = _scan_java(tmp_path, source).consumers
    got = [(s.topic.value, s.expression.value, s.expression.resolution) for s in consumer.subscriptions]
    assert got == [
        ("TOPIC_A", "*", Resolution.DEFAULT),
        ("TOPIC_B", "*", Resolution.DEFAULT),
        ("TOPIC_C", "a||b", Resolution.LITERAL),
    ]
