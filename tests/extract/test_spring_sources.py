"""Where Spring config comes from, in the shapes real Spring Boot / Spring Cloud apps use (issue 19
items 8-11, issue 18's Maven-filtered YAML): shared starter modules, unresolved placeholders,
`application-default.*`, `spring.config.import` (classpath, Nacos data-id files), `@..@` tokens of
Maven resource filtering, and the Spring Cloud Stream binder a binding uses."""

from __future__ import annotations

from pathlib import Path

from subguard.core.config import Config
from subguard.core.model import ClientFamily, Consumer, FileStatus, Resolution
from subguard.extract import load_extractors
from subguard.extract.spring.env import BASE, ConfigValue, canonical, config_text_value, resolve
from subguard.extract.spring.extractor import ModuleConfig
from subguard.extract.spring.yaml_files import read_yaml
from subguard.scan.extraction import ScanResult, scan_repo

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "spring"
MALL = FIXTURES / "mall"
NACOS = "doc/nacos/MALL_GROUP/mall-order-mq.yaml"


def line_of(root: Path, rel: str, needle: str) -> int:
    lines = (root / rel).read_text(encoding="utf-8").splitlines()
    hits = [i + 1 for i, text in enumerate(lines) if needle in text]
    assert len(hits) == 1, (rel, needle, hits)
    return hits[0]


def scan(root: Path) -> ScanResult:
    return scan_repo(root, Config(), extractors=load_extractors(["build", "spring", "java"]))


def by_topic(result: ScanResult, topic: str | None) -> Consumer:
    found = [c for c in result.consumers if c.subscriptions and c.subscriptions[0].topic.value == topic]
    assert len(found) == 1, [(c.group.value, [s.topic.value for s in c.subscriptions]) for c in result.consumers]
    return found[0]


def fields(c: Consumer) -> tuple[object, ...]:
    sub = c.subscriptions[0]
    return (
        c.group.value,
        sub.topic.value,
        sub.expression.value,
        sub.expression_type.value,
        c.message_model.value,
        sub.location.path,
        sub.location.line,
        c.environment,
    )


# ---- item 8: unresolved placeholders keep their text; shared starters use their applications' config -------


def test_unresolved_binding_placeholder_is_its_raw_text_with_the_keys() -> None:
    c = by_topic(scan(MALL), "${mall.audit.topic}")
    assert fields(c) == (
        "order_audit_cg",
        "${mall.audit.topic}",
        "*",
        "TAG",
        "CLUSTERING",
        NACOS,
        line_of(MALL, NACOS, "destination: ${mall.audit.topic}"),
        "",
    )
    topic = c.subscriptions[0].topic
    assert topic.resolution is Resolution.PLACEHOLDER and topic.known
    assert "unresolved ${mall.audit.topic}" in topic.detail and "keys: mall.audit.topic" in topic.detail


def test_resolve_keeps_the_text_spring_binds() -> None:
    cfg = {canonical("ns"): ConfigValue("prod", "a.yml", 1, 1, "ns")}
    res = resolve("${ns}%${group.name}-${tail:x}", cfg)
    assert res.value is None and res.missing == ("group.name",) and res.text == "prod%${group.name}-x"
    v = config_text_value("${ns}%${group.name}", cfg, None, "g")
    assert (v.value, v.resolution) == ("prod%${group.name}", Resolution.PLACEHOLDER) and "ns,group.name" in v.detail


def test_shared_starter_of_one_application_resolves_from_its_config() -> None:
    # Gradle: points-app depends on project(':points-mq-starter'); the listener lives in the starter
    root = FIXTURES / "points"
    [c] = scan(root).consumers
    java = "points-mq-starter/src/main/java/com/acme/points/mq/PointsListener.java"
    assert c.client is ClientFamily.SPRING_LISTENER
    assert fields(c) == (
        "points_cg",
        "POINTS_CHANGED",
        "delta > 0",
        "SQL92",
        "BROADCASTING",
        java,
        line_of(root, java, "@RocketMQMessageListener"),
        "",
    )
    assert c.group.resolution is Resolution.PLACEHOLDER and c.group.detail == "points.mq.group"
    app = "points-app/src/main/resources/application.yml"
    assert c.group.location is not None and (c.group.location.path, c.group.location.line) == (
        app,
        line_of(root, app, "group: points_cg"),
    )


