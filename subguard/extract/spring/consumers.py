"""Consumers declared purely in Spring config, built from one profile's merged view.

- rocketmq-spring `rocketmq.pull-consumer.*` (+ `rocketmq.name-server`) -> SPRING_LITE_PULL; a
  message model or selector type that is not exactly an enum constant fails the application at
  startup, so that value is unknown with the reason (and a note)
- rocketmq-v5 starter `rocketmq.simple-consumer.*` -> SPRING_5X
- Spring Cloud Stream RocketMQ binder bindings -> SPRING_CLOUD_STREAM, read with the consumer keys and
  empty-group rule of the module's binder version (`Binder`, from `spring_versions.sca_binder`)

Each builder returns `(identity, Consumer)` pairs; the identity names the declaration (binding,
destination) so the extractor can compare it across profiles.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from subguard.core.model import (
    ClientFamily,
    ConsumeMode,
    Consumer,
    ExpressionType,
    Location,
    MessageModel,
    Resolution,
    StartupFailure,
    Subscription,
    Value,
)
from subguard.extract.spring.env import ConfigValue, canonical, config_text_value
from subguard.rocketmq.expression import parse

View = Mapping[str, ConfigValue]
SCS = "spring.cloud.stream."
_IN = re.compile(r"(^input$|-in-\d+$)", re.IGNORECASE)
_OUT = re.compile(r"(^output$|-out-\d+$)", re.IGNORECASE)
_OLD_KEYS = ("tags", "sql", "broadcasting", "orderly")
_NEW_KEYS = ("subscription", "message-model", "push.orderly")
_NEW_ONLY_KEYS = (*_NEW_KEYS, "name-server", "namespace", "consume-from-where")  # not read by <= 2.2.6 / 2021.1
# rocketmq-spring's own enums (org.apache.rocketmq.spring.annotation.MessageModel / SelectorType)
_MESSAGE_MODELS = (MessageModel.BROADCASTING.value, MessageModel.CLUSTERING.value)
_SELECTOR_TYPES = (ExpressionType.TAG.value, ExpressionType.SQL92.value)


def location(cv: ConfigValue) -> Location:
    return Location(path=cv.path, line=cv.line, column=cv.column)


def config_value(view: View, key: str) -> Value | None:
    """A config key's value with placeholders resolved; None when the key is not set."""
    cv = view.get(canonical(key))
    if cv is None:
        return None
    return value_of(cv, view)


def value_of(cv: ConfigValue, view: View) -> Value:
    """A config entry's value as Spring binds it (`env.config_text_value`), located at the entry."""
    if "${" not in cv.value and "@" not in cv.value:
        return Value(value=cv.value, resolution=Resolution.LITERAL, detail=cv.key, location=location(cv))
    v = config_text_value(cv.value, view, location(cv), cv.key)
    return v.model_copy(update={"location": location(cv)}) if v.location != location(cv) else v


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


def enum_failure(v: Value | None, key: str, enum: str, constants: tuple[str, ...]) -> str | None:
    """Why `<enum>.valueOf(value)` fails at startup, or None when the value is a constant (or not set,
    or unknown). rocketmq-spring reads the lite-pull bean's `message-model` / `selector-type` that
    way (RocketMQAutoConfiguration.defaultLitePullConsumer, 2.2.0-2.3.5): the lookup is case-sensitive."""
    if v is None or v.value is None or v.value.strip() in constants:
        return None
    return (
        f"{key}={v.value!r} is not a {enum} constant ({' or '.join(constants)}): rocketmq-spring reads it with "
        f"{enum}.valueOf, which is case-sensitive, so the application fails at startup (IllegalArgumentException)"
    )


