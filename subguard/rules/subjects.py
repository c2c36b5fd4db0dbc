"""What policies judge: subjects and their derived fields, built by an explicit registry of kinds.

A subject kind is `scope` or `scope/for_each`; a policy picks one with its `scope` and
`for_each` keys. `KINDS` maps each kind to "module:attribute" of a `KindSpec` (imported lazily),
so another module adds a kind (e.g. `deployment` or `consumer+deployment`) with one line here
and no change to the engine. Built-in kinds:

- `subscription`: one per declared Subscription; `subscription/smell`: one per tag-expression smell.
- `consumer`: one per Consumer; `consumer/overridden`: one per earlier `subscribe()` of a topic that
  a later call on the same consumer overwrote; `consumer/name`: one per group or topic name.
- `group`: one per group name across every scan result (the broker keeps one consumer-id list and
  one subscription table per group, not per topic); `group/topic`: one per (group, topic).
  Per-topic group rules (tag sets, order, expression type) fan out with `for_each: topic`.

Group subjects carry *variants*: for one dimension (tag set, message model, ...) the distinct
values and which members declare each. A count field (`tag_set_count`, ...) counts known variants;
when some member's value is unknown and the known members agree, the count is UNKNOWN (the
unknown member could disagree), so a rule needing it yields an SG902 note instead of passing.
Consumers whose group is unknown are not grouped; every group rule reports them as unknown.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from subguard.core.config import Config
from subguard.core.inventory import Group, GroupMap, group_map
from subguard.core.model import (
    CPP_FAMILIES,
    POP_FAMILIES,
    ClientFamily,
    Consumer,
    Deployment,
    ExpressionType,
    Location,
    Subscription,
    Value,
)
from subguard.rocketmq.expression import parse, smells
from subguard.rocketmq.sql92 import MAX_DEPTH as SQL_MAX_DEPTH
from subguard.rocketmq.sql92 import validate as validate_sql
from subguard.rules.code_scope import member_key, sample_of
from subguard.rules.conditions import UNKNOWN
from subguard.scan.records import updated

if TYPE_CHECKING:
    from subguard.deploy.link import Links

NOT_KNOWN = "is not statically known"  # an Unknown's default state: no value at all (not one subguard cannot judge)


@dataclass(frozen=True)
class Unknown:
    """A value a rule may need but that is not statically known. `key` is line-free (dedupe)."""

    what: str
    reason: str
    location: Location
    key: tuple[str, ...]
    state: str = NOT_KNOWN  # what keeps the rule from judging it (SG902's `{state}`)
    owner: str = ""  # the consumer construction it belongs to (consumer_id): one note per construction


@dataclass(frozen=True)
class Member:
    """One declaration inside a variant: where it is and what it declares there."""

    location: Location
    text: str


@dataclass(frozen=True)
class Variant:
    label: str
    members: tuple[Member, ...]


@dataclass(frozen=True)
class Subject:
    """One thing a policy judges. `key` identifies it without line numbers (fingerprints)."""

    kind: str
    fields: Mapping[str, Any]
    location: Location
    key: tuple[str, ...]
    group: str = ""
    topic: str = ""
    related: tuple[tuple[Location, str], ...] = ()
    variants: Mapping[str, tuple[Variant, ...]] = field(default_factory=dict)
    unknowns: tuple[Unknown, ...] = ()
    sample: str = ""  # a group's subject confined to one sample (example code; `code_scope.sample_of`)


def group_ident(g: Group, *more: str) -> tuple[str, ...]:
    """A group subject's key: the name, what else identifies it, and the sample it is confined to."""
    return (g.name, *more, *((g.sample,) if g.sample else ()))


