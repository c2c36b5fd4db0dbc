"""Cadence of repeated events: is there one dominant interval (a timer), and is it the rebalance loop?"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

REBALANCE_INTERVAL = 20  # RebalanceService waitInterval default, seconds (§4.3)
TOLERANCE = 2  # seconds either side of the dominant interval
REGULAR_SHARE = 0.6  # share of intervals near the dominant one for a cadence to be regular
MIN_INTERVALS = 2


@dataclass(frozen=True)
class Cadence:
    intervals: int  # how many gaps were measured
    dominant: int  # the most common gap, whole seconds (0 when none)
    share: float  # share of gaps within TOLERANCE of `dominant`

    @property
    def regular(self) -> bool:
        return self.intervals >= MIN_INTERVALS and self.dominant > 0 and self.share >= REGULAR_SHARE

    @property
    def rebalance_loop(self) -> bool:
        """A regular cadence at the 20 s rebalance interval (or a multiple of it)."""
        return self.regular and any(abs(self.dominant - k * REBALANCE_INTERVAL) <= TOLERANCE for k in (1, 2, 3))

    def describe(self) -> str:
        if not self.intervals:
            return "no timed interval"
        if not self.regular:
            return f"irregular ({self.intervals} intervals)"
        return f"every ~{self.dominant} s ({self.share:.0%} of {self.intervals} intervals)"


def cadence(gaps: Mapping[int, int]) -> Cadence:
    """Cadence from a histogram of gaps in whole seconds (gap -> count)."""
    total = sum(gaps.values())
    if not total:
        return Cadence(0, 0, 0.0)
    # the gap with the most neighbours within the tolerance wins (ties: the shorter gap)
    best = max(sorted(gaps), key=lambda g: sum(n for h, n in gaps.items() if abs(h - g) <= TOLERANCE))
    near = sum(n for h, n in gaps.items() if abs(h - best) <= TOLERANCE)
    return Cadence(total, best, near / total)


def histogram(gaps: list[float]) -> Counter[int]:
    return Counter(round(g) for g in gaps)
