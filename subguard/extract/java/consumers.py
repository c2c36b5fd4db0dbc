"""Consumers from Java facts: listener annotations and consumers built in code.

- rocketmq-spring `@RocketMQMessageListener` -> SPRING_LISTENER (annotation defaults, §7.2)
- rocketmq-spring `@ExtRocketMQConsumerConfiguration` -> SPRING_LITE_PULL
- v5 starter `org.apache.rocketmq.client.annotation.RocketMQMessageListener` -> SPRING_5X
- `new DefaultMQPushConsumer/DefaultLitePullConsumer/DefaultMQPullConsumer(...)` + calls on it
- 5.x `newPushConsumerBuilder()/newSimpleConsumerBuilder()` chains -> JAVA_5X
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from subguard.core.branches import Branch, Written, one_of, subscribe_again
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
    in_declaration,
)
from subguard.extract.java.facts import AnnotationUse, Call, ClassFacts, ConsumerDecl, Expr, collection, unwrapped
from subguard.extract.java.resolve import (
    OPTION_GETTERS,
    REFLECTION,
    Symbols,
    Where,
    bound_name,
    enum_name,
    reflected_names,
)
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
    "newLitePushConsumerBuilder": ClientFamily.JAVA_5X,
    "MQPullConsumerScheduleService": ClientFamily.JAVA_PULL,
    # Aliyun ONS 1.x and OpenMessaging run the 4.x remoting consumers underneath
    "ons": ClientFamily.JAVA_PUSH_4X,
    "ons-order": ClientFamily.JAVA_PUSH_4X,
    "ons-batch": ClientFamily.JAVA_PUSH_4X,
    "ons-bean": ClientFamily.JAVA_PUSH_4X,
    "ons-order-bean": ClientFamily.JAVA_PUSH_4X,
    "ons-batch-bean": ClientFamily.JAVA_PUSH_4X,
    "oms-push": ClientFamily.JAVA_PUSH_4X,
    "oms-pull": ClientFamily.JAVA_PULL,
}
_MAP_FACTORIES = frozenset({"singletonMap", "of", "ofEntries"})


def annotation_kind(ann: AnnotationUse, where: Where) -> str:
    """spring | v5 | ext | reset: which annotation this is, told apart by import (attributes as a fallback)."""
    simple = ann.name.rsplit(".", 1)[-1]
    if simple == "ExtRocketMQConsumerConfiguration":
        return "ext"
    if simple == "ExtConsumerResetConfiguration":
        return "reset"
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
    return (
        Value(value=name, resolution=Resolution.LITERAL, detail=expr.source)
        if name
        else Value.unknown(f"`{expr.source}` is not an enum constant")
    )


def _value_or(v: Value | None, default: Value) -> Value:
    return v if v is not None else default


def listener_consumers(
    ann: AnnotationUse, where: Where, symbols: Symbols, module: ModuleConfig | None
) -> list[Consumer]:
    """One consumer per environment variant for a listener annotation."""
    kind = annotation_kind(ann, where)
    el = dict(ann.elements)
    loc = Location(path=where.path, line=ann.line, column=ann.column)

    def sval(key: str, default: str | None) -> Value | None:
        if key in el:
            return symbols.string_value(el[key], where)
        return Value.default(default, f"annotation default of {key}") if default is not None else None

    notes: list[str] = []
    if kind in ("reset", "v5"):
        # the v5 starter: unset attributes of a SimpleConsumer (`reset`) fall back to rocketmq.simple-consumer.*,
        # a push listener's to rocketmq.push-consumer.* (its group and filter type have no such fallback)
        reset = kind == "reset"
        keys = "rocketmq.simple-consumer" if reset else "rocketmq.push-consumer"
        raw = {
            "group": sval("consumerGroup", f"${{{keys}.consumer-group:}}" if reset else ""),
            "topic": sval("topic", f"${{{keys}.topic:}}"),
            "expression": sval("tag", f"${{{keys}.tag:}}"),
            "name_server": sval("endpoints", f"${{{keys}.endpoints:}}"),
            "type": sval("filterExpressionType", f"${{{keys}.filter-expression-type:tag}}" if reset else "tag"),
            "namespace": None,
            "instance_name": None,
        }
        family = ClientFamily.SPRING_5X
        model, mode, cfw = (
            Value.default(MessageModel.CLUSTERING.value),
            Value.default(ConsumeMode.CONCURRENTLY.value),
            None,
        )
    else:
        if kind == "ext":
            raw = {
                "group": sval("group", "${rocketmq.push-consumer.group:}"),
                "topic": sval("topic", "${rocketmq.push-consumer.topic:}"),
            }
            family = ClientFamily.SPRING_LITE_PULL
        else:
            raw = {
                "group": sval("consumerGroup", None) or Value.unknown("consumerGroup is required but not written", loc),
                "topic": sval("topic", None),
            }
            family = ClientFamily.SPRING_LISTENER
        raw.update(
            {
                "expression": sval("selectorExpression", "*"),
                "name_server": sval("nameServer", "${rocketmq.name-server:}"),
                "namespace": sval("namespace", None),
                "instance_name": sval("instanceName", "DEFAULT"),
                "type": None,
            }
        )
        model = _enum(el, "messageModel", MessageModel.CLUSTERING.value)
        mode = _enum(el, "consumeMode", ConsumeMode.CONCURRENTLY.value)
        cfw = _enum(el, "consumeFromWhere", "CONSUME_FROM_LAST_OFFSET") if kind == "spring" else None
        stype = _enum(el, "selectorType", "TAG")
        raw["type"] = Value(value="sql92" if stype.value == "SQL92" else "tag", resolution=stype.resolution)
        if mode.value == ConsumeMode.ORDERLY.value and model.value == MessageModel.BROADCASTING.value:
            notes.append(
                "ORDERLY with BROADCASTING: rocketmq-spring rejects this listener at startup (BeanDefinitionValidationException)"
            )
    out: list[Consumer] = []
    for env, vals in variants(raw, module, LITERAL_NOTE, keep_text=True):
        group = _value_or(vals["group"], Value.unknown("no consumer group", loc))
        if kind in ("ext", "reset") and group.value == "":
            continue
        topic = _value_or(vals["topic"], Value.unknown("topic is required but not written", loc))
        expr = _value_or(vals["expression"], Value.default("*"))
        if expr.value is not None and expr.value == "" and kind not in ("v5", "reset"):
            expr = Value.default("*", "an empty selectorExpression is not applied: the container keeps '*'")
        elif expr.value == "" and kind == "reset":
            expr = Value.default("*", "no tag: the SimpleConsumer is built without a filter expression ('*')")
        etype_text = (vals["type"].value or "tag").lower() if vals["type"] else "tag"
        etype = ExpressionType.SQL92 if etype_text in ("sql92", "sql") else ExpressionType.TAG
        sub_loc = in_declaration(
            loc, ann.first_line or ann.line, ann.end_line
        )  # the annotation creates it; the topic's place is provenance
        cid = f"{where.path}:{ann.line}:{ann.column}" + (f"@{env}" if env else "")
        out.append(
            Consumer(
                consumer_id=cid,
                group=group,
                subscriptions=(_subscription(topic, expr, etype, sub_loc),),
                message_model=model,
                consume_mode=mode,
                client=family,
                environment=env,
                name_server=vals["name_server"]
                if vals["name_server"] is None or vals["name_server"].value != ""
                else None,
                namespace=_wire_namespace(
                    group, vals["namespace"] if vals["namespace"] is None or vals["namespace"].value != "" else None
                ),
                instance_name=vals["instance_name"],
                consume_from_where=cfw,
                location=loc,
                notes=tuple(notes),
            )
        )
    return out


_LISTENER_IFACES = frozenset({"RocketMQListener", "RocketMQReplyListener"})


def refused_listener(ann: AnnotationUse, where: Where, symbols: Symbols) -> StartupFailure | None:
    """rocketmq-spring's registrar throws for an `@RocketMQMessageListener` bean that implements neither
    `RocketMQListener` nor `RocketMQReplyListener` (through its supertypes in the tree): the application
    does not start and the listener never subscribes (SG906, at the annotation)."""
    if ann.name.rsplit(".", 1)[-1] != "RocketMQMessageListener" or annotation_kind(ann, where) != "spring":
        return None
    if symbols.implements(ann.class_name, Where(where.path, where.facts, ""), _LISTENER_IFACES) is not False:
        return None
    cls = ann.class_name.rsplit(".", 1)[-1]
    return StartupFailure(
        reason=f"{cls} implements neither RocketMQListener nor RocketMQReplyListener, so rocketmq-spring's registrar throws "
        'IllegalStateException ("... is not instance of ...") and the listener never subscribes',
        location=Location(path=where.path, line=ann.line, column=ann.column),
    )


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
                "first argument (then a hook or flag follows) or the second (after a namespace)",
                loc,
            ), None
    return symbols.string_value(first, where), None


def _filter_expression(expr: Expr, symbols: Symbols, where: Where) -> tuple[Value, ExpressionType]:
    """A 5.x `FilterExpression` argument -> (expression, type)."""
    loc = Location(path=where.path, line=expr.line, column=expr.column)
    if expr.kind == "new" and expr.text == "FilterExpression":
        if not expr.args:
            return Value.default("*", "FilterExpression() means SUB_ALL"), ExpressionType.TAG
        etype = (
            ExpressionType.SQL92 if len(expr.args) > 1 and enum_name(expr.args[1]) == "SQL92" else ExpressionType.TAG
        )
        return symbols.string_value(expr.args[0], where), etype
    if expr.kind in ("field", "name") and expr.text == "SUB_ALL":
        return Value(value="*", resolution=Resolution.LITERAL, detail=expr.source, location=loc), ExpressionType.TAG
    return Value.unknown(f"`{expr.source[:80]}` is not a FilterExpression subguard can read", loc), ExpressionType.TAG


def _selector(expr: Expr | None, symbols: Symbols, where: Where, call: Call) -> tuple[Value, ExpressionType]:
    """The second argument of `subscribe(topic, ...)`."""
    loc = Location(path=where.path, line=call.line, column=call.column)
    if expr is None or expr.kind == "null":
        return Value(
            value="*", resolution=Resolution.DEFAULT, detail="no/null expression means '*'", location=loc
        ), ExpressionType.TAG
    if expr.kind == "call" and expr.text in ("bySql", "byTag") and expr.args:
        etype = ExpressionType.SQL92 if expr.text == "bySql" else ExpressionType.TAG
        return symbols.string_value(expr.args[0], where), etype
    if (
        expr.kind == "new"
        and expr.text == "FilterExpression"
        or (expr.kind in ("field", "name") and expr.text == "SUB_ALL")
    ):
        return _filter_expression(expr, symbols, where)
    value = symbols.string_value(expr, where)
    if value.value == "":  # FilterAPI.buildSubscriptionData registers an empty subString as SUB_ALL
        return value.model_copy(
            update={
                "value": "*",
                "resolution": Resolution.DEFAULT,
                "detail": "an empty expression is registered as '*'",
            }
        ), ExpressionType.TAG
    return value, ExpressionType.TAG


def _map_entries(expr: Expr, conditions: bool = False) -> list[tuple[Expr, Expr]] | None:
    """A map's (key, value) entries; each value without the conditions it was put under, unless
    `conditions` (then a conditional value is an `Expr("when", ...)`)."""
    if expr.kind == "map" or (expr.kind == "call" and expr.text in _MAP_FACTORIES):
        args = expr.args
        return [(args[i], args[i + 1] if conditions else unwrapped(args[i + 1])) for i in range(0, len(args) - 1, 2)]
    return None


_CodeSub = tuple[Value, Value, ExpressionType, Location]  # topic, expression, type and place, as written in code


def _constant(arg: Expr, what: str) -> Value:
    """A setter's enum constant argument (`MessageModel.BROADCASTING`) by name, else unknown."""
    name = enum_name(arg)
    return Value(value=name, detail=arg.source) if name else Value.unknown(f"`{arg.source}` is not a {what} constant")


