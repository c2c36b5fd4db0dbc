"""One deterministic run of one group: an event loop over heartbeats, rebalances, pulls and restarts.

Pulls are not events. Between two control events nothing that decides a message's fate changes, so
before any event that changes state the loop settles every queue up to that instant (`_settle`): an
owner that may pull takes everything sent so far, filtered by the state of that interval. Idle time
costs nothing and each settlement costs O(queues x tags); messages are counted with C-level
`list.count` over per-queue tag-index arrays.

Every message of a consumed topic ends, per consuming entity (the clustering group, or each
broadcasting member), in exactly one bucket of `CATEGORIES` (rocketmq-semantics.md §2-5, §10).
"""

from __future__ import annotations

import heapq
import random
from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress
from typing import cast

from subguard.rocketmq.expression import ParsedExpression, java_hash
from subguard.simulate.allocate import STRATEGIES
from subguard.simulate.broker import OK, SUBSCRIPTION_NOT_EXIST, SUBSCRIPTION_NOT_LATEST, Entry, GroupInfo
from subguard.simulate.producer import TopicPlan, plan_topic
from subguard.simulate.spec import (
    CPP_REBALANCE_INTERVAL,
    FIRST_HEARTBEAT,
    FIRST_PERSIST,
    HEARTBEAT_INTERVAL,
    PERSIST_INTERVAL,
    REBALANCE_INTERVAL,
    BrokerFilter,
    GroupSpec,
    Kind,
    MemberSpec,
    heartbeat_filter,
    request_filter,
)

CATEGORIES = ("delivered", "lost", "unwanted", "skipped", "predates", "stuck")
DELIVERED, LOST, UNWANTED, SKIPPED, PREDATES, STUCK = range(6)
GROUP = "(group)"  # the clustering entity's name

_START, _STOP, _HB_TIMER, _HB_LAND, _REBALANCE, _RB_TIMER, _PERSIST, _UNREGISTER = range(8)


@dataclass(frozen=True)
class RunResult:
    """What one run did. `tally[entity][topic][category][tag index]`; `sent[topic][tag index]`."""

    tags: dict[str, tuple[str | None, ...]]
    sent: dict[str, tuple[int, ...]]
    tally: dict[str, dict[str, tuple[tuple[int, ...], ...]]]
    received: dict[str, int]
    events: dict[str, int]
    winners: dict[str, int]  # member -> messages pulled while its entry was G[T]
    redelivered: int
    trace: tuple[tuple[int, str, str], ...] = ()  # (time, what, member): rebalances, heartbeats, 24/25

    def lost_by_tag(self) -> dict[tuple[str, str | None], tuple[int, int]]:
        """(topic, tag) -> (lost incl. skipped, wanted = delivered + lost + skipped + stuck) over entities."""
        out: dict[tuple[str, str | None], tuple[int, int]] = {}
        for per_topic in self.tally.values():
            for topic, cats in per_topic.items():
                for k, tag in enumerate(self.tags[topic]):
                    lost = cats[LOST][k] + cats[SKIPPED][k]
                    wanted = lost + cats[DELIVERED][k] + cats[STUCK][k]
                    old = out.get((topic, tag), (0, 0))
                    out[(topic, tag)] = (old[0] + lost, old[1] + wanted)
        return out


@lru_cache(maxsize=4096)
def _tag_code(tag: str | None) -> int:
    """The tag code the broker stores for a message: Java hash of the tag, 0 when untagged."""
    return java_hash(tag) if tag else 0


class _Client:
    """Runtime state of one member (mutable, private to a run)."""

    def __init__(self, index: int, spec: MemberSpec) -> None:
        self.index = index
        self.spec = spec
        self.kind = spec.kind
        self.running = False
        self.registered = False
        self.epoch = 0
        self.life = -1
        self.cid = ""
        self.offset_dir = ""
        self.subs: dict[str, ParsedExpression] = {}
        self.sv: dict[str, int] = {}
        self.retry_sv = 0
        self.alloc: dict[str, tuple[int, ...]] = {}
        self.pull: dict[tuple[str, int], list[int]] = {}  # [next try, scheduled 0/1]
        self.rb_gen = 0
        self.boff: dict[tuple[str, int], int] = {}
        self.own_pass: dict[str, tuple[bool, ...]] = {}
        self.accept: dict[str, tuple[bool, ...]] = {}
        self.received = 0