@dataclass(frozen=True)
class Universe:
    """Everything the builders may read: all consumers and deployments of a run, and the group map."""

    consumers: tuple[Consumer, ...]
    deployments: tuple[Deployment, ...]
    config: Config
    scanned: tuple[Consumer, ...] = ()  # the consumers as the scan made them, index for index (`with_repo`)

    @classmethod
    def of(cls, consumers: Sequence[Consumer], deployments: Sequence[Deployment], config: Config) -> Universe:
        # a template is no declaration, and a consumer the code never runs is no consumer: never judged
        judged = tuple(c for c in consumers if not c.template and not c.never_runs)
        return cls(tuple(map(with_repo, judged)), tuple(deployments), config, judged)

    @cached_property
    def groups(self) -> GroupMap:
        """The consumers' group map (`core.inventory.group_map`), samples kept apart as the config says."""
        return group_map(self.consumers, functools.partial(sample_of, config=self.config))

    @cached_property
    def by_id(self) -> dict[str, Consumer]:
        return {c.consumer_id: c for c in self.consumers}

    @cached_property
    def links(self) -> Links:
        """The deployments linked to the consumers (`subguard.deploy.link`), once for every kind that reads them."""
        from subguard.deploy.link import link

        return link(self.consumers, self.deployments, self.config)

    def parts(self) -> list[Universe]:
        """The universe split by group, without deployments: one part per group key (every consumer
        of the group, members or not), one per consumer whose group is not known, in first-seen order."""
        by_key: dict[str, list[int]] = {}
        for i, c in enumerate(self.consumers):
            key = member_key(c, self.config)
            by_key.setdefault(f"\0{len(by_key)}" if key is None else key, []).append(i)
        scanned = self.scanned or self.consumers
        return [
            Universe(tuple(self.consumers[i] for i in at), (), self.config, tuple(scanned[i] for i in at))
            for at in by_key.values()
        ]


def _place_value(value: Value | None, repo: str) -> Value | None:
    if value is None or value.location is None or value.location.repo:
        return value
    return updated(value, {"location": updated(value.location, {"repo": repo})})


def _place_sub(s: Subscription, repo: str) -> Subscription:
    loc = s.location if s.location.repo else updated(s.location, {"repo": repo})
    return updated(
        s, {"location": loc, "topic": _place_value(s.topic, repo), "expression": _place_value(s.expression, repo)}
    )


def with_repo(c: Consumer) -> Consumer:
    """The consumer with its repo written into every location that lacks one (multi-repo messages)."""
    repo = c.repo or c.location.repo
    if not repo:
        return c
    return updated(
        c,
        {
            "location": c.location if c.location.repo else updated(c.location, {"repo": repo}),
            "group": _place_value(c.group, repo),
            "message_model": _place_value(c.message_model, repo),
            "subscriptions": tuple(_place_sub(s, repo) for s in c.subscriptions),
            "overridden": tuple(_place_sub(s, repo) for s in c.overridden),
        },
    )


@dataclass(frozen=True)
class KindSpec:
    """A subject kind: its fields (name -> meaning), variant dimensions, and builder.

    `unplaced` lists values whose absence keeps a declaration out of every subject of this kind
    (e.g. an unknown group); each policy of the kind counts as needing them. `per_group`: the
    builders read one group's consumers only (each consumer's own values, or its group's members),
    never other groups, deployments or the run's other consumers, so that what they build over the
    universe is what they build over its `parts`, put together (the engine judges them part by part).
    """

    fields: Mapping[str, str]
    variants: Mapping[str, str]
    build: Callable[[Universe], Iterable[Subject]]
    unplaced: Callable[[Universe], Iterable[Unknown]] = lambda u: ()
    per_group: bool = False


# kind -> "module:attribute" of its KindSpec. Add a line to register a kind.
KINDS: dict[str, str] = {
    "subscription": "subguard.rules.subjects:SUBSCRIPTION",
    "subscription/smell": "subguard.rules.subjects:SUBSCRIPTION_SMELL",
    "consumer": "subguard.rules.subjects:CONSUMER",
    "consumer/overridden": "subguard.rules.subjects:CONSUMER_OVERRIDDEN",
    "consumer/name": "subguard.rules.subjects:CONSUMER_NAME",
    "group": "subguard.rules.subjects:GROUP",
    "group/topic": "subguard.rules.subjects:GROUP_TOPIC",
    # environments, services and deployments (subguard.rules.deploy_subjects)
    "group/cluster": "subguard.rules.deploy_subjects:GROUP_CLUSTER",
    "subscription/environment": "subguard.rules.deploy_subjects:SUBSCRIPTION_ENVIRONMENT",
    "deployment": "subguard.rules.deploy_subjects:DEPLOYMENT",
    "consumer+deployment": "subguard.rules.deploy_subjects:CONSUMER_DEPLOYMENT",
}

# Placeholders of the tool rules' messages (emitted by the engine and suppress.py, not by subjects).
TOOL_FIELDS: dict[str, set[str]] = {
    "SG901": {"path", "reason"},
    "SG902": {"what", "state", "reason", "rules"},
    "SG903": {"message"},
    "SG905": {"message"},
    "SG906": {"what", "reason"},
}


def kind_spec(kind: str) -> KindSpec:
    module, _, attr = KINDS[kind].partition(":")
    spec = getattr(importlib.import_module(module), attr)
    assert isinstance(spec, KindSpec)
    return spec


