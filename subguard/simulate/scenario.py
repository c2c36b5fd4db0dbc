"""Scenario files: a pydantic schema, a safe YAML loader, and compilation to `GroupSpec`s.

Numbers are milliseconds; strings may carry a unit (`500ms`, `30s`, `2m`, `1h`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from subguard.core.model import ClientFamily, ExpressionType, MessageModel
from subguard.rocketmq.expression import parse
from subguard.simulate.spec import RETRY_DELAY, Batch, GroupSpec, Life, MemberSpec

_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}
_DURATION = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")


class ScenarioError(ValueError):
    """An invalid scenario; the message is one line naming the key."""


def to_ms(value: Any) -> int:
    """A duration in milliseconds from a number (ms) or a string with a unit."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        match = _DURATION.match(value)
        if match:
            return int(float(match.group(1)) * _UNITS[match.group(2) or "ms"])
    raise ValueError(f"not a duration: {value!r} (use ms, or 500ms / 30s / 2m / 1h)")


Ms = Annotated[int, BeforeValidator(to_ms)]


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Restart(_Strict):
    at: Ms
    down: Ms = 10_000


class Member(_Strict):
    name: str = Field(min_length=1)
    group: str | None = None
    subscriptions: dict[str, str] = Field(min_length=1)  # topic -> expression
    expression_type: ExpressionType = ExpressionType.TAG
    message_model: MessageModel = MessageModel.CLUSTERING
    client: ClientFamily | None = None
    start: Ms | None = 0  # None: started only by an event
    stop: Ms | None = None
    restarts: tuple[Restart, ...] = ()
    offset_store: Literal["persistent", "ephemeral"] = "ephemeral"
    stable_client_id: bool = True
    client_ip: str | None = None
    instance_name: str = ""
    rebalance_delay: Ms | None = None
    clock_skew: Ms = 0
    retry_delay: Ms = RETRY_DELAY
    allocation: Literal["AVG", "AVG_BY_CIRCLE"] | None = None


class Messages(_Strict):
    topic: str | None = None  # default: the only topic
    tag: str | None = None  # None: untagged
    count: int | None = Field(default=None, ge=0)
    at: Ms = 0
    rate: float | None = Field(default=None, gt=0)  # messages per second
    until: Ms | None = None  # with rate: keep sending until then
    interval: Ms | None = None
    producer: str = "producer"

    @model_validator(mode="after")
    def _sized(self) -> Messages:
        if self.count is None and (self.rate is None or self.until is None):
            raise ValueError("give count, or rate and until")
        return self


class Event(_Strict):
    at: Ms
    action: Literal["start", "stop", "restart", "deploy"]
    member: str | None = None
    members: tuple[str, ...] | None = None  # default: every member (deploy)
    down: Ms = 10_000
    interval: Ms = 30_000  # deploy: between members
    subscriptions: dict[str, str] | None = None  # deploy: the new subscriptions


class Scenario(_Strict):
    name: str = ""
    group: str = "group"
    topics: dict[str, Annotated[int, Field(ge=1, le=1024)]] = Field(min_length=1)  # topic -> queue count
    client: ClientFamily = ClientFamily.JAVA_PUSH_4X
    allocation: Literal["AVG", "AVG_BY_CIRCLE"] = "AVG"
    jitter: Ms = 10
    duration: Ms | None = None  # default: 60 s after the last message or event
    members: tuple[Member, ...] = Field(min_length=1)
    messages: tuple[Messages, ...] = Field(min_length=1)
    events: tuple[Event, ...] = ()


def _fail(key: str, message: str) -> ScenarioError:
    return ScenarioError(f"{key}: {message}")


