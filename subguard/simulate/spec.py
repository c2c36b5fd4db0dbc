"""The compiled, validated input of one simulation: plain frozen records the engine reads.

Scenario files (`scenario.py`) and scanned consumers (`declared.py`) both compile to a `GroupSpec`.
Times are integer milliseconds from the start of the simulation.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from subguard.core.model import CPP_FAMILIES, OWN_EXPRESSION_FAMILIES, POP_FAMILIES, ClientFamily, ExpressionType
from subguard.rocketmq.expression import ParsedExpression, cpp_atoi

HEARTBEAT_INTERVAL = 30_000
FIRST_HEARTBEAT = 1_000
REBALANCE_INTERVAL = 20_000
CPP_REBALANCE_INTERVAL = 10_000
PERSIST_INTERVAL = 5_000
FIRST_PERSIST = 10_000
RETRY_DELAY = 1_000  # pullTimeDelayMillsWhenException >= 4.6.0; 3000 before


class Kind(str, Enum):
    """How a client family filters and rebalances (§3.2, §4.4)."""

    TABLE = "table"  # Java push: broker filters with the group table G[T], client re-filters by string
    OWN = "own"  # Java pull / lite pull: own expression on every pull, no subVersion bump
    CPP = "cpp"  # C++ core (Python 4.x): own expression, atoi codes in heartbeats, client re-filter
    POP = "pop"  # 5.x gRPC: own expression per request, no allocation, group-shared progress


def kind_of(family: ClientFamily) -> Kind:
    if family in POP_FAMILIES:
        return Kind.POP
    if family in CPP_FAMILIES:
        return Kind.CPP
    if family in OWN_EXPRESSION_FAMILIES:
        return Kind.OWN
    return Kind.TABLE


@dataclass(frozen=True)
class BrokerFilter:
    """What a heartbeat stores in G[T]: enough to run the broker's tag-code match (§3.3)."""

    match_all: bool
    sql: bool
    codes: frozenset[int]

    def passes(self, code: int) -> bool:
        return self.match_all or self.sql or code in self.codes


def heartbeat_filter(parsed: ParsedExpression, kind: Kind) -> BrokerFilter:
    """The entry a member's heartbeat carries: Java hash codes, or atoi codes from the C++ core."""
    codes = frozenset(cpp_atoi(t) for t in parsed.tags) if kind is Kind.CPP else frozenset(parsed.codes)
    return BrokerFilter(parsed.match_all, parsed.expression_type is ExpressionType.SQL92, codes)


def request_filter(parsed: ParsedExpression) -> BrokerFilter:
    """The filter the broker builds from an expression sent with the request (Java hash codes)."""
    return BrokerFilter(parsed.match_all, parsed.expression_type is ExpressionType.SQL92, frozenset(parsed.codes))


@dataclass(frozen=True)
class Life:
    """One incarnation of a member: started at `start` with `subscriptions`, stopped at `stop` (None: runs on)."""

    start: int
    stop: int | None
    subscriptions: tuple[tuple[str, ParsedExpression], ...]


@dataclass(frozen=True)
class MemberSpec:
    name: str
    family: ClientFamily
    broadcasting: bool
    lives: tuple[Life, ...]
    ip: str = "10.0.0.1"
    stable_ip: bool = True  # False: the pod IP changes on every restart
    instance_name: str = ""  # "" = the client's default (DEFAULT, pid-based for clustering)
    persistent_offsets: bool = False  # local offset store survives a restart
    rebalance_delay_ms: int | None = None  # None: random within the jitter
    clock_skew_ms: int = 0
    retry_delay_ms: int = RETRY_DELAY
    strategy: str = "AVG"
    label: str = ""  # where it was declared (file:line), for messages

    @property
    def kind(self) -> Kind:
        return kind_of(self.family)

    @property
    def broadcasts(self) -> bool:
        """Consumes every queue with local offsets; the proxy forces pop clients to CLUSTERING."""
        return self.broadcasting and self.kind is not Kind.POP


@dataclass(frozen=True)
class Batch:
    """`count` messages of one tag (None: untagged), the k-th sent at `at + k * interval_ms`."""

    topic: str
    tag: str | None
    count: int
    at: int
    interval_ms: float = 0.0
    producer: str = "producer"


@dataclass(frozen=True)
class GroupSpec:
    group: str
    queues: tuple[tuple[str, int], ...]  # topic -> queue count
    members: tuple[MemberSpec, ...]
    batches: tuple[Batch, ...]
    duration: int
    jitter_ms: int = 10

    def queue_count(self, topic: str) -> int:
        for name, count in self.queues:
            if name == topic:
                return count
        return 0
