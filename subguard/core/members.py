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


def _same_repo(a: Location, b: Location) -> bool:
    return not a.repo or not b.repo or a.repo == b.repo


class _Places:
    """A group's consumers by the (path, line) of each subscription (`subscriptions`, then the
    `overridden` ones SG107 points at) and of each declaration, in the group's order: a finding's
    locations are matched by lookup, not by a pass over the group per location."""

    def __init__(self, consumers: Sequence[Consumer]) -> None:
        self.subs: dict[tuple[str, int], list[tuple[Consumer, Subscription]]] = {}
        self.decls: dict[tuple[str, int], list[Consumer]] = {}
        for c in consumers:
            for sub in (*c.subscriptions, *c.overridden):
                self.subs.setdefault((sub.location.path, sub.location.line), []).append((c, sub))
            self.decls.setdefault((c.location.path, c.location.line), []).append(c)

    def match(self, finding: Finding, loc: Location) -> tuple[Consumer, Subscription | None] | None:
        """The first consumer of the group declared at `loc`: by a subscription there (of the
        finding's topic, when it names one), else by its declaration."""

        def topic_ok(sub: Subscription) -> bool:
            return not finding.topic or sub.topic.value == finding.topic

        place = (loc.path, loc.line)
        for c, sub in self.subs.get(place, ()):
            if _same_repo(sub.location, loc) and topic_ok(sub):
                return c, sub
        for c in self.decls.get(place, ()):
            if _same_repo(c.location, loc):
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
    places: dict[str, _Places] | None = None,
) -> tuple[Member, ...]:
    """One Member per location of the finding, filled from the consumer declared there (`by_group`:
    `consumers` indexed by group name, when the caller has it; `places`: each group's `_Places` by
    its name, kept by a caller that lists the members of many findings of the same consumers)."""
    # group findings name a namespaced group as the broker does (namespace%group); consumer-level ones by its name
    if not finding.group:
        group: Sequence[Consumer] = consumers
    elif by_group is not None:
        group = by_group.get(finding.group, ())
    else:
        group = [c for c in consumers if finding.group in (c.group.value, group_name(c))]
    found = places.get(finding.group) if places is not None else None
    if found is None:
        found = _Places(group)
        if places is not None:
            places[finding.group] = found
    out: list[Member] = []
    for loc, message in _locations(finding):
        hit = found.match(finding, loc)
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
    places: dict[str, _Places] = {}
    for f in findings:
        if f.group and f.related and MEMBERS not in dict(f.properties):
            index = _by_group(consumers) if index is None else index
            members = member_list(f, consumers, index, places)
            f = f.model_copy(update={"properties": (*f.properties, (MEMBERS, members))})
        out.append(f)
    return out


def members_of(finding: Finding) -> tuple[Member, ...]:
    """The attached members, or bare locations (primary first) when none were attached."""
    attached = dict(finding.properties).get(MEMBERS)
    if isinstance(attached, tuple) and all(isinstance(m, Member) for m in attached):
        return attached
    return tuple(Member(location=loc, message=msg) for loc, msg in _locations(finding))