# --- shared helpers ------------------------------------------------------------------------------

GENERATIONS: dict[ClientFamily, str] = {
    **{f: "cpp-4x" for f in CPP_FAMILIES},
    **{f: "pop-5x" for f in POP_FAMILIES},
    ClientFamily.JAVA_PUSH_4X: "remoting-push",
    ClientFamily.SPRING_LISTENER: "remoting-push",
    ClientFamily.SPRING_CLOUD_STREAM: "remoting-push",
    ClientFamily.JAVA_LITE_PULL: "remoting-pull",
    ClientFamily.JAVA_PULL: "remoting-pull",
    ClientFamily.SPRING_LITE_PULL: "remoting-pull",
}


def generation(client: ClientFamily) -> str:
    """cpp-4x (C++ core, atoi tag codes), pop-5x (gRPC), remoting-push (group-table filtered), remoting-pull."""
    return GENERATIONS.get(client, "remoting-push")


def _val(value: Value | None) -> Any:
    if value is None:
        return None
    return value.value if value.known else UNKNOWN


def _loc_of(value: Value, fallback: Location) -> Location:
    return value.location or fallback


def _ident(c: Consumer) -> tuple[str, str]:
    return (c.repo or c.location.repo, c.location.path)


def tags_label(sub: Subscription) -> str:
    """The broker's view of one subscription's filter, for messages."""
    raw = sub.expression.value
    parsed = parse(raw, sub.expression_type)
    if sub.expression_type is ExpressionType.SQL92:
        return f"SQL92 {raw!r}"
    if parsed.error:
        return f"invalid {raw!r}"
    if parsed.match_all:
        return "* (every message)"
    if not parsed.tags:
        return f"nothing ({raw!r})"
    return "{" + ", ".join(sorted(parsed.tags)) + "}"


def _tag_set_key(sub: Subscription) -> Any:
    parsed = parse(sub.expression.value, sub.expression_type)
    if sub.expression_type is ExpressionType.SQL92:
        return ("SQL92", parsed.sub_string)
    return ("TAG", parsed.match_all, frozenset(parsed.tags), parsed.error)


def _tag_order_key(sub: Subscription) -> Any:
    parsed = parse(sub.expression.value, sub.expression_type)
    if sub.expression_type is ExpressionType.SQL92:
        return ("SQL92", parsed.sub_string)
    return ("TAG", parsed.match_all, parsed.tags, parsed.error)


def _raw_key(sub: Subscription) -> Any:
    return (sub.expression_type.value, parse(sub.expression.value, sub.expression_type).sub_string)


Entry = tuple[Any, str, Member]  # (key or UNKNOWN, label, member)


def _variants(entries: Sequence[Entry]) -> tuple[tuple[Variant, ...], Any]:
    """Group entries by key: the variants (ordered by first location) and the count of known ones."""
    order: list[Any] = []
    labels: dict[Any, str] = {}
    members: dict[Any, list[Member]] = {}
    unknown = False
    for key, label, member in entries:
        if key is UNKNOWN:
            unknown = True
            continue
        if key not in members:
            order.append(key)
            labels[key] = label
            members[key] = []
        members[key].append(member)
    variants = tuple(Variant(labels[k], tuple(members[k])) for k in order)
    count: Any = len(variants)
    if unknown and count <= 1:
        count = UNKNOWN
    return variants, count


def _sorted_known(values: Iterable[Any]) -> list[str]:
    return sorted({v for v in values if v is not None and v is not UNKNOWN and v != ""})


# --- subscription --------------------------------------------------------------------------------

_SUB_FIELDS = {
    "group": "the consumer's group (UNKNOWN if dynamic)",
    "topic": "the subscribed topic",
    "expression": "the expression exactly as written",
    "expression_type": "TAG or SQL92",
    "tags": "the broker's tag list, in written order",
    "smells": "codes of tag-expression smells (expression.smells)",
    "sql_error": "why the broker cannot use the SQL92 expression as written (None when fine or TAG)",
    "sql_error_kind": "rejected (consumer fails to start) or truncated (tail silently ignored); UNKNOWN, with "
    "sql_error, when the expression is too_deep to check (nested beyond 1,000 levels: an SG902 note)",
    "client": "client family",
    "generation": "cpp-4x, pop-5x, remoting-push or remoting-pull",
    "message_model": "CLUSTERING or BROADCASTING",
    "consume_mode": "CONCURRENTLY or ORDERLY",
    "service": "the service the declaration belongs to",
    "environment": "the environment ('' when not attributed)",
    "repo": "repository name",
    "path": "file path",
    "topic_resolution": "how the topic was obtained (literal, constant, placeholder, ...)",
    "expression_resolution": "how the expression was obtained",
}


