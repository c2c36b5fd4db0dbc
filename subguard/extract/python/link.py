"""Per-repo linking of Python facts into `Consumer` records.

A consumer is one construction (`PushConsumer(...)`, `SimpleConsumer(...)`) plus the method calls on
the binding it is stored in. A construction inside a function whose values depend on that function's
parameters (or that the function returns) is a factory: it yields one consumer per call site.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from subguard.core.branches import Branch, Written, one_of, subscribe_again
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
    DictIR,
    FuncCall,
    Glob,
    Imp,
    Loc,
    Local,
    MethodCall,
    ModuleFacts,
    Param,
    SelfAttr,
    consumer_kind,
)
from subguard.extract.python.linkmemo import TOUCH, Linked, Store, Unit, signature
from subguard.extract.python.resolve import (
    ATTRS,
    FULL,
    GET,
    RV,
    Binding,
    CallVal,
    ClassRef,
    DictVal,
    Frame,
    FuncRef,
    LibRef,
    ModuleSource,
    Question,
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
    """A method call on a consumer, with the module it is written in; `frame` binds the parameters
    of the function the consumer was passed to (None: the instance's own frame)."""

    call: MethodCall
    module: ModuleFacts
    frame: Frame | None = None


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
    repeated: bool = False  # made once per item (`Consumer.repeated`)


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
    """Builds consumers for a repo; `load_calls(names)` returns extra modules that may call factories.
    With a `store`, a module whose consumers depend on nothing that changed since the store's last
    run is not linked again (`linkmemo`)."""

    def __init__(
        self,
        modules: ModuleSource,
        load_calls: Callable[[frozenset[tuple[str, str]]], list[ModuleFacts]],
        dependency_hint: Callable[[], ClientFamily | None],
        store: Store | None = None,
    ) -> None:
        self.modules = modules
        self.resolver = Resolver(modules)
        self.load_calls = load_calls
        self._hint = dependency_hint
        self.store = store
        self._by_name: tuple[list[ModuleFacts], dict[str, list[tuple[FuncCall, ModuleFacts]]]] | None = None
        self._reads: list[tuple[str, str]] | None = None  # what the unit being linked asked for
        self._questions: list[tuple[Question, object]] | None = None  # what it asked the path set
        self._asked = False  # whether it asked for the dependency hint
        if store is not None:
            modules.note = self._note
            modules.asked = self._ask

    def _note(self, how: str, path: str) -> None:
        if self._reads is not None:
            self._reads.append((how, path))

    def _ask(self, question: Question, answer: object) -> None:
        if self._questions is not None:
            self._questions.append((question, answer))

    def dependency_hint(self) -> ClientFamily | None:
        self._asked = True
        return self._hint()

    # ---- instances ---------------------------------------------------------------------------
    def consumers(self) -> list[Consumer]:
        """All consumers, module by module in path order: constructions first, factories and
        fixtures resolved with one search for the modules that call or use them. A module kept in
        the store whose reads are unchanged is not linked again: what it read is asked for again,
        in order, and its consumers are taken as kept."""
        store = self.store
        old = store.linked() if store is not None else None
        moved_paths = store is not None and old is not None and old.paths != store.paths  # files added or removed
        given = sorted(self.modules.full)
        kept: dict[str, Unit] = {}
        plans: dict[str, list[_Plan]] = {}
        before: dict[str, tuple[tuple[str, str], ...]] = {}
        questions: dict[str, tuple[tuple[Question, object], ...]] = {}  # what planning asked the path set
        asked: dict[str, bool] = {}  # whether planning asked for the dependency hint
        for path in given:
            unit = store.unit(path) if store is not None and old is not None else None
            if (
                store is not None
                and unit is not None
                and store.holds(unit, self._hint)
                and (not moved_paths or self._answers_hold(unit))
            ):
                self._repeat(unit.before)
                kept[path] = unit
                continue
            self._reads, self._questions, self._asked = [], [], False
            plans[path] = self._plan(path)
            before[path], questions[path], asked[path] = tuple(self._reads), tuple(self._questions), self._asked
            self._reads = self._questions = None
        names = frozenset(
            [name for unit in kept.values() for name in unit.names]
            + [name for planned in plans.values() for name in _names(planned)]
        )
        loaded = self.load_calls(names) if names else []
        callers = list(self.modules.full.values()) + loaded
        changed, moved, by_caller = self._changes(old, callers, loaded)
        units: dict[str, Unit] = {}
        out: list[Consumer] = []
        for path in given:
            unit = kept.get(path)
            if unit is not None and not unit.wants & changed and not moved & unit.read():
                self._repeat(unit.after)
            else:
                if path not in plans:  # kept until the search: planned again as it was before it
                    assert unit is not None
                    self._questions, self._asked = [], False
                    plans[path], before[path] = self._hidden_plan(path, loaded), unit.before
                    questions[path], asked[path], self._questions = tuple(self._questions), self._asked, None
                unit = self._link(plans[path], before[path], questions[path], callers, asked[path])
            units[path] = unit
            out.extend(unit.consumers)
        if store is not None:
            store.save(units, Linked(store.paths, frozenset(m.path for m in loaded), by_caller, tuple(given)), old)
        return out

    def _plan(self, path: str) -> list[_Plan]:
        """The constructions of one module with their events, and their factory or fixture."""
        self._note(TOUCH, path)
        module = self.modules.full[path]
        events = _events_by_construct(module)
        planned: list[_Plan] = []
        for c in module.constructs:
            evs = tuple(events[c.index]) + self._passed(c.key, module, Frame(module), c.order, 0)
            fixture = self._fixture(c, module)
            planned.append(_Plan(c, module, evs, None if fixture else self._factory(c, module, evs), fixture))
        return planned

    def _hidden_plan(self, path: str, loaded: list[ModuleFacts]) -> list[_Plan]:
        """`_plan` as before the call-site search: the modules it loaded read as they were then."""
        self.modules.hidden = frozenset(m.path for m in loaded)
        try:
            return self._plan(path)
        finally:
            self.modules.hidden = frozenset()

    def _link(
        self,
        planned: list[_Plan],
        before: tuple[tuple[str, str], ...],
        questions: tuple[tuple[Question, object], ...],
        callers: list[ModuleFacts],
        asked: bool,
    ) -> Unit:
        """One module's consumers from its plans, as a `Unit` with what it read and asked the path
        set (`before`, `questions`: while planning; `asked`: whether planning asked for the
        dependency hint)."""
        self._reads, self._questions, self._asked = [], [*questions], asked
        consumers = tuple(self._consumer(inst) for plan in planned for inst in self._instances(plan, callers))
        after, answers, self._reads, self._questions = tuple(self._reads), tuple(self._questions), None, None
        asked = self._asked
        return Unit(
            before=before,
            after=after,
            questions=answers,
            digests=self.store.digests(before + after) if self.store is not None else (),
            names=frozenset(_names(planned)),
            wants=frozenset(
                [p.factory[1].split(".")[-1] for p in planned if p.factory is not None]
                + [p.fixture for p in planned if p.fixture]
            ),
            hint=(asked, self._hint() if asked else None),
            consumers=consumers,
        )

    def _answers_hold(self, unit: Unit) -> bool:
        """Whether the path set answers each question linking `unit` asked it as it did then."""
        return all(self.modules.answer(question) == then for question, then in unit.questions)

    def _repeat(self, reads: tuple[tuple[str, str], ...]) -> None:
        """Ask for the modules a kept unit asked for, in its order: the same loads and records."""
        get = {GET: self.modules.get, FULL: self.modules.get_full, ATTRS: self.modules.get_attrs}
        for how, path in reads:
            if how != TOUCH:
                get[how](path)

    def _changes(
        self, old: Linked | None, callers: list[ModuleFacts], loaded: list[ModuleFacts]
    ) -> tuple[frozenset[str], frozenset[str], dict[str, tuple[bytes, frozenset[str]]]]:
        """The names called or taken by a caller that changed, appeared or went; the modules the
        search loaded in one run and not the other; and each caller's digest and names."""
        by_caller: dict[str, tuple[bytes, frozenset[str]]] = {}
        if self.store is None:
            return frozenset(), frozenset(), by_caller
        was = old.callers if old is not None else {}
        changed: set[str] = set()
        for module in callers:
            if module.path in by_caller:
                continue
            digest = self.store.digest(module.path)
            then = was.get(module.path)
            if then is not None and then[0] == digest:
                by_caller[module.path] = then
                continue
            by_caller[module.path] = (digest, signature(module, _written_name))
            changed |= by_caller[module.path][1] | (then[1] if then is not None else frozenset())
        for path, then in was.items():
            if path not in by_caller:
                changed |= then[1]
        moved = old.loaded ^ frozenset(m.path for m in loaded) if old is not None else frozenset()
        return frozenset(changed), moved, by_caller

    def _instances(self, plan: _Plan, callers: list[ModuleFacts]) -> list[Instance]:
        c, module, events = plan.construct, plan.module, plan.events
        base_id = _id_part(c, module)
        plain = Instance(
            c, module, events, Frame(module), base_id, location(module.path, c.call.loc), repeated=c.repeated
        )
        if plan.fixture:
            return self._fixture_instances(plan, plain, callers) or [plain]
        if plan.factory is None:
            return [plain]
        func, callee = plan.factory
        sites = self._call_sites(module, callee, callers)
        if not sites:
            return [plain]
        out: list[Instance] = []
        counts: dict[tuple[str, str], int] = {}
        for site, caller in sites:
            n = counts[(caller.path, site.scope)] = counts.get((caller.path, site.scope), 0) + 1
            frame = Frame(module, self._bind(func, site, caller, module))
            extra = tuple(
                Event(m, caller) for m in caller.methods if site.key and m.key == site.key and m.order > site.order
            )
            extra += self._passed(site.key, caller, Frame(caller), site.order, 0) if site.key else ()
            cid = f"{base_id}@{caller.path}::{site.scope or '<module>'}#{n}"
            note = f"built by factory {func.qualname}() of {module.path}"
            at = location(caller.path, site.call.loc)
            out.append(Instance(c, module, events + extra, frame, cid, at, (note,), site.repeated))
        return out

    def _passed(
        self, key: str, module: ModuleFacts, frame: Frame, after: tuple[int, int], depth: int
    ) -> tuple[Event, ...]:
        """Method calls on a consumer made by the repo functions it is passed to as an argument
        (`register(consumer, TOPIC)` whose body calls `consumer.subscribe(topic, ...)`)."""
        if not key or depth > 3:
            return ()
        out: list[Event] = []
        for call in module.calls:
            if call.order <= after or key not in call.arg_keys and key not in (k for _n, k in call.kw_keys):
                continue
            ref = self.resolver.resolve(call.target, frame).obj
            if not isinstance(ref, FuncRef):
                continue
            callee = self.modules.get_full(ref.path)
            fn = function_of(callee, ref.qual) if callee is not None else None
            if callee is None or fn is None or fn.is_method:
                continue
            positions = [i for i, k in enumerate(call.arg_keys) if k == key]
            params = [fn.params[i] for i in positions if i < len(fn.params)]
            params += [n for n, k in call.kw_keys if k == key and n in fn.params]
            bound = Frame(
                callee, self._bind(FunctionLike(fn.qualname, fn.params, fn.defaults), call, module, callee, frame)
            )
            for param in params:
                inner = f"{fn.qualname}:{param}"
                out.extend(Event(m, callee, bound) for m in callee.methods if m.key == inner)
                out.extend(self._passed(inner, callee, bound, (0, 0), depth + 1))
        return tuple(out)

    def _fixture(self, c: Construct, module: ModuleFacts) -> str:
        """The pytest fixture name when `c` is built and returned/yielded by a fixture function."""
        fn = function_of(module, c.scope) if c.scope else None
        if fn is None or not fn.fixture:
            return ""
        return fn.fixture if f"#{c.index}" in fn.returns or (c.key and c.key in fn.returns) else ""

    def _fixture_instances(self, plan: _Plan, plain: Instance, callers: list[ModuleFacts]) -> list[Instance]:
        """One consumer per test function that takes the fixture by name: in the fixture's module, or
        under the folder of the conftest.py that defines it."""
        module = plan.module
        folder = posixpath.dirname(module.path)
        conftest = posixpath.basename(module.path) == "conftest.py"
        out: list[Instance] = []
        for user in sorted({m.path: m for m in callers}.values(), key=lambda m: m.path):
            visible = user.path == module.path or conftest and (not folder or user.path.startswith(folder + "/"))
            if not visible:
                continue
            for fn in user.functions:
                if plan.fixture not in fn.params or fn.fixture:
                    continue
                self._note(TOUCH, user.path)
                key = f"{fn.qualname}:{plan.fixture}"
                evs = tuple(Event(m, user) for m in user.methods if m.key == key)
                evs += self._passed(key, user, Frame(user), (0, 0), 0)
                cid = f"{plain.consumer_id}@{user.path}::{fn.qualname}"
                note = f"pytest fixture {plan.fixture} of {module.path}, used by {fn.qualname}"
                out.append(
                    Instance(plan.construct, module, plan.events + evs, plain.frame, cid, plain.location, (note,))
                )
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
        if fn.is_method and qual.count(".") == 1:  # a method, called on an instance of its class
            return FunctionLike(qual, fn.params, fn.defaults), qual
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
                self.resolver.resolve(ir, ev.frame or Frame(ev.module))

    def _call_sites(
        self, module: ModuleFacts, callee: str, candidates: list[ModuleFacts]
    ) -> list[tuple[FuncCall, ModuleFacts]]:
        target_qual = callee
        name = callee.split(".")[-1]
        sites: list[tuple[FuncCall, ModuleFacts]] = []
        for call, caller in self._calls_by_name(candidates).get(name, ()):
            ref = self.resolver.resolve(call.target, Frame(caller)).obj
            if isinstance(ref, (FuncRef, ClassRef)) and ref.path == module.path and ref.qual == target_qual:
                self._note(TOUCH, caller.path)
                sites.append((call, caller))
        return sites

    def _calls_by_name(self, candidates: list[ModuleFacts]) -> dict[str, list[tuple[FuncCall, ModuleFacts]]]:
        """The calls of `candidates` (each path once, in path order) by the name their callee is
        written with (`_written_name`): indexed once, not searched again for every factory."""
        if self._by_name is None or self._by_name[0] is not candidates:
            index: dict[str, list[tuple[FuncCall, ModuleFacts]]] = {}
            seen: set[str] = set()
            for caller in sorted(candidates, key=lambda m: m.path):
                if caller.path in seen:
                    continue
                seen.add(caller.path)
                for call in caller.calls:
                    written = _written_name(call.target)
                    if written is not None:
                        index.setdefault(written, []).append((call, caller))
            self._by_name = (candidates, index)
        return self._by_name[1]

    def _bind(
        self,
        func: FunctionLike,
        site: FuncCall,
        caller: ModuleFacts,
        module: ModuleFacts,
        caller_frame: Frame | None = None,
    ) -> dict[tuple[str, str], Binding]:
        """Parameters of `func` bound to the call site's arguments, else to their defaults."""
        bindings: dict[tuple[str, str], Binding] = {}
        defaults = dict(func.defaults)
        caller_frame = caller_frame or Frame(caller)
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
        self.resolver.unbound = []  # parameters met while reading group, subscriptions and model
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
        template = tuple(dict.fromkeys(name for _path, _func, name in self.resolver.unbound))
        if template:
            funcs = sorted({func for _path, func, _name in self.resolver.unbound})
            draft.notes.append(
                f"template: its values are parameters of {', '.join(funcs)}; its instances are the call sites that feed them"
            )
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
            registers=kind != "pull04",  # PullConsumer pulls queues with its own expression: no subscription
            template=template,
            repeated=inst.repeated,
        )

    def _group(self, kind: str, inst: Instance) -> Value:
        """The group given to the constructor."""
        ctor = inst.construct.call
        group_ir = (
            _arg(ctor, 1, "consumer_group") if kind == "grpc5" else _arg(ctor, 0, "group_id", "group", "consumer_group")
        )
        return (
            self._rv(group_ir, inst.frame).to_value("group")
            if group_ir is not None
            else Value.unknown("no consumer group given")
        )

    def _grpc_config(self, inst: Instance, draft: _Draft) -> None:
        """Endpoints and namespace of a 5.x constructor's `ClientConfiguration(...)`."""
        config_ir = _arg(inst.construct.call, 0, "client_configuration", "client_config")
        cfg = self._aside(config_ir, inst.frame) if config_ir is not None else None
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

    def _aside(self, ir: IR | None, frame: Frame) -> RV:
        """A value that does not make a template (name server, credentials): its parameters are not noted."""
        kept = list(self.resolver.unbound)
        rv = self._rv(ir, frame)
        self.resolver.unbound = kept
        return rv

    def _event(self, kind: str, ev: Event, inst: Instance, draft: _Draft) -> None:
        """One method call on the consumer: a setter (`_SETTERS`), a subscription or an unsubscribe."""
        call = ev.call.call
        frame = ev.frame or (inst.frame if ev.module.path == inst.module.path else Frame(ev.module))
        method = ev.call.method
        setter = _SETTERS.get(method)
        if setter is not None:
            names, read = setter
            ir = _arg(call, 0, *names)
            if ir is not None:
                read(draft, self._rv(ir, frame) if method in _JUDGED_SETTERS else self._aside(ir, frame))
        elif method == "subscribe":
            sub = self._subscribe(kind, call, ev, frame, inst, draft.notes)
            if sub is not None:
                draft.add(sub, True, tuple((ev.module.path, *arm) for arm in ev.call.branch))
        elif method == "pull" and kind == "pull04":
            sub = self._subscription(
                call, 0, ("topic",), _arg(call, 1, "expression"), ExpressionType.TAG, ev, frame, inst
            )
            if sub is not None:
                draft.add(sub, False)
        elif method == "unsubscribe":
            ir = _arg(call, 0, "topic")
            topic = self._rv(ir, frame).to_value("topic") if ir is not None else None
            if topic is not None and topic.value is not None:
                draft.drop(topic.value)

    def _grpc_ctor(
        self, ctor: CallIR, frame: Frame, inst: Instance, add: Callable[[Subscription, bool], None], notes: list[str]
    ) -> None:
        if inst.construct.qualname.endswith("LitePushConsumer"):
            self._lite_push(ctor, frame, inst, add, notes)
            return
        simple = ctor_is_simple(inst.construct.qualname)
        sub_ir = _arg(ctor, 2 if simple else 3, "subscription", "subscription_expressions")
        if simple and sub_ir is not None and "subscription" not in dict(ctor.kwargs):
            first = self._rv(sub_ir, frame)
            if isinstance(first.obj, (int, float)) and not isinstance(first.obj, bool):
                sub_ir = _arg(
                    ctor, 3, "subscription_expressions"
                )  # legacy: (config, group, await_duration, subscription)
        if sub_ir is None:
            return
        mapping = self._rv(sub_ir, frame)
        index = 2 if simple else 3
        fallback = self._arg_location(
            ctor, index, sub_ir, inst.module.path, frame, ("subscription", "subscription_expressions")
        )
        # a map written here (or passed at a call site) gives each entry's own line; a map constant
        # defined elsewhere gives the constructor argument's line, never the constant's
        entry_lines = isinstance(sub_ir, (DictIR, Local, Param))
        if isinstance(mapping.obj, DictVal):
            for k, v, loc in mapping.obj.items:
                expr, etype, note = _filter(v)
                if note:
                    notes.append(note)
                topic = _str_value(k)
                parsed_tags = _tags(expr, etype)
                at = loc if loc is not None and entry_lines else fallback
                add(
                    Subscription(topic=topic, expression=expr, expression_type=etype, tags=parsed_tags, location=at),
                    True,
                )
        elif mapping.obj is not None:
            notes.append(
                f"subscription mapping is not a dict literal the scanner can read ({mapping.to_value().detail or 'unknown'})"
            )

    def _lite_push(
        self, ctor: CallIR, frame: Frame, inst: Instance, add: Callable[[Subscription, bool], None], notes: list[str]
    ) -> None:
        """`LitePushConsumer(config, group, bind_topic, ...)`: the SDK subscribes the bind topic with
        `FilterExpression()` (`*`, TAG); lite topics (`subscribe_lite`) are not group subscriptions."""
        topic_ir = _arg(ctor, 2, "bind_topic")
        if topic_ir is None:
            notes.append("LitePushConsumer without a bind topic")
            return
        topic = self._rv(topic_ir, frame).to_value("topic")
        expr = Value.default("*", "LitePushConsumer subscribes its bind topic with FilterExpression()")
        loc = self._arg_location(ctor, 2, topic_ir, inst.module.path, frame, ("bind_topic",))
        add(Subscription(topic=topic, expression=expr, expression_type=ExpressionType.TAG, location=loc), True)

    def _subscribe(
        self, kind: str, call: CallIR, ev: Event, frame: Frame, inst: Instance, notes: list[str]
    ) -> Subscription | None:
        if kind == "grpc5":
            fe_ir = _arg(call, 1, "filter_expression")
            topic_ir = _arg(call, 0, "topic")
            if topic_ir is None:
                return None
            fe = self._rv(fe_ir, frame) if fe_ir is not None else RV(None)
            expr, etype, note = _filter(fe)
            if note:
                notes.append(note)
            loc = _in_call(self._arg_location(call, 0, topic_ir, ev.module.path, frame), call, ev)
            topic = self._rv(topic_ir, frame).to_value("topic")
            return Subscription(
                topic=topic, expression=expr, expression_type=etype, tags=_tags(expr, etype), location=loc
            )
        return self._subscription(call, 0, ("topic",), _arg(call, 2, "expression"), ExpressionType.TAG, ev, frame, inst)

    def _subscription(
        self,
        call: CallIR,
        index: int,
        names: tuple[str, ...],
        expr_ir: IR | None,
        etype: ExpressionType,
        ev: Event,
        frame: Frame,
        inst: Instance,
    ) -> Subscription | None:
        topic_ir = _arg(call, index, *names)
        if topic_ir is None:
            return None
        topic = self._rv(topic_ir, frame).to_value("topic")
        if expr_ir is None:
            expr = Value.default("*", "client default expression")
        else:
            rv = self._rv(expr_ir, frame)
            expr = Value.default("*", "None means all") if rv.known and rv.obj is None else rv.to_value("expression")
        loc = _in_call(self._arg_location(call, index, topic_ir, ev.module.path, frame, names), call, ev)
        return Subscription(topic=topic, expression=expr, expression_type=etype, tags=_tags(expr, etype), location=loc)

    def _arg_location(
        self, call: CallIR, index: int, ir: IR, path: str, frame: Frame, names: tuple[str, ...] = ("topic",)
    ) -> Location:
        """Where argument `index` (or keyword `names`) is written; a parameter bound at a call site (also
        through `self.attr = param` of a wrapper class) points at the call site's argument."""
        param = _param_behind(ir, frame.module)
        if param is not None:
            bound = frame.bindings.get((param.func, param.name))
            if bound is not None and bound.location is not None:
                return bound.location
        loc = _arg_loc(call, index) if index < len(call.args) else None
        if loc is None:
            kw_locs = dict(call.kw_locs)
            loc = next((kw_locs[n] for n in names if n in kw_locs), None)
        return location(path, loc or call.loc)

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
            evidence.update(e.module.evidence)
        old, new = bool(evidence & ROCKETMQ_04_IMPORTS), bool(evidence & NATIVE_IMPORTS)
        if old != new:
            return ClientFamily.PYTHON_ROCKETMQ_04 if old else ClientFamily.PYTHON_NATIVE_4X
        hint = self.dependency_hint()
        if hint is not None:
            return hint
        notes.append(UNDECIDED_NOTE)
        return ClientFamily.PYTHON_NATIVE_4X


