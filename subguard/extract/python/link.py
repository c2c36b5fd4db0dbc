"""Per-repo linking of Python facts into `Consumer` records.

A consumer is one construction (`PushConsumer(...)`, `SimpleConsumer(...)`) plus the method calls on
the binding it is stored in. A construction inside a function whose values depend on that function's
parameters (or that the function returns) is a factory: it yields one consumer per call site.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

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
from subguard.extract.python.ir import (
    IR,
    AttrOf,
    CallIR,
    Construct,
    FuncCall,
    Glob,
    Imp,
    Loc,
    MethodCall,
    ModuleFacts,
    Param,
    consumer_kind,
)
from subguard.extract.python.resolve import (
    RV,
    Binding,
    CallVal,
    ClassRef,
    DictVal,
    Frame,
    FuncRef,
    LibRef,
    ModuleSource,
    Resolver,
    function_of,
    location,
)
from subguard.rocketmq.expression import parse as parse_expression

ROCKETMQ_04_METHODS = frozenset({"set_namesrv_addr", "set_namesrv_domain"})
NATIVE_METHODS = frozenset({"set_name_server_address", "set_name_server_domain"})
ROCKETMQ_04_IMPORTS = frozenset({"import:RecvMessage", "import:PullConsumer"})
NATIVE_IMPORTS = frozenset({"import:ReceivedMessage", "import:ConsumeStatus", "import:TransactionMQProducer"})
UNDECIDED_NOTE = (
    "could not tell rocketmq-client-python 2.x from PyPI rocketmq 0.4.x (both import rocketmq.client); "
    "assumed rocketmq-client-python"
)


@dataclass(frozen=True)
class Event:
    """A method call on a consumer, with the module it is written in."""

    call: MethodCall
    module: ModuleFacts


@dataclass(frozen=True)
class Instance:
    """One consumer to emit: a construction, its events, and the factory call site if any."""

    construct: Construct
    module: ModuleFacts
    events: tuple[Event, ...]
    frame: Frame
    consumer_id: str
    location: Location
    notes: tuple[str, ...] = ()


def _pick(constructs: list[Construct], order: tuple[int, int]) -> Construct:
    """The construction a call at `order` refers to: the latest earlier one, else the first."""
    before = [c for c in constructs if c.order < order]
    return before[-1] if before else constructs[0]


def _events_by_construct(module: ModuleFacts) -> dict[int, list[Event]]:
    by_key: dict[str, list[Construct]] = {}
    for c in module.constructs:
        if c.key:
            by_key.setdefault(c.key, []).append(c)
    out: dict[int, list[Event]] = {c.index: [] for c in module.constructs}
    for m in module.methods:
        if m.key.startswith("#"):
            idx = int(m.key[1:])
            if idx in out:
                out[idx].append(Event(m, module))
        elif m.key in by_key:
            out[_pick(by_key[m.key], m.order).index].append(Event(m, module))
    return out


def _id_part(c: Construct, module: ModuleFacts) -> str:
    same = [o for o in module.constructs if o.key == c.key and (c.key or o.scope == c.scope)]
    key = c.key or f"{c.scope or '<module>'}:<anonymous>"
    if len(same) > 1:
        key += f"#{same.index(c) + 1}"
    return f"{module.path}::{key}"


class Linker:
    """Builds consumers for a repo; `load_calls(names)` returns extra modules that may call factories."""

    def __init__(self, modules: ModuleSource, load_calls: Callable[[frozenset[tuple[str, str]]], list[ModuleFacts]], dependency_hint: Callable[[], ClientFamily | None]) -> None:
        self.modules = modules
        self.resolver = Resolver(modules)
        self.load_calls = load_calls
        self.dependency_hint = dependency_hint

    # ---- instances ---------------------------------------------------------------------------
    def consumers(self) -> list[Consumer]:
        """All consumers: constructions first, factories resolved with one search for their callers."""
        planned: list[tuple[Construct, ModuleFacts, tuple[Event, ...], tuple[FunctionLike, str] | None]] = []
        for path in sorted(self.modules.full):
            module = self.modules.full[path]
            events = _events_by_construct(module)
            for c in module.constructs:
                evs = tuple(events[c.index])
                planned.append((c, module, evs, self._factory(c, module, evs)))
        names = frozenset(
            (_stem(module.path), f[1].split(".")[-1]) for _c, module, _e, f in planned if f is not None
        )
        callers = list(self.modules.full.values()) + (self.load_calls(names) if names else [])
        out: list[Consumer] = []
        for c, module, evs, factory in planned:
            for inst in self._instances(c, module, evs, factory, callers):
                out.append(self._consumer(inst))
        return out

    def _instances(
        self, c: Construct, module: ModuleFacts, events: tuple[Event, ...],
        factory: tuple[FunctionLike, str] | None, callers: list[ModuleFacts],
    ) -> list[Instance]:
        base_id = _id_part(c, module)
        plain = Instance(c, module, events, Frame(module), base_id, location(module.path, c.call.loc))
        if factory is None:
            return [plain]
        func, callee = factory
        sites = self._call_sites(module, callee, callers)
        if not sites:
            return [plain]
        out: list[Instance] = []
        counts: dict[tuple[str, str], int] = {}
        for site, caller in sites:
            n = counts[(caller.path, site.scope)] = counts.get((caller.path, site.scope), 0) + 1
            frame = Frame(module, self._bind(func, site, caller, module))
            extra = tuple(Event(m, caller) for m in caller.methods if site.key and m.key == site.key and m.order > site.order)
            cid = f"{base_id}@{caller.path}::{site.scope or '<module>'}#{n}"
            note = f"built by factory {func.qualname}() of {module.path}"
            out.append(Instance(c, module, events + extra, frame, cid, location(caller.path, site.call.loc), (note,)))
        return out

    def _factory(self, c: Construct, module: ModuleFacts, events: tuple[Event, ...]) -> tuple[FunctionLike, str] | None:
        """The function whose call sites instantiate this construction, and the callee name to find."""
        self.resolver.unbound = []
        self._dry(c, module, events)
        funcs = [f for path, f, _p in self.resolver.unbound if path == module.path]
        returned = self._returning(c, module)
        qual = funcs[0] if funcs else returned
        if not qual:
            return None
        fn = function_of(module, qual)
        if fn is None:
            return None
        if qual.endswith(".__init__"):
            cls = qual[: -len(".__init__")]
            return FunctionLike(qual, fn.params, fn.defaults), cls
        if fn.is_method or "." in qual:
            return None
        return FunctionLike(qual, fn.params, fn.defaults), qual

    def _returning(self, c: Construct, module: ModuleFacts) -> str:
        if not c.scope:
            return ""
        fn = function_of(module, c.scope)
        if fn is None:
            return ""
        if f"#{c.index}" in fn.returns or (c.key and c.key in fn.returns):
            return c.scope
        return ""

    def _dry(self, c: Construct, module: ModuleFacts, events: tuple[Event, ...]) -> None:
        frame = Frame(module)
        for ir in (*c.call.args, *(v for _k, v in c.call.kwargs)):
            self.resolver.resolve(ir, frame)
        for ev in events:
            for ir in (*ev.call.call.args, *(v for _k, v in ev.call.call.kwargs)):
                self.resolver.resolve(ir, Frame(ev.module))

    def _call_sites(self, module: ModuleFacts, callee: str, candidates: list[ModuleFacts]) -> list[tuple[FuncCall, ModuleFacts]]:
        target_qual = callee
        name = callee.split(".")[-1]
        seen: set[str] = set()
        sites: list[tuple[FuncCall, ModuleFacts]] = []
        for caller in sorted(candidates, key=lambda m: m.path):
            if caller.path in seen:
                continue
            seen.add(caller.path)
            for call in caller.calls:
                if not _mentions(call.target, name):
                    continue
                ref = self.resolver.resolve(call.target, Frame(caller)).obj
                if isinstance(ref, (FuncRef, ClassRef)) and ref.path == module.path and ref.qual == target_qual:
                    sites.append((call, caller))
        return sites

    def _bind(self, func: FunctionLike, site: FuncCall, caller: ModuleFacts, module: ModuleFacts) -> dict[tuple[str, str], Binding]:
        """Parameters of `func` bound to the call site's arguments, else to their defaults."""
        bindings: dict[tuple[str, str], Binding] = {}
        defaults = dict(func.defaults)
        caller_frame = Frame(caller)
        kw = dict(site.call.kwargs)
        for i, pname in enumerate(func.params):
            if i < len(site.call.args):
                loc = site.call.arg_locs[i] if i < len(site.call.arg_locs) else site.call.loc
                bindings[(func.qualname, pname)] = Binding(site.call.args[i], caller_frame, location(caller.path, loc))
            elif pname in kw:
                loc = dict(site.call.kw_locs).get(pname, site.call.loc)
                bindings[(func.qualname, pname)] = Binding(kw[pname], caller_frame, location(caller.path, loc))
            elif pname in defaults:
                bindings[(func.qualname, pname)] = Binding(defaults[pname], Frame(module), None)
        return bindings

    # ---- one consumer ------------------------------------------------------------------------
    def _rv(self, ir: IR | None, frame: Frame) -> RV:
        return self.resolver.resolve(ir, frame)

    def _consumer(self, inst: Instance) -> Consumer:
        kind = _kind(inst.construct.qualname)
        draft = _Draft(self._group(kind, inst), list(inst.notes))
        if kind == "grpc5":
            self._grpc_ctor(inst.construct.call, inst.frame, inst, draft.add, draft.notes)
            self._grpc_config(inst, draft)
        elif kind == "push4":
            self._push_ctor(inst, draft)
        for ev in sorted(inst.events, key=lambda e: (e.module.path != inst.module.path, e.call.order)):
            self._event(kind, ev, inst, draft)
        client = self._family(kind, inst, draft.notes)
        if client is ClientFamily.PYTHON_GRPC_5X:
            draft.model = Value.default(MessageModel.CLUSTERING.value, "gRPC consumers are always clustering")
        if not draft.subs:
            draft.notes.append("no subscription found for this consumer")
        return Consumer(
            consumer_id=inst.consumer_id,
            group=draft.group,
            subscriptions=tuple(draft.subs.values()),
            overridden=tuple(draft.overridden),
            message_model=draft.model,
            consume_mode=draft.mode,
            client=client,
            name_server=draft.name_server,
            namespace=draft.namespace,
            instance_name=draft.instance_name,
            location=inst.location,
            notes=tuple(dict.fromkeys(draft.notes)),
        )

    def _group(self, kind: str, inst: Instance) -> Value:
        """The group given to the constructor."""
        ctor = inst.construct.call
        group_ir = _arg(ctor, 1, "consumer_group") if kind == "grpc5" else _arg(ctor, 0, "group_id", "group", "consumer_group")
        return self._rv(group_ir, inst.frame).to_value("group") if group_ir is not None else Value.unknown("no consumer group given")

    def _grpc_config(self, inst: Instance, draft: _Draft) -> None:
        """Endpoints and namespace of a 5.x constructor's `ClientConfiguration(...)`."""
        config_ir = _arg(inst.construct.call, 0, "client_configuration", "client_config")
        cfg = self._rv(config_ir, inst.frame) if config_ir is not None else None
        if cfg is not None and isinstance(cfg.obj, CallVal) and cfg.obj.dotted.endswith("ClientConfiguration"):
            ep = cfg.obj.arg(0, "endpoints")
            draft.name_server = _str_value(ep) if ep is not None else None
            ns = cfg.obj.arg(2, "namespace")
            draft.namespace = _str_value(ns) if ns is not None else None
        elif cfg is not None:
            draft.notes.append("client configuration is not a ClientConfiguration(...) call the scanner can read")

    def _push_ctor(self, inst: Instance, draft: _Draft) -> None:
        """Consume mode and message model of a 4.x `PushConsumer(group, orderly, message_model)`."""
        ctor, frame = inst.construct.call, inst.frame
        orderly_ir = _arg(ctor, 1, "orderly")
        if orderly_ir is not None:
            draft.mode = _mode(self._rv(orderly_ir, frame))
        model_ir = _arg(ctor, 2, "message_model")
        if model_ir is not None:
            draft.model = _model(self._rv(model_ir, frame))

    def _event(self, kind: str, ev: Event, inst: Instance, draft: _Draft) -> None:
        """One method call on the consumer: a setter (`_SETTERS`), a subscription or an unsubscribe."""
        call = ev.call.call
        frame = inst.frame if ev.module.path == inst.module.path else Frame(ev.module)
        method = ev.call.method
        setter = _SETTERS.get(method)
        if setter is not None:
            names, read = setter
            ir = _arg(call, 0, *names)
            if ir is not None:
                read(draft, self._rv(ir, frame))
        elif method == "subscribe":
            sub = self._subscribe(kind, call, ev, frame, inst, draft.notes)
            if sub is not None:
                draft.add(sub, True)
        elif method == "pull" and kind == "pull04":
            sub = self._subscription(call, 0, ("topic",), _arg(call, 1, "expression"), ExpressionType.TAG, ev, frame, inst)
            if sub is not None:
                draft.add(sub, False)
        elif method == "unsubscribe":
            ir = _arg(call, 0, "topic")
            topic = self._rv(ir, frame).to_value("topic") if ir is not None else None
            if topic is not None and topic.known:
                for key in [k for k, s in draft.subs.items() if s.topic.value == topic.value]:
                    del draft.subs[key]

    def _grpc_ctor(self, ctor: CallIR, frame: Frame, inst: Instance, add: Callable[[Subscription, bool], None], notes: list[str]) -> None:
        simple = ctor_is_simple(inst.construct.qualname)
        sub_ir = _arg(ctor, 2 if simple else 3, "subscription", "subscription_expressions")
        if simple and sub_ir is not None and "subscription" not in dict(ctor.kwargs):
            first = self._rv(sub_ir, frame)
            if isinstance(first.obj, (int, float)) and not isinstance(first.obj, bool):
                sub_ir = _arg(ctor, 3, "subscription_expressions")  # legacy: (config, group, await_duration, subscription)
        if sub_ir is None:
            return
        mapping = self._rv(sub_ir, frame)
        arg_loc = _arg_loc(ctor, 2 if simple else 3)
        fallback = location(inst.module.path, arg_loc or ctor.loc)
        if isinstance(mapping.obj, DictVal):
            for k, v, loc in mapping.obj.items:
                expr, etype, note = _filter(v)
                if note:
                    notes.append(note)
                topic = _str_value(k)
                parsed_tags = _tags(expr, etype)
                add(Subscription(topic=topic, expression=expr, expression_type=etype, tags=parsed_tags, location=loc or fallback), True)
        elif mapping.obj is not None:
            notes.append(f"subscription mapping is not a dict literal the scanner can read ({mapping.to_value().detail or 'unknown'})")

    def _subscribe(self, kind: str, call: CallIR, ev: Event, frame: Frame, inst: Instance, notes: list[str]) -> Subscription | None:
        if kind == "grpc5":
            fe_ir = _arg(call, 1, "filter_expression")
            topic_ir = _arg(call, 0, "topic")
            if topic_ir is None:
                return None
            fe = self._rv(fe_ir, frame) if fe_ir is not None else RV(None)
            expr, etype, note = _filter(fe)
            if note:
                notes.append(note)
            loc = _in_call(self._arg_location(call, 0, topic_ir, ev, frame), call, ev)
            topic = self._rv(topic_ir, frame).to_value("topic")
            return Subscription(topic=topic, expression=expr, expression_type=etype, tags=_tags(expr, etype), location=loc)
        return self._subscription(call, 0, ("topic",), _arg(call, 2, "expression"), ExpressionType.TAG, ev, frame, inst)

    def _subscription(self, call: CallIR, index: int, names: tuple[str, ...], expr_ir: IR | None, etype: ExpressionType, ev: Event, frame: Frame, inst: Instance) -> Subscription | None:
        topic_ir = _arg(call, index, *names)
        if topic_ir is None:
            return None
        topic = self._rv(topic_ir, frame).to_value("topic")
        if expr_ir is None:
            expr = Value.default("*", "client default expression")
        else:
            rv = self._rv(expr_ir, frame)
            expr = Value.default("*", "None means all") if rv.known and rv.obj is None else rv.to_value("expression")
        loc = _in_call(self._arg_location(call, index, topic_ir, ev, frame, names), call, ev)
        return Subscription(topic=topic, expression=expr, expression_type=etype, tags=_tags(expr, etype), location=loc)

    def _arg_location(self, call: CallIR, index: int, ir: IR, ev: Event, frame: Frame, names: tuple[str, ...] = ("topic",)) -> Location:
        """Where argument `index` (or keyword `names`) is written; a bound parameter points at its call site."""
        if isinstance(ir, Param):
            bound = frame.bindings.get((ir.func, ir.name))
            if bound is not None and bound.location is not None:
                return bound.location
        loc = _arg_loc(call, index) if index < len(call.args) else None
        if loc is None:
            kw_locs = dict(call.kw_locs)
            loc = next((kw_locs[n] for n in names if n in kw_locs), None)
        return location(ev.module.path, loc or call.loc)

    def _family(self, kind: str, inst: Instance, notes: list[str]) -> ClientFamily:
        if kind == "grpc5":
            return ClientFamily.PYTHON_GRPC_5X
        if kind == "pull04":
            return ClientFamily.PYTHON_ROCKETMQ_04
        methods = {e.call.method for e in inst.events}
        if methods & ROCKETMQ_04_METHODS and not methods & NATIVE_METHODS:
            return ClientFamily.PYTHON_ROCKETMQ_04
        if methods & NATIVE_METHODS and not methods & ROCKETMQ_04_METHODS:
            return ClientFamily.PYTHON_NATIVE_4X
        evidence = set(inst.module.evidence)
        for e in inst.events:
            evidence |= e.module.evidence
        old, new = bool(evidence & ROCKETMQ_04_IMPORTS), bool(evidence & NATIVE_IMPORTS)
        if old != new:
            return ClientFamily.PYTHON_ROCKETMQ_04 if old else ClientFamily.PYTHON_NATIVE_4X
        hint = self.dependency_hint()
        if hint is not None:
            return hint
        notes.append(UNDECIDED_NOTE)
        return ClientFamily.PYTHON_NATIVE_4X


