"""Live evidence against the declared inventory: SG507-SG509, and declaring files for SG501/SG506.

`Declared` pairs a consumer with the display prefix of its scan root, so that the declaring file
locations in findings open from the working directory, like the log paths.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from subguard.core.inventory import group_name
from subguard.core.model import (
    Consumer,
    ExpressionType,
    Finding,
    Location,
    Related,
    Severity,
    Subscription,
    fingerprint,
)
from subguard.evidence import rules
from subguard.evidence.classify import location, related
from subguard.evidence.ledger import RETRY_PREFIX, GroupState, Variant
from subguard.rocketmq.expression import parse, tag_set_equal

# groups the broker and the tools create themselves
SYSTEM_GROUPS = (
    "CID_RMQ_SYS_",
    "TOOLS_CONSUMER",
    "FILTERSRV_CONSUMER",
    "SELF_TEST_",
    "CID_ONS-HTTP-PROXY",
    "CID_SYS_RMQ_TRANS",
)


@dataclass(frozen=True)
class Declared:
    prefix: str  # scan root relative to the working directory ("" for the working directory)
    consumer: Consumer

    def at(self, loc: Location) -> Location:
        path = f"{self.prefix}/{loc.path}" if self.prefix and self.prefix != "." else loc.path
        return Location(path=path, line=loc.line, column=loc.column)


def _type(name: str) -> ExpressionType:
    return ExpressionType.SQL92 if name == "SQL92" else ExpressionType.TAG


def same_subscription(sub: Subscription, topic: str, expression: str, expression_type: str) -> bool:
    """Does a declared subscription select what a live one does? Unknown declared values match; a
    subscription chosen at run time matches when one of its alternatives does."""
    if sub.topic.known and sub.topic.value != topic:
        return False
    if sub.alternatives:
        return any(same_subscription(a, topic, expression, expression_type) for a in sub.alternatives)
    if not sub.expression.known:
        return True
    return tag_set_equal(parse(sub.expression.value, sub.expression_type), parse(expression, _type(expression_type)))


def declarers(declared: Sequence[Declared], topic: str, v: Variant) -> list[tuple[Declared, Subscription]]:
    return [
        (d, s)
        for d in declared
        for s in d.consumer.subscriptions
        if same_subscription(s, topic, v.expression, v.expression_type)
    ]


def by_group(declared: Sequence[Declared]) -> dict[str, list[Declared]]:
    """Declared consumers by the group name the broker logs: `namespace%group` when a namespace is set."""
    out: dict[str, list[Declared]] = {}
    for d in declared:
        name = group_name(d.consumer)
        if d.consumer.group.known and name:
            out.setdefault(name, []).append(d)
    return out


def _declares(d: Declared, s: Subscription) -> Related:
    expr = s.expression.value if s.expression.known else "?"
    return Related(
        location=d.at(s.location), message=f"declares '{expr}' for {s.topic.value or '?'} ({d.consumer.client.value})"
    )


def enrich(
    findings: Sequence[Finding],
    groups: dict[str, GroupState],
    declared: Sequence[Declared],
    linked: Sequence[Finding] = (),
) -> list[Finding]:
    """Add the declaring files to SG501 variants and SG506 groups; escalate SG506 for declared
    BROADCASTING consumers and relate their offset-store findings (`linked`, SG301/SG302)."""
    groups_decl = by_group(declared)
    out: list[Finding] = []
    for f in findings:
        members = groups_decl.get(f.group, [])
        if f.rule == rules.SUBSCRIPTION_FLAPPING and members:
            state = groups[f.group].topics.get(f.topic)
            extra = [
                _declares(d, s)
                for v in (state.variants.values() if state else ())
                for d, s in declarers(members, f.topic, v)
            ]
            f = f.model_copy(update={"related": f.related + tuple(dict.fromkeys(extra))})
        elif f.rule == rules.OFFSET_MOVED and members:
            broadcasting = [d for d in members if d.consumer.message_model.value == "BROADCASTING"]
            extra = [
                Related(
                    location=d.at(d.consumer.location),
                    message=f"declares group {f.group} ({d.consumer.message_model.value or '?'})",
                )
                for d in members
            ]
            links = [
                Related(location=g.location, message=f"{g.rule}: {g.message}") for g in linked if g.group == f.group
            ]
            update: dict[str, object] = {"related": f.related + tuple(extra + links)}
            if broadcasting:
                update["severity"] = Severity.ERROR
                update["message"] = (
                    f.message + f"; the group is declared BROADCASTING ({len(broadcasting)} consumer(s)): its offsets "
                    "live in a local file per client, so a lost or unwritable store restarts from the wrong offset"
                    + (f" (see {', '.join(sorted({g.rule for g in linked if g.group == f.group}))})" if links else "")
                )
            f = f.model_copy(update=update)
        out.append(f)
    return out


def _live_variants(g: GroupState) -> list[tuple[str, Variant]]:
    return [
        (topic, v)
        for topic, t in sorted(g.topics.items())
        if not topic.startswith(RETRY_PREFIX)
        for v in t.variants.values()
        if v.expression or v.sources
    ]


def _system(group: str) -> bool:
    return group.startswith(SYSTEM_GROUPS) or group.startswith(RETRY_PREFIX) or group == ""


def live_vs_declared(groups: dict[str, GroupState], declared: Sequence[Declared]) -> list[Finding]:
    """SG507 live subscriptions no declared consumer makes, SG508 declared consumers not seen live,
    SG509 live groups nothing declares."""
    decl = by_group(declared)
    out: list[Finding] = []
    for name in sorted(groups):
        g = groups[name]
        if _system(name):
            continue
        members = decl.get(name)
        first = g.seen.first
        if not members:
            out.append(
                Finding(
                    rule=rules.LIVE_GROUP_UNDECLARED,
                    severity=Severity.NOTE,
                    message=f"group {name} is live ({g.seen.count} log/mqadmin lines) but no scanned consumer declares it",
                    location=location(first),
                    related=tuple(related(g.seen.locs[1:4], f"group {name}")),
                    group=name,
                    fingerprint=fingerprint(rules.LIVE_GROUP_UNDECLARED, name),
                )
            )
            continue
        live = _live_variants(g)
        decl_rel = [_declares(d, s) for d in members for s in d.consumer.subscriptions]
        for topic, v in live:
            if declarers(members, topic, v):
                continue
            out.append(
                Finding(
                    rule=rules.LIVE_UNDECLARED_SUBSCRIPTION,
                    severity=Severity.WARNING,
                    message=(
                        f"group {name} topic {topic}: live subscription '{v.expression}' ({v.expression_type}) matches no declared "
                        f"consumer of the group ({len(members)} declared): a client runs code the scanned repos do not contain"
                    ),
                    location=location(v.seen.first),
                    related=tuple(related(v.seen.locs[1:4], f"'{v.expression}' seen") + decl_rel[:10]),
                    group=name,
                    topic=topic,
                    fingerprint=fingerprint(rules.LIVE_UNDECLARED_SUBSCRIPTION, name, topic, v.expression),
                    properties=(("clients", tuple(sorted(v.clients))),),
                )
            )
        if not live:
            continue  # no subscription evidence for the group: nothing to compare with
        seen_live = min(
            (v.seen.first for _, v in live if v.seen.first), default=first
        )  # the first live subscription line
        for d in members:
            subs = [s for s in d.consumer.subscriptions if not (s.topic.value or "").startswith(RETRY_PREFIX)]
            if not subs or any(
                same_subscription(s, topic, v.expression, v.expression_type) for s in subs for topic, v in live
            ):
                continue
            out.append(
                Finding(
                    rule=rules.DECLARED_NOT_LIVE,
                    severity=Severity.NOTE,
                    message=(
                        f"group {name}: declared consumer {d.consumer.consumer_id} ("
                        + ", ".join(f"{s.topic.value} '{s.expression.value}'" for s in subs)
                        + ") matches none of the subscriptions seen live: not deployed, another environment, or stale code"
                    ),
                    location=location(seen_live),
                    related=(Related(location=d.at(d.consumer.location), message="declared here"),),
                    group=name,
                    fingerprint=fingerprint(rules.DECLARED_NOT_LIVE, name, d.consumer.consumer_id),
                )
            )
    return out
