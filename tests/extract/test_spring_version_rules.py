"""Version-dependent Spring config semantics, module by module (build file version + config keys -> consumer).

Facts checked in the release tags:
- rocketmq-spring 2.2.0-2.3.5 `RocketMQAutoConfiguration.defaultLitePullConsumer`:
  `MessageModel.valueOf(messageModel)` / `SelectorType.valueOf(selectorType)`, case-sensitive.
- SCA `RocketMQConsumerProperties`: tags/sql/broadcasting/orderly up to 2.2.6.RELEASE and 2021.1;
  subscription/messageModel/push.* (+ nameServer/namespace/consumeFromWhere) from 2.2.7.RELEASE and 2021.0.1.0.
- SCA `RocketMQMessageChannelBinder.createConsumerEndpoint`: an empty group throws "'group must be configured
  for channel" up to 2.2.7.RELEASE / 2021.0.1.0; `anonymous_<destination>` from 2.2.8.RELEASE, 2021.0.4.0, 2022.x.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from subguard.core.config import Config
from subguard.core.inventory import group_map
from subguard.core.model import Consumer, Resolution, Value
from subguard.extract.spring.consumers import UNKNOWN_BINDER
from subguard.extract.spring.versions import sca_binder
from subguard.rules.engine import run
from subguard.scan.extraction import ScanResult, scan_repo

RES = "src/main/resources/application.properties"


def _pom(artifact: str, version: str | None) -> str:
    group = "com.alibaba.cloud" if "stream" in artifact else "org.apache.rocketmq"
    tag = f"<version>{version}</version>" if version else ""
    return (
        f"<project><artifactId>app</artifactId><dependencies><dependency><groupId>{group}</groupId>"
        f"<artifactId>{artifact}</artifactId>{tag}</dependency></dependencies></project>"
    )


def _scan(root: Path, pom: str | None, props: str) -> ScanResult:
    files = {RES: props, **({"pom.xml": pom} if pom is not None else {})}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return scan_repo(root, Config(), repo="app")


def _only(result: ScanResult) -> Consumer:
    assert len(result.consumers) == 1, result.consumers
    return result.consumers[0]


BINDER = "spring-cloud-starter-stream-rocketmq"
NS = "spring.cloud.stream.rocketmq.binder.name-server=ns:9876\nspring.cloud.stream.bindings.in-in-0.destination=t\n"
ROCKET = "spring.cloud.stream.rocketmq.bindings.in-in-0.consumer."


# ---- SCA binder: version -> rules ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "new_keys", "anonymous"),
    [
        ("2.1.4.RELEASE", False, False),
        ("2.2.5.RC1", False, False),
        ("2.2.6.RELEASE", False, False),
        ("2.2.7.RELEASE", True, False),
        ("2.2.8.RELEASE", True, True),
        ("2.2.10-RC2", True, True),
        ("2020.0.RC1", False, False),
        ("2021.1", False, False),
        ("2021.0.1.0", True, False),
        ("2021.0.4.0", True, True),
        ("2022.0.0.0-RC1", True, True),
        ("2022.0.0.0", True, True),
        ("2023.0.0.0-RC1", True, True),
    ],
)
def test_sca_binder_rules_by_version(version: str, new_keys: bool, anonymous: bool) -> None:
    binder = sca_binder(Value.literal(version))
    assert (binder.version, binder.new_keys, binder.anonymous) == (version, new_keys, anonymous)


@pytest.mark.parametrize(
    "version", [None, Value.unknown("no <version>"), Value.literal("${sca.version}"), Value.literal("7.1")]
)
def test_sca_binder_unknown_version_decides_nothing(version: Value | None) -> None:
    assert sca_binder(version) == UNKNOWN_BINDER


# ---- SCA binder: empty binding group -----------------------------------------------------------------------


@pytest.mark.parametrize("version", ["2.2.8.RELEASE", "2021.0.4.0", "2022.0.0.0"])
def test_empty_group_is_anonymous_from_228_20210400_2022(tmp_path: Path, version: str) -> None:
    c = _only(_scan(tmp_path, _pom(BINDER, version), NS))
    assert c.group.value == "anonymous_t" and c.group.resolution is Resolution.DEFAULT and version in c.group.detail


@pytest.mark.parametrize("version", ["2.2.6.RELEASE", "2.2.7.RELEASE", "2021.1", "2021.0.1.0"])
def test_empty_group_fails_at_startup_before(tmp_path: Path, version: str) -> None:
    c = _only(_scan(tmp_path, _pom(BINDER, version), NS + ROCKET + "subscription=a\n"))
    assert c.group.value is None and "'group must be configured for channel t" in c.group.detail
    assert version in c.group.detail and c.group.detail in c.notes


def test_empty_group_with_unknown_binder_version_is_not_guessed(tmp_path: Path) -> None:
    c = _only(_scan(tmp_path, _pom(BINDER, None), NS + ROCKET + "subscription=a\n"))
    assert c.group.value is None and "not known from the build files" in c.group.detail
    assert "anonymous_t" in c.group.detail and "2.2.8.RELEASE" in c.group.detail


# ---- SCA binder: the version's key set -------------------------------------------------------------------------


OLD_KEYS = (
    NS
    + "spring.cloud.stream.bindings.in-in-0.group=g\n"
    + ROCKET
    + "tags=a || b\n"
    + ROCKET
    + "broadcasting=true\n"
    + ROCKET
    + "orderly=true\n"
)
NEW_KEYS = (
    NS
    + "spring.cloud.stream.bindings.in-in-0.group=g\n"
    + ROCKET
    + "subscription=sql:a > 1\n"
    + ROCKET
    + "messageModel=BROADCASTING\n"
    + ROCKET
    + "push.orderly=true\n"
    + ROCKET
    + "name-server=other:9876\n"
)


@pytest.mark.parametrize("version", ["2022.0.0.0", "2.2.7.RELEASE", "2021.0.1.0"])
def test_old_keys_are_ignored_by_new_binders(tmp_path: Path, version: str) -> None:
    c = _only(_scan(tmp_path, _pom(BINDER, version), OLD_KEYS))
    sub = c.subscriptions[0]
    assert (sub.expression.value, sub.expression_type.value, c.message_model.value, c.consume_mode.value) == (
        "*",
        "TAG",
        "CLUSTERING",
        "CONCURRENTLY",
    )
    assert any(f"tags, broadcasting, orderly are ignored by SCA binder {version}" in n for n in c.notes)


@pytest.mark.parametrize("version", ["2.2.6.RELEASE", "2021.1"])
def test_new_keys_are_ignored_by_old_binders(tmp_path: Path, version: str) -> None:
    c = _only(_scan(tmp_path, _pom(BINDER, version), NEW_KEYS))
    sub = c.subscriptions[0]
    assert (sub.expression.value, sub.expression_type.value, c.message_model.value, c.consume_mode.value) == (
        "*",
        "TAG",
        "CLUSTERING",
        "CONCURRENTLY",
    )
    assert c.name_server is not None and c.name_server.value == "ns:9876"  # no per-binding name server before 2.2.7
    assert any(
        f"subscription, message-model, push.orderly, name-server are ignored by SCA binder {version}" in n
        for n in c.notes
    )


def test_each_generation_reads_its_own_keys(tmp_path: Path) -> None:
    old = _only(_scan(tmp_path / "old", _pom(BINDER, "2.2.6.RELEASE"), OLD_KEYS))
    new = _only(_scan(tmp_path / "new", _pom(BINDER, "2022.0.0.0"), NEW_KEYS))
    assert (old.subscriptions[0].expression.value, old.message_model.value, old.consume_mode.value) == (
        "a || b",
        "BROADCASTING",
        "ORDERLY",
    )
    assert (new.subscriptions[0].expression.value, new.subscriptions[0].expression_type.value) == ("a > 1", "SQL92")
    assert (new.message_model.value, new.consume_mode.value) == ("BROADCASTING", "ORDERLY")
    assert new.name_server is not None and new.name_server.value == "other:9876"
    assert not old.notes and not new.notes


@pytest.mark.parametrize(
    ("props", "expression", "model"), [(OLD_KEYS, "a || b", "BROADCASTING"), (NEW_KEYS, "a > 1", "BROADCASTING")]
)
def test_unknown_version_keeps_key_presence_and_says_so(
    tmp_path: Path, props: str, expression: str, model: str
) -> None:
    c = _only(_scan(tmp_path, _pom(BINDER, None), props))
    assert (c.subscriptions[0].expression.value, c.message_model.value) == (expression, model)
    assert "not known from the build files" in c.subscriptions[0].expression.detail
    assert "not known from the build files" in c.message_model.detail
    assert any("not known from the build files" in n for n in c.notes)


# ---- rocketmq-spring lite-pull bean: case-sensitive enum lookups -----------------------------------------------------


PULL = "rocketmq.name-server=ns:9876\nrocketmq.pull-consumer.group=g\nrocketmq.pull-consumer.topic=t\n"


@pytest.mark.parametrize(
    ("written", "model"),
    [
        ("BROADCASTING", "BROADCASTING"),
        ("CLUSTERING", "CLUSTERING"),
        ("clustering", None),
        ("Broadcasting", None),
        ("", None),
    ],
)
def test_pull_consumer_message_model_is_case_sensitive(tmp_path: Path, written: str, model: str | None) -> None:
    c = _only(
        _scan(
            tmp_path,
            _pom("rocketmq-spring-boot-starter", "2.3.1"),
            PULL + f"rocketmq.pull-consumer.message-model={written}\n",
        )
    )
    assert c.message_model.value == model
    if model is None:
        assert "MessageModel.valueOf" in c.message_model.detail and "fails at startup" in c.message_model.detail
        assert c.notes == (c.message_model.detail,)


@pytest.mark.parametrize(
    ("written", "etype", "expression"), [("SQL92", "SQL92", "a > 1"), ("sql92", "SQL92", None), ("tag", "TAG", None)]
)
def test_pull_consumer_selector_type_is_case_sensitive(
    tmp_path: Path, written: str, etype: str, expression: str | None
) -> None:
    props = PULL + f"rocketmq.pull-consumer.selector-type={written}\nrocketmq.pull-consumer.selector-expression=a > 1\n"
    sub = _only(_scan(tmp_path, _pom("rocketmq-spring-boot-starter", "2.2.3"), props)).subscriptions[0]
    assert (sub.expression_type.value, sub.expression.value) == (etype, expression)
    if expression is None:
        assert "SelectorType.valueOf" in sub.expression.detail


def test_legacy_lite_pull_bean_reads_rocketmq_consumer_model_the_same_way(tmp_path: Path) -> None:
    props = "rocketmq.name-server=ns:9876\nrocketmq.consumer.group=g\nrocketmq.consumer.topic=t\nrocketmq.consumer.message-model=broadcasting\n"
    c = _only(_scan(tmp_path, _pom("rocketmq-spring-boot-starter", "2.2.2"), props))
    assert c.message_model.value is None and "rocketmq.consumer.message-model='broadcasting'" in c.message_model.detail
    assert len(c.notes) == 2 and "#450" in c.notes[1]  # the startup failure and the hidden-member note


def test_startup_failure_reaches_the_user_as_sg906_at_the_value(tmp_path: Path) -> None:
    """A value rocketmq-spring refuses at startup is an error at that value (SG906), not a note; the
    consumer never runs, so it is no member of its group."""
    result = _scan(tmp_path, None, PULL + "rocketmq.pull-consumer.message-model=clustering\n")
    [failure] = [f for f in run([result], Config()) if f.rule == "SG906"]
    assert (failure.location.path, failure.location.line) == (RES, 4)
    assert failure.severity.value == "error" and "case-sensitive" in failure.message and "group 'g'" in failure.message
    [consumer] = result.consumers
    assert consumer.startup_failure is not None and group_map([consumer]).passive == (consumer,)