@dataclass(frozen=True)
class FunctionLike:
    qualname: str
    params: tuple[str, ...]
    defaults: tuple[tuple[str, IR], ...]


@dataclass
class _Draft:
    """One consumer's values while it is read: the constructor's, then each method call's in order."""

    group: Value
    notes: list[str]
    model: Value = field(default_factory=lambda: Value.default(MessageModel.CLUSTERING.value))
    mode: Value = field(default_factory=lambda: Value.default(ConsumeMode.CONCURRENTLY.value))
    name_server: Value | None = None
    namespace: Value | None = None
    instance_name: Value | None = None
    subs: dict[object, Subscription] = field(default_factory=dict)
    overridden: list[Subscription] = field(default_factory=list)

    def add(self, sub: Subscription, replace: bool) -> None:
        """Adds `sub`; with `replace`, it overrides (and keeps as overridden) the topic's earlier one."""
        key: object = sub.topic.value if sub.topic.known else ("?", sub.location.path, sub.location.line, sub.location.column)
        if not replace:
            key = (key, sub.expression.value, sub.expression_type)
        if key in self.subs and replace:
            self.overridden.append(self.subs[key])
        self.subs[key] = sub

    def read_group(self, rv: RV) -> None:
        self.group = rv.to_value("group")

    def read_model(self, rv: RV) -> None:
        self.model = _model(rv)

    def read_name_server(self, rv: RV) -> None:
        self.name_server = rv.to_value("name server")

    def read_instance_name(self, rv: RV) -> None:
        self.instance_name = rv.to_value("instance name")