def _variant_subscriptions(
    subs: list[_CodeSub], vals: Mapping[str, Value | None], branches: Sequence[Branch]
) -> tuple[tuple[Subscription, ...], tuple[Subscription, ...]]:
    """(current, overridden) subscriptions of one environment variant: a later one for a topic
    replaces each earlier one it runs after whenever that one ran (`subscribe_again`); the others stay
    possible beside it, and a topic left with several is subscribed as one of them (`one_of`)."""
    current: dict[str, list[Written]] = {}
    overridden: list[Subscription] = []
    for i, (_, _, etype, sloc) in enumerate(subs):
        topic_v, expr_v = vals[f"topic{i}"], vals[f"expr{i}"]
        topic = topic_v or Value.unknown("no topic", sloc)
        sub = _subscription(topic, expr_v or Value.default("*"), etype, sloc)
        key = topic.value if topic.value is not None else f"?{i}"
        current[key], replaced = subscribe_again(current.get(key, ()), sub, branches[i])
        overridden += replaced
    return tuple(one_of(tuple(s for s, _ in alive)) for alive in current.values()), tuple(overridden)


@dataclass(frozen=True)
class Site:
    """A call site that instantiates a template: where the consumer is made, and the calls the caller
    makes on it (a factory's result). A subscription whose topic the site passes is placed here."""

    where: Where
    line: int
    column: int
    calls: tuple[Call, ...] = ()
    repeated: bool = False  # the site runs once per item (`Consumer.repeated`)
    # the calls made on the consumer in the methods the site's call was followed through (`Linker._targets`),
    # innermost first, each with where it is read
    hops: tuple[tuple[tuple[Call, ...], Where], ...] = ()


