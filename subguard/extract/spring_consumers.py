"""Consumers declared purely in Spring config, built from one profile's merged view.

- rocketmq-spring `rocketmq.pull-consumer.*` (+ `rocketmq.name-server`) -> SPRING_LITE_PULL
- rocketmq-v5 starter `rocketmq.simple-consumer.*` -> SPRING_5X
- Spring Cloud Stream RocketMQ binder bindings (old and new consumer keys) -> SPRING_CLOUD_STREAM

Each builder returns `(identity, Consumer)` pairs; the identity names the declaration (binding,
destination) so the extractor can compare it across profiles.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from subguard.expression import parse
from subguard.extract.spring_env import ConfigValue, canonical, resolve
from subguard.model import (
    ClientFamily,
    ConsumeMode,
    Consumer,
    ExpressionType,
    Location,
    MessageModel,
    Resolution,
    Subscription,
    Value,
)

View = Mapping[str, ConfigValue]
SCS = "spring.cloud.stream."
_IN = re.compile(r"(^input$|-in-\d+$)", re.IGNORECASE)
_OUT = re.compile(r"(^output$|-out-\d+$)", re.IGNORECASE)
_OLD_KEYS = ("tags", "sql", "broadcasting", "orderly")
_NEW_KEYS = ("subscription", "messagemodel", "push.orderly")


def location(cv: ConfigValue) -> Location:
    return Location(path=cv.path, line=cv.line, column=cv.column)


def config_value(view: View, key: str) -> Value | None:
    """A config key's value with placeholders resolved; None when the key is not set."""
    cv = view.get(canonical(key))
    if cv is None:
        return None
    return value_of(cv, view)


def value_of(cv: ConfigValue, view: View) -> Value:
    if "${" not in cv.value:
        return Value(value=cv.value, resolution=Resolution.LITERAL, detail=cv.key, location=location(cv))
    res = resolve(cv.value, view)
    if res.value is None:
        return Value.unknown(f"{cv.key}: placeholder ${{{res.missing[0]}}} is not set in the Spring config", location(cv))
    return Value(value=res.value, resolution=Resolution.PLACEHOLDER, detail=",".join(res.keys), location=location(cv))


def _text(v: Value | None) -> str:
    return v.value if v is not None and v.value is not None else ""


def _subscription(topic: Value, expression: Value, etype: ExpressionType, loc: Location) -> Subscription:
    tags = parse(expression.value, etype).tags if expression.value is not None else ()
    return Subscription(topic=topic, expression=expression, expression_type=etype, tags=tags, location=loc)


def _cid(loc: Location, kind: str) -> str:
    return f"{loc.path}:{loc.line}:{kind}"


def lite_pull_trigger(view: View, prefix: str) -> tuple[Value, Value, Value] | None:
    """(name server, group, topic) when all three are set: what makes rocketmq-spring create its
    lite-pull bean from `<prefix>group` / `<prefix>topic`."""
    ns, group, topic = (config_value(view, k) for k in ("rocketmq.name-server", prefix + "group", prefix + "topic"))
    if not (_text(ns) and _text(group) and _text(topic)) or ns is None or group is None or topic is None:
        return None
    return ns, group, topic


def lite_pull_consumer(view: View, prefix: str, kind: str, default_detail: str) -> Consumer | None:
    """rocketmq-spring's DefaultLitePullConsumer bean as configured under `prefix` (selector type and
    expression, message model, namespace, instance name), or None when it is not triggered."""
    found = lite_pull_trigger(view, prefix)
    if found is None:
        return None
    ns, group, topic = found
    stype = _text(config_value(view, prefix + "selector-type")).upper() or "TAG"
    etype = ExpressionType.SQL92 if stype == "SQL92" else ExpressionType.TAG
    expr = config_value(view, prefix + "selector-expression") or Value.default("*", default_detail)
    model = config_value(view, prefix + "message-model") or Value.default(MessageModel.CLUSTERING.value)
    loc = group.location or Location(path="")
    return Consumer(
        consumer_id=_cid(loc, kind), group=group,
        subscriptions=(_subscription(topic, expr, etype, topic.location or loc),),
        message_model=_upper(model), client=ClientFamily.SPRING_LITE_PULL, name_server=ns,
        namespace=config_value(view, prefix + "namespace"),
        instance_name=config_value(view, prefix + "instance-name") or Value.default("DEFAULT"),
        location=loc,
    )