# setter method -> (its argument's keyword names, how the draft reads the resolved argument)
_SETTERS: dict[str, tuple[tuple[str, ...], Callable[[_Draft, RV], None]]] = {
    "set_group": (("group_id", "group"), _Draft.read_group),
    "set_message_model": (("model", "message_model"), _Draft.read_model),
    "set_name_server_address": (("addr", "address"), _Draft.read_name_server),
    "set_namesrv_addr": (("addr", "address"), _Draft.read_name_server),
    "set_instance_name": (("name", "instance_name"), _Draft.read_instance_name),
}


def _stem(path: str) -> str:
    """The name a module is imported by: file stem, or the package directory for __init__."""
    parts = path.rsplit("/", 2)
    stem = parts[-1].rsplit(".", 1)[0]
    return parts[-2] if stem == "__init__" and len(parts) > 1 else stem


def _mentions(target: IR, name: str) -> bool:
    """Cheap check before resolving: does the callee's written name end with `name`?"""
    if isinstance(target, Glob):
        return target.name == name
    if isinstance(target, Imp):
        return target.dotted.rsplit(".", 1)[-1] == name
    if isinstance(target, AttrOf):
        return target.attr == name
    return False


def ctor_is_simple(qualname: str) -> bool:
    return qualname.endswith("SimpleConsumer")


