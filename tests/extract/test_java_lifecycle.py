"""Whether the code runs a Java consumer (`extract/java/lifecycle.py`, `running.py`): expected failures,
listener classes that are never beans, consumers without a group that are not started where they
are read, and annotation enhancers."""

from __future__ import annotations

from pathlib import Path

from subguard.core.config import Config
from subguard.core.model import Consumer, Resolution
from subguard.extract import load_extractors
from subguard.extract.java.facts import java_facts
from subguard.extract.java.running import CARRIER, ENHANCED, EXPECTED, NOT_STARTED
from subguard.scan.extraction import scan_repo

TESTS = """package com.acme;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.junit.Test;

public class StartTest {
    @Test
    public void tryFail() throws Exception {
        DefaultMQPushConsumer a = new DefaultMQPushConsumer("GID_A");
        try {
            a.start();
            fail("refused");
        } catch (Exception e) {
        }
    }

    @Test
    public void tryWithoutCatch() throws Exception {
        DefaultMQPushConsumer b = new DefaultMQPushConsumer("GID_B");
        try {
            b.start();
            fail("refused");
        } finally {
            b.shutdown();
        }
    }

    @Test
    public void failFirst() throws Exception {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer("GID_C");
        try {
            fail("not yet");
        } catch (AssertionError e) {
        }
        c.start();
    }

    @Test
    public void lambda() {
        DefaultMQPushConsumer d = new DefaultMQPushConsumer("GID_D");
        assertThrows(Exception.class, () -> d.start());
    }

    @Test(expected = IllegalStateException.class)
    public void expected() throws Exception {
        DefaultMQPushConsumer e = new DefaultMQPushConsumer("GID_E");
        e.start();
    }

    @Test
    public void startedTwice() throws Exception {
        DefaultMQPushConsumer f = new DefaultMQPushConsumer("GID_F");
        assertThrows(Exception.class, () -> f.start());
        f.start();
    }

    @Test
    public void byReference() {
        DefaultMQPushConsumer g = new DefaultMQPushConsumer("GID_G");
        assertThatThrownBy(g::start);
    }

    @Test(expected = TimeoutException.class)
    public void startsThenTimesOut() throws Exception {
        DefaultMQPushConsumer i = new DefaultMQPushConsumer("GID_I");
        i.start();
        awaitMessage(1000);
    }

    @Test
    public void startedThenFails() throws Exception {
        DefaultMQPushConsumer j = new DefaultMQPushConsumer("GID_J");
        try {
            j.start();
            j.subscribe("Topic A", "*");
            fail("refused");
        } catch (Exception e) {
        }
    }

    @Test
    public void referenceRunsIt() {
        DefaultMQPushConsumer h = new DefaultMQPushConsumer("GID_H");
        executor.submit(h::start);
    }
}
"""

GROUPLESS = """package com.acme;

import org.apache.rocketmq.client.apis.ClientServiceProvider;
import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;

public class Factory {
    DefaultMQPushConsumer returned() {
        DefaultMQPushConsumer r = new DefaultMQPushConsumer();
        r.subscribe("TopicA", "*");
        return r;
    }

    void started() throws Exception {
        DefaultMQPushConsumer s = new DefaultMQPushConsumer();
        s.subscribe("TopicA", "*");
        s.start();
    }

    void named() {
        DefaultMQPushConsumer n = new DefaultMQPushConsumer();
        n.setConsumerGroup("GID_NAMED");
    }

    void builder() throws Exception {
        ClientServiceProvider.loadService().newPushConsumerBuilder().setSubscriptionExpressions(null).build();
    }
}
"""


def _scan(tmp_path: Path, rel: str, source: str) -> list[Consumer]:
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source, encoding="utf-8")
    return list(scan_repo(tmp_path, Config(), extractors=load_extractors(["spring", "java"])).consumers)


def _by_group(consumers: list[Consumer]) -> dict[str, Consumer]:
    return {str(c.group.value): c for c in consumers}


def test_a_consumer_whose_every_start_a_test_expects_to_throw_never_runs(tmp_path: Path) -> None:
    found = _by_group(_scan(tmp_path, "src/test/java/com/acme/StartTest.java", TESTS))
    never = {g for g, c in found.items() if c.never_runs}
    assert never == {"GID_A", "GID_D", "GID_E", "GID_G"}
    assert found["GID_A"].never_runs == EXPECTED and EXPECTED in found["GID_A"].notes
    assert not found["GID_A"].registers  # no member of its group anywhere (simulator, impact, change rules)
    # no catch, fail() before start(), one start outside the assertion, a reference that runs it
    assert not any(found[g].never_runs for g in ("GID_B", "GID_C", "GID_F", "GID_H"))
    # started, then something else is expected to throw (a timeout, a refused subscribe): it ran
    assert not found["GID_I"].never_runs and not found["GID_J"].never_runs


def test_expected_failure_spans() -> None:
    life = java_facts(TESTS.encode()).lifecycle
    lines = TESTS.splitlines()

    def at(needle: str) -> tuple[int, int]:
        [(line, col)] = [(i + 1, text.index(needle) + 1) for i, text in enumerate(lines) if needle in text]
        return line, col

    assert life.expected_to_fail(*at("a.start()")) and not life.expected_to_fail(*at("b.start()"))
    assert not life.expected_to_fail(*at("c.start()")) and life.expected_to_fail(*at("d.start()"))
    assert life.expected_to_fail(*at("e.start()")) and life.expected_to_fail(*at("g::start"))
    assert ("h", "referenceRunsIt", *at("h::start")) in life.started_by_reference