def _sub_unknowns(c: Consumer, s: Subscription) -> list[Unknown]:
    out: list[Unknown] = []
    for what, value in (("topic", s.topic), ("expression", s.expression)):
        if not value.known:
            key = (*_ident(c), what, c.group.value or "?", s.topic.value or "?")
            out.append(
                Unknown(
                    f"{what} of the subscription", value.detail, _loc_of(value, s.location), key, owner=c.consumer_id
                )
            )
    return out


def _sql_unknowns(c: Consumer, s: Subscription) -> list[Unknown]:
    """A SQL92 expression nested beyond the validator's documented limit is known but not judged."""
    if s.expression_type is not ExpressionType.SQL92 or not s.expression.known:
        return []
    problem = validate_sql(s.expression.value or "")
    if problem is None or problem.kind != "too_deep":
        return []
    key = (*_ident(c), "sql92-depth", c.group.value or "?", s.topic.value or "?")
    return [
        Unknown(
            f"SQL92 expression for topic '{s.topic.value or '?'}'",
            f"nesting beyond {SQL_MAX_DEPTH} levels, the documented limit of subguard's SQL92 check",
            _loc_of(s.expression, s.location),
            key,
            state="is too deep to check",
            owner=c.consumer_id,
        )
    ]


def _sub_fields(c: Consumer, s: Subscription) -> dict[str, Any]:
    expr = s.expression
    sql_error: Any = None
    sql_kind: Any = None
    if s.expression_type is ExpressionType.SQL92:
        if not expr.known:
            sql_error = sql_kind = UNKNOWN
        else:
            problem = validate_sql(expr.value or "")
            if problem is not None:
                sql_error, sql_kind = (
                    (UNKNOWN, UNKNOWN) if problem.kind == "too_deep" else (problem.message, problem.kind)
                )
    return {
        "group": _val(c.group),
        "topic": _val(s.topic),
        "expression": _val(expr),
        "expression_type": s.expression_type.value if s.type_known else UNKNOWN,
        "tags": list(s.tags),
        "smells": [sm.code for sm in smells(expr.value)]
        if expr.known and s.expression_type is ExpressionType.TAG
        else ([] if expr.known else UNKNOWN),
        "sql_error": sql_error,
        "sql_error_kind": sql_kind,
        "client": c.client.value,
        "generation": generation(c.client),
        "message_model": _val(c.message_model),
        "consume_mode": _val(c.consume_mode),
        "service": c.service,
        "environment": c.environment,
        "repo": c.repo,
        "path": s.location.path,
        "topic_resolution": s.topic.resolution.value,
        "expression_resolution": expr.resolution.value,
    }


def _sub_key(c: Consumer, s: Subscription) -> tuple[str, ...]:
    return (*_ident(c)[:1], s.location.path, c.group.value or "?", s.topic.value or "?", s.expression_type.value)


def _build_subscriptions(u: Universe) -> Iterable[Subject]:
    for c in u.consumers:
        for s in c.subscriptions:
            yield Subject(
                "subscription",
                _sub_fields(c, s),
                s.location,
                _sub_key(c, s),
                group=c.group.value or "",
                topic=s.topic.value or "",
                unknowns=(*_sub_unknowns(c, s), *_sql_unknowns(c, s)),
            )


def _build_smells(u: Universe) -> Iterable[Subject]:
    for c in u.consumers:
        for s in c.subscriptions:
            if s.expression_type is not ExpressionType.TAG:
                continue
            base = _sub_fields(c, s)
            group, topic = c.group.value or "", s.topic.value or ""
            if not s.expression.known:
                fields = {**base, "smell_code": UNKNOWN, "smell_severity": UNKNOWN, "smell_message": UNKNOWN}
                unknowns = tuple(un for un in _sub_unknowns(c, s) if un.what.startswith("expression"))
                yield Subject(
                    "subscription/smell", fields, s.location, (*_sub_key(c, s), "?"), group, topic, unknowns=unknowns
                )
                continue
            for smell in smells(s.expression.value):
                fields = {
                    **base,
                    "smell_code": smell.code,
                    "smell_severity": smell.severity,
                    "smell_message": smell.message,
                }
                yield Subject(
                    "subscription/smell",
                    fields,
                    _loc_of(s.expression, s.location),
                    (*_sub_key(c, s), smell.code),
                    group,
                    topic,
                )


