"""A group's prediction: the one function every command calls (`check`, `simulate --inventory`, `audit`).

`predict` is the only way a declared group's simulated impact is made. It fixes everything a figure
depends on besides the members themselves:

- the members: those that register subscriptions with the broker (`Consumer.registers`), in the
  group map's order (`core.inventory.sort_consumers`: repo, path, line, column, id), whatever order
  a scan, a shuffle or a directory listing delivered them in. Members start one after another in
  that order (`declared.STAGGER_MS` apart), so the order is part of the model: the member that
  starts last holds the broker's subscription entry (rocketmq-semantics.md §3.1, §4.4);
- the seed (`SEED`): constant, never derived from paths, names or time;
- the number of runs (`DEFAULT_RUNS` unless a command's `--runs` says otherwise) and queues per topic.

Every text it produces says how many runs its figures come from. Pure: no I/O, deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from subguard.core.inventory import sort_consumers
from subguard.core.model import Consumer
from subguard.simulate.declared import declared_group
from subguard.simulate.runs import simulate_runs

DEFAULT_RUNS = 20  # simulated runs per group unless `--runs` says otherwise (check, simulate --inventory, audit)
SEED = 0  # the seed of every prediction: the same members give the same figures wherever the tree lives
QUEUES = 4  # queues per topic


@dataclass(frozen=True)
class GroupImpact:
    """Simulated loss of one group: per tag label, the share of wanted messages lost (filtered away
    or skipped) and the share left in queues nobody pulls; members that received nothing.
    `runs` is how many simulated runs the figures average (0: nothing simulable)."""

    group: str
    runs: int
    loss: tuple[tuple[str, float], ...] = ()
    stuck: tuple[tuple[str, float], ...] = ()
    silent: tuple[tuple[str, int], ...] = ()  # member -> runs in which it received nothing

    @property
    def has_loss(self) -> bool:
        return any(rate > 0 for _, rate in self.loss) or any(rate > 0 for _, rate in self.stuck)


def predict(
    consumers: Sequence[Consumer], runs: int = DEFAULT_RUNS, *, queues: int = QUEUES, seed: int = SEED
) -> GroupImpact:
    """THE prediction of one declared group: its members in the group map's order, simulated `runs`
    times from `seed` (default mix, `queues` queues per topic, staggered starts). A consumer that
    registers no subscription with the broker takes no part in the group's filtering: left out."""
    members = sort_consumers([c for c in consumers if c.registers])
    spec = declared_group(members, queues=queues)
    if spec is None:
        return GroupImpact(group=members[0].group.value or "" if members else "", runs=0)
    report = simulate_runs((spec,), runs, seed)
    loss, stuck = [], []
    for label, stats in report.tags.items():
        wanted = stats.delivered_mean + stats.lost_mean + stats.stuck_mean
        if stats.loss_rate > 0:
            loss.append((label, stats.loss_rate))
        if stats.stuck_mean > 0 and wanted:
            stuck.append((label, stats.stuck_mean / wanted))
    wanting = {
        m.name
        for m in spec.members
        if any(
            p.match_all or p.tags or p.expression_type.value == "SQL92"
            for life in m.lives
            for _, p in life.subscriptions
        )
    }
    silent = tuple(
        (name, dict(spread.histogram)[0])
        for name, spread in report.consumers.items()
        if name in wanting and dict(spread.histogram).get(0)
    )
    return GroupImpact(spec.group, runs, tuple(loss), tuple(stuck), silent)


def _percent(rate: float) -> str:
    return f"{rate * 100:.0f}%" if rate >= 0.01 else "<1%"


def runs_phrase(runs: int) -> str:
    return f"{runs} run" if runs == 1 else f"{runs} runs"


def describe_impact(impact: GroupImpact) -> str:
    """One line, e.g. "simulated (20 runs): tag1 100% lost, tag2 50% lost (consumer b.py:7 receives
    nothing)"; "" when no loss is predicted."""
    if not impact.has_loss:
        return ""
    parts = [f"{label} {_percent(rate)} lost" for label, rate in impact.loss]
    parts += [f"{label} {_percent(rate)} never pulled" for label, rate in impact.stuck]
    text = f"simulated ({runs_phrase(impact.runs)}): " + ", ".join(parts)
    if impact.silent:
        text += (
            " ("
            + ", ".join(
                f"consumer {name} receives nothing" + ("" if n == impact.runs else f" in {n} of {impact.runs} runs")
                for name, n in impact.silent
            )
            + ")"
        )
    return text


def describe_group(consumers: Sequence[Consumer], runs: int = DEFAULT_RUNS) -> str:
    """The one-line prediction of a group (`predict`, then `describe_impact`); "" when no loss."""
    return describe_impact(predict(consumers, runs))