class _Reader:
    """Reads values for one consumer and records which unknown ones are the enclosing method's or class's
    parameters (a template) and whether anything else is unknown."""

    def __init__(self, symbols: Symbols) -> None:
        self.symbols = symbols
        self.template: dict[str, None] = {}
        self.other_unknown = False

    def value(self, expr: Expr, where: Where) -> Value:
        v = self.symbols.string_value(expr, where)
        if not v.known:
            self.note(expr, where)
        return v

    def note(self, expr: Expr, where: Where) -> None:
        refs = self._refs(expr, where)
        if refs:
            self.template.update(dict.fromkeys(refs))
        else:
            self.other_unknown = True

    def _refs(self, expr: Expr, where: Where, depth: int = 0) -> list[str] | None:
        """The parameters an unknown expression reads; None when something else makes it unknown.

        Followed: a parameter (of the method the expression is written in), a field a parameter feeds,
        a call site's argument (read where the caller wrote it), the values of a local assigned more
        than once, a for-each variable's collection, calls on any of these, a helper called with them,
        and getters of the object's own state (`_state_getter`)."""
        if depth > _MAX_REF_DEPTH:
            return None
        if expr.kind == "name":
            bound = next((b for b in where.bindings if b[0] == expr.text), None)
            if bound is not None:  # a call site's argument: a template of the caller's parameters, or not
                return self._refs(bound[1], bound[2], depth + 1)
            if expr.text in where.params:
                return [expr.text]
            fed = _fed_fields(where)
            if expr.text in fed:
                return [fed[expr.text]]
            if expr.args:  # a local assigned more than once: every value it may hold
                return self._all(expr.args, where, depth, skip_null=True)
            return None
        if expr.kind == "concat":
            return self._all(expr.args, where, depth)
        if expr.kind in ("call", "new") and expr.text in ("bySql", "byTag", "FilterExpression") and expr.args:
            return self._refs(expr.args[0], where, depth + 1)
        if expr.kind == "call" and expr.qual is not None and expr.text not in OPTION_GETTERS:  # `anno.topic()`
            root = expr.qual
            while root.qual is not None and root.kind in ("call", "field"):
                root = root.qual
            refs = self._refs(root, where, depth + 1) if root.kind == "name" and not _is_type(root) else None
            if refs is not None:
                return refs
            getter = _state_getter(expr, where, self.symbols)
            if getter is not None or not _is_type(root):
                return getter
        if expr.kind in ("call", "new") and expr.text not in OPTION_GETTERS and expr.args:
            # a static or same-class helper (`RocketMQUtil.createFilterExpression(tag, type)`,
            # `resolvePlaceholders(annotation.group(), config.getGroup())`) of template inputs
            return self._all(expr.args, where, depth)
        return _state_getter(expr, where, self.symbols)

    def _all(self, parts: tuple[Expr, ...], where: Where, depth: int, skip_null: bool = False) -> list[str] | None:
        """The parameters the unknown parts read; None when one of them is unknown for another reason.
        With `skip_null` (the values a local may hold), `null` and a fresh `new T()` add nothing."""
        out: list[str] = []
        for part in parts:
            if (
                skip_null and (part.kind == "null" or (part.kind == "new" and not part.args))
            ) or self.symbols.string_value(part, where).known:
                continue
            refs = self._refs(part, where, depth + 1)
            if refs is None:
                return None
            out.extend(refs)
        return out or None