SUBSCRIPTION = KindSpec(_SUB_FIELDS, {}, _build_subscriptions, per_group=True)
SUBSCRIPTION_SMELL = KindSpec(
    {
        **_SUB_FIELDS,
        "smell_code": "stable smell code",
        "smell_severity": "error or warning",
        "smell_message": "what is wrong",
    },
    {},
    _build_smells,
    per_group=True,
)


# --- consumer ------------------------------------------------------------------------------------

_CONSUMER_FIELDS = {
    "group": "the group (UNKNOWN if dynamic)",
    "topics": "known topics subscribed (effective subscriptions)",
    "topic_count": "number of effective subscriptions",
    "duplicate_subscribed_topics": "topics subscribed more than once on this consumer (earlier calls overwritten)",
    "message_model": "CLUSTERING or BROADCASTING",
    "consume_mode": "CONCURRENTLY or ORDERLY",
    "client": "client family",
    "generation": "cpp-4x, pop-5x, remoting-push or remoting-pull",
    "service": "service",
    "environment": "environment ('' when not attributed)",
    "repo": "repository",
    "path": "file path",
    "instance_name": "instance name, when declared",
    "consume_from_where": "ConsumeFromWhere, when declared",
}


def _consumer_fields(c: Consumer) -> dict[str, Any]:
    return {
        "group": _val(c.group),
        "topics": _sorted_known(s.topic.value for s in c.subscriptions),
        "topic_count": len(c.subscriptions),
        "duplicate_subscribed_topics": _sorted_known(s.topic.value for s in c.overridden),
        "message_model": _val(c.message_model),
        "consume_mode": _val(c.consume_mode),
        "client": c.client.value,
        "generation": generation(c.client),
        "service": c.service,
        "environment": c.environment,
        "repo": c.repo,
        "path": c.location.path,
        "instance_name": _val(c.instance_name),
        "consume_from_where": _val(c.consume_from_where),
    }


def _consumer_unknowns(c: Consumer) -> list[Unknown]:
    out = []
    for what, value in (("group", c.group), ("message model", c.message_model)):
        if not value.known:
            out.append(
                Unknown(
                    f"{what} of the consumer",
                    value.detail,
                    _loc_of(value, c.location),
                    (*_ident(c), what),
                    owner=c.consumer_id,
                )
            )
    return out


def _build_consumers(u: Universe) -> Iterable[Subject]:
    for c in u.consumers:
        yield Subject(
            "consumer",
            _consumer_fields(c),
            c.location,
            (*_ident(c), c.group.value or "?"),
            group=c.group.value or "",
            unknowns=tuple(_consumer_unknowns(c)),
        )


def _build_overridden(u: Universe) -> Iterable[Subject]:
    for c in u.consumers:
        for old in c.overridden:
            effective = next((s for s in c.subscriptions if s.topic.value == old.topic.value and old.topic.known), None)
            old_raw, new_raw = _val(old.expression), _val(effective.expression) if effective else None
            same: Any = (
                UNKNOWN
                if UNKNOWN in (old_raw, new_raw)
                else (
                    effective is not None
                    and old.expression_type is effective.expression_type
                    and _raw_key(old) == _raw_key(effective)
                )
            )
            fields = {
                **_consumer_fields(c),
                "topic": _val(old.topic),
                "overridden_expression": old_raw,
                "effective_expression": new_raw,
                "same_expression": same,
            }
            related = (
                ((effective.location, f"this later subscribe() of '{old.topic.value}' with {new_raw!r} wins"),)
                if effective
                else ()
            )
            unknowns = tuple(_sub_unknowns(c, old)) + (tuple(_sub_unknowns(c, effective)) if effective else ())
            yield Subject(
                "consumer/overridden",
                fields,
                old.location,
                (*_ident(c), c.group.value or "?", old.topic.value or "?"),
                group=c.group.value or "",
                topic=old.topic.value or "",
                related=related,
                unknowns=unknowns,
            )


