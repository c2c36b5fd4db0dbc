"""The Java extractor makes again only the steps an edit reaches (`subguard.extract.java.linkmemo`),
on the Java shapes of public code (tests/fixtures/java-shapes: factories in other classes, wrapper
classes, constants of third classes, Spring placeholders): each cached scan equals a scan without a
cache, and a kept step is one whose file, place and answers are as they were."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from subguard.core.config import Config
from subguard.extract.java import extractor
from subguard.scan.extraction import scan_repo

SHAPES = Path(__file__).resolve().parent.parent / "fixtures" / "java-shapes"
JAVA = "src/main/java/com/acme/demo"


class _Tree:
    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.clock = 1_700_000_000_000_000_000
        self.made: dict[str, set[str]] = {"first": set(), "second": set()}
        declared, instances = extractor.JavaExtractor._declared, extractor._instances

        def first(path: str, *args: object) -> object:
            self.made["first"].add(path.removeprefix(JAVA + "/"))
            return declared(path, *args)  # type: ignore[arg-type]

        def second(linker: object, path: str, facts: object) -> object:
            self.made["second"].add(path.removeprefix(JAVA + "/"))
            return instances(linker, path, facts)  # type: ignore[arg-type]

        monkeypatch.setattr(extractor.JavaExtractor, "_declared", staticmethod(first))
        monkeypatch.setattr(extractor, "_instances", second)

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self.clock += 1_000_000_000
        os.utime(path, ns=(self.clock, self.clock))

    def edit(self, rel: str, old: str, new: str) -> None:
        text = (self.root / rel).read_text(encoding="utf-8")
        assert old in text, (rel, old)
        self.write(rel, text.replace(old, new, 1))

    def scan(self) -> tuple[set[str], set[str]]:
        """The files whose first and second steps were made by a cached scan (equal to a cold one)."""
        for made in self.made.values():
            made.clear()
        warm = scan_repo(self.root, Config(), cache_key="k")
        made = (set(self.made["first"]), set(self.made["second"]))
        assert warm == scan_repo(self.root, Config())
        return made


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> _Tree:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("SUBGUARD_CACHE_DIR", raising=False)
    shutil.copytree(SHAPES, tmp_path / "repo")
    return _Tree(tmp_path / "repo", monkeypatch)


def test_an_edit_makes_again_only_the_steps_it_reaches(tree: _Tree) -> None:
    everything = tree.scan()
    assert len(everything[0]) > 20 and everything[0] == everything[1]
    assert tree.scan() == (set(), set())
    broadcast = f"{JAVA}/factory/BroadcastConsumer1.java"
    tree.write(broadcast, (tree.root / broadcast).read_text(encoding="utf-8") + "\n")
    assert tree.scan() == ({"factory/BroadcastConsumer1.java"}, {"factory/BroadcastConsumer1.java"})
    # a constant of a third class (loaded to resolve it, no consumer of its own): its readers only
    tree.edit(f"{JAVA}/common/Names.java", '"TOPIC_SQL"', '"TOPIC_SQL_2"')
    first, second = tree.scan()
    assert "factory/SqlPushConsumer.java" in first | second and len(first | second) < len(everything[0]) // 2
    # the factory in another class: its own first step, and the second steps of its callers
    tree.edit(f"{JAVA}/common/ClientCreater.java", "http://rocketmq.example:9876", "http://rocketmq.example:9877")
    first, second = tree.scan()
    assert "common/ClientCreater.java" in first and "factory/BroadcastConsumer1.java" in second
    assert len(second) < len(everything[1]) // 2
    # a new file no answer names, then one more consumer
    tree.write(f"{JAVA}/extra/Unrelated.java", "package com.acme.demo.extra;\n\npublic class Unrelated {}\n")
    assert tree.scan() == (set(), set())
    listener = (tree.root / JAVA / "spring/OrderPaidListener.java").read_text(encoding="utf-8")
    tree.write(f"{JAVA}/extra/OrderPaidListener2.java", listener.replace("OrderPaidListener", "OrderPaidListener2"))
    assert tree.scan() == ({"extra/OrderPaidListener2.java"}, {"extra/OrderPaidListener2.java"})
    # the Spring config every file's placeholders resolve against: every step again
    props = "src/main/resources/application.properties"
    tree.write(props, (tree.root / props).read_text(encoding="utf-8") + "\nacme.unused=1\n")
    every = everything[0] | {"extra/OrderPaidListener2.java"}
    assert tree.scan() == (every, every)


_STRING = re.compile(r'"([A-Za-z_][\w.-]*)"')


def test_every_literal_edit_equals_a_cold_scan(tree: _Tree) -> None:
    """Each Java file's first string literal changed in turn (a group, a topic, a tag, a constant),
    then changed back: every cached scan equals a scan without a cache."""
    tree.scan()
    for path in sorted((tree.root / JAVA).rglob("*.java")):
        rel = str(path.relative_to(tree.root))
        text = path.read_text(encoding="utf-8")
        found = _STRING.search(text)
        if found is None:
            continue
        tree.write(rel, text[: found.start(1)] + found.group(1) + "_E" + text[found.end(1) :])
        tree.scan()
        tree.write(rel, text)
        tree.scan()


FACTORY = """package demo;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;

