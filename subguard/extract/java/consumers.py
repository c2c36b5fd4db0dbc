"""Consumers from Java facts: listener annotations and consumers built in code.

- rocketmq-spring `@RocketMQMessageListener` -> SPRING_LISTENER (annotation defaults, §7.2)
- rocketmq-spring `@ExtRocketMQConsumerConfiguration` -> SPRING_LITE_PULL
- v5 starter `org.apache.rocketmq.client.annotation.RocketMQMessageListener` -> SPRING_5X
- `new DefaultMQPushConsumer/DefaultLitePullConsumer/DefaultMQPullConsumer(...)` + calls on it
- 5.x `newPushConsumerBuilder()/newSimpleConsumerBuilder()` chains -> JAVA_5X
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from subguard.core.model import (
    ClientFamily,
    ConsumeMode,
    Consumer,
    ExpressionType,
    Location,
    MessageModel,
    Resolution,
    Subscription,
    Value,
    in_declaration,
)
from subguard.extract.java.facts import AnnotationUse, Call, ConsumerDecl, Expr
from subguard.extract.java.resolve import Symbols, Where, enum_name
from subguard.extract.java.spring import variants
from subguard.extract.spring.extractor import ModuleConfig
from subguard.rocketmq.expression import parse

SPRING_PKG = "org.apache.rocketmq.spring.annotation"
V5_PKG = "org.apache.rocketmq.client.annotation"
LITERAL_NOTE = "rocketmq-spring keeps the unresolved text literally"
PLAIN_NOTE = "Spring fails at startup on an unresolved @Value placeholder"
FAMILIES = {
    "DefaultMQPushConsumer": ClientFamily.JAVA_PUSH_4X,
    "DefaultLitePullConsumer": ClientFamily.JAVA_LITE_PULL,
    "DefaultMQPullConsumer": ClientFamily.JAVA_PULL,
    "newPushConsumerBuilder": ClientFamily.JAVA_5X,
    "newSimpleConsumerBuilder": ClientFamily.JAVA_5X,
}
_MAP_FACTORIES = frozenset({"singletonMap", "of", "ofEntries"})


def annotation_kind(ann: AnnotationUse, where: Where) -> str:
    """spring | v5 | ext: which annotation this is, told apart by import (attributes as a fallback)."""
    simple = ann.name.rsplit(".", 1)[-1]
    if simple == "ExtRocketMQConsumerConfiguration":
        return "ext"
    if "." in ann.name:
        return "v5" if ann.name.startswith(V5_PKG) else "spring"
    facts = where.facts
    if f"{V5_PKG}.{simple}" in facts.imports or V5_PKG in facts.wildcards:
        return "v5"
    if f"{SPRING_PKG}.{simple}" in facts.imports or SPRING_PKG in facts.wildcards:
        return "spring"
    names = {k for k, _ in ann.elements}
    return "v5" if names & {"tag", "endpoints", "filterExpressionType"} else "spring"


def _subscription(topic: Value, expression: Value, etype: ExpressionType, loc: Location) -> Subscription:
    tags = parse(expression.value, etype).tags if expression.value is not None else ()
    return Subscription(topic=topic, expression=expression, expression_type=etype, tags=tags, location=loc)


def _enum(elements: Mapping[str, Expr], key: str, default: str) -> Value:
    expr = elements.get(key)
    if expr is None:
        return Value.default(default)
    name = enum_name(expr)
    return Value(value=name, resolution=Resolution.LITERAL, detail=expr.source) if name else Value.unknown(f"`{expr.source}` is not an enum constant")


def _value_or(v: Value | None, default: Value) -> Value:
    return v if v is not None else default


def listener_consumers(ann: AnnotationUse, where: Where, symbols: Symbols, module: ModuleConfig | None) -> list[Consumer]:
    """One consumer per environment variant for a listener annotation."""
    kind = annotation_kind(ann, where)
    el = dict(ann.elements)
    loc = Location(path=where.path, line=ann.line, column=ann.column)

    def sval(key: str, default: str | None) -> Value | None:
        if key in el:
            return symbols.string_value(el[key], where)
        return Value.default(default, f"annotation default of {key}") if default is not None else None

    notes: list[str] = []
    if kind == "v5":
        raw = {"group": sval("consumerGroup", ""), "topic": sval("topic", "${rocketmq.push-consumer.topic:}"),
               "expression": sval("tag", "${rocketmq.push-consumer.tag:}"), "name_server": sval("endpoints", "${rocketmq.push-consumer.endpoints:}"),
               "type": sval("filterExpressionType", "tag"), "namespace": None, "instance_name": None}
        family = ClientFamily.SPRING_5X
        model, mode, cfw = Value.default(MessageModel.CLUSTERING.value), Value.default(ConsumeMode.CONCURRENTLY.value), None
    else:
        if kind == "ext":
            raw = {"group": sval("group", "${rocketmq.push-consumer.group:}"), "topic": sval("topic", "${rocketmq.push-consumer.topic:}")}
            family = ClientFamily.SPRING_LITE_PULL
        else:
            raw = {"group": sval("consumerGroup", None) or Value.unknown("consumerGroup is required but not written", loc), "topic": sval("topic", None)}
            family = ClientFamily.SPRING_LISTENER
        raw.update({"expression": sval("selectorExpression", "*"), "name_server": sval("nameServer", "${rocketmq.name-server:}"),
                    "namespace": sval("namespace", None), "instance_name": sval("instanceName", "DEFAULT"), "type": None})
        model = _enum(el, "messageModel", MessageModel.CLUSTERING.value)
        mode = _enum(el, "consumeMode", ConsumeMode.CONCURRENTLY.value)
        cfw = _enum(el, "consumeFromWhere", "CONSUME_FROM_LAST_OFFSET") if kind == "spring" else None
        stype = _enum(el, "selectorType", "TAG")
        raw["type"] = Value(value="sql92" if stype.value == "SQL92" else "tag", resolution=stype.resolution)
        if mode.value == ConsumeMode.ORDERLY.value and model.value == MessageModel.BROADCASTING.value:
            notes.append("ORDERLY with BROADCASTING: rocketmq-spring rejects this listener at startup (BeanDefinitionValidationException)")
    out: list[Consumer] = []
    for env, vals in variants(raw, module, LITERAL_NOTE):
        group = _value_or(vals["group"], Value.unknown("no consumer group", loc))
        if kind == "ext" and group.value == "":
            continue
        topic = _value_or(vals["topic"], Value.unknown("topic is required but not written", loc))
        expr = _value_or(vals["expression"], Value.default("*"))
        if expr.value is not None and expr.value == "" and kind != "v5":
            expr = Value.default("*", "an empty selectorExpression is not applied: the container keeps '*'")
        etype_text = (vals["type"].value or "tag").lower() if vals["type"] else "tag"
        etype = ExpressionType.SQL92 if etype_text in ("sql92", "sql") else ExpressionType.TAG
        sub_loc = Location(path=where.path, line=el["topic"].line, column=el["topic"].column) if "topic" in el else loc
        sub_loc = in_declaration(sub_loc, ann.first_line or ann.line, ann.end_line)
        cid = f"{where.path}:{ann.line}:{ann.column}" + (f"@{env}" if env else "")
        out.append(Consumer(
            consumer_id=cid, group=group, subscriptions=(_subscription(topic, expr, etype, sub_loc),),
            message_model=model, consume_mode=mode, client=family, environment=env,
            name_server=vals["name_server"] if vals["name_server"] is None or vals["name_server"].value != "" else None,
            namespace=vals["namespace"] if vals["namespace"] is None or vals["namespace"].value != "" else None,
            instance_name=vals["instance_name"], consume_from_where=cfw, location=loc, notes=tuple(notes),
        ))
    return out


# ---- consumers built in code -------------------------------------------------------------------


def _stringish(expr: Expr, symbols: Symbols, where: Where) -> bool:
    if expr.kind in ("str", "concat"):
        return True
    if expr.kind in ("name", "field"):
        if symbols.constant(expr, where) is not None:
            return True
        return "group" in expr.text.lower() or "namespace" in expr.text.lower()
    return False


def _hookish(expr: Expr) -> bool:
    """An `RPCHook` argument (the constructors without a group take one first)."""
    return ("hook" in expr.text.lower() and expr.kind in ("new", "name", "field", "call")) or expr.kind == "null"


_NO_GROUP = "no group in the constructor: MixAll.DEFAULT_CONSUMER_GROUP until setConsumerGroup"


def _ctor(decl: ConsumerDecl, symbols: Symbols, where: Where) -> tuple[Value, Value | None]:
    """(group, namespace) from the constructor arguments, following the client's overloads:
    (group), (RPCHook), (namespace, group, ...), (group, RPCHook, ...), (group, boolean, ...).
    An argument subguard cannot type is an unknown group with the reason, never a guess."""
    args = decl.ctor_args
    if not args or decl.kind not in FAMILIES or decl.kind.startswith("new") or _hookish(args[0]):
        return Value.default("DEFAULT_CONSUMER", _NO_GROUP), None
    first = args[0]
    if len(args) >= 2:
        second = args[1]
        if _stringish(second, symbols, where):
            return symbols.string_value(second, where), symbols.string_value(first, where)
        if not (_hookish(second) or second.kind in ("bool", "num")):
            loc = Location(path=where.path, line=first.line, column=first.column)
            return Value.unknown(
                f"`{decl.kind}({', '.join(a.source for a in args)[:120]})`: cannot tell whether the group is the "
                "first argument (then a hook or flag follows) or the second (after a namespace)", loc), None
    return symbols.string_value(first, where), None


def _filter_expression(expr: Expr, symbols: Symbols, where: Where) -> tuple[Value, ExpressionType]:
    """A 5.x `FilterExpression` argument -> (expression, type)."""
    loc = Location(path=where.path, line=expr.line, column=expr.column)
    if expr.kind == "new" and expr.text == "FilterExpression":
        if not expr.args:
            return Value.default("*", "FilterExpression() means SUB_ALL"), ExpressionType.TAG
        etype = ExpressionType.SQL92 if len(expr.args) > 1 and enum_name(expr.args[1]) == "SQL92" else ExpressionType.TAG
        return symbols.string_value(expr.args[0], where), etype
    if expr.kind == "field" and expr.text == "SUB_ALL":
        return Value(value="*", resolution=Resolution.LITERAL, detail=expr.source, location=loc), ExpressionType.TAG
    return Value.unknown(f"`{expr.source[:80]}` is not a FilterExpression subguard can read", loc), ExpressionType.TAG


def _selector(expr: Expr | None, symbols: Symbols, where: Where, call: Call) -> tuple[Value, ExpressionType]:
    """The second argument of `subscribe(topic, ...)`."""
    loc = Location(path=where.path, line=call.line, column=call.column)
    if expr is None or expr.kind == "null":
        return Value(value="*", resolution=Resolution.DEFAULT, detail="no/null expression means '*'", location=loc), ExpressionType.TAG
    if expr.kind == "call" and expr.text in ("bySql", "byTag") and expr.args:
        etype = ExpressionType.SQL92 if expr.text == "bySql" else ExpressionType.TAG
        return symbols.string_value(expr.args[0], where), etype
    if expr.kind == "new" and expr.text == "FilterExpression" or (expr.kind == "field" and expr.text == "SUB_ALL"):
        return _filter_expression(expr, symbols, where)
    return symbols.string_value(expr, where), ExpressionType.TAG


def _map_entries(expr: Expr) -> list[tuple[Expr, Expr]] | None:
    if expr.kind == "map" or (expr.kind == "call" and expr.text in _MAP_FACTORIES):
        args = expr.args
        return [(args[i], args[i + 1]) for i in range(0, len(args) - 1, 2)]
    return None


_CodeSub = tuple[Value, Value, ExpressionType, Location]  # topic, expression, type and place, as written in code


def _constant(arg: Expr, what: str) -> Value:
    """A setter's enum constant argument (`MessageModel.BROADCASTING`) by name, else unknown."""
    name = enum_name(arg)
    return Value(value=name, detail=arg.source) if name else Value.unknown(f"`{arg.source}` is not a {what} constant")