def lite_pull_consumer(view: View, prefix: str, kind: str, default_detail: str) -> Consumer | None:
    """rocketmq-spring's DefaultLitePullConsumer bean as configured under `prefix` (selector type and
    expression, message model, namespace, instance name), or None when it is not triggered."""
    found = lite_pull_trigger(view, prefix)
    if found is None:
        return None
    ns, group, topic = found
    stype = config_value(view, prefix + "selector-type")
    etype = ExpressionType.SQL92 if _text(stype).strip().upper() == "SQL92" else ExpressionType.TAG  # as meant
    expr = config_value(view, prefix + "selector-expression") or Value.default("*", default_detail)
    model = config_value(view, prefix + "message-model") or Value.default(MessageModel.CLUSTERING.value)
    stype_failure = enum_failure(stype, prefix + "selector-type", "SelectorType", _SELECTOR_TYPES)
    model_failure = enum_failure(model, prefix + "message-model", "MessageModel", _MESSAGE_MODELS)
    if stype_failure is not None:  # the bean is never built: nothing is subscribed
        expr = Value.unknown(stype_failure, expr.location)
    if model_failure is not None:
        model = Value.unknown(model_failure, model.location)
    loc = group.location or Location(path="")
    return Consumer(
        consumer_id=_cid(loc, kind),
        group=group,
        subscriptions=(_subscription(topic, expr, etype, topic.location or loc),),
        message_model=model,
        client=ClientFamily.SPRING_LITE_PULL,
        name_server=ns,
        namespace=config_value(view, prefix + "namespace"),
        instance_name=config_value(view, prefix + "instance-name") or Value.default("DEFAULT"),
        location=loc,
        notes=tuple(f for f in (stype_failure, model_failure) if f is not None),
        startup_failure=_failure((stype_failure, stype), (model_failure, model)),
    )


def _failure(*causes: tuple[str | None, Value | None]) -> StartupFailure | None:
    """The startup failure of the first cause that has one, at the value that causes it."""
    for reason, value in causes:
        if reason is not None:
            return StartupFailure(reason=reason, location=value.location if value is not None else None)
    return None


def pull_consumer(view: View) -> list[tuple[str, Consumer]]:
    """rocketmq-spring's lite-pull bean: created when name-server, group and topic are all set."""
    consumer = lite_pull_consumer(
        view, "rocketmq.pull-consumer.", "pull-consumer", "rocketmq-spring pull-consumer default"
    )
    return [("rocketmq.pull-consumer", consumer)] if consumer is not None else []


def simple_consumer(view: View) -> list[tuple[str, Consumer]]:
    """The v5 starter's SimpleConsumer builder bean (`rocketmq.simple-consumer.*`): created when
    `endpoints` is set (RocketMQAutoConfiguration.simpleConsumerBuilder); the filter type is TAG only
    for "tag" in any case, anything else is SQL92 (RocketMQUtil.createFilterExpression)."""
    p = "rocketmq.simple-consumer."
    group, topic = config_value(view, p + "consumer-group"), config_value(view, p + "topic")
    if (
        not (_text(group) and _text(topic) and _text(config_value(view, p + "endpoints")))
        or group is None
        or topic is None
    ):
        return []
    ftype = _text(config_value(view, p + "filter-expression-type")) or "tag"
    etype = ExpressionType.TAG if ftype.lower() == "tag" else ExpressionType.SQL92
    expr = config_value(view, p + "tag") or Value.default("*", "rocketmq-v5 starter default tag")
    loc = group.location or Location(path="")
    consumer = Consumer(
        consumer_id=_cid(loc, "simple-consumer"),
        group=group,
        subscriptions=(_subscription(topic, expr, etype, topic.location or loc),),
        client=ClientFamily.SPRING_5X,
        name_server=config_value(view, p + "endpoints"),
        location=loc,
    )
    return [("rocketmq.simple-consumer", consumer)]


def _bindings(view: View) -> dict[str, str]:
    """canonical binding name -> binding name as written, for `spring.cloud.stream.bindings.<b>.*`."""
    out: dict[str, str] = {}
    prefix = canonical(SCS + "bindings") + "."
    for ckey, cv in view.items():
        if ckey.startswith(prefix):
            written = cv.key.split(".")
            name = written[4] if len(written) > 4 and "." in cv.key else ckey[len(prefix) :].split(".")[0]
            out.setdefault(ckey[len(prefix) :].split(".")[0], name.strip("[]"))
    return out


