"""Build files -> RocketMQ dependency versions per module, and the version-specific client behaviour."""

from __future__ import annotations

from pathlib import Path

import pytest

from subguard.core.config import Config
from subguard.core.model import ClientFamily, Consumer, Deployment, FileStatus, Resolution, Value
from subguard.deploy.offset_store import client_id
from subguard.rocketmq.client_versions import (
    ROCKETMQ_CLIENT,
    ROCKETMQ_CLIENT_JAVA,
    ROCKETMQ_SPRING,
    SCA_STREAM,
    binder_instance_name,
    is_unstable,
    legacy_pull_trigger,
    listener_instance_name,
)
from subguard.scan.extraction import ScanResult, scan_repo

JAVA = Path(__file__).resolve().parent.parent / "fixtures" / "java"
RULES = Path(__file__).resolve().parent.parent / "rules"


def scan(root: Path) -> ScanResult:
    return scan_repo(root, Config())


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


def versions(result: ScanResult) -> dict[str, dict[str, Value]]:
    found = result.facts["build.modules"]
    assert isinstance(found, dict)
    return found


def record(result: ScanResult, path: str) -> tuple[FileStatus, str]:
    rec = next(r for r in result.files if r.path == path)
    return rec.status, rec.reason


# ---- Maven -------------------------------------------------------------------------------------------------


def test_maven_property_from_parent_and_dependency_management() -> None:
    result = scan(JAVA / "spring-222-trap")
    v = versions(result)["app"][ROCKETMQ_SPRING]
    assert v.value == "2.2.2" and v.resolution is Resolution.PLACEHOLDER
    assert v.location is not None and (v.location.path, v.location.line) == ("app/pom.xml", 11)
    assert record(result, "pom.xml")[0] is FileStatus.PARSED
    assert versions(result)[""] == {}  # the parent only manages the version: it does not depend on it


def test_maven_own_properties_project_version_and_inherited_dependency(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "pom.xml": """<project><groupId>g</groupId><artifactId>parent</artifactId><version>4.9.7</version>
  <properties><rmq>${project.version}</rmq></properties>
  <dependencies><dependency><groupId>org.apache.rocketmq</groupId><artifactId>rocketmq-client</artifactId>
  <version>${rmq}</version></dependency></dependencies></project>""",
            # no "rocketmq" in this pom: the prefilter skips it, the parent lookup loads it by relativePath
            "svc/pom.xml": """<project><parent><groupId>g</groupId><artifactId>parent</artifactId><version>4.9.7</version>
  <relativePath>..</relativePath></parent><artifactId>svc</artifactId>
  <properties><v5>5.0.7</v5></properties>
  <dependencies><dependency><groupId>org.apache.rocketmq</groupId><artifactId>rocketmq-client-java</artifactId>
  <version>${v5}</version></dependency>
  <dependency><groupId>org.apache.rocketmq</groupId><artifactId>rocketmq-tools</artifactId><version>1</version></dependency>
  </dependencies></project>""",
        },
    )
    mods = versions(scan(root))
    assert mods["svc"][ROCKETMQ_CLIENT_JAVA].value == "5.0.7"
    inherited = mods["svc"][ROCKETMQ_CLIENT]
    assert inherited.value == "4.9.7" and inherited.location is not None and inherited.location.path == "pom.xml"
    assert set(mods["svc"]) == {ROCKETMQ_CLIENT, ROCKETMQ_CLIENT_JAVA}  # rocketmq-tools is not a client
    assert mods[""][ROCKETMQ_CLIENT].value == "4.9.7"


def test_maven_undefined_property_and_external_parent_are_unknown(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "pom.xml": """<project><artifactId>a</artifactId><dependencies>
<dependency><groupId>org.apache.rocketmq</groupId><artifactId>rocketmq-client</artifactId><version>${nope}</version></dependency>
</dependencies></project>"""
        },
    )
    v = versions(scan(root))[""][ROCKETMQ_CLIENT]
    assert v.value is None and v.resolution is Resolution.DYNAMIC and "nope" in v.detail
    unknown = versions(scan(JAVA / "spring-unknown-version"))[""][ROCKETMQ_SPRING]
    assert unknown.value is None and "external parent" in unknown.detail


def test_maven_sca_bom_import_gives_the_starter_version() -> None:
    v = versions(scan(JAVA / "binder-2022"))[""][SCA_STREAM]
    assert v.value == "2022.0.0.0"


def test_broken_xml_fails_with_its_line(tmp_path: Path) -> None:
    root = write(tmp_path, {"pom.xml": "<project>\n  <dependencies>\n    <rocketmq>\n  </dependencies>\n</project>\n"})
    status, reason = record(scan(root), "pom.xml")
    assert status is FileStatus.FAILED and reason.startswith("line 4:") and "mismatched tag" in reason


