"""Monte Carlo: repeat a scenario with different producer start queues and timing jitter, aggregate."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from subguard.simulate.engine import DELIVERED, LOST, SKIPPED, STUCK, UNWANTED, RunResult, simulate_once
from subguard.simulate.spec import GroupSpec


def run_seed(seed: int, run: int, group_index: int) -> int:
    """The engine seed of one run of one group: deterministic, distinct per run and group."""
    return (seed * 1_000_003 + run) * 1_009 + group_index


@dataclass(frozen=True)
class Spread:
    mean: float
    min: int
    max: int
    histogram: tuple[tuple[int, int], ...]  # value -> runs

    @classmethod
    def of(cls, values: Sequence[int]) -> Spread:
        hist: dict[int, int] = {}
        for v in values:
            hist[v] = hist.get(v, 0) + 1
        return cls(sum(values) / len(values), min(values), max(values), tuple(sorted(hist.items())))

    def to_json(self) -> dict[str, Any]:
        return {
            "mean": round(self.mean, 4),
            "min": self.min,
            "max": self.max,
            "histogram": {str(k): v for k, v in self.histogram},
        }


@dataclass(frozen=True)
class TagStats:
    sent: float
    delivered_mean: float
    lost_mean: float  # filtered away although wanted, plus skipped by offset jumps
    skipped_mean: float
    stuck_mean: float  # still in an unowned or unpulled queue at the end
    unwanted_mean: float  # filtered away and wanted by no member
    loss_rate: float  # lost / wanted

    def to_json(self) -> dict[str, Any]:
        return {k: round(v, 4) for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class Report:
    runs: int
    consumers: dict[str, Spread]
    tags: dict[str, TagStats]
    events: dict[str, Spread]
    winners: dict[str, dict[str, float]]
    results: tuple[RunResult, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "consumers": {name: {"received": s.to_json()} for name, s in self.consumers.items()},
            "tags": {tag: t.to_json() for tag, t in self.tags.items()},
            "events": {
                name: {"mean": round(s.mean, 4), "max": s.max, "runs_with": sum(n for v, n in s.histogram if v)}
                for name, s in self.events.items()
            },
            "winners": self.winners,
        }


def simulate_runs(groups: Sequence[GroupSpec], runs: int, seed: int) -> Report:
    """Run every group `runs` times and aggregate per consumer, tag, event and winner."""
    if runs < 1:
        raise ValueError("runs must be >= 1")
    results = tuple(
        simulate_once(g, run_seed(seed, r, gi), plan_seed=run_seed(seed, r, 0))
        for r in range(runs)
        for gi, g in enumerate(groups)
    )
    per_run = len(groups)
    received: dict[str, list[int]] = {}
    events: dict[str, list[int]] = {}
    win_runs: dict[str, int] = {}
    win_msgs: dict[str, int] = {}
    for r in range(runs):
        batch = results[r * per_run : (r + 1) * per_run]
        totals: dict[str, int] = {}
        for res in batch:
            for name, n in res.received.items():
                received.setdefault(name, []).append(n)
            for name, n in res.events.items():
                totals[name] = totals.get(name, 0) + n
            held = {name: n for name, n in res.winners.items() if n}
            for name, n in held.items():
                win_msgs[name] = win_msgs.get(name, 0) + n
            if held:
                top = max(held.values())
                for name, n in held.items():
                    win_runs[name] = win_runs.get(name, 0) + (1 if n == top else 0)
        for name, n in totals.items():
            events.setdefault(name, []).append(n)
    all_msgs = sum(win_msgs.values())
    winners = {
        name: {"runs": win_runs.get(name, 0), "share": round(n / all_msgs, 4)} for name, n in sorted(win_msgs.items())
    }
    return Report(
        runs=runs,
        consumers={name: Spread.of(v) for name, v in received.items()},
        tags=_tag_stats(results, runs),
        events={name: Spread.of(v) for name, v in events.items()},
        winners=winners,
        results=results,
    )


def tag_label(topic: str, tag: str | None, topics_of_tag: dict[str | None, set[str]]) -> str:
    name = tag if tag is not None else "(untagged)"
    return name if len(topics_of_tag.get(tag, ())) <= 1 else f"{topic}:{name}"


def _tag_stats(results: Sequence[RunResult], runs: int) -> dict[str, TagStats]:
    topics_of_tag: dict[str | None, set[str]] = {}
    for res in results:
        for topic, tags in res.tags.items():
            for tag in tags:
                topics_of_tag.setdefault(tag, set()).add(topic)
    sums: dict[str, list[float]] = {}  # label -> sent, delivered, lost, skipped, stuck, unwanted
    per_run = len(results) // runs
    for r in range(runs):
        counted: set[str] = set()  # every group of a run sees the same messages: count them once
        for res in results[r * per_run : (r + 1) * per_run]:
            for topic, tags in res.tags.items():
                for k, tag in enumerate(tags):
                    row = sums.setdefault(tag_label(topic, tag, topics_of_tag), [0.0] * 6)
                    if topic not in counted:
                        row[0] += res.sent[topic][k]
                    for per_topic in res.tally.values():
                        cats = per_topic.get(topic)
                        if cats is not None:
                            row[1] += cats[DELIVERED][k]
                            row[2] += cats[LOST][k] + cats[SKIPPED][k]
                            row[3] += cats[SKIPPED][k]
                            row[4] += cats[STUCK][k]
                            row[5] += cats[UNWANTED][k]
                counted.add(topic)
    out: dict[str, TagStats] = {}
    for label, (sent, delivered, lost, skipped, stuck, unwanted) in sums.items():
        wanted = delivered + lost + stuck
        out[label] = TagStats(
            sent / runs,
            delivered / runs,
            lost / runs,
            skipped / runs,
            stuck / runs,
            unwanted / runs,
            lost / wanted if wanted else 0.0,
        )
    return out