def pull_consumer(view: View) -> list[tuple[str, Consumer]]:
    """rocketmq-spring's lite-pull bean: created when name-server, group and topic are all set."""
    consumer = lite_pull_consumer(view, "rocketmq.pull-consumer.", "pull-consumer", "rocketmq-spring pull-consumer default")
    return [("rocketmq.pull-consumer", consumer)] if consumer is not None else []


def simple_consumer(view: View) -> list[tuple[str, Consumer]]:
    """The v5 starter's SimpleConsumer bean (`rocketmq.simple-consumer.*`)."""
    p = "rocketmq.simple-consumer."
    group, topic = config_value(view, p + "consumer-group"), config_value(view, p + "topic")
    if not (_text(group) and _text(topic)) or group is None or topic is None:
        return []
    ftype = _text(config_value(view, p + "filter-expression-type")).lower()
    etype = ExpressionType.SQL92 if ftype in ("sql92", "sql") else ExpressionType.TAG
    expr = config_value(view, p + "tag") or Value.default("*", "rocketmq-v5 starter default tag")
    loc = group.location or Location(path="")
    consumer = Consumer(
        consumer_id=_cid(loc, "simple-consumer"), group=group,
        subscriptions=(_subscription(topic, expr, etype, topic.location or loc),),
        client=ClientFamily.SPRING_5X, name_server=config_value(view, p + "endpoints"), location=loc,
    )
    return [("rocketmq.simple-consumer", consumer)]


def _upper(v: Value) -> Value:
    return v.model_copy(update={"value": v.value.upper()}) if v.value is not None else v


def _bindings(view: View) -> dict[str, str]:
    """canonical binding name -> binding name as written, for `spring.cloud.stream.bindings.<b>.*`."""
    out: dict[str, str] = {}
    prefix = canonical(SCS + "bindings") + "."
    for ckey, cv in view.items():
        if ckey.startswith(prefix):
            written = cv.key.split(".")
            name = written[4] if len(written) > 4 and "." in cv.key else ckey[len(prefix):].split(".")[0]
            out.setdefault(ckey[len(prefix):].split(".")[0], name.strip("[]"))
    return out


def _rocket(view: View, binding: str, key: str) -> Value | None:
    """RocketMQ binder consumer key: binding-specific, else the binder-wide default."""
    return config_value(view, f"{SCS}rocketmq.bindings.{binding}.consumer.{key}") or config_value(view, f"{SCS}rocketmq.default.consumer.{key}")


def _has_any(view: View, binding: str, keys: tuple[str, ...]) -> bool:
    return any(_rocket(view, binding, k) is not None for k in keys)


def _is_consumer(view: View, binding: str, name: str) -> bool:
    if _OUT.search(name):
        return False
    if _IN.search(name) or config_value(view, f"{SCS}bindings.{binding}.group") is not None:
        return True
    prefixes = (canonical(f"{SCS}bindings.{binding}.consumer") + ".", canonical(f"{SCS}rocketmq.bindings.{binding}.consumer") + ".")
    return any(k.startswith(prefixes) for k in view)


def _truthy(v: Value | None) -> bool:
    return _text(v).strip().lower() == "true"


def _flag(v: Value | None, yes: str, no: str, what: str) -> Value:
    if v is None:
        return Value.default(no)
    if v.value is None:
        return v
    return v.model_copy(update={"value": yes if _truthy(v) else no, "detail": f"{what}={v.value}"})