public class Factory {{
    public static DefaultMQPushConsumer make(String group) throws Exception {{
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer({group});
        consumer.subscribe("TopicF", "TagA");
        return consumer;
    }}
}}
"""

CALLER = """package demo;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;

public class Caller {
    public void start() throws Exception {
        DefaultMQPushConsumer consumer = Factory.make("GID_CALLER");
        consumer.start();
    }
}
"""


def test_a_first_template_makes_the_callers_instances(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run without any template asks no class for its templates: a call is kept only while there
    is still none. The factory turning into a template makes its caller's instance."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("SUBGUARD_CACHE_DIR", raising=False)
    tree = _Tree(tmp_path / "repo", monkeypatch)
    tree.write(f"{JAVA}/Factory.java", FACTORY.format(group='"GID_FIXED"'))
    tree.write(f"{JAVA}/Caller.java", CALLER)
    tree.scan()
    tree.write(f"{JAVA}/Factory.java", FACTORY.format(group="group"))
    assert tree.scan() == ({"Factory.java"}, {"Factory.java", "Caller.java"})
    consumers = scan_repo(tree.root, Config(), cache_key="k").consumers
    assert "GID_CALLER" in {c.group.value for c in consumers}


def test_a_carrier_of_an_in_house_annotation_edited_added_or_removed(tree: _Tree) -> None:
    """The consumers a registrar builds from each class carrying its annotation (read by reflection)
    follow every edit of a carrier, even one the prefilter passes over (no RocketMQ reference: it is
    loaded), of the annotation's defaults, and a carrier added or removed: each cached scan equals a
    cold one, and only the registrar's second step is made again."""
    registrar, order = "plumbing/AnnotationRegistrar.java", f"{JAVA}/plumbing/OrderListener.java"
    tree.scan()
    assert tree.scan() == (set(), set())
    tree.edit(order, '"TOPIC_ORDER_ACME"', '"TOPIC_ORDER_ACME_2"')
    assert tree.scan() == (set(), {registrar})
    topics = {s.topic.value for c in scan_repo(tree.root, Config(), cache_key="k").consumers for s in c.subscriptions}
    assert "TOPIC_ORDER_ACME_2" in topics and "TOPIC_ORDER_ACME" not in topics
    tree.write(
        f"{JAVA}/plumbing/RefundListener.java",
        (tree.root / order)
        .read_text(encoding="utf-8")
        .replace("OrderListener", "RefundListener")
        .replace("GID_ORDER_ACME", "GID_REFUND_ACME"),
    )
    assert tree.scan() == (set(), {registrar})
    tree.edit(f"{JAVA}/{registrar}", 'String tag() default "*";', 'String tag() default "TagA";')
    first, second = tree.scan()
    assert registrar in first and registrar in second
    groups = {c.group.value: c for c in scan_repo(tree.root, Config(), cache_key="k").consumers}
    assert groups["GID_PAY_ACME"].subscriptions[0].expression.value == "TagA"
    (tree.root / f"{JAVA}/plumbing/RefundListener.java").unlink()
    tree.scan()
    assert "GID_REFUND_ACME" not in {c.group.value for c in scan_repo(tree.root, Config(), cache_key="k").consumers}


