"""Per-group simulated impact: what `check` prints next to a finding and what the audit stores.

Pure functions of the declared consumers: no I/O, deterministic for a seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from subguard.core.model import Consumer
from subguard.simulate.declared import declared_group
from subguard.simulate.runs import simulate_runs

DEFAULT_RUNS = 8


@dataclass(frozen=True)
class GroupImpact:
    """Simulated loss of one group: per tag label, the share of wanted messages lost (filtered away
    or skipped) and the share left in queues nobody pulls; members that received nothing."""

    group: str
    runs: int
    loss: tuple[tuple[str, float], ...] = ()
    stuck: tuple[tuple[str, float], ...] = ()
    silent: tuple[tuple[str, int], ...] = ()  # member -> runs in which it received nothing

    @property
    def has_loss(self) -> bool:
        return any(rate > 0 for _, rate in self.loss) or any(rate > 0 for _, rate in self.stuck)


def simulate_group(consumers: Sequence[Consumer], runs: int = DEFAULT_RUNS, seed: int = 0, queues: int = 4) -> GroupImpact:
    """Simulate one declared group `runs` times (default mix, `queues` queues, staggered starts)."""
    spec = declared_group(consumers, queues=queues)
    if spec is None:
        return GroupImpact(group=consumers[0].group.value or "" if consumers else "", runs=0)
    report = simulate_runs((spec,), runs, seed)
    loss, stuck = [], []
    for label, stats in report.tags.items():
        wanted = stats.delivered_mean + stats.lost_mean + stats.stuck_mean
        if stats.loss_rate > 0:
            loss.append((label, stats.loss_rate))
        if stats.stuck_mean > 0 and wanted:
            stuck.append((label, stats.stuck_mean / wanted))
    wanting = {m.name for m in spec.members
               if any(p.match_all or p.tags or p.expression_type.value == "SQL92" for life in m.lives
                      for _, p in life.subscriptions)}
    silent = tuple((name, dict(spread.histogram)[0]) for name, spread in report.consumers.items()
                   if name in wanting and dict(spread.histogram).get(0))
    return GroupImpact(spec.group, runs, tuple(loss), tuple(stuck), silent)


def _percent(rate: float) -> str:
    return f"{rate * 100:.0f}%" if rate >= 0.01 else "<1%"


def describe_impact(impact: GroupImpact) -> str:
    """One line, e.g. "simulated: tag1 100% lost, tag2 50% lost (consumer b.py:7 receives nothing)"."""
    if not impact.has_loss:
        return ""
    parts = [f"{label} {_percent(rate)} lost" for label, rate in impact.loss]
    parts += [f"{label} {_percent(rate)} never pulled" for label, rate in impact.stuck]
    text = "simulated: " + ", ".join(parts)
    if impact.silent:
        text += " (" + ", ".join(
            f"consumer {name} receives nothing" + ("" if n == impact.runs else f" in {n} of {impact.runs} runs")
            for name, n in impact.silent) + ")"
    return text


def describe_group(consumers: Sequence[Consumer], runs: int = DEFAULT_RUNS, seed: int = 0) -> str:
    """The one-line simulated impact of a group; "" when no loss is predicted."""
    return describe_impact(simulate_group(consumers, runs, seed))