@dataclass(frozen=True)
class _Plan:
    """A construction with its events, and the factory or fixture whose callers instantiate it."""

    construct: Construct
    module: ModuleFacts
    events: tuple[Event, ...]
    factory: tuple[FunctionLike, str] | None
    fixture: str


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
    # by key of `subs`: the subscriptions of the topic it may be, each with the branches it was written in
    live: dict[object, list[Written]] = field(default_factory=dict)

    def add(self, sub: Subscription, replace: bool, branch: Branch = ()) -> None:
        """Adds `sub`, written in the branches `branch`; with `replace`, it overrides (and keeps as
        overridden) each earlier one of the topic it runs after whenever that one ran
        (`core.branches`), and the topic is subscribed as one of those left."""
        key: object = (
            sub.topic.value if sub.topic.known else ("?", sub.location.path, sub.location.line, sub.location.column)
        )
        if not replace:
            self.subs[(key, sub.expression.value, sub.expression_type)] = sub
            return
        self.live[key], replaced = subscribe_again(self.live.get(key, ()), sub, branch)
        self.overridden += replaced
        self.subs[key] = one_of(tuple(s for s, _ in self.live[key]))

    def drop(self, topic: str) -> None:
        """`unsubscribe(topic)`: the topic's subscriptions are gone."""
        for key in [k for k, s in self.subs.items() if s.topic.value == topic]:
            del self.subs[key]
            self.live.pop(key, None)

    def read_group(self, rv: RV) -> None:
        self.group = rv.to_value("group")

    def read_model(self, rv: RV) -> None:
        self.model = _model(rv)

    def read_name_server(self, rv: RV) -> None:
        self.name_server = rv.to_value("name server")

    def read_instance_name(self, rv: RV) -> None:
        self.instance_name = rv.to_value("instance name")