def test_a_carrier_in_another_language_keeps_the_registrar_unknown(tree: _Tree) -> None:
    """A Kotlin class carrying the in-house annotation is not read: the registrar's consumer is not a
    template (its values stay unknown, noted), and the Kotlin file is never parsed as Java."""
    registrar = f"{JAVA}/plumbing/AnnotationRegistrar.java"
    tree.write(
        "src/main/kotlin/com/acme/demo/RefundListener.kt",
        'package com.acme.demo\n\n@AnnotationRegistrar.AcmeListener(consumerGroup = "GID_KT", topic = "TOPIC_KT")\n'
        "class RefundListener\n",
    )
    tree.scan()
    result = scan_repo(tree.root, Config(), cache_key="k")
    [made] = [c for c in result.consumers if c.location.path == registrar]
    assert made.template == () and made.group.value is None
    assert "GID_KT" not in {c.group.value for c in result.consumers}
    assert not [r for r in result.files if r.path.endswith(".kt") and r.status.value == "failed"]


def test_an_edit_of_a_relay_remakes_the_instances_of_its_callers(tree: _Tree) -> None:
    """A caller's instance made through a relay (`retrying` passing its parameters on to `concurrent`)
    follows an edit of the relay's arguments in the relay's file, and a relay removed: each cached scan
    equals a cold one, and the caller's second step is made again."""
    relay, beans = f"{JAVA}/relay/RocketMqContainer.java", "relay/MqBeans.java"
    tree.scan()
    tree.edit(relay, 'consumerGroup + "-retry"', 'consumerGroup + "-again"')
    assert beans in tree.scan()[1]
    groups = {c.group.value for c in scan_repo(tree.root, Config(), cache_key="k").consumers}
    assert "GID_RELAY_EVENT-again" in groups and "GID_RELAY_EVENT-retry" not in groups
    tree.edit(relay, 'return concurrent(nameServer, consumerGroup + "-again"', 'return concurrent(nameServer, "fixed"')
    tree.scan()
    groups = {c.group.value for c in scan_repo(tree.root, Config(), cache_key="k").consumers}
    assert "GID_RELAY_EVENT-again" not in groups and "fixed" in groups


def test_an_edit_of_a_relay_class_without_templates_remakes_its_callers(tree: _Tree) -> None:
    """A relay in a class of its own (no construction there: its only tie to the caller is the relay):
    the caller's step found that class, so editing the relay's arguments makes the caller again."""
    tree.write(
        f"{JAVA}/relay/RocketMqShortcuts.java",
        "package com.acme.demo.relay;\n\npublic final class RocketMqShortcuts {\n"
        "    public static RocketMqContainer events(String group) {\n"
        '        return RocketMqContainer.concurrent("127.0.0.1:9876", group, "shortcut-topic");\n'
        "    }\n}\n",
    )
    tree.write(
        f"{JAVA}/relay/RocketMqShortcutBeans.java",
        "package com.acme.demo.relay;\n\npublic class RocketMqShortcutBeans {\n"
        '    RocketMqContainer events() {\n        return RocketMqShortcuts.events("GID_SHORT");\n    }\n}\n',
    )
    tree.scan()
    consumers = scan_repo(tree.root, Config(), cache_key="k").consumers
    assert {s.topic.value for c in consumers if c.group.value == "GID_SHORT" for s in c.subscriptions} == {
        "shortcut-topic"
    }
    tree.edit(f"{JAVA}/relay/RocketMqShortcuts.java", '"shortcut-topic"', '"shortcut-topic-2"')
    assert "relay/RocketMqShortcutBeans.java" in tree.scan()[1]
    consumers = scan_repo(tree.root, Config(), cache_key="k").consumers
    assert {s.topic.value for c in consumers if c.group.value == "GID_SHORT" for s in c.subscriptions} == {
        "shortcut-topic-2"
    }
