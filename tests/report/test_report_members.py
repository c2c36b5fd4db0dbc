from __future__ import annotations

from subguard.core.members import MEMBERS, Member, attach_members, members_of
from subguard.core.model import (
    ClientFamily,
    Consumer,
    ExpressionType,
    Finding,
    Location,
    MessageModel,
    Related,
    Severity,
    Subscription,
    Value,
)


def sub(path: str, line: int, topic: str, expr: str) -> Subscription:
    loc = Location(path=path, line=line, column=5, repo="r")
    return Subscription(
        topic=Value.literal(topic),
        expression=Value.literal(expr),
        expression_type=ExpressionType.TAG,
        tags=tuple(expr.split(" || ")),
        location=loc,
    )


def consumer(
    cid: str, group: str, *subs: Subscription, overridden: tuple[Subscription, ...] = (), model: str = "CLUSTERING"
) -> Consumer:
    return Consumer(
        consumer_id=cid,
        group=Value.literal(group),
        subscriptions=subs,
        overridden=overridden,
        message_model=Value.literal(model),
        client=ClientFamily.JAVA_PUSH_4X,
        location=Location(path=subs[0].location.path, line=1, repo="r"),
        repo="r",
    )


CONSUMERS = [
    consumer("a", "g", sub("a.py", 7, "T", "tag1"), sub("a.py", 8, "U", "x")),
    consumer("b", "g", sub("b.py", 9, "T", "tag2"), model=MessageModel.BROADCASTING.value),
    consumer("c", "other", sub("b.py", 9, "T", "not me")),  # same place, other group: never matched
    consumer("d", "h", sub("d.py", 4, "T", "late"), overridden=(sub("d.py", 3, "T", "*"),)),
]


def group_finding(group: str, topic: str, primary: tuple[str, int], *others: tuple[str, int]) -> Finding:
    return Finding(
        rule="SG102",
        severity=Severity.ERROR,
        message="m",
        group=group,
        topic=topic,
        location=Location(path=primary[0], line=primary[1], repo="r"),
        related=tuple(Related(location=Location(path=p, line=n, repo="r"), message=f"at {p}") for p, n in others),
    )


def test_members_come_from_the_consumers_declared_there() -> None:
    (f,) = attach_members([group_finding("g", "T", ("a.py", 7), ("b.py", 9))], CONSUMERS)
    members = members_of(f)
    assert [(m.location.path, m.topic, m.expression, m.model, m.client) for m in members] == [
        ("a.py", "T", "tag1", "CLUSTERING", "java-push-4x"),
        ("b.py", "T", "tag2", "BROADCASTING", "java-push-4x"),
    ]
    assert members[1].message == "at b.py"


def test_overridden_subscriptions_are_members_too() -> None:
    (f,) = attach_members([group_finding("h", "T", ("d.py", 3), ("d.py", 4))], CONSUMERS)
    assert [m.expression for m in members_of(f)] == ["*", "late"]


def test_unknown_places_keep_their_location_and_message() -> None:
    (f,) = attach_members([group_finding("g", "T", ("a.py", 7), ("zzz.py", 1))], CONSUMERS)
    last = members_of(f)[1]
    assert last == Member(location=Location(path="zzz.py", line=1, repo="r"), message="at zzz.py")


def test_findings_without_group_or_related_are_left_alone_and_attaching_is_idempotent() -> None:
    lone = group_finding("g", "T", ("a.py", 7))
    no_group = group_finding("", "T", ("a.py", 7), ("b.py", 9))
    assert attach_members([lone, no_group], CONSUMERS) == [lone, no_group]
    once = attach_members([group_finding("g", "T", ("a.py", 7), ("b.py", 9))], CONSUMERS)
    assert attach_members(once, CONSUMERS) == once
    assert sum(1 for k, _ in once[0].properties if k == MEMBERS) == 1