def load_scenario(path: Path) -> Scenario:
    """Read and validate a scenario file (YAML, loaded safely)."""
    try:
        data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    except (OSError, YAMLError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{path}: cannot read scenario: {str(exc).splitlines()[0]}") from None
    return parse_scenario(data)


def parse_scenario(data: Any) -> Scenario:
    if not isinstance(data, dict):
        raise ScenarioError("(top level): a scenario is a mapping")
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise _fail(key, err["msg"]) from None
    _check_references(scenario)
    return scenario


def _check_references(s: Scenario) -> None:
    names = [m.name for m in s.members]
    for i, m in enumerate(s.members):
        if names.count(m.name) > 1:
            raise _fail(f"members.{i}.name", f"duplicate member name {m.name!r}")
        for topic, expr in m.subscriptions.items():
            if topic not in s.topics:
                raise _fail(f"members.{i}.subscriptions.{topic}", "topic not declared under topics")
            if parse(expr, m.expression_type).error:
                raise _fail(
                    f"members.{i}.subscriptions.{topic}", f"subscribe() throws: {parse(expr, m.expression_type).error}"
                )
    for i, msg in enumerate(s.messages):
        if msg.topic is None and len(s.topics) != 1:
            raise _fail(f"messages.{i}.topic", "required when several topics are declared")
        if msg.topic is not None and msg.topic not in s.topics:
            raise _fail(f"messages.{i}.topic", f"topic {msg.topic!r} not declared under topics")
    for i, ev in enumerate(s.events):
        for who in ((ev.member,) if ev.member else ()) + (ev.members or ()):
            if who not in names:
                raise _fail(f"events.{i}.member", f"no member named {who!r}")
        if ev.action != "deploy" and not ev.member and not ev.members:
            raise _fail(f"events.{i}.member", f"{ev.action} needs a member")
        if ev.action == "deploy" and not ev.subscriptions:
            raise _fail(f"events.{i}.subscriptions", "deploy needs the new subscriptions")
        for topic, expr in (ev.subscriptions or {}).items():
            if topic not in s.topics:
                raise _fail(f"events.{i}.subscriptions.{topic}", "topic not declared under topics")
            if parse(expr).error:
                raise _fail(f"events.{i}.subscriptions.{topic}", f"subscribe() throws: {parse(expr).error}")


def _batches(s: Scenario) -> tuple[Batch, ...]:
    only = next(iter(s.topics))
    out: list[Batch] = []
    for msg in s.messages:
        topic = msg.topic or only
        if msg.count is not None:
            interval = float(msg.interval) if msg.interval is not None else (1000.0 / msg.rate if msg.rate else 10.0)
            out.append(Batch(topic, msg.tag, msg.count, msg.at, interval, msg.producer))
        else:
            assert msg.rate is not None and msg.until is not None
            interval = 1000.0 / msg.rate
            count = max(0, int((msg.until - msg.at) / interval))
            out.append(Batch(topic, msg.tag, count, msg.at, interval, msg.producer))
    return tuple(out)


def _lives(s: Scenario, m: Member) -> tuple[Life, ...]:
    """Start/stop actions of one member (own fields, restarts, events) folded into incarnations."""
    subs = tuple(m.subscriptions.items())
    actions: list[tuple[int, int, str, tuple[tuple[str, str], ...] | None]] = []  # (time, order, kind, subs)
    order = 0

    def add(time: int, kind: str, new: tuple[tuple[str, str], ...] | None = None) -> None:
        nonlocal order
        order += 1
        actions.append((time, order, kind, new))

    if m.start is not None:
        add(m.start, "start")
    for r in m.restarts:
        add(r.at, "stop")
        add(r.at + r.down, "start")
    if m.stop is not None:
        add(m.stop, "stop")
    for ev in s.events:
        targets = ((ev.member,) if ev.member else ()) + (ev.members or ())
        if ev.action == "deploy":
            ordered = targets or tuple(x.name for x in s.members)
            if m.name in ordered:
                at = ev.at + ordered.index(m.name) * ev.interval
                add(at, "stop")
                add(at + ev.down, "start", tuple((ev.subscriptions or {}).items()))
        elif m.name in targets:
            if ev.action == "restart":
                add(ev.at, "stop")
                add(ev.at + ev.down, "start")
            else:
                add(ev.at, ev.action)
    lives: list[Life] = []
    started: int | None = None
    for time, _, kind, new in sorted(actions):
        if new is not None:
            subs = new
        if kind == "start" and started is None:
            started = time
        elif kind == "stop" and started is not None:
            lives.append(Life(started, time, _parsed(subs, m.expression_type)))
            started = None
    if started is not None:
        lives.append(Life(started, None, _parsed(subs, m.expression_type)))
    return tuple(lives)


def _parsed(subs: tuple[tuple[str, str], ...], kind: ExpressionType) -> tuple[tuple[str, Any], ...]:
    return tuple((topic, parse(expr, kind)) for topic, expr in subs)


def compile_scenario(s: Scenario) -> tuple[GroupSpec, ...]:
    """One `GroupSpec` per consumer group named in the scenario."""
    batches = _batches(s)
    last = max(
        [b.at + int(b.count * b.interval_ms) for b in batches]
        + [ev.at + ev.down + (ev.interval * len(s.members) if ev.action == "deploy" else 0) for ev in s.events]
        + [r.at + r.down for m in s.members for r in m.restarts]
        + [0]
    )
    duration = s.duration if s.duration is not None else last + 60_000
    groups: dict[str, list[MemberSpec]] = {}
    for i, m in enumerate(s.members):
        spec = MemberSpec(
            name=m.name,
            family=m.client or s.client,
            broadcasting=m.message_model is MessageModel.BROADCASTING,
            lives=_lives(s, m),
            ip=m.client_ip or f"10.0.{i // 250}.{i % 250 + 1}",
            stable_ip=m.stable_client_id,
            instance_name=m.instance_name,
            persistent_offsets=m.offset_store == "persistent",
            rebalance_delay_ms=m.rebalance_delay,
            clock_skew_ms=m.clock_skew,
            retry_delay_ms=m.retry_delay,
            strategy=m.allocation or s.allocation,
            label=m.name,
        )
        groups.setdefault(m.group or s.group, []).append(spec)
    queues = tuple(s.topics.items())
    return tuple(
        GroupSpec(group, queues, tuple(members), batches, duration, s.jitter) for group, members in groups.items()
    )