class _Run:
    def __init__(self, spec: GroupSpec, rng: random.Random, producer_rng: random.Random) -> None:
        self.spec = spec
        self.rng = rng
        self.jitter = max(1, spec.jitter_ms)
        self.plans: dict[str, TopicPlan] = {
            topic: plan_topic(topic, count, spec.batches, producer_rng) for topic, count in spec.queues
        }
        self.codes: dict[str, tuple[int, ...]] = {
            t: tuple(_tag_code(tag) for tag in p.tags) for t, p in self.plans.items()
        }
        self.clients = [_Client(i, m) for i, m in enumerate(spec.members)]
        self.broker = GroupInfo()
        self.heap: list[tuple[int, int, int, int, object]] = []
        self.seq = 0
        self.clock = 0
        self.coff: dict[str, list[int]] = {t: [0] * len(p.times) for t, p in self.plans.items()}
        self.owner: dict[str, list[_Client | None]] = {t: [None] * len(p.times) for t, p in self.plans.items()}
        self.pops: dict[str, list[_Client]] = {t: [] for t in self.plans}
        self.broadcasters: list[_Client] = []
        self.wanted_cache: dict[str, tuple[bool, ...]] = {}
        self.table_pass: dict[tuple[int, str, BrokerFilter], tuple[bool, ...]] = {}
        self.disk: dict[str, dict[tuple[str, int], int]] = {}
        self.hw: dict[int, dict[tuple[str, int], int]] = {}
        self.tally: dict[str, dict[str, list[list[int]]]] = {}
        self.events = {
            "subscription_not_exist": 0,
            "subscription_not_latest": 0,
            "offset_moved": 0,
            "subscription_changed": 0,
        }
        self.winners = [0] * len(self.clients)
        self.redelivered = 0
        self.trace: list[tuple[int, str, str]] = []
        cluster_topics = {
            t
            for m in spec.members
            if not m.broadcasts
            for life in m.lives
            for t, _ in life.subscriptions
            if t in self.plans
        }
        if cluster_topics:
            self.tally[GROUP] = {t: self._zero(t) for t in sorted(cluster_topics)}

    # ---- scheduling -------------------------------------------------------------------------
    def _at(self, time: int, kind: int, member: int, payload: object = None) -> None:
        self.seq += 1
        heapq.heappush(self.heap, (time, self.seq, kind, member, payload))

    def _lat(self) -> int:
        return self.rng.randint(1, self.jitter)

    def _zero(self, topic: str) -> list[list[int]]:
        return [[0] * len(self.plans[topic].tags) for _ in CATEGORIES]

    def run(self) -> RunResult:
        for i, member in enumerate(self.spec.members):
            for n, life in enumerate(member.lives):
                self._at(life.start, _START, i, n)
                if life.stop is not None:
                    self._at(life.stop, _STOP, i, n)
        handlers = (
            self._start,
            self._stop,
            self._hb_timer,
            self._hb_land,
            self._rebalance,
            self._rb_timer,
            self._persist,
            self._unregister,
        )
        end = self.spec.duration
        while self.heap and self.heap[0][0] <= end:
            time, _, kind, index, payload = heapq.heappop(self.heap)
            handlers[kind](time, self.clients[index], payload)
        self._settle(end + 1)
        return self._result()

    # ---- lifecycle ----------------------------------------------------------------------------
    def _start(self, t: int, c: _Client, life_index: object) -> None:
        assert isinstance(life_index, int)
        self._settle(t)
        spec, rng = c.spec, self.rng
        life = spec.lives[life_index]
        c.life, c.running, c.epoch = life_index, True, c.epoch + 1
        c.subs = {topic: parsed for topic, parsed in life.subscriptions}
        c.sv = {topic: t + spec.clock_skew_ms for topic in c.subs}
        c.retry_sv = t + spec.clock_skew_ms  # copySubscription() adds %RETRY%<group> (CLUSTERING)
        ip = (
            spec.ip
            if spec.stable_ip or life_index == 0
            else f"10.{rng.randint(1, 254)}.{rng.randint(1, 254)}.{rng.randint(1, 254)}"
        )
        pid = rng.randint(2, 65535)
        instance = spec.instance_name
        if c.kind is Kind.CPP:
            c.cid = f"{ip}@{pid}#{instance or 'DEFAULT'}"
            c.offset_dir = f"{ip}@{instance or 'DEFAULT'}"
        elif c.kind is Kind.POP:
            c.cid = f"{ip}@{pid}#{rng.getrandbits(48):012x}"
            c.offset_dir = c.cid
        else:
            if not instance:
                instance = "DEFAULT" if spec.broadcasts else f"{pid}#{rng.getrandbits(40)}"
            c.cid = f"{ip}@{instance}"
            c.offset_dir = c.cid
        for topic, parsed in c.subs.items():
            tags = self.plans[topic].tags if topic in self.plans else ()
            codes = self.codes.get(topic, ())
            client_ok = tuple((not parsed.tags) or (tag in parsed.tags) for tag in tags)
            c.accept[topic] = tuple(parsed.matches_tag(tag) for tag in tags)
            own = request_filter(parsed)
            c.own_pass[topic] = tuple(
                own.passes(code) and (ok or c.kind is not Kind.CPP) for code, ok in zip(codes, client_ok)
            )
        if c.kind is Kind.POP:
            for topic in c.subs:
                if topic in self.pops:
                    self.pops[topic].append(c)
        elif spec.broadcasts:
            self.broadcasters.append(c)
            self.hw.setdefault(c.index, {})
            for topic in c.subs:
                if topic in self.plans:
                    self.tally.setdefault(spec.name, {}).setdefault(topic, self._zero(topic))
        self.wanted_cache.clear()
        # start(): a synchronous heartbeat, then rebalanceImmediately()
        landed = t + self._lat()
        self._send_heartbeat(c, landed)
        self._at(landed + self._rebalance_delay(c), _REBALANCE, c.index, c.epoch)
        self._at(t + FIRST_HEARTBEAT, _HB_TIMER, c.index, c.epoch)
        if spec.broadcasts:
            self._at(t + FIRST_PERSIST, _PERSIST, c.index, c.epoch)

    def _stop(self, t: int, c: _Client, life_index: object) -> None:
        if not c.running or c.life != life_index:
            return
        self._settle(t)
        if c.spec.broadcasts:
            self._write_offsets(c)  # persistAll at shutdown
            if not c.spec.persistent_offsets:
                self.disk.pop(c.offset_dir, None)  # the container's filesystem goes with it
            self.broadcasters.remove(c)
        for members in self.pops.values():
            if c in members:
                members.remove(c)
        c.running, c.epoch = False, c.epoch + 1
        c.alloc, c.pull, c.boff = {}, {}, {}
        self.wanted_cache.clear()
        self._refresh_owners()
        self._at(t + self._lat(), _UNREGISTER, c.index, c.cid)

    def _unregister(self, t: int, c: _Client, cid: object) -> None:
        if self.broker.channels.get(c.index) != cid:
            return
        self._settle(t)
        c.registered = False
        if self.broker.unregister(c.index):
            self._notify(t)

    # ---- heartbeats ---------------------------------------------------------------------------
    def _heartbeat_body(self, c: _Client) -> dict[str, Entry]:
        body = {
            topic: Entry(c.sv[topic], c.index, heartbeat_filter(parsed, c.kind)) for topic, parsed in c.subs.items()
        }
        if not c.spec.broadcasts and c.kind is not Kind.POP:
            body["%RETRY%" + self.spec.group] = Entry(c.retry_sv, c.index, BrokerFilter(True, False, frozenset()))
        return body

    def _send_heartbeat(self, c: _Client, landed: int) -> None:
        self._at(landed, _HB_LAND, c.index, (c.epoch, c.cid, self._heartbeat_body(c)))

    def _hb_timer(self, t: int, c: _Client, epoch: object) -> None:
        if epoch != c.epoch:
            return
        self._send_heartbeat(c, t + self._lat())
        self._at(t + HEARTBEAT_INTERVAL, _HB_TIMER, c.index, c.epoch)

    def _hb_land(self, t: int, c: _Client, payload: object) -> None:
        epoch, cid, body = cast("tuple[int, str, dict[str, Entry]]", payload)
        if epoch != c.epoch or not c.running:
            return
        if self.broker.would_change(c.index, cid, body):
            self._settle(t)
        before = self.broker.table
        changed, notify = self.broker.heartbeat(c.index, cid, body)
        c.registered = True
        self.trace.append((t, "heartbeat", c.spec.name))
        if changed:
            self.events["subscription_changed"] += sum(
                1 for topic in set(before) | set(self.broker.table) if before.get(topic) != self.broker.table.get(topic)
            )
        if notify:
            self._notify(t)

    def _notify(self, t: int) -> None:
        """NOTIFY_CONSUMER_IDS_CHANGED to every channel: each client rebalances at once."""
        for other in self.clients:
            if other.running and other.registered:
                self._at(t + self._rebalance_delay(other), _REBALANCE, other.index, other.epoch)

    def _rebalance_delay(self, c: _Client) -> int:
        fixed = c.spec.rebalance_delay_ms
        return fixed if fixed is not None else self.rng.randint(1, self.jitter)

    # ---- rebalance ----------------------------------------------------------------------------
    def _rb_timer(self, t: int, c: _Client, payload: object) -> None:
        epoch, gen = cast("tuple[int, int]", payload)
        if epoch == c.epoch and gen == c.rb_gen:
            self._rebalance(t, c, epoch)

    def _rebalance(self, t: int, c: _Client, epoch: object) -> None:
        if epoch != c.epoch or not c.running:
            return
        c.rb_gen += 1
        interval = CPP_REBALANCE_INTERVAL if c.kind is Kind.CPP else REBALANCE_INTERVAL
        self._at(t + interval, _RB_TIMER, c.index, (c.epoch, c.rb_gen))
        if c.kind is Kind.POP:
            return
        cids = self.broker.client_ids()
        if not cids:
            return  # "no consumer for this group"
        strategy = STRATEGIES[c.spec.strategy]
        changed: list[str] = []
        new_alloc: dict[str, tuple[int, ...]] = {}
        for topic in c.subs:
            plan = self.plans.get(topic)
            if plan is None:
                continue
            count = len(plan.times)
            queues = tuple(range(count)) if c.spec.broadcasts else strategy(c.cid, count, cids)
            new_alloc[topic] = queues
            if c.alloc.get(topic) != queues:
                changed.append(topic)
        if not changed:
            return
        self._settle(t)
        for topic in changed:
            old = set(c.alloc.get(topic, ()))
            new = new_alloc[topic]
            for q in old - set(new):
                c.pull.pop((topic, q), None)
                c.boff.pop((topic, q), None)
            for q in new:
                if q not in old:
                    c.pull[(topic, q)] = [t + self.rng.randint(0, self.jitter), 1]
                    if c.spec.broadcasts:
                        self._open_local_offset(t, c, topic, q)
            c.alloc[topic] = new
            if c.kind is Kind.TABLE:
                c.sv[topic] = t + c.spec.clock_skew_ms  # messageQueueChanged: new subVersion
        self._refresh_owners()
        self.trace.append((t, "rebalance_changed", c.spec.name))
        if c.kind is Kind.TABLE:
            self._send_heartbeat(c, t + self._lat())

    def _refresh_owners(self) -> None:
        for topic, owners in self.owner.items():
            for q in range(len(owners)):
                best: _Client | None = None
                for c in self.clients:
                    if (
                        c.running
                        and not c.spec.broadcasts
                        and c.kind is not Kind.POP
                        and q in c.alloc.get(topic, ())
                        and (best is None or c.cid < best.cid)
                    ):
                        best = c
                owners[q] = best

    # ---- broadcasting offsets -----------------------------------------------------------------
    def _open_local_offset(self, t: int, c: _Client, topic: str, q: int) -> None:
        """Read the local store; a miss starts at the max offset (CONSUME_FROM_LAST_OFFSET, §5.3)."""
        key = (topic, q)
        times = self.plans[topic].times[q]
        stored = self.disk.get(c.offset_dir, {}).get(key)
        off = stored if stored is not None else bisect_left(times, t)
        hw = self.hw[c.index].get(key)
        acc = self.tally[c.spec.name][topic]
        seq = self.plans[topic].seqs[q]
        if hw is None:
            self._count(acc[PREDATES], seq[:off], topic)
            hw = off
        elif off > hw:
            self._count(acc[SKIPPED], seq[hw:off], topic)
            self.events["offset_moved"] += 1
            hw = off
        c.boff[key] = off
        self.hw[c.index][key] = hw

    def _write_offsets(self, c: _Client) -> None:
        self.disk.setdefault(c.offset_dir, {}).update(c.boff)

    def _persist(self, t: int, c: _Client, epoch: object) -> None:
        if epoch != c.epoch:
            return
        self._settle(t)
        self._write_offsets(c)
        self._at(t + PERSIST_INTERVAL, _PERSIST, c.index, c.epoch)

    # ---- pulling ------------------------------------------------------------------------------
    def _settle(self, t: int) -> None:
        """Let every puller take what was sent before `t`, under the state of [clock, t)."""
        a = self.clock
        if t <= a:
            return
        self.clock = t
        for topic, plan in self.plans.items():
            coff, owners, pops = self.coff[topic], self.owner[topic], self.pops[topic]
            for q, times in enumerate(plan.times):
                hi = bisect_left(times, t)
                owner = owners[q]
                if owner is not None or pops:
                    off = coff[q]
                    may = owner is not None and self._may_pull(owner, topic, q, a, t, times[off] if off < hi else None)
                    if off < hi:
                        takers = ([owner] if may and owner is not None else []) + pops
                        if takers:
                            self._take(takers, topic, q, off, hi, GROUP)
                            coff[q] = hi
                for c in self.broadcasters:
                    key = (topic, q)
                    off_b = c.boff.get(key)
                    if off_b is None:
                        continue
                    if not self._may_pull(c, topic, q, a, t, times[off_b] if off_b < hi else None) or off_b >= hi:
                        continue
                    hw = self.hw[c.index][key]
                    if off_b < hw:
                        self.redelivered += min(hi, hw) - off_b
                        off_b = min(hi, hw)
                    if off_b < hi:
                        self._consume(c, topic, plan.seqs[q][off_b:hi], c.spec.name)
                    c.boff[key] = hi
                    self.hw[c.index][key] = max(hw, hi)

    def _may_pull(self, c: _Client, topic: str, q: int, a: int, b: int, pending: int | None) -> bool:
        """Can `c` pull (topic, q) during [a, b)? Counts 24/25 responses and schedules retries."""
        state = c.pull.get((topic, q))
        if state is None:
            return False
        if state[1]:
            if state[0] >= b:
                return False
            at = max(state[0], a)
        else:  # an idle long poll is re-checked when a message arrives
            if pending is None or pending >= b:
                return True
            at = max(a, pending)
        code = OK
        if c.kind is Kind.TABLE:
            code, _ = self.broker.check(topic, c.sv[topic])
        if code == OK:
            state[1] = 0
            return True
        delay = max(1, c.spec.retry_delay_ms)
        failures = -(-(b - at) // delay)
        name = "subscription_not_exist" if code == SUBSCRIPTION_NOT_EXIST else "subscription_not_latest"
        assert code in (SUBSCRIPTION_NOT_EXIST, SUBSCRIPTION_NOT_LATEST)
        self.events[name] += failures
        self.trace.extend((at + i * delay, str(code), c.spec.name) for i in range(failures))
        state[0], state[1] = at + failures * delay, 1
        return False

    def _take(self, takers: list[_Client], topic: str, q: int, lo: int, hi: int, entity: str) -> None:
        part = self.plans[topic].seqs[q][lo:hi]
        if len(takers) == 1:
            self._consume(takers[0], topic, part, entity)
            return
        picks = self.rng.choices(range(len(takers)), k=hi - lo)  # pop: whoever asks first takes it
        for i, taker in enumerate(takers):
            mine = list(compress(part, [p == i for p in picks]))
            if mine:
                self._consume(taker, topic, mine, entity)

    def _consume(self, c: _Client, topic: str, part: list[int], entity: str) -> None:
        """Deliver, or filter away as lost or unwanted, the messages `part` (tag indices) pulled by `c`."""
        if c.kind is Kind.TABLE:
            entry = self.broker.table[topic]
            self.winners[entry.source] += len(part)
            key = (c.index, topic, entry.filter)
            passes = self.table_pass.get(key)
            if passes is None:
                own = c.subs[topic]
                tags = self.plans[topic].tags
                passes = tuple(
                    entry.filter.passes(code) and ((not own.tags) or tag in own.tags)
                    for code, tag in zip(self.codes[topic], tags)
                )
                self.table_pass[key] = passes
        else:
            passes = c.own_pass[topic]
        wanted = c.accept[topic] if entity != GROUP else self._group_wants(topic)
        acc = self.tally[entity][topic]
        for k, ok in enumerate(passes):
            n = part.count(k) if len(passes) > 1 else len(part)
            if not n:
                continue
            if ok:
                acc[DELIVERED][k] += n
                c.received += n
            elif wanted[k]:
                acc[LOST][k] += n
            else:
                acc[UNWANTED][k] += n

    def _group_wants(self, topic: str) -> tuple[bool, ...]:
        """A tag is wanted by the clustering group if any running clustering member accepts it."""
        wanted = self.wanted_cache.get(topic)
        if wanted is None:
            n = len(self.plans[topic].tags)
            flags = [False] * n
            for c in self.clients:
                if c.running and not c.spec.broadcasts and topic in c.accept:
                    flags = [f or w for f, w in zip(flags, c.accept[topic])]
            wanted = tuple(flags)
            self.wanted_cache[topic] = wanted
        return wanted

    def _count(self, bucket: list[int], part: list[int], topic: str) -> None:
        for k in range(len(self.plans[topic].tags)):
            bucket[k] += part.count(k)

    # ---- result -------------------------------------------------------------------------------
    def _result(self) -> RunResult:
        for entity, per_topic in self.tally.items():
            for topic, acc in per_topic.items():
                plan = self.plans[topic]
                for q, seq in enumerate(plan.seqs):
                    if entity == GROUP:
                        start: int | None = self.coff[topic][q]
                    else:
                        member = next(c for c in self.clients if c.spec.name == entity)
                        start = self.hw.get(member.index, {}).get((topic, q))
                        if start is None:  # never read this queue: everything predates it
                            self._count(acc[PREDATES], seq, topic)
                            continue
                    self._count(acc[STUCK], seq[start:], topic)
        return RunResult(
            tags={t: p.tags for t, p in self.plans.items()},
            sent={t: tuple(p.sent_by_tag()) for t, p in self.plans.items()},
            tally={e: {t: tuple(tuple(row) for row in acc) for t, acc in per.items()} for e, per in self.tally.items()},
            received={c.spec.name: c.received for c in self.clients},
            events=dict(self.events),
            winners={c.spec.name: self.winners[c.index] for c in self.clients},
            redelivered=self.redelivered,
            trace=tuple(self.trace),
        )


def simulate_once(spec: GroupSpec, seed: int, plan_seed: int | None = None) -> RunResult:
    """Run `spec` once; the same seeds give the same result. `plan_seed` (default `seed`) draws the
    producers' start queues, so groups simulated side by side can share one message placement."""
    producer_rng = random.Random(seed if plan_seed is None else plan_seed)
    return _Run(spec, random.Random(seed ^ 0x5EED), producer_rng).run()