def test_shared_starter_of_several_applications_keeps_what_they_agree_on() -> None:
    result = scan(MALL)
    c = by_topic(result, "ORDER_EVENT")
    java = "mall-common-mq/src/main/java/com/acme/mall/mq/OrderEventListener.java"
    assert fields(c) == (
        None,
        "ORDER_EVENT",
        None,
        "TAG",
        "CLUSTERING",
        java,
        line_of(MALL, java, "@RocketMQMessageListener"),
        "",
    )
    assert c.subscriptions[0].topic.resolution is Resolution.PLACEHOLDER  # mall-order and mall-stock agree
    assert (
        not c.group.known and not c.subscriptions[0].expression.known
    )  # they set group and tags differently: no default
    modules: dict[str, ModuleConfig] = result.facts["spring.modules"]  # type: ignore[assignment]
    shared = modules["mall-common-mq"]
    assert shared.via == ("mall-order", "mall-stock")
    assert shared.views[BASE][canonical("mall.mq.order-event.group")].differs == (
        "mall-order: 'order_event_cg'",
        "mall-stock: 'stock_order_event_cg'",
    )


# ---- item 9: application-default, spring.config.import, Nacos data-id files ---------------------------------


def test_nacos_import_reads_the_data_id_file_of_its_group() -> None:
    c = by_topic(scan(MALL), "ORDER_PAY")
    assert fields(c) == (
        "order_pay_cg",
        "ORDER_PAY",
        "amount > 100 AND channel = 'app'",
        "SQL92",
        "BROADCASTING",
        NACOS,
        line_of(MALL, NACOS, "destination: ORDER_PAY"),
        "",
    )
    assert c.client is ClientFamily.SPRING_CLOUD_STREAM
    assert c.name_server is not None and c.name_server.value == "rocketmq-nameserver:9876"
    assert c.location.line == line_of(MALL, NACOS, "group: order_pay_cg")
    assert not any(x.group.value == "wrong_cg" for x in scan(MALL).consumers)  # the same data-id of another group


def test_classpath_import_feeds_placeholders_and_files_are_accounted_for() -> None:
    result = scan(MALL)
    modules: dict[str, ModuleConfig] = result.facts["spring.modules"]  # type: ignore[assignment]
    order = modules["mall-order"].views[BASE]
    tags = order[canonical("mall.mq.order-event.tags")]
    assert (tags.value, tags.path) == ("created || paid", "mall-order/src/main/resources/mq/order-listeners.yml")
    rec = {r.path: r for r in result.files}
    assert rec["mall-order/src/main/resources/mq/order-listeners.yml"].status is FileStatus.PARSED
    assert rec[NACOS].status is FileStatus.PARSED


def test_application_default_is_the_base_view_only(tmp_path: Path) -> None:
    c = by_topic(scan(MALL), "ORDER_REFUND_LOCAL")
    default = "mall-order/src/main/resources/application-default.yml"
    assert fields(c) == (
        "order_refund_cg",
        "ORDER_REFUND_LOCAL",
        "*",
        "TAG",
        "CLUSTERING",
        default,
        line_of(MALL, default, "destination: ORDER_REFUND_LOCAL"),
        "",
    )
    res = tmp_path / "src/main/resources"
    res.mkdir(parents=True)
    (res / "application.yml").write_text("a: base\n", encoding="utf-8")
    (res / "application-default.yml").write_text("a: default\n", encoding="utf-8")
    (res / "application-prod.yml").write_text("b: prod\n", encoding="utf-8")
    mods: dict[str, ModuleConfig] = scan(tmp_path).facts["spring.modules"]  # type: ignore[assignment]
    mod = next(iter(mods.values()))
    assert mod.profiles == ("prod",)
    assert mod.views[BASE]["a"].value == "default" and mod.views["prod"]["a"].value == "base"


