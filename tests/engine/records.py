"""Small builders of real Consumer/Subscription records for engine tests (no mocks)."""

from __future__ import annotations

from subguard.core.model import ClientFamily, Consumer, ExpressionType, Location, Subscription, Value
from subguard.rocketmq.expression import parse
from subguard.scan.extraction import ScanResult


def sub(
    topic: str | None, expression: str | None, path: str, line: int, sql: bool = False, repo: str = "repo"
) -> Subscription:
    kind = ExpressionType.SQL92 if sql else ExpressionType.TAG
    loc = Location(path=path, line=line, repo=repo)
    return Subscription(
        topic=Value.literal(topic) if topic is not None else Value.unknown("computed topic"),
        expression=Value.literal(expression) if expression is not None else Value.unknown("f-string"),
        expression_type=kind,
        tags=parse(expression, kind).tags if expression is not None else (),
        location=loc,
    )


def consumer(
    group: str | None,
    *subs: Subscription,
    path: str = "",
    line: int = 1,
    model: str = "CLUSTERING",
    client: ClientFamily = ClientFamily.PYTHON_NATIVE_4X,
    overridden: tuple[Subscription, ...] = (),
    repo: str = "repo",
    environment: str = "",
) -> Consumer:
    where = path or (subs[0].location.path if subs else "c.py")
    loc = Location(path=where, line=line, repo=repo)
    return Consumer(
        consumer_id=f"{repo}:{where}:{line}",
        group=Value.literal(group) if group is not None else Value.unknown("os.environ['GROUP']"),
        subscriptions=subs,
        overridden=overridden,
        message_model=Value.literal(model),
        client=client,
        service=repo,
        environment=environment,
        repo=repo,
        location=loc,
    )


def result(*consumers: Consumer, repo: str = "repo") -> ScanResult:
    return ScanResult(root="/tmp/" + repo, repo=repo, files=(), consumers=consumers, deployments=())
