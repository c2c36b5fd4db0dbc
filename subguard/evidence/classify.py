"""Per-group classification of runtime evidence (SG501-SG506): pure functions from a folded ledger.

`classify_groups` is what the CLI and `classify()` (the Spark-facing entry) share.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

from subguard.core.model import Finding, Location, Related, Severity, fingerprint
from subguard.evidence import rules
from subguard.evidence.cadence import cadence
from subguard.evidence.ledger import Code25Source, GroupState, Loc, OffsetState, Sightings, TopicState, Variant
from subguard.rocketmq.expression import parse

EXPLAIN_WINDOW = 60.0  # a join/rebalance this many seconds before a code-25 burst explains it
LONG_BURST = 60.0  # a burst lasting longer than this is not the start-up race
RECURRING = 5  # this many bursts from one source that no join or rebalance explains: it keeps happening
MIN_CHURN = 3  # version-only changes before churn is worth a finding
STUCK = 3  # the same stale offset requested this often: the correction is not kept


def location(loc: Loc | None) -> Location:
    return Location(path=loc[0], line=loc[1]) if loc else Location(path="")


def related(locs: Sequence[Loc], message: str, skip: Loc | None = None) -> list[Related]:
    return [Related(location=location(loc), message=message) for loc in locs if loc != skip]


def _label(v: Variant) -> str:
    kind = "" if v.expression_type == "TAG" else f" ({v.expression_type})"
    return f"'{v.expression}'{kind}"


def _selector(v: Variant) -> tuple[str, object]:
    """What a variant delivers: SQL text, or match-all / the tag set (order and spacing ignored)."""
    if v.expression_type != "TAG":
        return (v.expression_type, v.expression.strip())
    p = parse(v.expression)
    return ("TAG", "*" if p.match_all else frozenset(p.tags))


def _delivery_differs(variants: Sequence[Variant]) -> bool:
    """Do the variants select different messages (tag set or type), not just differently written?"""
    return len({_selector(v) for v in variants}) > 1


def flapping(group: str, topic: str, t: TopicState) -> Finding | None:
    """SG501: the broker's one subscription for the topic keeps changing between different texts:
    a variant comes back (or the broker ignored a member's filter). One change, or changes that
    never return to an earlier text, are deploys, not members that disagree."""
    if not t.returns.count:
        return None
    variants = sorted(
        (v for v in t.variants.values() if v.sources - {"live_subscription"}), key=lambda v: (-v.wins, v.expression)
    )
    hard = _delivery_differs(variants)
    listing = ", ".join(f"{_label(v)} won {v.wins}x" for v in variants)
    impact = (
        "members filter with different tags or types: whoever heartbeats last decides what every member's "
        "queues deliver, the rest is skipped"
        if hard
        else "same tags written differently: delivery is unaffected, but the table flips and mqadmin reports the group inconsistent"
    )
    rel = [Related(location=location(v.seen.first), message=f"variant {_label(v)} first seen here") for v in variants]
    rel += related(t.flips.locs, "subscription changed", t.flips.first)
    return Finding(
        rule=rules.SUBSCRIPTION_FLAPPING,
        severity=Severity.ERROR if hard else Severity.WARNING,
        message=(
            f"group {group} topic {topic}: the broker's subscription changed {t.flips.count} times between "
            f"{len(variants)} variants ({listing}): members of the group subscribe differently"
        ),
        location=location(t.flips.first),
        related=tuple(rel),
        group=group,
        topic=topic,
        fingerprint=fingerprint(rules.SUBSCRIPTION_FLAPPING, group, topic),
        impact=impact,
        properties=(
            ("flips", t.flips.count),
            ("variants", tuple((v.expression, v.expression_type, v.wins) for v in variants)),
        ),
    )


def topic_set_flapping(group: str, g: GroupState) -> Finding | None:
    """SG502: topics removed from the group's table by heartbeats that lack them."""
    removed = {name: t for name, t in sorted(g.topics.items()) if t.readded.count}  # a removal alone may be a deploy
    if not removed:
        return None
    first = min((t.removed.first for t in removed.values() if t.removed.first), default=None)
    parts = [
        f"{name} removed {t.removed.count}x, re-added {t.readded.count}x"
        + (f", code 24 {t.not_exist.count}x" if t.not_exist.count else "")
        for name, t in removed.items()
    ]
    rel: list[Related] = []
    for name, t in removed.items():
        rel += related(t.removed.locs, f"remove topic {name}", first)
        rel += related(t.readded.locs[:3], f"add new topic {name}")
    return Finding(
        rule=rules.TOPIC_SET_FLAPPING,
        severity=Severity.ERROR,
        message=(
            f"group {group}: topics keep leaving the broker's subscription table ({'; '.join(parts)}): "
            "members of the group subscribe different topic sets"
        ),
        location=location(first),
        related=tuple(rel),
        group=group,
        topic=",".join(removed),
        fingerprint=fingerprint(rules.TOPIC_SET_FLAPPING, group, *removed),
        impact="while a topic is missing, pulls for it fail with code 24 and its queues given to members without it are never pulled",
        properties=(("removed", tuple((n, t.removed.count, t.readded.count) for n, t in removed.items())),),
    )


def churn(group: str, topic: str, t: TopicState) -> Finding | None:
    """SG503: only subVersion changes, again and again: rebalance results keep changing."""
    if t.version_only.count < MIN_CHURN:
        return None
    c = cadence(t.gaps)
    span = f" over {int(t.span[1] - t.span[0])} s" if t.span else ""
    if c.rebalance_loop:
        why = (
            "the rebalance loop's cadence: on every round the allocation changes, as when a queue is dropped "
            "(OFFSET_ILLEGAL, a stuck pull) and re-added by the next rebalance"
        )
    elif c.regular:
        why = "a regular cadence: something re-triggers rebalances on a timer"
    else:
        why = "members joining and leaving, or allocations that do not settle"
    return Finding(
        rule=rules.REBALANCE_CHURN,
        severity=Severity.WARNING if c.regular else Severity.NOTE,
        message=(
            f"group {group} topic {topic}: the subscription's subVersion changed {t.version_only.count} times{span} "
            f"with the same expression, {c.describe()}: {why}"
        ),
        location=location(t.version_only.first),
        related=tuple(related(t.version_only.locs, "subVersion changed", t.version_only.first)),
        group=group,
        topic=topic,
        fingerprint=fingerprint(rules.REBALANCE_CHURN, group, topic),
        properties=(
            ("changes", t.version_only.count),
            ("cadence_s", c.dominant),
            ("regular", c.regular),
            ("rebalance_loop", c.rebalance_loop),
        ),
    )


def _explained(burst: list[float], members: Sequence[float]) -> bool:
    start, end = burst[0], burst[1]
    if end - start > LONG_BURST:
        return False
    i = bisect.bisect_left(members, start - EXPLAIN_WINDOW)
    return i < len(members) and members[i] <= end


def persistent(src: Code25Source, members: Sequence[float]) -> bool:
    """Code 25 that is not the join/rebalance race: a long burst, an unexplained burst of 3 or more
    refusals, or recurring unexplained bursts. Bursts that each follow a join or rebalance stay
    benign however many there are (frequent rebalances are SG503's subject)."""
    unexplained = [b for b in src.bursts if not _explained(b, members)]
    if len(unexplained) >= RECURRING:
        return True
    return any(b[1] - b[0] > LONG_BURST for b in src.bursts) or any(b[2] >= 3 for b in unexplained)


def _source_label(path: str, src: Code25Source) -> str:
    return f"client log {path}" if src.side == "client" else f"broker log {path}"


def code25(group: str, g: GroupState) -> list[Finding]:
    """SG504 (transient, benign) for the group and SG505 (persistent) per source file."""
    members = sorted(g.member_ts)
    out: list[Finding] = []
    transient: list[tuple[str, Code25Source]] = []
    for path, src in sorted(g.code25.items()):
        if not persistent(src, members):
            transient.append((path, src))
            continue
        seconds = int(sum(b[1] - b[0] for b in src.bursts))
        unexplained = sum(1 for b in src.bursts if not _explained(b, members))
        queues = f" on {len(src.queues)} queue(s)" if src.queues else ""
        out.append(
            Finding(
                rule=rules.NOT_LATEST_PERSISTENT,
                severity=Severity.WARNING,
                message=(
                    f"group {group}: code 25 (the consumer's subscription not latest) persists in {_source_label(path, src)}: "
                    f"{src.seen.count} refusals{queues} in {len(src.bursts)} burst(s) lasting {seconds} s in all, "
                    f"{unexplained} not following a join or rebalance: the broker holds another member's subscription"
                ),
                location=location(src.seen.first),
                related=tuple(related(src.seen.locs, "code 25", src.seen.first)),
                group=group,
                fingerprint=fingerprint(rules.NOT_LATEST_PERSISTENT, group, path.rsplit("/", 1)[-1]),
                impact="the client's pulls are refused and retried (1-3 s each) while its queues do not advance",
                properties=(
                    ("refusals", src.seen.count),
                    ("bursts", len(src.bursts)),
                    ("unexplained_bursts", unexplained),
                    ("seconds", seconds),
                    ("side", src.side),
                ),
            )
        )
    if transient:
        total = sum(src.seen.count for _, src in transient)
        bursts = sum(len(src.bursts) for _, src in transient)
        first = transient[0][1].seen.first
        rel: list[Related] = []
        for path, src in transient:
            rel += related(src.seen.locs[:4], f"code 25 ({_source_label(path, src)})", first)
        out.append(
            Finding(
                rule=rules.NOT_LATEST_TRANSIENT,
                severity=Severity.NOTE,
                message=(
                    f"group {group}: {total} pulls refused with code 25 in {bursts} short burst(s) from {len(transient)} "
                    "source(s), each right after a join, start or rebalance: the heartbeat/rebalance/pull race, benign"
                ),
                location=location(first),
                related=tuple(rel),
                group=group,
                fingerprint=fingerprint(rules.NOT_LATEST_TRANSIENT, group),
                properties=(("refusals", total), ("bursts", bursts), ("sources", len(transient))),
            )
        )
    return out


def offset_moved(group: str, g: GroupState) -> list[Finding]:
    """SG506: pulls below the broker's minimum offset, per topic; repeated offsets mean a stuck queue."""
    out: list[Finding] = []
    by_topic: dict[str, list[tuple[int, OffsetState]]] = {}
    for (topic, offset), state in sorted(g.offsets.items()):
        by_topic.setdefault(topic, []).append((offset, state))
    for topic, items in by_topic.items():
        total = 0
        stuck: list[str] = []
        locs: list[Loc] = []
        clients: set[str] = set()
        for offset, state in items:
            count = max(state.too_small.count, state.moved.count)
            total += count
            locs += state.too_small.locs[:4] + state.moved.locs[:2]
            clients |= state.clients
            if count >= STUCK:
                stuck.append(f"requestOffset {offset} < {state.broker_offset} x{count}")
        locs = sorted(set(locs), key=lambda loc: (loc[0], loc[1]))
        first = locs[0] if locs else None
        detail = (
            (
                f"; the same stale offset is requested again and again ({', '.join(stuck[:5])}): the broker's correction "
                "is not kept, as when a broadcasting consumer's local offset store cannot be written"
            )
            if stuck
            else ""
        )
        out.append(
            Finding(
                rule=rules.OFFSET_MOVED,
                severity=Severity.WARNING,
                message=(
                    f"group {group} topic {topic}: {total} pulls asked for offsets below the broker's minimum "
                    f"at {len(items)} distinct offset(s) (PULL_OFFSET_MOVED){detail}"
                ),
                location=location(first),
                related=tuple(related(locs, "offset too small / PULL_OFFSET_MOVED", first)),
                group=group,
                topic=topic,
                fingerprint=fingerprint(rules.OFFSET_MOVED, group, topic),
                impact="messages below the minimum were deleted before they were consumed; a stuck queue stalls until the offset is fixed",
                properties=(
                    ("pulls", total),
                    ("offsets", len(items)),
                    ("stuck", len(stuck)),
                    ("clients", tuple(sorted(clients))),
                ),
            )
        )
    return out


def classify_group(group: str, g: GroupState) -> list[Finding]:
    out: list[Finding] = []
    for topic, t in sorted(g.topics.items()):
        for finding in (flapping(group, topic, t), churn(group, topic, t)):
            if finding is not None:
                out.append(finding)
    topics = topic_set_flapping(group, g)
    if topics is not None:
        out.append(topics)
    out += code25(group, g)
    out += offset_moved(group, g)
    return out


def classify_groups(groups: dict[str, GroupState]) -> list[Finding]:
    return [f for name in sorted(groups) for f in classify_group(name or "(unknown group)", groups[name])]


def sightings_first(items: Iterable[Sightings]) -> Loc | None:
    return min((s.first for s in items if s.first), default=None)