def _param_behind(ir: IR, module: ModuleFacts) -> Param | None:
    """The parameter `ir` is: itself, or the one `self.attr` is assigned from in its class."""
    if isinstance(ir, Param):
        return ir
    if isinstance(ir, SelfAttr):
        assigned = list(dict.fromkeys(dict(module.instance_attrs).get(f"{ir.cls}.{ir.attr}", ())))
        if len(assigned) == 1 and isinstance(assigned[0], Param):
            return assigned[0]
    return None


_JUDGED_SETTERS = frozenset({"set_group", "set_message_model"})
# setter method -> (its argument's keyword names, how the draft reads the resolved argument)
_SETTERS: dict[str, tuple[tuple[str, ...], Callable[[_Draft, RV], None]]] = {
    "set_group": (("group_id", "group"), _Draft.read_group),
    "set_message_model": (("model", "message_model"), _Draft.read_model),
    "set_name_server_address": (("addr", "address"), _Draft.read_name_server),
    "set_namesrv_addr": (("addr", "address"), _Draft.read_name_server),
    "set_instance_name": (("name", "instance_name"), _Draft.read_instance_name),
}


def _names(planned: list[_Plan]) -> list[tuple[str, str]]:
    """What the call-site search looks for on behalf of `planned`: (module stem, factory name) and
    ("", fixture name)."""
    return [(_stem(p.module.path), p.factory[1].split(".")[-1]) for p in planned if p.factory is not None] + [
        ("", p.fixture) for p in planned if p.fixture
    ]