_MAX_REF_DEPTH = 8


def _is_type(expr: Expr) -> bool:
    """`RocketMQUtil` in `RocketMQUtil.make(...)`: a name that reads as a type, not a variable."""
    return expr.kind == "name" and expr.text[:1].isupper() and not expr.args


def _fed_fields(where: Where) -> dict[str, str]:
    """The fields (and locals) of the class at `where` that a parameter feeds, as-is or computed
    (field -> the parameter)."""
    cls = _class_at(where)
    return {f: p for f, p in (*cls.derived_fields, *cls.param_fields)} if cls is not None else {}


def _state_getter(expr: Expr, where: Where, symbols: Symbols) -> list[str] | None:
    """The object whose state a getter reads (`config.getGroup()`, `this.getConsumerGroup()`,
    `getConsumerGroup()`, also further calls on what it returns: `config.getGroups().split(",")`):
    whoever configures that object sets the value, so a consumer built from it is a template like one
    built from a parameter. Not one of a field the container injects (`@Autowired AppConfig config`):
    that is the application's own configuration read at run time, a blind spot worth its note; nor a
    static call on a type (`Config.getGroup()`), nor an annotation read by reflection."""
    getter = False
    node: Expr | None = expr
    while node is not None and node.kind == "call":
        if node.text in REFLECTION:  # an annotation read at run time
            return _reflected(node, symbols, where)
        getter = getter or (node.text.startswith("get") and node.text not in OPTION_GETTERS and not node.args)
        if node.qual is None:
            return ["this"] if getter else None
        node = node.qual
    while node is not None and node.qual is not None and node.kind == "field":
        node = node.qual
    if not getter or node is None:
        return None
    if node.text == "this":
        return ["this"]
    if node.kind == "name" and node.text[:1].islower() and node.text not in _injected(where):
        return [node.text]
    return None