def _kind(qualname: str) -> str:
    return consumer_kind(qualname) or "push4"


def _arg(call: CallIR, index: int, *names: str) -> IR | None:
    kw = dict(call.kwargs)
    for name in names:
        if name in kw:
            return kw[name]
    return call.args[index] if 0 <= index < len(call.args) else None


def _arg_loc(call: CallIR, index: int) -> Loc | None:
    return call.arg_locs[index] if 0 <= index < len(call.arg_locs) else None


def _in_call(loc: Location, call: CallIR, ev: Event) -> Location:
    """A subscription's location marked with the lines of its (multi-line) subscribe call."""
    if loc.path != ev.module.path or not call.loc.end_line:
        return loc
    return in_declaration(loc, call.loc.line, call.loc.end_line)


def _str_value(rv: RV) -> Value:
    return rv.to_value()


_MODEL_NAMES = {"BROADCASTING": MessageModel.BROADCASTING.value, "CLUSTERING": MessageModel.CLUSTERING.value}


def _model(rv: RV) -> Value:
    """A MessageModel value: the enum member (rocketmq.client / rocketmq.ffi), its int, or a string."""
    obj = rv.obj
    if isinstance(obj, LibRef):
        last = obj.dotted.rsplit(".", 1)[-1]
        if last in _MODEL_NAMES and "MessageModel" in obj.dotted:
            return Value(value=_MODEL_NAMES[last], resolution=Resolution.LITERAL, detail=f"MessageModel.{last}")
        return Value.unknown(f"'{obj.dotted}' is not a MessageModel member")
    if isinstance(obj, int) and not isinstance(obj, bool) and obj in (0, 1):
        return Value(value=("BROADCASTING", "CLUSTERING")[obj], resolution=rv.resolution, detail=rv.detail or f"MessageModel value {obj}")
    if isinstance(obj, str) and obj.upper() in _MODEL_NAMES:
        return Value(value=obj.upper(), resolution=rv.resolution, detail=rv.detail)
    return rv.to_value("message model") if not rv.known else Value.unknown(f"message model {obj!r} is not a MessageModel")