def _stem(path: str) -> str:
    """The name a module is imported by: file stem, or the package directory for __init__."""
    parts = path.rsplit("/", 2)
    stem = parts[-1].rsplit(".", 1)[0]
    return parts[-2] if stem == "__init__" and len(parts) > 1 else stem


def _written_name(target: IR) -> str | None:
    """The last name a callee is written with (`f`, `mod.f`, `obj.f`); None for anything else."""
    if isinstance(target, Glob):
        return target.name
    if isinstance(target, Imp):
        return target.dotted.rsplit(".", 1)[-1]
    if isinstance(target, AttrOf):
        return target.attr
    return None


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
        return Value(
            value=("BROADCASTING", "CLUSTERING")[obj],
            resolution=rv.resolution,
            detail=rv.detail or f"MessageModel value {obj}",
        )
    if isinstance(obj, str) and obj.upper() in _MODEL_NAMES:
        return Value(value=obj.upper(), resolution=rv.resolution, detail=rv.detail)
    return (
        rv.to_value("message model") if not rv.known else Value.unknown(f"message model {obj!r} is not a MessageModel")
    )


def _mode(rv: RV) -> Value:
    if isinstance(rv.obj, bool):
        return Value(
            value=(ConsumeMode.ORDERLY if rv.obj else ConsumeMode.CONCURRENTLY).value,
            resolution=rv.resolution,
            detail=rv.detail or f"orderly={rv.obj}",
        )
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
        return (
            rv.to_value("expression"),
            ExpressionType.TAG,
            "filter expression given as a plain string, not FilterExpression(...)",
        )
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
    return (
        rv.to_value("filter expression")
        if not rv.known
        else Value.unknown("filter expression is not a FilterExpression(...)"),
        ExpressionType.TAG,
        "",
    )


def _tags(expr: Value, etype: ExpressionType) -> tuple[str, ...]:
    if not expr.known or etype is not ExpressionType.TAG:
        return ()
    parsed = parse_expression(expr.value, etype)
    return parsed.tags if parsed.error is None else ()
