"""The simulated impact of groups (memoised, spread over processes): the `describe` step of `rules.judge`."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from subguard.core.cache import MemoFile, code_stamp, namespace
from subguard.core.inventory import split_key
from subguard.core.model import Consumer
from subguard.core.recordjson import json_list
from subguard.scan.parallel import pmap, worker_count

Described = tuple[str | None, str | None]  # (impact text, warning)


def _describe(group: str, consumers: Sequence[Consumer]) -> Described:
    """The prediction's text for one group (`simulate.impact.describe_group`: the same function, runs
    and seed as `simulate --inventory` and the audit); None when the simulator is absent or fails, then with
    a warning (the impact is an addition to the findings and must not take them down). The caller
    prints the warning: a worker process's own output would bypass the caller's streams."""
    try:
        from subguard.simulate.impact import describe_group
    except ImportError:
        return None, None
    try:
        text: str = describe_group(consumers)
    except Exception as exc:  # noqa: BLE001 - reported, and the lint result stands without the impact
        name, sample = split_key(group)
        where = f" (sample {sample})" if sample else ""
        return None, f"subguard: warning: simulation of group {name}{where} failed: {type(exc).__name__}: {exc}"
    return text, None


def impact_memo() -> MemoFile:
    """The memo of simulated impacts (user cache dir), keyed by the simulator's code."""
    from subguard import __version__

    pkg = Path(__file__).resolve().parent.parent
    stamp = namespace(__version__, code_stamp(pkg / "simulate", pkg / "rules", pkg / "core", pkg / "rocketmq"))
    return MemoFile(f"impact-{stamp}")


def _group_key(members: Sequence[Consumer]) -> str:
    """Everything the prediction reads of a group: its members in the group map's order, as JSON (the
    prediction orders them itself, so an order a scan happened to deliver must not miss the memo)."""
    from subguard.core.inventory import sort_consumers

    return hashlib.sha256(json_list(sort_consumers(members))).hexdigest()


def describer(
    memo: MemoFile | None = None, jobs: int = 1
) -> Callable[[Mapping[str, Sequence[Consumer]]], dict[str, str | None]]:
    """`describe_groups` with a memo and a worker count: the `describe` step `judge` takes."""
    return lambda groups: describe_groups(groups, memo, jobs)


def describe_groups(
    groups: Mapping[str, Sequence[Consumer]], memo: MemoFile | None = None, jobs: int = 1
) -> dict[str, str | None]:
    """The simulated impact text of each group ("" when no loss, None when the simulation failed,
    with a warning on stderr); memoised by members, spread over `jobs` processes when many."""
    names = sorted(groups)
    keys = {g: _group_key(groups[g]) for g in names} if memo is not None else {}
    texts: dict[str, str | None] = {g: memo.get(keys[g]) for g in names if memo is not None and keys[g] in memo}
    todo = [g for g in names if g not in texts]
    computed = pmap(_describe_job, [(g, groups[g]) for g in todo], worker_count(jobs))
    for g, (text, warning) in zip(todo, computed if computed is not None else [_describe(g, groups[g]) for g in todo]):
        if warning:
            print(warning, file=sys.stderr)
        texts[g] = text
        if memo is not None and text is not None:
            memo.put(keys[g], text)
    return texts


def _describe_job(job: tuple[str, Sequence[Consumer]]) -> Described:
    """`_describe` for one (group, members) pair, as a picklable function for a worker process."""
    return _describe(*job)