def _variant_subscriptions(subs: list[_CodeSub], vals: Mapping[str, Value | None]) -> tuple[tuple[Subscription, ...], tuple[Subscription, ...]]:
    """(current, overridden) subscriptions of one environment variant: a later one for a topic replaces the earlier."""
    current: dict[str, Subscription] = {}
    overridden: list[Subscription] = []
    for i, (_, _, etype, sloc) in enumerate(subs):
        topic_v, expr_v = vals[f"topic{i}"], vals[f"expr{i}"]
        topic = topic_v or Value.unknown("no topic", sloc)
        sub = _subscription(topic, expr_v or Value.default("*"), etype, sloc)
        key = topic.value if topic.value is not None else f"?{i}"
        if key in current:
            overridden.append(current[key])
        current[key] = sub
    return tuple(current.values()), tuple(overridden)


def code_consumers(decl: ConsumerDecl, where: Where, symbols: Symbols, module: ModuleConfig | None) -> list[Consumer]:
    """One consumer (per environment variant) for a consumer built in code."""
    family = FAMILIES[decl.kind]
    loc = Location(path=where.path, line=decl.line, column=decl.column)
    group, namespace = _ctor(decl, symbols, where)
    subs: list[_CodeSub] = []
    fields: dict[str, Value | None] = {"name_server": None, "instance_name": None, "client_ip": None}
    model = Value.default(MessageModel.CLUSTERING.value)
    mode = Value.default(ConsumeMode.CONCURRENTLY.value)
    cfw: Value | None = None
    notes: list[str] = []
    setters: dict[str, Callable[[Call], None]] = {}

    def on_subscribe(call: Call) -> None:
        if not call.args:
            return
        topic = symbols.string_value(call.args[0], where)
        expr, etype = _selector(call.args[1] if len(call.args) > 1 else None, symbols, where, call)
        subs.append((topic, expr, etype, in_declaration(Location(path=where.path, line=call.line, column=call.column), call.line, call.end_line)))

    def on_map(call: Call) -> None:
        entries = _map_entries(call.args[0]) if call.args else None
        cloc = Location(path=where.path, line=call.line, column=call.column)
        if entries is None:
            notes.append(f"{call.method}(...) at line {call.line}: the subscription map is not statically known")
            subs.append((Value.unknown("subscription map is built at run time", cloc), Value.unknown("subscription map is built at run time", cloc), ExpressionType.TAG, cloc))
            return
        for key, val in entries:
            topic = symbols.string_value(key, where)
            if call.method == "setSubscription":
                expr, etype = symbols.string_value(val, where), ExpressionType.TAG
            else:
                expr, etype = _filter_expression(val, symbols, where)
            key_loc = Location(path=where.path, line=key.line or call.line, column=key.column or call.column)
            subs.append((topic, expr, etype, in_declaration(key_loc, call.line, call.end_line)))

    def setter(key: str) -> Callable[[Call], None]:
        def run(call: Call) -> None:
            if call.args:
                fields[key] = symbols.string_value(call.args[0], where)
        return run

    setters.update({
        "subscribe": on_subscribe, "setSubscriptionExpressions": on_map, "setSubscription": on_map,
        "setNamesrvAddr": setter("name_server"), "setInstanceName": setter("instance_name"), "setClientIP": setter("client_ip"),
    })
    for call in decl.calls:
        if call.method in setters:
            setters[call.method](call)
        elif call.method == "setConsumerGroup" and call.args:
            group = symbols.string_value(call.args[0], where)
        elif call.method == "setNamespace" and call.args:
            namespace = symbols.string_value(call.args[0], where)
        elif call.method == "setMessageModel" and call.args:
            model = _constant(call.args[0], "MessageModel")
        elif call.method == "setConsumeFromWhere" and call.args:
            cfw = _constant(call.args[0], "ConsumeFromWhere")
        elif call.method in ("registerMessageListener", "setMessageListener") and "MessageListenerOrderly" in call.source:
            mode = Value(value=ConsumeMode.ORDERLY.value, detail="MessageListenerOrderly")
    raw: dict[str, Value | None] = {"group": group, "namespace": namespace, **fields}
    for i, (topic, expr, _, _) in enumerate(subs):
        raw[f"topic{i}"], raw[f"expr{i}"] = topic, expr
    out: list[Consumer] = []
    for env, vals in variants(raw, module, PLAIN_NOTE):
        current, overridden = _variant_subscriptions(subs, vals)
        cid = f"{where.path}:{decl.line}:{decl.column}" + (f"@{env}" if env else "")
        group_v = vals["group"] or Value.unknown("no consumer group", loc)
        out.append(Consumer(
            consumer_id=cid, group=group_v, subscriptions=current, overridden=overridden,
            message_model=model, consume_mode=mode, client=family, environment=env,
            name_server=vals["name_server"], namespace=vals["namespace"], instance_name=vals["instance_name"],
            client_ip=vals["client_ip"], consume_from_where=cfw, location=loc, notes=tuple(notes),
        ))
    return out
