"""Unknown is not empty, and a consumer that registers no subscription is no member (issue 18, item 1)."""

from __future__ import annotations

from subguard.core.config import Config
from subguard.core.inventory import group_map, subscription_rows
from subguard.core.model import ClientFamily, Consumer
from subguard.rules import judge as pipeline
from subguard.rules.policy import load_policies
from tests.engine.records import consumer, result, sub

RULES = pipeline.RuleSet.of(load_policies())
GROUP_RULES = ("SG101", "SG102", "SG103", "SG104", "SG105", "SG106")


def _group_findings(*consumers: Consumer) -> list[str]:
    found = pipeline.judge([result(*consumers)], RULES, Config()).findings
    return [f"{f.rule} {f.message}" for f in found if f.rule in GROUP_RULES]


def test_a_pull_or_assign_consumer_is_listed_but_never_a_member() -> None:
    push_a = consumer("G", sub("TopicA", "tag1", "a.py", 5), path="a.py", line=4)
    push_b = consumer("G", sub("TopicA", "tag1", "b.py", 5), path="b.py", line=4)
    pull = consumer("G", path="pull.py", line=3, client=ClientFamily.JAVA_PULL).model_copy(update={"registers": False})
    groups = group_map([push_a, pull, push_b])
    assert [c.location.path for c in groups.groups["G"].members] == ["a.py", "b.py"]
    assert [c.location.path for c in groups.passive] == ["pull.py"]
    assert _group_findings(push_a, push_b, pull) == []
    [row] = subscription_rows([pull])
    assert row["registers"] is False and row["topic"] is None and row["group"] == "G"


def test_a_member_whose_subscriptions_were_not_found_is_unknown_not_empty() -> None:
    known = consumer("G", sub("TopicA", "*", "a.py", 5), path="a.py", line=4)
    unseen = consumer("G", path="factory.py", line=9)
    assert _group_findings(known, unseen) == []  # no SG101 "{} vs {TopicA}"
    found = pipeline.judge([result(known, unseen)], RULES, Config()).findings
    [note] = [f for f in found if f.rule == "SG902"]
    assert (note.location.path, note.location.line) == ("factory.py", 9)
    assert "no subscribe call was found" in note.message and "SG101" in note.message
    assert "{}" not in note.message


def test_known_members_still_disagree_beside_an_unknown_one() -> None:
    """An unknown member hides nothing about the known ones: two known topic sets that differ are SG101."""
    a = consumer("G", sub("TopicA", "*", "a.py", 5), path="a.py", line=4)
    b = consumer("G", sub("TopicB", "*", "b.py", 5), path="b.py", line=4)
    unseen = consumer("G", path="factory.py", line=9)
    [finding] = _group_findings(a, b, unseen)
    assert finding.startswith("SG101") and "{}" not in finding


def test_a_template_is_listed_never_judged_and_never_noted() -> None:
    """A construction whose group and topic are parameters of its enclosing function (a factory, a
    wrapper, rocketmq-spring's listener container) is a template: its instances are its callers."""
    template = consumer(None, sub(None, None, "factory.py", 12), path="factory.py", line=10).model_copy(
        update={"template": ("consumerGroup", "topic")}
    )
    member = consumer("G", sub("TopicA", "*", "a.py", 5), path="a.py", line=4)
    found = pipeline.judge([result(template, member)], RULES, Config()).findings
    assert found == []
    assert group_map([template, member]).passive == (template,)
    [row] = subscription_rows([template])
    assert row["template"] == ["consumerGroup", "topic"]


def test_a_group_written_with_its_namespace_is_not_prefixed_twice() -> None:
    from subguard.core.inventory import group_name
    from subguard.core.model import Value

    written = consumer("inst|ns1%orders", sub("T", "*", "a.py", 2)).model_copy(
        update={"namespace": Value.literal("inst|ns1")}
    )
    bare = consumer("orders", sub("T", "*", "b.py", 2)).model_copy(update={"namespace": Value.literal("inst|ns1")})
    assert group_name(written) == group_name(bare) == "inst|ns1%orders"