def _reflected(call: Expr, symbols: Symbols, where: Where) -> list[str] | None:
    """`getDeclaredAnnotation(Listener.class)`, `findAnnotationOnBean(name, Listener.class)`: the values are
    those of the classes annotated `@Listener`. A template fed by the annotation when the repository
    declares the annotation type: each class carrying it is an instance (`link.Linker`), and so is
    none when no class does. Else a blind spot worth its note (None) when the repository has such
    classes."""
    names = reflected_names(call)
    if not names:
        return None
    if all(_declared(n, symbols, where) for n in names) or not any(symbols.annotation_used(n) for n in names):
        return [f"@{n}" for n in names]
    return None


def _declared(name: str, symbols: Symbols, where: Where) -> bool:
    """Whether the repository declares the annotation type `name` (its elements known) and can tell
    which files write it, all of them Java."""
    entry = symbols.find_class(name, where)
    return entry is not None and bool(entry.cls.elements) and not symbols.written_elsewhere(name)


def _injected(where: Where) -> tuple[str, ...]:
    cls = _class_at(where)
    return cls.injected if cls is not None else ()


def _class_at(where: Where) -> ClassFacts | None:
    return next((c for c in where.facts.classes if c.name == where.class_name), None)


def _within(call: Call, where: Where) -> Where:
    """The place a call on the consumer is read: the consumer's method, or the other method the call is
    written in (whose parameters shadow the names a call site binds)."""
    if call.params is None:
        return where
    kept = tuple(b for b in where.bindings if b[0] not in call.params)
    return replace(where, params=call.params, bindings=kept)


def _site_of(where: Where, site: Site | None, topic: Expr) -> Location | None:
    """The instantiating call site (or annotation) when it gives the topic (a bound parameter or
    annotation element), else None."""
    if site is not None and any(b == bound_name(topic) for b, _, _ in where.bindings):
        return Location(path=site.where.path, line=site.line, column=site.column)
    return None


def _located(call: Call, where: Where, site: Site | None, topic: Expr) -> Location:
    """A subscription's place: its call, or the instantiating call site when that site passes the topic."""
    return _site_of(where, site, topic) or in_declaration(
        Location(path=where.path, line=call.line, column=call.column), call.line, call.end_line
    )


def code_consumers(
    decl: ConsumerDecl,
    where: Where,
    symbols: Symbols,
    module: ModuleConfig | None,
    site: Site | None = None,
) -> list[Consumer]:
    """One consumer (per environment variant) for a consumer built in code; with `site`, the instance
    a call site makes of a template (its parameters bound in `where.bindings`)."""
    b = _Build(decl, where, symbols, site)
    return b.consumers(module)


_ONS_KEYS = {
    "GROUP_ID": "group",
    "ConsumerId": "group",
    "NAMESRV_ADDR": "name_server",
    "InstanceName": "instance_name",
    "MessageModel": "model",
    "Namespace": "namespace",
}
_ASSIGN = "assign mode: the consumer pulls the queues it is given and registers no subscription with the broker"
_PULL = "a DefaultMQPullConsumer without registered topics registers no subscription with the broker"


def _wire_namespace(group: Value, namespace: Value | None) -> Value | None:
    """A group written as `ns%name` (`instance|ns%name`) names its namespace before the first `%`;
    the group stays the wire name, and a namespace set elsewhere is kept (never prefixed twice)."""
    if namespace is not None or group.value is None or "%" not in group.value.strip("%"):
        return namespace
    head = group.value.split("%", 1)[0]
    return (
        Value(
            value=head,
            resolution=group.resolution,
            detail=f"the part of group '{group.value}' before '%'",
            location=group.location,
        )
        if head
        else None
    )


def _vendor_props(expr: Expr) -> list[tuple[Expr, Expr]]:
    """ONS `Properties` entries (a local filled with put/setProperty) or an OMS `newKeyValue().put(k, v)...` chain."""
    entries = _map_entries(expr, conditions=True)
    if entries is not None:
        return entries
    out: list[tuple[Expr, Expr]] = []
    node: Expr | None = expr
    while node is not None and node.kind == "call":
        if node.text == "put" and len(node.args) == 2:
            out.append((node.args[0], node.args[1]))
        node = node.qual
    return out


