"""Fold events into per-group evidence with bounded memory (counts, first lines, a few samples).

The ledger is the only mutable structure of the package: `fold(events)` builds one and the
classifiers read it. Memory grows with groups x topics x variants, never with the number of lines.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from subguard.evidence import events as ev
from subguard.evidence.events import Event

Loc = tuple[str, int]
MAX_LOCS = 12  # related locations kept per subject
MAX_KEYS = 5000  # variants / offset keys / clients kept per group
MAX_TIMES = 50000  # membership timestamps kept per group
MAX_BURSTS = 2000
BURST_GAP = 30.0  # seconds without code 25 that end a burst
RETRY_PREFIX = "%RETRY%"


@dataclass
class Sightings:
    count: int = 0
    locs: list[Loc] = field(default_factory=list)

    @property
    def first(self) -> Loc | None:
        return self.locs[0] if self.locs else None

    def add(self, loc: Loc) -> None:
        self.count += 1
        if len(self.locs) < MAX_LOCS:
            self.locs.append(loc)


@dataclass
class Variant:
    """One subscription text of a topic, as the broker printed it or mqadmin showed it."""

    expression: str
    expression_type: str
    tags: str
    wins: int = 0  # times it became the broker's entry (NEW of a change, or an added topic)
    seen: Sightings = field(default_factory=Sightings)
    clients: set[str] = field(default_factory=set)
    sources: set[str] = field(default_factory=set)  # event kinds it came from


@dataclass
class TopicState:
    variants: dict[tuple[str, str], Variant] = field(default_factory=dict)
    flips: Sightings = field(default_factory=Sightings)  # OLD and NEW differ
    # proof that members disagree, not one change (a deploy): a variant that comes back within one
    # file's changes (A -> B -> A), or a filter the broker ignored for a member
    returns: Sightings = field(default_factory=Sightings)
    path_variants: dict[str, set[tuple[str, str]]] = field(default_factory=dict)  # per file: variants seen in changes
    version_only: Sightings = field(default_factory=Sightings)  # only subVersion differs
    first_ts: float | None = None
    last_ts: dict[str, float] = field(default_factory=dict)  # per file, of version-only changes
    gaps: Counter[int] = field(default_factory=Counter)
    span: list[float] = field(default_factory=list)  # [first, last] version-only change time
    added: Sightings = field(default_factory=Sightings)
    removed: Sightings = field(default_factory=Sightings)
    readded: Sightings = field(default_factory=Sightings)  # added again after a removal in the same file
    removed_in: set[str] = field(default_factory=set)  # files that logged a removal
    not_exist: Sightings = field(default_factory=Sightings)  # code 24 for this topic

    def variant(self, expression: str, expression_type: str, tags: str) -> Variant | None:
        key = (expression, expression_type or "TAG")
        found = self.variants.get(key)
        if found is None and len(self.variants) < MAX_KEYS:
            found = self.variants[key] = Variant(expression, expression_type or "TAG", tags)
        return found


@dataclass
class Code25Source:
    """Code-25 refusals seen in one file (one client for a client log, the broker's view otherwise)."""

    side: str
    seen: Sightings = field(default_factory=Sightings)
    bursts: list[list[float]] = field(default_factory=list)  # [start, end, count]
    undated: int = 0
    queues: set[str] = field(default_factory=set)

    def add(self, event: Event) -> None:
        self.seen.add((event.path, event.line))
        if event.queue_id is not None and len(self.queues) < MAX_KEYS:
            self.queues.add(f"{event.topic}/{event.broker}/{event.queue_id}")
        ts = event.ts
        if ts is None:
            self.undated += 1
        elif (
            self.bursts
            and 0 <= ts - self.bursts[-1][1] <= BURST_GAP
            or (self.bursts and len(self.bursts) >= MAX_BURSTS)
        ):
            last = self.bursts[-1]
            last[1], last[2] = max(last[1], ts), last[2] + 1
        else:
            self.bursts.append([ts, ts, 1])


@dataclass
class OffsetState:
    """Pulls of one topic at one stale offset (a queue stuck at it, as far as broker logs tell)."""

    too_small: Sightings = field(default_factory=Sightings)
    moved: Sightings = field(default_factory=Sightings)
    broker_offset: int | None = None
    clients: set[str] = field(default_factory=set)


@dataclass
class GroupState:
    seen: Sightings = field(default_factory=Sightings)
    topics: dict[str, TopicState] = field(default_factory=dict)
    code25: dict[str, Code25Source] = field(default_factory=dict)
    member_ts: list[float] = field(default_factory=list)
    offsets: dict[tuple[str, int], OffsetState] = field(default_factory=dict)
    clients: set[str] = field(default_factory=set)
    models: set[str] = field(default_factory=set)
    different: Sightings = field(default_factory=Sightings)  # mqadmin "Different subscription"

    def topic(self, name: str) -> TopicState:
        state = self.topics.get(name)
        if state is None:
            state = self.topics[name] = TopicState()
        return state

    def member(self, ts: float | None) -> None:
        if ts is not None and len(self.member_ts) < MAX_TIMES:
            self.member_ts.append(ts)

    def client(self, name: str) -> None:
        if name and len(self.clients) < MAX_KEYS:
            self.clients.add(name)


def _differs(e: Event) -> bool:
    return (e.expression, e.expression_type or "TAG", e.tags) != (
        e.old_expression,
        e.old_expression_type or "TAG",
        e.old_tags,
    )


class Ledger:
    """Per-group evidence. Events without a group (old client log wordings) are kept per file and
    given to the file's group by `resolve()` when the file names exactly one group."""

    def __init__(self) -> None:
        self.groups: dict[str, GroupState] = {}
        self.path_groups: dict[str, set[str]] = {}
        self.events = 0

    def group(self, name: str) -> GroupState:
        state = self.groups.get(name)
        if state is None:
            state = self.groups[name] = GroupState()
        return state

    def add(self, e: Event) -> None:
        self.events += 1
        key = e.group if e.group else f"\x00{e.path}"  # ungrouped: parked per file
        g = self.group(key)
        loc = (e.path, e.line)
        g.seen.add(loc)
        if e.group and e.path:
            paths = self.path_groups.setdefault(e.path, set())
            if len(paths) < MAX_KEYS:
                paths.add(e.group)
        kind = e.kind
        if kind == ev.SUB_CHANGED:
            self._changed(g, e, loc)
        elif kind in (ev.SUB_ADDED, ev.TOPIC_REMOVED, ev.LIVE_SUBSCRIPTION, ev.FILTER_IGNORED):
            self._subscription(g, e, loc)
        elif kind == ev.NOT_LATEST:
            src = g.code25.get(e.path)
            if src is None:
                src = g.code25[e.path] = Code25Source(e.side)
            src.add(e)
        elif kind == ev.SUB_NOT_EXIST:
            g.topic(e.topic).not_exist.add(loc)
        elif kind in (ev.OFFSET_TOO_SMALL, ev.OFFSET_MOVED) and e.request_offset is not None:
            okey = (e.topic, e.request_offset)
            state = g.offsets.get(okey)
            if state is None and len(g.offsets) < MAX_KEYS:
                state = g.offsets[okey] = OffsetState()
            if state is not None:
                (state.too_small if kind == ev.OFFSET_TOO_SMALL else state.moved).add(loc)
                state.broker_offset = e.broker_offset if e.broker_offset is not None else state.broker_offset
                if e.client and len(state.clients) < MAX_KEYS:
                    state.clients.add(e.client)
        elif kind in (ev.LIVE_CLIENT, ev.QUEUE_PROGRESS):
            g.client(e.client)
        elif kind == ev.GROUP_INFO:
            if e.message_model:
                g.models.add(e.message_model)
        elif kind == ev.SUB_DIFFERENT:
            g.different.add(loc)
        if kind in ev.MEMBERSHIP_KINDS:
            g.member(e.ts)
            g.client(e.client)
            if kind in (ev.CLIENT_START, ev.CONNECTED) and e.message_model:
                g.models.add(e.message_model)

    def _changed(self, g: GroupState, e: Event, loc: Loc) -> None:
        t = g.topic(e.topic)
        old = t.variant(e.old_expression or "", e.old_expression_type, e.old_tags)
        new = t.variant(e.expression or "", e.expression_type, e.tags)
        for v in (old, new):
            if v is not None:
                v.seen.add(loc)
                v.sources.add(e.kind)
        if new is not None:
            new.wins += 1
        if _differs(e):
            t.flips.add(loc)
            known = t.path_variants.setdefault(e.path, set())
            if new is not None and (new.expression, new.expression_type) in known:
                t.returns.add(loc)
            known.update((v.expression, v.expression_type) for v in (old, new) if v is not None)
            return
        t.version_only.add(loc)
        if e.ts is not None:
            t.span = [t.span[0], e.ts] if t.span else [e.ts, e.ts]
            prev = t.last_ts.get(e.path)
            if prev is not None and e.ts >= prev:
                t.gaps[round(e.ts - prev)] += 1
            t.last_ts[e.path] = e.ts

    def _subscription(self, g: GroupState, e: Event, loc: Loc) -> None:
        t = g.topic(e.topic)
        if e.kind == ev.SUB_ADDED:
            t.added.add(loc)
            if e.path in t.removed_in:
                t.readded.add(loc)
        elif e.kind == ev.TOPIC_REMOVED:
            t.removed.add(loc)
            t.removed_in.add(e.path)
        elif e.kind == ev.FILTER_IGNORED:
            t.flips.add(loc)
            t.returns.add(loc)
            old = t.variant(e.old_expression or "", e.old_expression_type, "")
            if old is not None:
                old.seen.add(loc)
                old.sources.add(e.kind)
        if e.expression is None:
            return
        v = t.variant(e.expression, e.expression_type, e.tags)
        if v is None:
            return
        v.seen.add(loc)
        v.sources.add(e.kind)
        if e.kind == ev.SUB_ADDED:
            v.wins += 1
        if e.client and len(v.clients) < MAX_KEYS:
            v.clients.add(e.client)

    def resolve(self) -> dict[str, GroupState]:
        """Groups by name, parked events merged into their file's only group (else group "")."""
        out: dict[str, GroupState] = {}
        for key, state in self.groups.items():
            if not key.startswith("\x00"):
                out[key] = state
        for key, parked in self.groups.items():
            if not key.startswith("\x00"):
                continue
            owners = self.path_groups.get(key[1:], set())
            target = out.setdefault(next(iter(owners)) if len(owners) == 1 else "", GroupState())
            _merge(target, parked)
        return out


def _merge(into: GroupState, parked: GroupState) -> None:
    """Give a file's ungrouped evidence (code 25, rebalance lines) to a group."""
    for path, src in parked.code25.items():
        into.code25.setdefault(path, src)
    into.member_ts.extend(parked.member_ts[: max(0, MAX_TIMES - len(into.member_ts))])
    for loc in parked.seen.locs:
        into.seen.add(loc)


def fold(events: Iterable[Event]) -> Ledger:
    ledger = Ledger()
    for e in events:
        ledger.add(e)
    return ledger