def stream_bindings(view: View) -> list[tuple[str, Consumer]]:
    """One consumer per input binding (and per destination of a comma-separated destination)."""
    out: list[tuple[str, Consumer]] = []
    binder_ns = config_value(view, SCS + "rocketmq.binder.name-server")
    for binding, name in sorted(_bindings(view).items()):
        dest = config_value(view, f"{SCS}bindings.{binding}.destination")
        if dest is None or not _is_consumer(view, binding, name):
            continue
        old, new = _has_any(view, binding, _OLD_KEYS), _has_any(view, binding, _NEW_KEYS)
        notes: list[str] = []
        if old and new:
            notes.append(f"binding {name} mixes old (tags/sql/broadcasting) and new (subscription/messageModel) binder keys; new keys used")
        dest_loc = dest.location or Location(path="")
        topics = [t.strip() for t in dest.value.split(",") if t.strip()] if dest.value is not None else [None]
        for topic_text in topics:
            topic = dest if topic_text is None or len(topics) == 1 else dest.model_copy(update={"value": topic_text})
            group = _group(view, binding, name, topic_text or "", old and not new, notes)
            etype, expr = _selector(view, binding, new or not old)
            model, mode = _model(view, binding, new or not old, notes)
            loc = group.location or dest_loc
            consumer = Consumer(
                consumer_id=f"{dest_loc.path}:{dest_loc.line}:binding:{name}:{topic_text or ''}",
                group=group,
                subscriptions=(_subscription(topic, expr, etype, dest_loc),),
                message_model=model, consume_mode=mode, client=ClientFamily.SPRING_CLOUD_STREAM,
                name_server=_rocket(view, binding, "name-server") or binder_ns,
                namespace=_rocket(view, binding, "namespace"),
                instance_name=None if (old and not new) else Value.unknown("SCA binder >= 2.2.7 sets instanceName to [ak|]group|pid|nanoTime: it changes on every restart"),
                consume_from_where=_rocket(view, binding, "consume-from-where"),
                location=loc, notes=tuple(notes),
            )
            out.append((f"binding:{binding}:{topic_text or ''}", consumer))
    return out


def _group(view: View, binding: str, name: str, destination: str, old: bool, notes: list[str]) -> Value:
    group = config_value(view, f"{SCS}bindings.{binding}.group") or config_value(view, SCS + "default.group")
    if group is not None and group.value != "":
        return group
    if old:
        notes.append(f"binding {name} has no group: SCA <= 2.2.6 throws at startup (an empty binding group is rejected)")
        return Value.unknown(f"binding {name} has no group (SCA <= 2.2.6 fails at startup)")
    notes.append(f"binding {name} has no group: the binder uses anonymous_{destination}")
    return Value(value=f"anonymous_{destination}", resolution=Resolution.DEFAULT, detail="SCA >= 2.2.7 anonymous group for an empty binding group")


def _selector(view: View, binding: str, new: bool) -> tuple[ExpressionType, Value]:
    if new:
        sub = _rocket(view, binding, "subscription")
        if sub is None:
            return ExpressionType.TAG, Value.default("*", "SCA binder default subscription")
        if sub.value is not None and sub.value.startswith("sql:"):
            return ExpressionType.SQL92, sub.model_copy(update={"value": sub.value[4:]})
        return ExpressionType.TAG, sub
    sql = _rocket(view, binding, "sql")
    if sql is not None and _text(sql):
        return ExpressionType.SQL92, sql
    tags = _rocket(view, binding, "tags")
    return ExpressionType.TAG, tags if tags is not None and tags.value != "" else Value.default("*", "SCA binder default tags")


def _model(view: View, binding: str, new: bool, notes: list[str]) -> tuple[Value, Value]:
    if not new:
        return (_flag(_rocket(view, binding, "broadcasting"), MessageModel.BROADCASTING.value, MessageModel.CLUSTERING.value, "broadcasting"),
                _flag(_rocket(view, binding, "orderly"), ConsumeMode.ORDERLY.value, ConsumeMode.CONCURRENTLY.value, "orderly"))
    mode = _flag(_rocket(view, binding, "push.orderly"), ConsumeMode.ORDERLY.value, ConsumeMode.CONCURRENTLY.value, "push.orderly")
    raw = _rocket(view, binding, "message-model")
    if raw is None:
        return Value.default(MessageModel.CLUSTERING.value), mode
    if raw.value is None:
        return raw, mode
    text = raw.value.strip().upper()
    if text not in ("BROADCASTING", "CLUSTERING"):
        notes.append(f"messageModel '{raw.value}' is neither BROADCASTING nor CLUSTERING: the binder silently uses CLUSTERING")
        text = "CLUSTERING"
    return raw.model_copy(update={"value": text, "detail": f"messageModel={raw.value}"}), mode


Builder = Callable[[View], list[tuple[str, Consumer]]]
BUILDERS: dict[str, Builder] = {
    "pull-consumer": pull_consumer,
    "simple-consumer": simple_consumer,
    "stream": stream_bindings,
}