def _rocket(view: View, binding: str, key: str) -> Value | None:
    """RocketMQ binder consumer key: binding-specific, else the binder-wide default."""
    return config_value(view, f"{SCS}rocketmq.bindings.{binding}.consumer.{key}") or config_value(
        view, f"{SCS}rocketmq.default.consumer.{key}"
    )


def _is_consumer(view: View, binding: str, name: str) -> bool:
    if _OUT.search(name):
        return False
    if _IN.search(name) or config_value(view, f"{SCS}bindings.{binding}.group") is not None:
        return True
    prefixes = (
        canonical(f"{SCS}bindings.{binding}.consumer") + ".",
        canonical(f"{SCS}rocketmq.bindings.{binding}.consumer") + ".",
    )
    return any(k.startswith(prefixes) for k in view)


def _truthy(v: Value | None) -> bool:
    return _text(v).strip().lower() == "true"


def _flag(v: Value | None, yes: str, no: str, what: str) -> Value:
    if v is None:
        return Value.default(no)
    if v.value is None:
        return v
    return v.model_copy(update={"value": yes if _truthy(v) else no, "detail": f"{what}={v.value}"})


@dataclass(frozen=True)
class Binder:
    """What a module's SCA binder version decides; None where the version is not known.

    `new_keys`: the consumer reads `subscription` / `messageModel` / `push.orderly` (and per-binding
    `nameServer` / `namespace` / `consumeFromWhere`) instead of `tags` / `sql` / `broadcasting` /
    `orderly` (2.2.7.RELEASE, 2021.0.1.0, 2022.x on). `anonymous`: an empty binding group becomes
    `anonymous_<destination>` (2.2.8.RELEASE, 2021.0.4.0, 2022.x on) instead of failing at startup.
    """

    version: str | None = None
    new_keys: bool | None = None
    anonymous: bool | None = None
    classpath: frozenset[str] | None = None  # binder types the build files bring (rocketmq, rabbit, kafka)


UNKNOWN_BINDER = Binder()
_UNKNOWN_VERSION = "the SCA binder version is not known from the build files"
_OLD_GENERATION = "<= 2.2.6.RELEASE / 2021.1 (tags/sql/broadcasting/orderly)"
_NEW_GENERATION = "2.2.7.RELEASE / 2021.0.1.0+ (subscription/messageModel/push.orderly)"


def stream_bindings(view: View, binder: Binder = UNKNOWN_BINDER) -> list[tuple[str, Consumer]]:
    """One consumer per input binding (and per destination of a comma-separated destination), read
    with the key set of the module's binder version (by the keys present when it is unknown)."""
    out: list[tuple[str, Consumer]] = []
    binder_ns = config_value(view, SCS + "rocketmq.binder.name-server")
    for binding, name in sorted(_bindings(view).items()):
        dest = config_value(view, f"{SCS}bindings.{binding}.destination")
        if dest is None or not _is_consumer(view, binding, name):
            continue
        kind, binder_note = binder_of(view, binding, binder.classpath)
        if kind != "rocketmq":
            continue
        new, key_notes, presumed = _key_set(view, binding, name, binder)
        per_binding = (
            new or binder.new_keys is None
        )  # <= 2.2.6 / 2021.1: no per-binding nameServer/namespace/consumeFromWhere
        dest_loc = dest.location or Location(path="")
        topics = [t.strip() for t in dest.value.split(",") if t.strip()] if dest.value is not None else [None]
        for topic_text in topics:
            notes = list(key_notes)
            topic = dest if topic_text is None or len(topics) == 1 else dest.model_copy(update={"value": topic_text})
            group = _group(view, binding, name, topic_text or "", binder, notes)
            etype, expr = _selector(view, binding, new)
            model, mode = _model(view, binding, new, notes)
            loc = group.location or dest_loc
            if binder_note:
                notes.append(binder_note)
            consumer = Consumer(
                consumer_id=f"{dest_loc.path}:{dest_loc.line}:binding:{name}:{topic_text or ''}",
                group=group,
                subscriptions=(_subscription(topic, _presume(expr, presumed), etype, dest_loc),),
                message_model=_presume(model, presumed),
                consume_mode=_presume(mode, presumed),
                client=ClientFamily.SPRING_CLOUD_STREAM,
                name_server=(_rocket(view, binding, "name-server") if per_binding else None) or binder_ns,
                namespace=_rocket(view, binding, "namespace") if per_binding else None,
                instance_name=None
                if not new
                else Value.unknown(
                    "SCA binder >= 2.2.7 sets instanceName to [ak|]group|pid|nanoTime: it changes on every restart"
                ),
                consume_from_where=_rocket(view, binding, "consume-from-where") if per_binding else None,
                location=loc,
                notes=tuple(notes),
            )
            out.append((f"binding:{binding}:{topic_text or ''}", consumer))
    return out


