"""The members of a group finding: where each disagreeing consumer is, and what it declares.

`attach_members` runs once in `check` (it needs the scanned consumers); renderers then read
`members_of(finding)`, which falls back to the finding's own locations when nothing was attached.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from subguard.core.inventory import group_name
from subguard.core.model import Consumer, Finding, Location, Record, Subscription

MEMBERS = "members"  # key in Finding.properties


class Member(Record):
    """One location of a group finding with the subscription declared there (None: not known)."""

    location: Location
    message: str = ""
    topic: str | None = None
    expression: str | None = None
    model: str | None = None
    client: str | None = None
    # a finding about the group as a whole (no topic, e.g. SG101's topic sets): the member's other
    # subscriptions, (topic, expression) in written order, so a table shows every topic it declares
    more: tuple[tuple[str | None, str | None], ...] = ()


def _locations(finding: Finding) -> list[tuple[Location, str]]:
    return [(finding.location, "")] + [(r.location, r.message) for r in finding.related]


def _same_place(a: Location, b: Location) -> bool:
    return a.path == b.path and a.line == b.line and (not a.repo or not b.repo or a.repo == b.repo)


def _match(
    finding: Finding, loc: Location, consumers: Sequence[Consumer]
) -> tuple[Consumer, Subscription | None] | None:
    def topic_ok(sub: Subscription) -> bool:
        return not finding.topic or sub.topic.value == finding.topic

    for c in consumers:
        for sub in (*c.subscriptions, *c.overridden):  # SG107 points at the overwritten subscribe() too
            if _same_place(sub.location, loc) and topic_ok(sub):
                return c, sub
    for c in consumers:
        if _same_place(c.location, loc):
            return c, next((s for s in c.subscriptions if topic_ok(s)), None)
    return None


def _by_group(consumers: Sequence[Consumer]) -> dict[str, list[Consumer]]:
    """Consumers by each name a finding may give their group (its name, and namespace%group), in order."""
    out: dict[str, list[Consumer]] = {}
    for c in consumers:
        for name in {c.group.value, group_name(c)}:
            if isinstance(name, str):
                out.setdefault(name, []).append(c)
    return out


def member_list(
    finding: Finding,
    consumers: Sequence[Consumer],
    by_group: Mapping[str, Sequence[Consumer]] | None = None,
) -> tuple[Member, ...]:
    """One Member per location of the finding, filled from the consumer declared there (`by_group`:
    `consumers` indexed by group name, when the caller has it)."""
    # group findings name a namespaced group as the broker does (namespace%group); consumer-level ones by its name
    if not finding.group:
        group: Sequence[Consumer] = list(consumers)
    elif by_group is not None:
        group = by_group.get(finding.group, ())
    else:
        group = [c for c in consumers if finding.group in (c.group.value, group_name(c))]
    out: list[Member] = []
    for loc, message in _locations(finding):
        hit = _match(finding, loc, group)
        # built unvalidated: every value is read from validated records, of the field's type
        if hit is None:
            out.append(Member.model_construct(location=loc, message=message))
            continue
        consumer, sub = hit
        more = (
            tuple((s.topic.value, s.expression.value) for s in consumer.subscriptions if s is not sub)
            if not finding.topic and sub is not None
            else ()
        )
        out.append(
            Member.model_construct(
                location=loc,
                message=message,
                topic=sub.topic.value if sub else finding.topic or None,
                expression=sub.expression.value if sub else None,
                model=consumer.message_model.value,
                client=consumer.client.value,
                more=more,
            )
        )
    return tuple(out)


def attach_members(findings: Iterable[Finding], consumers: Sequence[Consumer]) -> list[Finding]:
    """Add a `members` property to every group finding that has related locations and none yet."""
    out: list[Finding] = []
    index: dict[str, list[Consumer]] | None = None
    for f in findings:
        if f.group and f.related and MEMBERS not in dict(f.properties):
            index = _by_group(consumers) if index is None else index
            f = f.model_copy(update={"properties": (*f.properties, (MEMBERS, member_list(f, consumers, index)))})
        out.append(f)
    return out


def members_of(finding: Finding) -> tuple[Member, ...]:
    """The attached members, or bare locations (primary first) when none were attached."""
    attached = dict(finding.properties).get(MEMBERS)
    if isinstance(attached, tuple) and all(isinstance(m, Member) for m in attached):
        return attached
    return tuple(Member(location=loc, message=msg) for loc, msg in _locations(finding))