def test_no_group_and_not_started_here_is_unknown_not_the_reserved_name(tmp_path: Path) -> None:
    found = {c.location.line: c for c in _scan(tmp_path, "src/main/java/com/acme/Factory.java", GROUPLESS)}
    lines = GROUPLESS.splitlines()

    def at(needle: str) -> Consumer:
        [line] = [i + 1 for i, text in enumerate(lines) if needle in text]
        return found[line]

    returned = at("r = new").group
    assert returned.value is None and returned.resolution is Resolution.DYNAMIC and returned.detail == NOT_STARTED
    assert at("s = new").group.value == "DEFAULT_CONSUMER"  # started here without a group: refused
    assert at("n = new").group.value == "GID_NAMED"
    assert at("newPushConsumerBuilder").group.value == "DEFAULT_CONSUMER"  # 5.x: built is started


LISTENERS = """package com.acme;

import org.apache.rocketmq.spring.annotation.RocketMQMessageListener;
import org.apache.rocketmq.spring.core.RocketMQListener;
import org.junit.Test;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

public class ListenerTest {
    @Test(expected = IllegalStateException.class)
    public void refused() {
        runner.withUserConfiguration(WrongConfig.class).run(c -> {});
    }

    @Test
    public void reads() {
        Carrier.class.getAnnotation(RocketMQMessageListener.class);
        Registered.class.getAnnotation(RocketMQMessageListener.class);
    }

    @Test
    public void starts() {
        runner.withUserConfiguration(RightConfig.class).run(c -> {});
    }

    @Configuration
    static class WrongConfig {
        @Bean
        public Object wrong() {
            return new Wrong();
        }
    }

    @Configuration
    static class RightConfig {
        @Bean
        public Object registered() {
            return new Registered();
        }
    }

    @RocketMQMessageListener(consumerGroup = "GID_WRONG", topic = "T")
    static class Wrong {
    }

    @RocketMQMessageListener(consumerGroup = "GID_CARRIER", topic = "T")
    class Carrier {
    }

    @RocketMQMessageListener(consumerGroup = "GID_REGISTERED", topic = "T")
    static class Registered implements RocketMQListener<String> {
        public void onMessage(String m) {
        }
    }
}
"""


def test_listener_classes_that_are_never_beans_never_run(tmp_path: Path) -> None:
    assert java_facts(LISTENERS.encode()).lifecycle.carriers == ("ListenerTest.Wrong", "ListenerTest.Carrier")
    found = _by_group(_scan(tmp_path, "src/test/java/com/acme/ListenerTest.java", LISTENERS))
    assert found["GID_WRONG"].never_runs == CARRIER and found["GID_CARRIER"].never_runs == CARRIER
    assert not found["GID_REGISTERED"].never_runs


def test_a_static_listener_class_its_file_never_uses_may_be_registered_elsewhere() -> None:
    """`@Import(ListenerTest.Unused.class)` in another test could register it: not a carrier. An inner
    class nobody uses still is one (no other file can make one without an enclosing instance)."""
    source = LISTENERS.replace(
        '    @RocketMQMessageListener(consumerGroup = "GID_CARRIER"',
        '    @RocketMQMessageListener(consumerGroup = "GID_UNUSED", topic = "T")\n    static class Unused {\n    }\n\n'
        '    @RocketMQMessageListener(consumerGroup = "GID_IDLE", topic = "T")\n    class Idle {\n    }\n\n'
        '    @RocketMQMessageListener(consumerGroup = "GID_CARRIER"',
    )
    carriers = java_facts(source.encode()).lifecycle.carriers
    assert "ListenerTest.Idle" in carriers and "ListenerTest.Unused" not in carriers


def test_an_annotated_test_class_may_load_its_nested_configurations() -> None:
    """`@SpringBootTest` (any class-level annotation) may load WrongConfig by itself: it counts as used."""
    source = LISTENERS.replace("public class ListenerTest", "@SpringBootTest\npublic class ListenerTest")
    assert java_facts(source.encode()).lifecycle.carriers == ("ListenerTest.Carrier",)


def test_an_annotation_enhancer_makes_the_listener_names_unknown(tmp_path: Path) -> None:
    source = LISTENERS.replace(
        "    @Configuration\n    static class WrongConfig {",
        "    @Bean\n    RocketMQMessageListenerBeanPostProcessor.AnnotationEnhancer enhancer() {\n"
        "        return (attrs, element) -> attrs;\n    }\n\n    @Configuration\n    static class WrongConfig {",
    )
    assert java_facts(source.encode()).lifecycle.enhancer
    consumers = _scan(tmp_path, "src/test/java/com/acme/ListenerTest.java", source)
    registered = [c for c in consumers if not c.never_runs]
    assert registered and all(c.group.value is None and ENHANCED in (c.group.detail or "") for c in registered)
    assert all(s.topic.value is None for c in registered for s in c.subscriptions)