def test_import_in_a_profile_file_applies_to_that_profile(tmp_path: Path) -> None:
    res = tmp_path / "src/main/resources"
    res.mkdir(parents=True)
    (res / "application.yml").write_text("spring:\n  application:\n    name: svc\n", encoding="utf-8")
    (res / "application-prod.yml").write_text(
        "spring:\n  config:\n    import: classpath:mq-prod.properties\n", encoding="utf-8"
    )
    (res / "mq-prod.properties").write_text(
        "spring.cloud.stream.bindings.in-in-0.destination=PROD_T\nspring.cloud.stream.bindings.in-in-0.group=prod_cg\n",
        encoding="utf-8",
    )
    [c] = scan(tmp_path).consumers
    assert fields(c) == (
        "prod_cg",
        "PROD_T",
        "*",
        "TAG",
        "CLUSTERING",
        "src/main/resources/mq-prod.properties",
        1,
        "prod",
    )


# ---- item 10 / issue 18: Maven resource filtering -----------------------------------------------------------


def test_maven_filtered_yaml_parses_with_tokens_as_written() -> None:
    [doc] = read_yaml("spring:\n  profiles:\n    active: @profiles.active@  # maven\n  list:\n    - @a@\nv: x@b@\n")
    entries = {e.key: (e.value, e.line) for e in doc.entries}
    assert entries["spring.profiles.active"] == ("@profiles.active@", 3)
    assert entries["spring.list[0]"] == ("@a@", 5) and entries["v"] == ("x@b@", 6)


def test_maven_filtered_files_are_parsed_and_tokens_are_unknown() -> None:
    result = scan(MALL)
    rec = {r.path: r for r in result.files}
    assert rec["mall-order/src/main/resources/application.yml"].status is FileStatus.PARSED
    props = "mall-stock/src/main/resources/application.properties"
    c = by_topic(result, "STOCK_DEDUCT")
    assert fields(c) == (
        None,
        "STOCK_DEDUCT",
        "*",
        "TAG",
        "CLUSTERING",
        props,
        line_of(MALL, props, "stock-in-0.destination"),
        "",
    )
    assert c.group.resolution is Resolution.DYNAMIC and "@stock.consumer.group@" in c.group.detail
    assert "Maven resource filtering" in c.group.detail
    cfg = {canonical("g"): ConfigValue("@grp@", "a.properties", 1, 1, "g")}
    v = config_text_value("${g}", cfg, None)
    assert v.value is None and "@grp@" in v.detail  # through a placeholder too


# ---- item 11: only bindings of a RocketMQ binder ------------------------------------------------------------


def test_rabbit_binder_module_declares_no_rocketmq_consumer() -> None:
    result = scan(MALL)
    assert not any(
        c.subscriptions and c.subscriptions[0].topic.value in ("notify.sms", "notify.mail") for c in result.consumers
    )


def test_binding_of_the_rocketmq_binder_among_several() -> None:
    result = scan(MALL)
    app = "mall-gateway/src/main/resources/application.yml"
    c = by_topic(result, "GATEWAY_BLACKLIST")
    assert fields(c) == (
        "gateway_blacklist_cg",
        "GATEWAY_BLACKLIST",
        "*",
        "TAG",
        "CLUSTERING",
        app,
        line_of(MALL, app, "destination: GATEWAY_BLACKLIST"),
        "",
    )
    assert not any(
        c.subscriptions and c.subscriptions[0].topic.value == "gateway-clicks" for c in result.consumers
    )  # default kafka


def test_binder_from_config_keys_without_build_files(tmp_path: Path) -> None:
    res = tmp_path / "src/main/resources"
    res.mkdir(parents=True)
    (res / "application.yml").write_text(
        "spring:\n  cloud:\n    stream:\n      kafka:\n        binder:\n          brokers: k:9092\n"
        "      bindings:\n        in-in-0:\n          destination: k_topic\n          group: k_group\n",
        encoding="utf-8",
    )
    assert scan(tmp_path).consumers == ()
    (res / "application.yml").write_text(
        "spring:\n  cloud:\n    stream:\n      rocketmq:\n        bindings:\n          in-in-0:\n            consumer:\n"
        "              subscription: 'sql:a > 1'\n      bindings:\n        in-in-0:\n          destination: r_topic\n"
        "          group: r_group\n",
        encoding="utf-8",
    )
    [c] = scan(tmp_path).consumers
    assert fields(c) == (
        "r_group",
        "r_topic",
        "a > 1",
        "SQL92",
        "CLUSTERING",
        "src/main/resources/application.yml",
        11,
        "",
    )


