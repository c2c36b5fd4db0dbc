"""Per-group impact from declared consumers: the line `check` prints, the record the audit stores."""

from __future__ import annotations

import pytest

from subguard.core.config import Config
from subguard.core.model import ClientFamily, Consumer, Location, MessageModel, Subscription, Value
from subguard.rocketmq.expression import parse
from subguard.simulate.impact import DEFAULT_RUNS, describe_group, predict


def consumer(
    path: str,
    line: int,
    topic: str,
    expr: str,
    client: ClientFamily = ClientFamily.JAVA_PUSH_4X,
    model: MessageModel = MessageModel.CLUSTERING,
    group: str = "g",
) -> Consumer:
    loc = Location(path=path, line=line)
    sub = Subscription(topic=Value.literal(topic), expression=Value.literal(expr), tags=parse(expr).tags, location=loc)
    return Consumer(
        consumer_id=f"{path}:{line}",
        group=Value.literal(group),
        subscriptions=(sub,),
        message_model=Value.literal(model.value),
        client=client,
        location=loc,
    )


def test_different_tags_describe_loss_and_the_silent_member() -> None:
    group = [consumer("a.py", 3, "T", "tag1"), consumer("b.py", 7, "T", "tag2")]
    impact = predict(group, runs=6, seed=1)
    rates = dict(impact.loss)
    assert set(rates) == {"tag1", "tag2"}
    # each run: the loser's tag is all lost, about half of the winner's; averaged over the runs
    assert 1.3 < rates["tag1"] + rates["tag2"] < 1.7 and min(rates.values()) >= 0.4
    assert sum(n for _, n in impact.silent) == 6  # exactly one member receives nothing in every run
    text = describe_group(group, runs=6)
    assert text.startswith("simulated (6 runs): tag1 ") and "lost" in text and "receives nothing" in text


def test_consistent_group_has_no_impact() -> None:
    group = [consumer("a.py", 3, "T", "tag1 || tag2"), consumer("b.py", 7, "T", "tag1 || tag2")]
    assert describe_group(group, runs=4) == ""


def test_tag_order_only_is_no_loss() -> None:
    group = [consumer("a.py", 3, "T", "tag1 || tag2"), consumer("b.py", 7, "T", "tag2||tag1")]
    assert describe_group(group, runs=4) == ""


def test_different_topics_leave_queues_never_pulled() -> None:
    group = [consumer("a.py", 3, "T1", "*"), consumer("b.py", 7, "T2", "*")]
    text = describe_group(group, runs=4)
    assert "never pulled" in text


def test_unknown_values_are_not_simulated() -> None:
    loc = Location(path="x.py", line=1)
    sub = Subscription(topic=Value.literal("T"), expression=Value.unknown("from env"), location=loc)
    c = Consumer(
        consumer_id="x", group=Value.literal("g"), subscriptions=(sub,), client=ClientFamily.JAVA_PUSH_4X, location=loc
    )
    impact = predict([c])
    assert impact.runs == 0 and not impact.has_loss


def test_a_failing_simulation_warns_in_the_caller_and_keeps_the_finding(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The warning is printed by `attach_impact` itself, never by a worker process (whose output
    would bypass the caller's streams, and the run memo's recording)."""
    from subguard.core.model import Finding, RuleDoc, Severity
    from subguard.rules import impact, judge
    from subguard.simulate import impact as sim

    def broken(consumers: object, runs: int = 0) -> str:
        raise RuntimeError("boom")

    monkeypatch.setattr(sim, "describe_group", broken)
    assert impact._describe("g", []) == (None, "subguard: warning: simulation of group g failed: RuntimeError: boom")
    group = [consumer("a.py", 3, "T", "tag1"), consumer("b.py", 7, "T", "tag2")]
    finding = Finding(rule="SG102", severity=Severity.ERROR, message="m", location=group[0].location, group="g")
    doc = RuleDoc(id="SG102", name="n", severity=Severity.ERROR, scope="group/topic")
    out = judge.attach_impact([finding], group, judge.RuleSet((), {"SG102": doc}), impact.describer(jobs=1), Config())
    assert out == [finding]
    assert "simulation of group g failed: RuntimeError: boom" in capsys.readouterr().err


def test_the_prediction_does_not_depend_on_member_order_and_says_its_runs() -> None:
    """Members start in the group map's order whatever order a scan delivered them in: the figures
    of a group do not change when its files sit elsewhere or are listed in another order."""
    group = [
        consumer("b/x.py", 7, "T", "tag2", ClientFamily.PYTHON_NATIVE_4X),
        consumer("a/y.java", 3, "T", "tag1"),
        consumer("c/z.py", 9, "T", "tag1||tag2", ClientFamily.PYTHON_NATIVE_4X),
    ]
    forward = predict(group)
    assert forward.runs == DEFAULT_RUNS and forward.has_loss
    assert predict(list(reversed(group))) == forward == predict(group[1:] + group[:1])
    assert describe_group(group).startswith(f"simulated ({DEFAULT_RUNS} runs): ")
