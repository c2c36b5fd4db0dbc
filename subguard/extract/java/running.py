"""Whether the code runs a Java consumer, decided from where it is started (see `lifecycle`).

- A consumer whose every `start()` (a 5.x builder's `build()`) lies where a test expects an exception never runs: the test
  asserts that it is refused (`never_runs`; listed by `inventory`, judged by no rule).
- A listener annotation on a class that can never be a bean (`Lifecycle.carriers`) never runs either.
- A remoting consumer built without a group (`new DefaultMQPushConsumer()`, no `setConsumerGroup`) has the
  client's default group only when it is started where its calls are read; otherwise whoever starts it
  may set one (`setConsumerGroup` elsewhere, `@ConfigurationProperties` binding), so its group is
  unknown, never the reserved `DEFAULT_CONSUMER`.
- In a file that declares a rocketmq-spring `AnnotationEnhancer`, the names its listener annotations
  write are rewritten at run time: their group and topics are unknown.
"""

from __future__ import annotations

from collections.abc import Sequence

from subguard.core.model import Consumer, Resolution, Value
from subguard.extract.java.facts import AnnotationUse, ConsumerDecl, JavaFacts

EXPECTED = "never runs: every start() is where a test expects an exception (the test asserts that it is refused)"
CARRIER = "never runs: the annotated class is an inner class used only by reflection or where a test expects an exception, never a bean"
NOT_STARTED = "no group in the constructor and not started where its calls are read: whoever starts it may set one"
ENHANCED = "may be rewritten at run time by the AnnotationEnhancer this file declares"


_STARTS = frozenset({"start", "startup", "build"})  # build(): a 5.x builder starts the consumer it builds


def never(c: Consumer, why: str) -> Consumer:
    """Never run: it registers nothing either (no group member, simulated member or change member)."""
    return c.model_copy(update={"never_runs": why, "registers": False, "notes": (*c.notes, why)})


def code_consumers(decl: ConsumerDecl, facts: JavaFacts, made: Sequence[Consumer]) -> list[Consumer]:
    """The consumers one construction makes, with what its `start()` calls say about running them."""
    life = facts.lifecycle
    starts = [(c.line, c.column) for c in decl.calls if c.method in _STARTS]
    starts += [  # `x::start`: in the method that made a local, anywhere for a field (made at class level)
        (line, col)
        for name, method, line, col in life.started_by_reference
        if decl.target and name == decl.target and (decl.method in ("", "<init>") or method == decl.method)
    ]
    if starts and all(life.expected_to_fail(line, col) for line, col in starts):
        return [never(c, EXPECTED) for c in made]
    if starts or decl.kind.startswith("new"):
        return list(made)  # a 5.x builder's consumer starts at build(); its default group is no reserved name
    return [
        c.model_copy(update={"group": Value.unknown(NOT_STARTED, c.location)})
        if c.group.resolution is Resolution.DEFAULT and c.group.value == "DEFAULT_CONSUMER"
        else c
        for c in made
    ]


def listener_consumer(ann: AnnotationUse, facts: JavaFacts, c: Consumer) -> Consumer:
    """A listener annotation's consumer, with what its file says about running it and its names."""
    life = facts.lifecycle
    if ann.class_name in life.carriers:
        return never(c, CARRIER)
    if not life.enhancer:
        return c
    group = c.group if c.group.resolution is Resolution.DEFAULT else Value.unknown(f"the group {ENHANCED}", c.location)
    subs = tuple(
        s
        if s.topic.resolution is Resolution.DEFAULT
        else s.model_copy(update={"topic": Value.unknown(f"the topic {ENHANCED}", s.location)})
        for s in c.subscriptions
    )
    return c.model_copy(update={"group": group, "subscriptions": subs})
