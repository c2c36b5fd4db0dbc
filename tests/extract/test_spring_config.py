"""Spring config: properties reader, YAML reader, relaxed binding, profiles, binder and starter keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from subguard.core.config import Config
from subguard.core.model import ClientFamily, Consumer, FileStatus, Resolution
from subguard.extract import load_extractors
from subguard.extract.spring.env import canonical, resolve
from subguard.extract.spring.extractor import EXTRACTOR, ModuleConfig
from subguard.extract.spring.props import PropertiesError, read_properties
from subguard.extract.spring.yaml_files import YamlError, read_yaml
from subguard.scan.extraction import ScanResult, scan_repo

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "java"


def line_of(root: Path, rel: str, needle: str) -> int:
    lines = (root / rel).read_text(encoding="utf-8").splitlines()
    hits = [i + 1 for i, text in enumerate(lines) if needle in text]
    assert len(hits) == 1, (rel, needle, hits)
    return hits[0]


def scan(name: str) -> ScanResult:
    return scan_repo(FIXTURES / name, Config(), extractors=load_extractors(["spring", "java"]))


def group(result: ScanResult, name: str, env: str = "") -> Consumer:
    found = [c for c in result.consumers if c.group.value == name and c.environment == env]
    assert len(found) == 1, [(c.group.value, c.environment) for c in result.consumers]
    return found[0]


# ---- properties reader ------------------------------------------------------------------------------


def test_properties_separators_continuations_escapes() -> None:
    text = "# c\n! c2\na=1\nb : 2\nc 3\nd\\ e=x\\\n   y\\\\\nf=\\u0041\\tB\n  g=  spaced  \n"
    entries = {e.key: (e.value, e.line) for e in read_properties(text)}
    assert entries["a"] == ("1", 3)
    assert entries["b"] == ("2", 4)
    assert entries["c"] == ("3", 5)
    assert entries["d e"] == ("xy\\", 6)
    assert entries["f"] == ("A\tB", 8)
    assert entries["g"] == ("spaced  ", 9)


def test_properties_bad_unicode_escape_has_line() -> None:
    with pytest.raises(PropertiesError) as info:
        read_properties("ok=1\n\nbad=\\u12g4\n")
    assert info.value.line == 3


# ---- YAML reader -------------------------------------------------------------------------------------


def test_yaml_lines_documents_and_profiles() -> None:
    docs = read_yaml("a:\n  b: 1\n  c: [x, y]\n---\nspring:\n  profiles: prod\na.b: 2\n")
    first = {e.key: (e.value, e.line) for e in docs[0].entries}
    assert first["a.b"] == ("1", 2) and first["a.c[1]"] == ("y", 3) and first["a.c"] == ("x,y", 3)
    assert docs[1].on_profile == "prod" and docs[0].on_profile == ""


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [("a:\n\tb: 1\n", 2, "'\\t'"), ("a: 1\nb: 2\na: 3\n", 3, "duplicate key"), ("a: [1\nb: 2\n", 2, "expected")],
)
def test_yaml_errors_have_lines(text: str, line: int, words: str) -> None:
    with pytest.raises(YamlError) as info:
        read_yaml(text)
    assert info.value.line == line and words in str(info.value)


# ---- relaxed binding and placeholders ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        "rocketmq.name-server",
        "rocketmq.nameServer",
        "rocketmq.name_server",
        "ROCKETMQ_NAMESERVER",
        "RocketMQ.NameServer",
    ],
)
def test_relaxed_binding(key: str) -> None:
    assert canonical(key) == "rocketmq.nameserver"


def test_resolve_nested_and_default() -> None:
    from subguard.extract.spring.env import ConfigValue

    cfg = {
        canonical("app.env"): ConfigValue("prod", "a.yml", 1, 1, "app.env"),
        canonical("app.group"): ConfigValue("g_${app.env}", "a.yml", 2, 1, "app.group"),
    }
    assert resolve("${app.group}", cfg).value == "g_prod"
    assert resolve("${missing:${app.env}-x}", cfg).value == "prod-x"
    res = resolve("${missing}", cfg)
    assert res.value is None and res.missing == ("missing",)


# ---- fixtures: profiles and module facts ----------------------------------------------------------------------


def test_module_facts_expose_profile_views() -> None:
    result = scan("shop")
    modules: dict[str, ModuleConfig] = result.facts["spring.modules"]  # type: ignore[assignment]
    order = modules["order-service"]
    assert set(order.profiles) == {"dev", "test", "prod"}
    assert order.views["dev"][canonical("shop.order.placed-group")].value == "order_placed_cg_dev"
    assert order.views["prod"][canonical("shop.order.placed-group")].value == "order_placed_cg"  # inherited from base
    assert order.views["prod"][canonical("shop.refund.group")].line == 4


def test_lite_pull_from_rocketmq_pull_consumer_keys() -> None:
    result = scan("shop")
    c = group(result, "stock_template_cg")
    props = "inventory-service/src/main/resources/application.properties"
    assert c.client is ClientFamily.SPRING_LITE_PULL
    assert c.location.line == line_of(FIXTURES / "shop", props, "rocketmq.pull-consumer.group")
    assert c.subscriptions[0].expression.value == "reserve || release"  # \u007c escapes decoded
    # messageModel=clustering: MessageModel.valueOf is case-sensitive, the application fails at startup
    assert c.message_model.value is None and "case-sensitive" in c.message_model.detail
    assert c.message_model.location is not None and c.message_model.location.line == line_of(
        FIXTURES / "shop", props, "messageModel"
    )
    assert any("fails at startup" in n for n in c.notes)
    assert c.name_server is not None and c.name_server.value == "ns-a:9876"


def test_simple_consumer_keys_give_spring_5x() -> None:
    c = group(scan("shop"), "notify_simple_cg")
    assert c.client is ClientFamily.SPRING_5X and c.subscriptions[0].tags == ("sms",)
    assert c.subscriptions[0].location.line == 7


@pytest.mark.parametrize(
    "extra,etype",
    [
        ("    filter-expression-type: TAG\n", "TAG"),
        ("    filter-expression-type: sql92\n", "SQL92"),
        ("    filter-expression-type: sql\n", "SQL92"),  # not "tag": RocketMQUtil.createFilterExpression takes SQL92
        ("", "TAG"),  # the property's default is "tag"
    ],
)
def test_simple_consumer_filter_type_as_the_v5_starter_reads_it(tmp_path: Path, extra: str, etype: str) -> None:
    config = tmp_path / "src/main/resources/application.yml"
    config.parent.mkdir(parents=True)
    config.write_text(
        "rocketmq:\n  simple-consumer:\n    endpoints: proxy:8081\n    consumer-group: g\n"
        '    topic: t\n    tag: "a = 1"\n' + extra,
        encoding="utf-8",
    )
    [c] = scan_repo(tmp_path, Config(), extractors=load_extractors(["spring"])).consumers
    assert c.subscriptions[0].expression_type.value == etype


def test_simple_consumer_needs_endpoints_for_its_bean(tmp_path: Path) -> None:
    config = tmp_path / "src/main/resources/application.yml"
    config.parent.mkdir(parents=True)
    config.write_text("rocketmq:\n  simple-consumer:\n    consumer-group: g\n    topic: t\n", encoding="utf-8")
    assert scan_repo(tmp_path, Config(), extractors=load_extractors(["spring"])).consumers == ()


def test_broken_config_files_fail_with_line_and_reason() -> None:
    result = scan("shop")
    rec = {r.path: r for r in result.files}
    base = "legacy-service/src/main/resources/"
    assert rec[base + "application.yml"].status is FileStatus.FAILED and rec[
        base + "application.yml"
    ].reason.startswith("line 2:")
    assert "duplicate key" in rec[base + "application-dup.yml"].reason and rec[
        base + "application-dup.yml"
    ].reason.startswith("line 3:")
    assert "\\u" in rec[base + "application-bad.properties"].reason and rec[
        base + "application-bad.properties"
    ].reason.startswith("line 2:")
    assert rec[base + "bootstrap.yml"].status is FileStatus.PARSED


def test_claims_only_spring_config_names() -> None:
    assert EXTRACTOR.claims("a/b/application.yml") and EXTRACTOR.claims("bootstrap-dev.properties")
    assert EXTRACTOR.claims("src/main/resources/application-prod.yaml")
    assert not EXTRACTOR.claims("k8s/deployment.yaml") and not EXTRACTOR.claims("values.yaml")
    assert not EXTRACTOR.claims("docker-compose.yml") and not EXTRACTOR.claims("app.properties")


# ---- Spring Cloud Stream binder ------------------------------------------------------------------------------


OLD = FIXTURES / "binder-old"
NEW = FIXTURES / "binder-new"


def test_old_binder_tags_and_orderly() -> None:
    c = group(scan("binder-old"), "billing_cg")
    assert c.client is ClientFamily.SPRING_CLOUD_STREAM
    sub = c.subscriptions[0]
    assert (sub.topic.value, sub.expression.value, sub.expression_type.value) == (
        "billing_topic",
        "invoice || receipt",
        "TAG",
    )
    assert c.consume_mode.value == "ORDERLY" and c.message_model.value == "CLUSTERING"
    assert c.location.line == line_of(OLD, "src/main/resources/application.yml", "group: billing_cg")
    assert c.name_server is not None and c.name_server.value == "old-ns:9876"


def test_old_binder_sql_and_broadcasting() -> None:
    c = group(scan("binder-old"), "audit_cg")
    assert c.subscriptions[0].expression_type.value == "SQL92" and c.subscriptions[0].expression.value == "amount > 10"
    assert c.message_model.value == "BROADCASTING"


def test_old_binder_empty_group_is_a_failure_note() -> None:
    result = scan("binder-old")
    c = next(c for c in result.consumers if c.subscriptions[0].topic.value == "misc_topic")
    assert c.group.value is None and c.group.resolution is Resolution.DYNAMIC
    assert "not known from the build files" in c.group.detail and c.group.detail in c.notes  # no version: no guess
    assert not any(c.subscriptions[0].topic.value == "billing_out" for c in result.consumers)  # output binding


def test_new_binder_sql_prefix_and_message_model_case() -> None:
    c = group(scan("binder-new"), "payment_cg")
    sub = c.subscriptions[0]
    assert sub.expression_type.value == "SQL92" and sub.expression.value == "(color in ('red') and price > 3)"
    assert c.message_model.value == "BROADCASTING"
    assert sub.location.line == line_of(NEW, "src/main/resources/application.properties", "pay-in-0.destination")


def test_new_binder_empty_group_without_version_is_unknown() -> None:
    # anonymous_<destination> only from 2.2.8.RELEASE / 2021.0.4.0; the pom names no binder version
    c = next(c for c in scan("binder-new").consumers if c.subscriptions[0].topic.value == "anon_topic")
    assert c.group.value is None and c.group.resolution is Resolution.DYNAMIC
    assert "anonymous_anon_topic" in c.group.detail and "not known from the build files" in c.group.detail
    assert c.name_server is not None and c.name_server.value == "new-ns:9876"
    assert not any(x.subscriptions[0].topic.value == "payment_done" for x in scan("binder-new").consumers)


def test_new_binder_unknown_model_is_clustering_and_profile_override() -> None:
    result = scan("binder-new")
    refunds = [c for c in result.consumers if c.group.value == "refund_cg"]
    assert [c.environment for c in refunds] == ["prod"]
    c = refunds[0]
    assert c.message_model.value == "CLUSTERING" and any("silently uses CLUSTERING" in n for n in c.notes)
    assert c.consume_mode.value == "ORDERLY"
    assert c.subscriptions[0].expression.value == "full"
    assert c.subscriptions[0].expression.location is not None
    assert c.subscriptions[0].expression.location.path == "src/main/resources/application-prod.yml"