def _mode(rv: RV) -> Value:
    if isinstance(rv.obj, bool):
        return Value(value=(ConsumeMode.ORDERLY if rv.obj else ConsumeMode.CONCURRENTLY).value, resolution=rv.resolution, detail=rv.detail or f"orderly={rv.obj}")
    if not rv.known:
        return Value.unknown(f"orderly flag: {rv.detail}")
    return Value.unknown(f"orderly flag {rv.obj!r} is not a bool")


_SQL_NAMES = re.compile(r"(?:FilterType\.SQL|ExpressionType\.Sql92|ExpressionType\.SQL92|FilterExpressionType\.SQL92)$")
_TAG_NAMES = re.compile(r"(?:FilterType\.(?:TAG|FILTER_TYPE_UNSPECIFIED)|ExpressionType\.Tag|ExpressionType\.TAG)$")


def _filter(rv: RV) -> tuple[Value, ExpressionType, str]:
    """(expression, type, note) of a 5.x filter: FilterExpression(...), None (= `*`), or a string."""
    obj = rv.obj
    if obj is None and rv.known:
        return Value.default("*", "no filter expression means all"), ExpressionType.TAG, ""
    if isinstance(obj, str):
        return rv.to_value("expression"), ExpressionType.TAG, "filter expression given as a plain string, not FilterExpression(...)"
    if isinstance(obj, CallVal) and obj.dotted.endswith("FilterExpression"):
        e = obj.arg(0, "expression")
        expr = Value.default("*", "FilterExpression default") if e is None else e.to_value("expression")
        t = obj.arg(1, "filter_type", "expression_type")
        if t is None:
            return expr, ExpressionType.TAG, ""
        if isinstance(t.obj, LibRef):
            if _SQL_NAMES.search(t.obj.dotted):
                return expr, ExpressionType.SQL92, ""
            if _TAG_NAMES.search(t.obj.dotted):
                return expr, ExpressionType.TAG, ""
        if isinstance(t.obj, int) and not isinstance(t.obj, bool):
            return expr, ExpressionType.SQL92 if t.obj == 2 else ExpressionType.TAG, ""
        return expr, ExpressionType.TAG, f"filter type could not be resolved ({t.to_value().detail}); assumed TAG"
    return rv.to_value("filter expression") if not rv.known else Value.unknown("filter expression is not a FilterExpression(...)"), ExpressionType.TAG, ""


def _tags(expr: Value, etype: ExpressionType) -> tuple[str, ...]:
    if not expr.known or etype is not ExpressionType.TAG:
        return ()
    parsed = parse_expression(expr.value, etype)
    return parsed.tags if parsed.error is None else ()