def _type_of(view: View, name: str) -> str:
    """The binder type a binder name stands for: `binders.<name>.type`, else the name itself (the
    binder of a type is registered under the type's name: rocketmq, rabbit, kafka)."""
    declared = _text(config_value(view, f"{SCS}binders.{name}.type")).strip().lower()
    return (declared or name.strip().lower()).split("-")[0]


def binder_of(view: View, binding: str, classpath: frozenset[str] | None) -> tuple[str, str]:
    """(binder type, note) of an input binding, as Spring Cloud Stream's BinderFactory picks it:
    the binding's `binder`, else `default-binder`, else the only binder configured
    (`binders.*`) or on the class path. "rocketmq" unless the config or the build files say
    otherwise; several binders and no choice fail the application at startup (a note, the
    binding kept: the linter does not drop a consumer on a guess)."""
    chosen = _text(config_value(view, f"{SCS}bindings.{binding}.binder")) or _text(
        config_value(view, SCS + "default-binder")
    )
    if chosen:
        return _type_of(view, chosen), ""
    prefix = canonical(SCS + "binders") + "."
    configured = {_type_of(view, k[len(prefix) :].split(".")[0]) for k in view if k.startswith(prefix)}
    kinds = configured or set(classpath or ())
    if len(kinds) == 1:
        return next(iter(kinds)), ""
    if len(kinds) > 1:
        if "rocketmq" not in kinds:
            return sorted(kinds)[0], ""
        return "rocketmq", (
            f"binding {binding}: several binders ({', '.join(sorted(kinds))}) and neither a binder for the binding "
            "nor spring.cloud.stream.default-binder: Spring Cloud Stream fails at startup (a default binder is requested)"
        )
    # no binder in the config, and none in the build files (or none known): the binder's own keys decide
    others = {t for t in ("rabbit", "kafka") if any(k.startswith(canonical(f"{SCS}{t}.")) for k in view)}
    if others and not any(k.startswith(canonical(SCS + "rocketmq.")) for k in view):
        return sorted(others)[0], ""
    return "rocketmq", ""


def _written(view: View, binding: str, keys: tuple[str, ...]) -> list[str]:
    return [k for k in keys if _rocket(view, binding, k) is not None]


def _key_set(view: View, binding: str, name: str, binder: Binder) -> tuple[bool, list[str], str]:
    """(reads the new keys?, notes, why the choice is presumed or ""): the binder version's key set,
    the written keys of the other set reported as ignored; by the keys present when it is unknown."""
    old, new = _written(view, binding, _OLD_KEYS), _written(view, binding, _NEW_KEYS)
    if binder.new_keys is None:
        notes = (
            [
                f"binding {name} mixes old (tags/sql/broadcasting) and new (subscription/messageModel) binder keys; new keys used"
            ]
            if old and new
            else []
        )
        uses_new = bool(new) or not old
        if not (old or new):
            return uses_new, notes, ""
        keys = _NEW_GENERATION if uses_new else _OLD_GENERATION
        note = f"binding {name}: {_UNKNOWN_VERSION}; read with the {keys} keys because those are present (the other binder generation ignores them)"
        return uses_new, [*notes, note], f"{_UNKNOWN_VERSION}; {keys} keys presumed from the keys present"
    ignored = old if binder.new_keys else _written(view, binding, _NEW_ONLY_KEYS)
    if not ignored:
        return binder.new_keys, [], ""
    if binder.new_keys:
        effect = f"it only reads the {_NEW_GENERATION} keys, so the binding uses those or their defaults ('*' TAG, CLUSTERING, CONCURRENTLY)"
    else:
        effect = f"it only reads the {_OLD_GENERATION} keys and the binder-wide name server"
    verb = "is" if len(ignored) == 1 else "are"
    return (
        binder.new_keys,
        [f"binding {name}: {', '.join(ignored)} {verb} ignored by SCA binder {binder.version}: {effect}"],
        "",
    )