# Names (apache/rocketmq TopicValidator / client Validators): characters ^[%|a-zA-Z0-9_-]+$,
# topic <= 127 (retry/DLQ topics <= 255), group <= 255 (client Validators.CHARACTER_MAX_LENGTH;
# develop after 5.3.3 lowers it to 120, #9563). The 5.x Python client also forbids '|'.
_NAME_CHARS = frozenset("%|-_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
TOPIC_MAX, SYSTEM_TOPIC_MAX, GROUP_MAX, GROUP_MAX_NEXT = 127, 255, 255, 120


def name_problem(kind: str, name: str, client: ClientFamily) -> tuple[str, str] | None:
    """(severity, message) when RocketMQ would refuse the topic or group name, else None."""
    if name.strip() == "":
        return "error", f"the {kind} name is blank"
    bad = sorted({ch for ch in name if ch not in _NAME_CHARS})
    if bad:
        shown = ", ".join(repr(ch) for ch in bad[:5])
        return "error", f"{kind} '{name}' contains {shown}: only ^[%|a-zA-Z0-9_-]+$ is allowed"
    if "|" in name and client is ClientFamily.PYTHON_GRPC_5X:
        return "error", f"{kind} '{name}' contains '|': the 5.x Python client allows only ^[%a-zA-Z0-9_-]+$"
    if kind == "topic":
        limit = SYSTEM_TOPIC_MAX if name.startswith(("%RETRY%", "%DLQ%")) else TOPIC_MAX
        if len(name) > limit:
            return "error", f"topic '{name[:40]}...' is {len(name)} characters long: the limit is {limit}"
        return None
    if name == "DEFAULT_CONSUMER" and generation(client).startswith("remoting"):
        return "error", "group 'DEFAULT_CONSUMER' is reserved: the Java consumer refuses to start with it"
    if len(name) > GROUP_MAX:
        return "error", f"group '{name[:40]}...' is {len(name)} characters long: the limit is {GROUP_MAX}"
    if len(name) > GROUP_MAX_NEXT:
        return (
            "warning",
            f"group '{name[:40]}...' is {len(name)} characters long: newer clients and brokers (#9563) allow at most {GROUP_MAX_NEXT}",
        )
    return None


def _declared_at(value: Value, where: Location) -> Location:
    """Where a name is reported: its own location in the declaring file, else the declaration."""
    loc = _loc_of(value, where)
    return loc if loc.path == where.path else where


def _build_names(u: Universe) -> Iterable[Subject]:
    for c in u.consumers:
        base = _consumer_fields(c)
        seen: set[tuple[str, str]] = set()
        # at the declaration: a name written in another file (a constant) is provenance, not the place to report
        named: list[tuple[str, Value, Location]] = [("group", c.group, _declared_at(c.group, c.location))]
        named += [("topic", s.topic, _declared_at(s.topic, s.location)) for s in c.subscriptions]
        for kind, value, loc in named:
            ident = (kind, value.value if value.value is not None else f"?{loc.line}")
            if ident in seen:
                continue
            seen.add(ident)
            if not value.known:
                fields = {**base, "name_kind": kind, "name": UNKNOWN, "name_error": UNKNOWN, "name_severity": UNKNOWN}
                unknowns = (
                    tuple(_consumer_unknowns(c)[:1])
                    if kind == "group"
                    else tuple(
                        un
                        for s in c.subscriptions
                        if s.topic is value
                        for un in _sub_unknowns(c, s)
                        if un.what.startswith("topic")
                    )
                )
                yield Subject(
                    "consumer/name", fields, loc, (*_ident(c), kind, "?"), group=c.group.value or "", unknowns=unknowns
                )
                continue
            if "${" in (value.value or ""):  # an unresolved Spring placeholder: the name is set at run time
                continue
            problem = name_problem(kind, value.value or "", c.client)
            fields = {
                **base,
                "name_kind": kind,
                "name": value.value,
                "name_error": problem[1] if problem else None,
                "name_severity": problem[0] if problem else None,
            }
            yield Subject(
                "consumer/name",
                fields,
                loc,
                (*_ident(c), kind, value.value or ""),
                group=c.group.value or "",
                topic=(value.value or "") if kind == "topic" else "",
            )


CONSUMER = KindSpec(_CONSUMER_FIELDS, {}, _build_consumers, per_group=True)
CONSUMER_OVERRIDDEN = KindSpec(
    {
        **_CONSUMER_FIELDS,
        "topic": "the topic subscribed twice",
        "overridden_expression": "the earlier, overwritten expression",
        "effective_expression": "the expression that wins",
        "same_expression": "both calls give the broker the same subscription",
    },
    {},
    _build_overridden,
    per_group=True,
)
CONSUMER_NAME = KindSpec(
    {
        **_CONSUMER_FIELDS,
        "name_kind": "group or topic",
        "name": "the name",
        "name_error": "why RocketMQ refuses it (None: fine)",
        "name_severity": "error or warning",
    },
    {},
    _build_names,
    per_group=True,
)


# --- group ---------------------------------------------------------------------------------------

_GROUP_FIELDS = {
    "group": "the group name (namespace%group when a namespace is known)",
    "members": "consumer ids of the members",
    "member_count": "number of declared consumers in the group",
    "topics": "every known topic any member subscribes",
    "topic_set_count": "distinct topic sets among members (UNKNOWN: known ones agree, some unknown)",
    "message_models": "distinct known message models",
    "message_model_count": "number of distinct message models",
    "client_families": "distinct client families",
    "generations": "distinct client generations (cpp-4x, pop-5x, remoting-push, remoting-pull)",
    "generation_count": "number of distinct generations",
    "environments": "distinct attributed environments",
    "environment_count": "number of distinct environments",
    "services": "distinct services",
    "service_count": "number of distinct services",
    "repos": "distinct repositories",
    "repo_count": "number of distinct repositories",
    "unknown_values": "number of unknown values among the members",
}
_GROUP_VARIANTS = {
    "topic_sets": "members by the set of topics they subscribe",
    "message_models": "members by message model",
    "generations": "members by client generation",
    "client_families": "members by client family",
    "environments": "members by environment",
    "services": "members by service",
    "repos": "members by repository",
}


def _topic_set_entry(g: Group, c: Consumer) -> Entry:
    if not c.subscriptions:  # no subscribe call was found: the topics are unknown, not none
        return (
            UNKNOWN,
            "unknown topics (no subscription found)",
            Member(c.location, f"a member of '{g.name}' whose topics are unknown"),
        )
    topics = [s.topic.value for s in c.subscriptions]
    label = "{" + ", ".join(sorted(t for t in topics if t is not None)) + "}"
    member = Member(c.location, f"a member of '{g.name}' subscribes {label}")
    if any(t is None for t in topics):
        return (UNKNOWN, label, member)
    return (frozenset(t for t in topics if t is not None), label, member)


def _model_entry(g: Group, c: Consumer) -> Entry:
    model = c.message_model.value
    loc = _loc_of(c.message_model, c.location) if c.message_model.location else c.location
    member = Member(loc, f"a member of '{g.name}' consumes {model or '?'}")
    return (UNKNOWN if model is None else model, model or "?", member)


def _simple_entry(g: Group, c: Consumer, value: str, what: str) -> Entry:
    return (value, value, Member(c.location, f"a member of '{g.name}' with {what} {value} ({c.client.value})"))


def _group_subject(u: Universe, g: Group) -> Subject:
    ms = g.members
    topic_sets, topic_set_count = _variants([_topic_set_entry(g, c) for c in ms])
    models, model_count = _variants([_model_entry(g, c) for c in ms])
    gens, _ = _variants([_simple_entry(g, c, generation(c.client), "generation") for c in ms])
    families, _ = _variants([_simple_entry(g, c, c.client.value, "client") for c in ms])
    envs, _ = _variants([_simple_entry(g, c, c.environment, "environment") for c in ms if c.environment])
    services, _ = _variants([_simple_entry(g, c, c.service, "service") for c in ms if c.service])
    repos, _ = _variants([_simple_entry(g, c, c.repo, "repo") for c in ms if c.repo])
    unknowns: list[Unknown] = []
    for c in ms:
        unknowns += [u_ for u_ in _consumer_unknowns(c) if u_.what != "group of the consumer"]
        if not c.subscriptions:
            unknowns.append(
                Unknown(
                    "topics of the consumer",
                    "no subscribe call was found for it",
                    c.location,
                    (*_ident(c), c.consumer_id, "topics"),
                    owner=c.consumer_id,
                )
            )
        for s in c.subscriptions:
            if not s.topic.known:
                unknowns += [u_ for u_ in _sub_unknowns(c, s) if u_.what.startswith("topic")]
    fields = {
        "group": g.name,
        "members": [c.consumer_id for c in ms],
        "member_count": len(ms),
        "topics": list(g.topics),
        "topic_set_count": topic_set_count,
        "message_models": [v.label for v in models],
        "message_model_count": model_count,
        "client_families": sorted(v.label for v in families),
        "generations": sorted(v.label for v in gens),
        "generation_count": len(gens),
        "environments": sorted(v.label for v in envs),
        "environment_count": len(envs),
        "services": sorted(v.label for v in services),
        "service_count": len(services),
        "repos": sorted(v.label for v in repos),
        "repo_count": len(repos),
        "unknown_values": len(unknowns),
    }
    variants = {
        "topic_sets": topic_sets,
        "message_models": models,
        "generations": gens,
        "client_families": families,
        "environments": envs,
        "services": services,
        "repos": repos,
    }
    return Subject(
        "group",
        fields,
        ms[0].location,
        group_ident(g),
        group=g.name,
        variants=variants,
        unknowns=tuple(unknowns),
        sample=g.sample,
    )


def _ungrouped(u: Universe) -> Iterable[Unknown]:
    for c in u.groups.ungrouped:
        yield Unknown(
            "group of the consumer",
            c.group.detail,
            _loc_of(c.group, c.location),
            (*_ident(c), "group"),
            owner=c.consumer_id,
        )


def _build_groups(u: Universe) -> Iterable[Subject]:
    for g in u.groups.groups.values():
        yield _group_subject(u, g)


_GROUP_TOPIC_FIELDS = {
    "group": "the group name",
    "topic": "the topic",
    "member_count": "members subscribing this topic",
    "tag_set_count": "distinct filters (tag sets, '*', SQL text) among them",
    "tag_order_count": "distinct tag lists in written order",
    "raw_expression_count": "distinct raw expressions (what mqadmin compares)",
    "expression_types": "distinct expression types",
    "expression_type_count": "number of distinct expression types",
    "expressions": "distinct known raw expressions",
    "generations": "distinct client generations subscribing this topic",
}
_GROUP_TOPIC_VARIANTS = {
    "tag_sets": "members by tag set",
    "tag_orders": "members by tag order",
    "raw_expressions": "members by raw expression",
    "expression_types": "members by expression type",
}


def _expr_entries(
    g: Group, topic: str, key: Callable[[Subscription], Any], label: Callable[[Subscription], str]
) -> list[Entry]:
    out: list[Entry] = []
    for _, s in g.subscriptions(topic):
        raw = s.expression.value
        text = f"subscribes '{topic}' with {raw!r}" + (
            f" ({tags_label(s)})" if s.expression.known else f" (unknown: {s.expression.detail})"
        )
        member = Member(s.location, text)
        out.append((UNKNOWN if raw is None and not s.expression.known else key(s), label(s), member))
    return out


def _order_label(s: Subscription) -> str:
    parsed = parse(s.expression.value, s.expression_type)
    if s.expression_type is ExpressionType.TAG and parsed.tags:
        return "||".join(parsed.tags)
    return tags_label(s)


def _build_group_topics(u: Universe) -> Iterable[Subject]:
    for g in u.groups.groups.values():
        for topic in g.topics:
            subs = g.subscriptions(topic)
            tag_sets, tag_set_count = _variants(_expr_entries(g, topic, _tag_set_key, tags_label))
            orders, order_count = _variants(_expr_entries(g, topic, _tag_order_key, _order_label))
            raws, raw_count = _variants(_expr_entries(g, topic, _raw_key, lambda s: repr(s.expression.value)))
            types, type_count = _variants(
                [
                    (
                        s.expression_type.value if s.type_known else UNKNOWN,
                        s.expression_type.value,
                        Member(s.location, f"subscribes '{topic}' as {s.expression_type.value} {s.expression.value!r}"),
                    )
                    for _, s in subs
                ]
            )
            unknowns = tuple(un for c, s in subs for un in _sub_unknowns(c, s))
            fields = {
                "group": g.name,
                "topic": topic,
                "member_count": len(subs),
                "tag_set_count": tag_set_count,
                "tag_order_count": order_count,
                "raw_expression_count": raw_count,
                "expression_types": [v.label for v in types],
                "expression_type_count": type_count,
                "expressions": _sorted_known(s.expression.value for _, s in subs),
                "generations": sorted({generation(c.client) for c, _ in subs}),
            }
            variants = {"tag_sets": tag_sets, "tag_orders": orders, "raw_expressions": raws, "expression_types": types}
            yield Subject(
                "group/topic",
                fields,
                subs[0][1].location,
                group_ident(g, topic),
                group=g.name,
                topic=topic,
                variants=variants,
                unknowns=unknowns,
                sample=g.sample,
            )


GROUP = KindSpec(_GROUP_FIELDS, _GROUP_VARIANTS, _build_groups, _ungrouped, per_group=True)
GROUP_TOPIC = KindSpec(_GROUP_TOPIC_FIELDS, _GROUP_TOPIC_VARIANTS, _build_group_topics, _ungrouped, per_group=True)