@pytest.mark.parametrize(
    "doctype",
    [
        '<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>',
        '<!DOCTYPE project [<!ENTITY ext SYSTEM "file:///etc/passwd">]>',
        "<!doctype project>",
    ],
)
def test_xml_bomb_and_external_entities_are_rejected(tmp_path: Path, doctype: str) -> None:
    root = write(
        tmp_path,
        {
            "pom.xml": f"""<?xml version="1.0"?>
{doctype}
<project><dependencies><dependency><groupId>org.apache.rocketmq</groupId><artifactId>rocketmq-client</artifactId>
<version>&lol2;</version></dependency></dependencies></project>"""
        },
    )
    result = scan(root)
    status, reason = record(result, "pom.xml")
    assert status is FileStatus.FAILED and reason.startswith("line 2:") and "DOCTYPE" in reason
    assert versions(result) == {}


def test_entity_declaration_handler_refuses_without_the_byte_check() -> None:
    from subguard.extract.build import UnsafeXml, parse_xml

    # a DOCTYPE hidden from the byte check by UTF-16 encoding still reaches expat's handlers
    data = '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE p [<!ENTITY a "b">]><p>&a;</p>'.encode("utf-16")
    with pytest.raises(UnsafeXml):
        parse_xml(data)


# ---- Gradle ------------------------------------------------------------------------------------------------


def test_gradle_groovy_string_variable_and_map_notation(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "gradle.properties": "scaVersion=2021.0.5.0\n",
            "build.gradle": """
ext {
    rmqVersion = '4.9.8'
}
dependencies {
    implementation "org.apache.rocketmq:rocketmq-client:$rmqVersion"
    // implementation 'org.apache.rocketmq:rocketmq-spring-boot-starter:2.2.0'
    implementation group: 'com.alibaba.cloud', name: 'spring-cloud-starter-stream-rocketmq', version: scaVersion
    implementation group: 'org.apache.rocketmq', name: 'rocketmq-client-java', version: '5.0.5'
}
""",
        },
    )
    mods = versions(scan(root))[""]
    loc = mods[ROCKETMQ_CLIENT].location
    assert mods[ROCKETMQ_CLIENT].value == "4.9.8" and loc is not None and loc.line == 6
    assert mods[SCA_STREAM].value == "2021.0.5.0"
    assert mods[ROCKETMQ_CLIENT_JAVA].value == "5.0.5"
    assert ROCKETMQ_SPRING not in mods  # commented out


def test_gradle_kts_and_version_catalog() -> None:
    mods = versions(scan(JAVA / "spring-223-gradle"))
    v = mods["inventory"][ROCKETMQ_SPRING]
    assert v.value == "2.2.3" and v.location is not None and v.location.path == "inventory/build.gradle.kts"
    assert "libs.versions.toml" in v.detail


def test_gradle_kts_map_notation_and_unresolved_variable(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "build.gradle.kts": """
val rocketmqVersion = "5.1.4"
dependencies {
    implementation(group = "org.apache.rocketmq", name = "rocketmq-client", version = rocketmqVersion)
    implementation("org.apache.rocketmq:rocketmq-spring-boot-starter:${property("springRocketmq")}")
}
"""
        },
    )
    mods = versions(scan(root))[""]
    assert mods[ROCKETMQ_CLIENT].value == "5.1.4"
    assert mods[ROCKETMQ_SPRING].value is None and "springRocketmq" in mods[ROCKETMQ_SPRING].detail


def test_broken_catalog_fails_with_its_line(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "gradle/libs.versions.toml": '[versions]\nrocketmq = "5.1.0"\n[libraries\nx = 1\n',
            "build.gradle": "dependencies { implementation libs.rocketmq }\n",
        },
    )
    status, reason = record(scan(root), "gradle/libs.versions.toml")
    assert status is FileStatus.FAILED and reason.startswith("line 3:")


# ---- version rules -----------------------------------------------------------------------------------------


def test_version_tables() -> None:
    def v(text: str) -> Value:
        return Value.literal(text)

    assert [legacy_pull_trigger(v(x)) for x in ("2.1.1", "2.2.0", "2.2.2", "2.2.3", "2.3.0")] == [
        False,
        True,
        True,
        False,
        False,
    ]
    assert legacy_pull_trigger(None) is None and legacy_pull_trigger(Value.unknown("x")) is None
    written = Value.literal("fixed")
    assert listener_instance_name(v("2.2.3"), written) == written
    assert is_unstable(listener_instance_name(v("2.2.1"), written))
    pid_only = listener_instance_name(v("2.2.0"), written)
    assert pid_only is not None and pid_only.value is None and not is_unstable(pid_only)
    assert binder_instance_name(v("2.2.6.RELEASE")) is None and binder_instance_name(v("2021.1")) is None
    for pid in ("2.2.7.RELEASE", "2.2.9.RELEASE", "2.2.10-RC1", "2021.0.4.0", "2022.0.0.0-RC1"):
        name = binder_instance_name(v(pid))
        assert name is not None and not name.known and not is_unstable(name), pid
    for timed in ("2.2.10-RC2", "2.2.10", "2021.0.5.0", "2021.0.6.0", "2022.0.0.0", "2023.0.1.0"):
        assert is_unstable(binder_instance_name(v(timed))), timed