LISTENER = """package com.acme.{pkg};

import org.apache.rocketmq.spring.annotation.RocketMQMessageListener;
import org.apache.rocketmq.spring.core.RocketMQListener;

@RocketMQMessageListener(topic = "orders", consumerGroup = "${{spring.application.name}}_orders")
public class OrderListener implements RocketMQListener<String> {{
    public void onMessage(String m) {{}}
}}
"""

APP_POM = """<project>
  <artifactId>{name}</artifactId>
  <dependencies>
    <dependency><groupId>org.apache.rocketmq</groupId><artifactId>rocketmq-spring-boot-starter</artifactId></dependency>
  </dependencies>
  <build>
    <resources>
      <resource><directory>src/main/resources</directory></resource>
      {extra}
    </resources>
  </build>
</project>
"""


def test_config_a_pom_packages_from_a_shared_folder_is_the_modules_config(tmp_path: Path) -> None:
    """`<resource><directory>../conf/common</directory>` puts `conf/common/config/application.yml`
    on the module's class path as `classpath:/config/application.yml`, which overrides the
    module's own `application.yml` (jeepay's layout); a module that does not list it keeps its own."""
    common = tmp_path / "conf/common/config"
    common.mkdir(parents=True)
    (common / "application.yml").write_text("spring:\n  application:\n    name: shop\n", encoding="utf-8")
    for name, extra in (("payment", "<resource><directory>../conf/common</directory></resource>"), ("audit", "")):
        (tmp_path / name / "src/main/resources").mkdir(parents=True)
        (tmp_path / name / "pom.xml").write_text(APP_POM.format(name=name, extra=extra), encoding="utf-8")
        (tmp_path / name / "src/main/resources/application.yml").write_text(
            f"spring:\n  application:\n    name: {name}\n", encoding="utf-8"
        )
        src = tmp_path / name / "src/main/java/com/acme" / name
        src.mkdir(parents=True)
        (src / "OrderListener.java").write_text(LISTENER.format(pkg=name), encoding="utf-8")
    groups = {c.location.path.split("/")[0]: c.group.value for c in scan(tmp_path).consumers}
    assert groups == {"payment": "shop_orders", "audit": "audit_orders"}


def test_a_config_folder_overrides_the_file_beside_it_and_a_profile_overrides_both(tmp_path: Path) -> None:
    res = tmp_path / "src/main/resources"
    (res / "config").mkdir(parents=True)
    (res / "config/application.yml").write_text("a: config\nb: config\n", encoding="utf-8")
    (res / "application.properties").write_text("a=root\nb=root\nc=root\n", encoding="utf-8")
    (res / "application-prod.yml").write_text("b: prod\n", encoding="utf-8")
    mods: dict[str, ModuleConfig] = scan(tmp_path).facts["spring.modules"]  # type: ignore[assignment]
    mod = next(iter(mods.values()))
    assert {k: mod.views[BASE][k].value for k in "abc"} == {"a": "config", "b": "config", "c": "root"}
    assert mod.views["prod"]["b"].value == "prod"


def test_a_resource_folder_inside_the_module_keeps_its_declarations(tmp_path: Path) -> None:
    """`<resource><directory>src/main/config</directory>`: its files are the module's own (found by
    their folder), so what they declare stays declared, once."""
    (tmp_path / "src/main/config").mkdir(parents=True)
    extra = "<resource><directory>src/main/config</directory></resource>"
    (tmp_path / "pom.xml").write_text(APP_POM.format(name="puller", extra=extra), encoding="utf-8")
    (tmp_path / "src/main/config/application.yml").write_text(
        "rocketmq:\n  name-server: ns:9876\n  pull-consumer:\n    group: pull-group\n    topic: pull-topic\n",
        encoding="utf-8",
    )
    found = [c for c in scan(tmp_path).consumers if c.group.value == "pull-group"]
    assert len(found) == 1 and found[0].subscriptions[0].topic.value == "pull-topic"
