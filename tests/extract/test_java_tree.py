"""`tree.typed` finds by query what filtering `tree.walk` by type finds, in the same order: the Java
reader's dispatch (`facts.java_facts`) and its scopes read nodes in that order (the first
initializer of a name wins, a map's puts are read in order)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tree_sitter import Parser

from subguard.extract.java.facts import _READ, _SCOPE_NODES
from subguard.extract.java.tree import language, typed, walk

# nested and chained shapes where an enclosing node starts where a node within it starts
SOURCE = b"""
package shop.mq;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;

@Component @Lazy
public class Consumers {
    @RocketMQMessageListener(topic = "T", consumerGroup = "G")
    static class Inner implements RocketMQListener<String> {
        public void onMessage(String m) { a.b(x.c()).d(new B(e.f())).g(); }
    }
    void start(String topic) {
        String tag = "A";
        Map<String, String> props = new HashMap<>();
        props.put("k", tag = "B");
        for (String t : List.of("x", "y")) { tag = t; }
        Runnable r = () -> { String tag2 = topic; make(tag2).subscribe(tag2, "*"); };
        DefaultMQPushConsumer c = Factory.create(topic, new Object() { int n = call(1); });
        c.subscribe(topic, tag);
    }
    enum Kind { A, B; void m() { Kind.valueOf("A").m(); } }
}
"""


def _sources() -> list[bytes]:
    found = sorted(Path(__file__).parents[1].glob("fixtures/java*/**/*.java"))[:60]
    return [SOURCE, *(p.read_bytes() for p in found)]


@pytest.mark.parametrize(
    "types",
    [_READ, _SCOPE_NODES, frozenset({"method_invocation"}), frozenset({"identifier", "type_identifier"})],
    ids=["reader", "scope", "calls", "names"],
)
def test_typed_is_walk_filtered_by_type(types: frozenset[str]) -> None:
    parser = Parser(language())
    for i, data in enumerate(_sources()):
        root = parser.parse(data).root_node
        expected = [(n.type, n.start_byte, n.end_byte) for n in walk(root) if n.type in types]
        assert [(n.type, n.start_byte, n.end_byte) for n in typed(root, types)] == expected
        assert expected or i  # the shapes above have some of each