def _presume(v: Value, why: str) -> Value:
    """`v` with the reason its key set was presumed added to its detail (values read from a key only)."""
    if not why or v.resolution is Resolution.DEFAULT:
        return v
    return v.model_copy(update={"detail": f"{v.detail}; {why}" if v.detail else why})


def _group(view: View, binding: str, name: str, destination: str, binder: Binder, notes: list[str]) -> Value:
    group = config_value(view, f"{SCS}bindings.{binding}.group") or config_value(view, SCS + "default.group")
    if group is not None and group.value != "":
        return group
    if binder.anonymous and not destination:
        return Value.unknown(
            f"binding {name} has no group: SCA binder {binder.version} uses anonymous_<destination>, and the destination is not known"
        )
    if binder.anonymous:
        notes.append(f"binding {name} has no group: SCA binder {binder.version} uses anonymous_{destination}")
        return Value(
            value=f"anonymous_{destination}",
            resolution=Resolution.DEFAULT,
            detail=f"SCA binder {binder.version}: an empty binding group becomes anonymous_<destination> (2.2.8.RELEASE / 2021.0.4.0 / 2022.x on)",
        )
    throws = f'"\'group must be configured for channel {destination}" at startup'
    if binder.anonymous is False:
        why = f"binding {name} has no group: SCA binder {binder.version} throws {throws} (anonymous groups only from 2.2.8.RELEASE / 2021.0.4.0 / 2022.x)"
    else:
        why = (
            f"binding {name} has no group and {_UNKNOWN_VERSION}: 2.2.8.RELEASE / 2021.0.4.0 / 2022.x and later use "
            f"anonymous_{destination}, binders up to 2.2.7.RELEASE, 2021.1 and 2021.0.1.0 throw {throws}"
        )
    notes.append(why)
    return Value.unknown(why)


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
    return ExpressionType.TAG, tags if tags is not None and tags.value != "" else Value.default(
        "*", "SCA binder default tags"
    )


def _model(view: View, binding: str, new: bool, notes: list[str]) -> tuple[Value, Value]:
    if not new:
        return (
            _flag(
                _rocket(view, binding, "broadcasting"),
                MessageModel.BROADCASTING.value,
                MessageModel.CLUSTERING.value,
                "broadcasting",
            ),
            _flag(
                _rocket(view, binding, "orderly"), ConsumeMode.ORDERLY.value, ConsumeMode.CONCURRENTLY.value, "orderly"
            ),
        )
    mode = _flag(
        _rocket(view, binding, "push.orderly"),
        ConsumeMode.ORDERLY.value,
        ConsumeMode.CONCURRENTLY.value,
        "push.orderly",
    )
    raw = _rocket(view, binding, "message-model")
    if raw is None:
        return Value.default(MessageModel.CLUSTERING.value), mode
    if raw.value is None:
        return raw, mode
    text = raw.value.strip().upper()
    if text not in ("BROADCASTING", "CLUSTERING"):
        notes.append(
            f"messageModel '{raw.value}' is neither BROADCASTING nor CLUSTERING: the binder silently uses CLUSTERING"
        )
        text = "CLUSTERING"
    return raw.model_copy(update={"value": text, "detail": f"messageModel={raw.value}"}), mode


Builder = Callable[[View], list[tuple[str, Consumer]]]
BUILDERS: dict[str, Builder] = {
    "pull-consumer": pull_consumer,
    "simple-consumer": simple_consumer,
    "stream": stream_bindings,
}