class _Build:
    """The state of one consumer built in code while its calls are read in order."""

    def __init__(self, decl: ConsumerDecl, where: Where, symbols: Symbols, site: Site | None) -> None:
        self.decl, self.where, self.site = decl, where, site
        self.read = _Reader(symbols)
        self.family = FAMILIES[decl.kind]
        self.loc = (
            Location(path=site.where.path, line=site.line, column=site.column)
            if site
            else Location(path=where.path, line=decl.line, column=decl.column)
        )
        self.subs: list[_CodeSub] = []
        self.branches: list[Branch] = []  # the branches each of `subs` was written in
        self.fields: dict[str, Value | None] = {"name_server": None, "instance_name": None, "client_ip": None}
        self.model = Value.default(MessageModel.CLUSTERING.value)
        self.mode = (
            Value.default(ConsumeMode.ORDERLY.value, "an ONS OrderConsumer")
            if decl.kind in ("ons-order", "ons-order-bean")
            else Value.default(ConsumeMode.CONCURRENTLY.value)
        )
        self.cfw: Value | None = None
        self.notes: list[str] = []
        self.assign = False
        self.group, self.namespace = self._start(symbols)

    def _start(self, symbols: Symbols) -> tuple[Value, Value | None]:
        decl, where = self.decl, self.where
        if decl.kind.startswith(("ons", "oms")):
            return self._vendor_group()
        group, namespace = _ctor(decl, symbols, where)
        if not group.known:  # the argument it was read from (the first, or the second after a namespace)
            args = decl.ctor_args
            source = args[1] if namespace is not None and len(args) > 1 else args[0] if args else None
            if source is not None and not symbols.string_value(source, where).known:
                self.read.note(source, where)
            else:
                self.read.other_unknown = True
        return group, namespace

    def _vendor_group(self, props: Expr | None = None) -> tuple[Value, Value | None]:
        """The group and namespace of the vendor properties `props` (the factory's argument by default),
        and the message model and fields they set."""
        if self.decl.kind.endswith("-bean") and props is None:
            return Value.unknown("no properties set on the ONS consumer bean (`setProperties`)", self.loc), None
        props = props if props is not None else self.decl.ctor_args[0] if self.decl.ctor_args else None
        group: Value = Value.unknown(f"no consumer group property given to {self.decl.kind} factory", self.loc)
        namespace: Value | None = None
        for key, when in _vendor_props(props) if props is not None else ():
            name = key.text if key.kind in ("field", "name") else key.text if key.kind == "str" else ""
            slot = "group" if name == "CONSUMER_ID" else _ONS_KEYS.get(name)
            val, unset = self._applies(when)
            if val is None:
                if unset is not None and slot == "model":
                    self.model = unset
                elif unset is not None and slot == "group":
                    group = unset
                continue
            if slot == "group":
                group = self.read.value(val, self.where)
            elif slot == "model":
                model = enum_name(val) or self.read.symbols.string_value(val, self.where).value
                self.model = (
                    Value(value=model, detail=val.source)
                    if model
                    else Value.unknown(f"`{val.source}` is not a message model")
                )
            elif slot == "namespace":
                namespace = self.read.symbols.string_value(val, self.where)
            elif slot is not None:
                self.fields[slot] = self.read.symbols.string_value(val, self.where)
        return group, namespace

    def _applies(self, value: Expr) -> tuple[Expr | None, Value | None]:
        """A vendor property's value as the conditions it was put under decide: (the value, None) when
        they hold, (None, None) when one provably does not (the property stays unset), and (None, why
        it is unknown) when one cannot be read (a parameter a caller binds is read through the site)."""
        while value.kind == "when" and value.args and value.qual is not None:
            held = self.read.symbols.string_value(value.qual, self.where)
            if held.value not in ("true", "false"):
                arm = "then" if value.text == "then" else "else"
                return None, Value.unknown(
                    f"set only on the {arm} arm of `if ({value.source})`: not known here", self.loc
                )
            if (held.value == "true") != (value.text == "then"):
                return None, None
            value = value.args[0]
        return value, None

    def _add(self, call: Call, where: Where, topic_expr: Expr, expr: Value, etype: ExpressionType) -> None:
        topic = self.read.value(topic_expr, where)
        self.subs.append((topic, expr, etype, _located(call, where, self.site, topic_expr)))

    def _expression(self, expr: Value, arg: Expr | None, where: Where) -> Value:
        if not expr.known and arg is not None:
            self.read.note(arg, where)
        return expr

    def on_subscribe(self, call: Call, where: Where) -> None:
        if not call.args:
            return
        # 4.x subscribe(topic, expression[, ...]); ONS subscribe(topic, expression, listener)
        sel = call.args[1] if len(call.args) > (2 if self.decl.kind.startswith("ons") else 1) else None
        expr, etype = _selector(sel, self.read.symbols, where, call)
        self._add(call, where, call.args[0], self._expression(expr, sel, where), etype)

    def on_star(self, call: Call, where: Where) -> None:
        """`bindTopic(topic)`, `registerPullTaskCallback(topic, cb)`, OMS `attachQueue(topic...)`: {topic: *}."""
        if call.args:
            star = Value(value="*", resolution=Resolution.DEFAULT, detail=f"{call.method}(topic) subscribes '*'")
            self._add(call, where, call.args[0], star, ExpressionType.TAG)

    def on_topics(self, call: Call, where: Where) -> None:
        """`setRegisterTopics(set)`: every registered topic with '*'."""
        elems = collection(call.args[0]) if call.args else ()
        if not elems:
            cloc = Location(path=where.path, line=call.line, column=call.column)
            self.subs.append(
                (
                    Value.unknown("registered topics are built at run time", cloc),
                    Value.default("*"),
                    ExpressionType.TAG,
                    cloc,
                )
            )
        for e in elems:
            self.on_star(Call(call.method, (e,), call.line, call.column, call.source, call.end_line), where)

    def _entries(self, call: Call, where: Where, what: str) -> tuple[list[tuple[Expr, Expr]], Location]:
        """The entries of the subscription map (or table) `call` is given, and where the call is; a
        map that is not statically known is noted, with one unknown subscription, and has none."""
        entries = _map_entries(call.args[0]) if call.args else None
        cloc = in_declaration(Location(path=where.path, line=call.line, column=call.column), call.line, call.end_line)
        if entries is None:
            self.notes.append(f"{call.method}(...) at line {call.line}: the {what} is not statically known")
            unknown = Value.unknown(f"{what} is built at run time", cloc)
            self.subs.append((unknown, unknown, ExpressionType.TAG, cloc))
        return entries or [], cloc

    def on_map(self, call: Call, where: Where) -> None:
        entries, cloc = self._entries(call, where, "subscription map")
        for key, val in entries:
            if call.method == "setSubscription":
                expr, etype = self.read.value(val, where), ExpressionType.TAG
            else:
                expr, etype = _filter_expression(val, self.read.symbols, where)
                self._expression(expr, val, where)
            # a put(k, v) entry, or an entry on its own line of a map literal spanning lines, is placed there
            inside = call.args[0].kind == "map" or call.line < key.line <= call.end_line
            kloc = (
                in_declaration(Location(path=where.path, line=key.line, column=key.column), call.line, call.end_line)
                if inside
                else cloc
            )
            topic = self.read.value(key, where)
            self.subs.append((topic, expr, etype, _site_of(where, self.site, key) or kloc))

    def on_properties(self, call: Call, where: Where) -> None:
        """An ONS consumer bean's `setProperties(properties)`: its group, model and fields."""
        if self.decl.kind.endswith("-bean") and call.args:
            self.group, self.namespace = self._vendor_group(call.args[0])

    def on_table(self, call: Call, where: Where) -> None:
        """An ONS consumer bean's `setSubscriptionTable(map)`: each `Subscription` key's topic and
        expression (TAG unless its type is SQL92; no expression subscribes '*'), placed where its
        topic is set."""
        if not self.decl.kind.endswith("-bean"):
            return
        entries, cloc = self._entries(call, where, "subscription table")
        for key, _ in entries:
            fields = dict(_map_entries(key) or ()) if key.text == "Subscription" else {}
            named = {k.text: v for k, v in fields.items() if k.kind == "str"}
            if "topic" not in named:
                unknown = Value.unknown(f"`{key.source}` is not a Subscription whose topic is set here", cloc)
                self.subs.append((unknown, Value.default("*"), ExpressionType.TAG, cloc))
                continue
            topic_expr = named["topic"]
            etype, expr = ExpressionType.TAG, Value.default("*", "a Subscription without an expression subscribes '*'")
            if "type" in named:
                kind = self.read.symbols.string_value(named["type"], where)
                name = enum_name(named["type"]) or kind.value
                if name == ExpressionType.SQL92.value:
                    etype = ExpressionType.SQL92
                elif name != ExpressionType.TAG.value:
                    expr = Value.unknown(f"the expression type `{named['type'].source}` is not statically known", cloc)
            if "expression" in named and expr.known:
                expr = self._expression(self.read.value(named["expression"], where), named["expression"], where)
            at = Location(path=where.path, line=topic_expr.line or call.line, column=topic_expr.column or call.column)
            topic = self.read.value(topic_expr, where)
            self.subs.append((topic, expr, etype, _site_of(where, self.site, topic_expr) or at))

    def on_setter(self, call: Call, where: Where) -> None:
        method, arg = call.method, call.args[0]
        if method == "setConsumerGroup":
            self.group = self.read.value(arg, where)
        elif method in ("setNamespace", "setNamespaceV2"):
            self.namespace = self.read.symbols.string_value(arg, where)
        elif method == "setMessageModel":
            self.model = _constant(arg, "MessageModel")
        elif method == "setConsumeFromWhere":
            self.cfw = _constant(arg, "ConsumeFromWhere")
        elif method in _FIELD_SETTERS:
            self.fields[_FIELD_SETTERS[method]] = self.read.symbols.string_value(arg, where)

    def on_call(self, call: Call, where: Where) -> None:
        handler = _HANDLERS.get(call.method)
        if handler is not None:
            handler(self, call, where)
        elif call.method in ("assign", "setSubExpressionForAssign"):
            self.assign = True
        elif (
            call.method in ("registerMessageListener", "setMessageListener") and "MessageListenerOrderly" in call.source
        ):
            self.mode = Value(value=ConsumeMode.ORDERLY.value, detail="MessageListenerOrderly")
        elif call.args and (call.method in _FIELD_SETTERS or call.method in _SETTERS):
            self.on_setter(call, where)

    def registers(self) -> bool:
        if self.subs:
            return True
        if self.assign:
            self.notes.append(_ASSIGN)
            return False
        if self.decl.kind in ("DefaultMQPullConsumer", "MQPullConsumerScheduleService", "oms-pull"):
            self.notes.append(_PULL)
            return False
        return True

    def consumers(self, module: ModuleConfig | None) -> list[Consumer]:
        calls = [(c, _within(c, self.where)) for c in self.decl.calls]
        if self.site is not None:
            calls += [(c, _within(c, w)) for hop, w in self.site.hops for c in hop]
            calls += [(c, _within(c, self.site.where)) for c in self.site.calls]
        for call, where in calls:
            made = len(self.subs)
            self.on_call(call, where)
            self.branches += [tuple((where.path, *arm) for arm in call.branch)] * (len(self.subs) - made)
        registers = self.registers()
        template = () if self.read.other_unknown else tuple(self.read.template)
        raw: dict[str, Value | None] = {"group": self.group, "namespace": self.namespace, **self.fields}
        for i, (topic, expr, _, _) in enumerate(self.subs):
            raw[f"topic{i}"], raw[f"expr{i}"] = topic, expr
        out: list[Consumer] = []
        site = self.site
        base = (
            f"{site.where.path}:{site.line}:{site.column}"
            if site
            else f"{self.where.path}:{self.decl.line}:{self.decl.column}"
        )
        for env, vals in variants(raw, module, PLAIN_NOTE):
            current, overridden = _variant_subscriptions(self.subs, vals, self.branches)
            group_v = vals["group"] or Value.unknown("no consumer group", self.loc)
            out.append(
                Consumer(
                    consumer_id=base + (f"@{env}" if env else ""),
                    group=group_v,
                    subscriptions=current,
                    overridden=overridden,
                    message_model=self.model,
                    consume_mode=self.mode,
                    client=self.family,
                    environment=env,
                    name_server=vals["name_server"],
                    namespace=_wire_namespace(group_v, vals["namespace"]),
                    instance_name=vals["instance_name"],
                    client_ip=vals["client_ip"],
                    consume_from_where=self.cfw,
                    location=self.loc,
                    notes=tuple(self.notes),
                    registers=registers,
                    template=template,
                    repeated=site.repeated if site is not None else self.decl.repeated,
                )
            )
        return out


_FIELD_SETTERS = {"setNamesrvAddr": "name_server", "setInstanceName": "instance_name", "setClientIP": "client_ip"}
_SETTERS = frozenset({"setConsumerGroup", "setNamespace", "setNamespaceV2", "setMessageModel", "setConsumeFromWhere"})
_HANDLERS: dict[str, Callable[[_Build, Call, Where], None]] = {
    "subscribe": _Build.on_subscribe,
    "setSubscriptionExpressions": _Build.on_map,
    "setSubscription": _Build.on_map,
    "bindTopic": _Build.on_star,
    "registerPullTaskCallback": _Build.on_star,
    "registerMessageQueueListener": _Build.on_star,
    "attachQueue": _Build.on_star,
    "setRegisterTopics": _Build.on_topics,
    "setProperties": _Build.on_properties,
    "setSubscriptionTable": _Build.on_table,
}