# ---- rocketmq-spring behaviour by version ------------------------------------------------------------------


def test_450_hidden_lite_pull_member_on_222() -> None:
    result = scan(JAVA / "spring-222-trap")
    members = [c for c in result.consumers if c.group.value == "order_cg"]
    assert sorted(c.client.value for c in members) == ["spring-listener", "spring-lite-pull"]
    hidden = next(c for c in members if c.client is ClientFamily.SPRING_LITE_PULL)
    assert hidden.subscriptions[0].topic.value == "order_topic" and hidden.subscriptions[0].expression.value == "*"
    assert any("#450" in n for n in hidden.notes)
    assert hidden.location.path.endswith("application.properties") and hidden.location.line == 2
    listener = next(c for c in members if c.client is ClientFamily.SPRING_LISTENER)
    assert is_unstable(listener.instance_name) and is_unstable(hidden.instance_name)
    assert listener.namespace is None  # rocketmq.consumer.namespace reaches listeners only from 2.2.3
    assert hidden.namespace is not None and hidden.namespace.value == "staging"


def test_listener_switch_drops_the_listener() -> None:
    result = scan(JAVA / "spring-222-trap")
    assert any(r.path.endswith("AuditListener.java") and r.status is FileStatus.PARSED for r in result.files)
    assert not [c for c in result.consumers if c.group.value == "audit_cg"]


def test_unknown_version_notes_instead_of_a_member_and_applies_namespace() -> None:
    result = scan(JAVA / "spring-unknown-version")
    pay = [c for c in result.consumers if c.group.value == "pay_cg"]
    assert [c.client for c in pay] == [ClientFamily.SPRING_LISTENER]
    assert any("#450" in n and "not known" in n for n in pay[0].notes)
    assert pay[0].namespace is not None and pay[0].namespace.value == "blue"
    refund = next(c for c in result.consumers if c.group.value == "refund_cg")
    assert refund.namespace is not None and refund.namespace.value == "green" and not refund.notes


def test_223_uses_pull_consumer_keys_only_and_the_written_instance_name() -> None:
    result = scan(JAVA / "spring-223-gradle")
    assert [c.client for c in result.consumers] == [ClientFamily.SPRING_LISTENER]
    c = result.consumers[0]
    assert c.instance_name is not None and c.instance_name.value == "stock-cache"
    assert c.namespace is not None and c.namespace.value == "blue" and not c.notes


def test_binder_instance_name_from_bom_version() -> None:
    c = scan(JAVA / "binder-2022").consumers[0]
    assert c.client is ClientFamily.SPRING_CLOUD_STREAM and is_unstable(c.instance_name)


def _only(result: ScanResult) -> tuple[Consumer, Deployment]:
    assert len(result.consumers) == 1 and len(result.deployments) == 1
    return result.consumers[0], result.deployments[0]


def test_client_id_stability_follows_the_listener_version() -> None:
    repos = RULES / "SG302" / "spring-version" / "repos"
    old = client_id(*_only(scan_repo(repos / "price-cache", Config(), repo="price-cache")))
    new = client_id(*_only(scan_repo(repos / "quote-cache", Config(), repo="quote-cache")))
    assert old.stable is False and "2.2.2" in old.instance
    assert new.stable is True  # same host network and volume: only the version differs


def test_222_ignores_pull_consumer_keys_and_profiles_keep_the_instance_name(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "pom.xml": """<project><artifactId>a</artifactId><dependencies><dependency><groupId>org.apache.rocketmq</groupId>
<artifactId>rocketmq-spring-boot-starter</artifactId><version>2.2.1</version></dependency></dependencies></project>""",
            "src/main/resources/application.properties": (
                "rocketmq.name-server=ns:9876\nrocketmq.consumer.group=g1\nrocketmq.consumer.topic=t1\n"
                "rocketmq.pull-consumer.group=g2\nrocketmq.pull-consumer.topic=t2\n"
            ),
            "src/main/resources/application-prod.properties": "rocketmq.consumer.topic=t1_prod\n",
        },
    )
    found = scan(root).consumers
    assert {c.group.value for c in found} == {"g1"}  # pull-consumer.* only exists from 2.2.3
    assert [c.environment for c in found] == ["prod"]  # profiles differ: one variant per named profile
    assert all(is_unstable(c.instance_name) for c in found)
