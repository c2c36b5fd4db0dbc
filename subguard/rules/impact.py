"""The simulated impact of a group, attached to the group findings of `check` and the audit."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from subguard.core.cache import MemoFile, code_stamp, namespace
from subguard.core.config import Config
from subguard.core.inventory import group_name
from subguard.core.model import Consumer, Finding, RuleDoc
from subguard.rules.policy import Policy
from subguard.scan.extraction import ScanResult
from subguard.scan.parallel import pmap, worker_count

Described = tuple[str | None, str | None]  # (impact text, warning)


def _describe(group: str, consumers: Sequence[Consumer]) -> Described:
    """The simulator's impact text for one group; None when the simulator is absent or fails, then with
    a warning (the impact is an addition to the findings and must not take them down). The caller
    prints the warning: a worker process's own output would bypass the caller's streams."""
    try:
        from subguard.simulate.impact import describe_group
    except ImportError:
        return None, None
    try:
        text: str = describe_group(consumers)
    except Exception as exc:  # noqa: BLE001 - reported, and the lint result stands without the impact
        return None, f"subguard: warning: simulation of group {group} failed: {type(exc).__name__}: {exc}"
    return text, None


def impact_memo() -> MemoFile:
    """The memo of simulated impacts (user cache dir), keyed by the simulator's code."""
    from subguard import __version__

    pkg = Path(__file__).resolve().parent.parent
    stamp = namespace(__version__, code_stamp(pkg / "simulate", pkg / "rules", pkg / "core", pkg / "rocketmq"))
    return MemoFile(f"impact-{stamp}")


def _group_key(members: Sequence[Consumer]) -> str:
    """Everything the simulator reads of a group: its members, in order, as JSON."""
    return hashlib.sha256("\n".join(c.model_dump_json() for c in members).encode()).hexdigest()


def attach_impact(
    findings: Sequence[Finding],
    consumers: Sequence[Consumer],
    docs: Mapping[str, RuleDoc],
    memo: MemoFile | None = None,
    jobs: int = 1,
) -> list[Finding]:
    """Put the simulated impact of its group on every unsuppressed group finding (once per group,
    groups spread over `jobs` worker processes when there are many). With `memo`, a group whose
    members have not changed reuses its earlier (deterministic) impact."""
    by_group: dict[str | None, list[Consumer]] = {}
    for c in consumers:  # keyed as findings name groups: namespace%group when a namespace is known
        by_group.setdefault(group_name(c), []).append(c)

    def wanted(f: Finding) -> bool:
        doc = docs.get(f.rule)
        is_group = doc.scope.split("/")[0] == "group" if doc else bool(f.related)  # scope may be "group/topic"
        return bool(f.group) and is_group and not f.impact and f.suppressed is None

    groups = sorted({f.group for f in findings if wanted(f)})
    texts = describe_groups({g: by_group.get(g, []) for g in groups}, memo, jobs)
    return [f.model_copy(update={"impact": texts[f.group]}) if wanted(f) and texts.get(f.group) else f for f in findings]


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


def self_check(
    results: Sequence[ScanResult], policies: Sequence[Policy], config: Config, docs: Mapping[str, RuleDoc],
    memo: MemoFile | None = None, evaluated: Sequence[Finding] | None = None,
) -> list[Finding]:
    """SG905 for every group the consistency rules pass that the simulator predicts to lose messages
    (`evaluated`: the engine's findings under `config`, reused when they cover every consistency rule)."""
    from subguard.rules import selfcheck

    consumers = [c for r in results for c in r.consumers]
    groups = selfcheck.candidates(consumers, selfcheck.flagged_groups(results, policies, config, evaluated))
    texts = describe_groups(groups, memo, config.jobs)
    return [selfcheck.finding(g, groups[g], text, docs) for g, text in texts.items() if text]


def _describe_job(job: tuple[str, Sequence[Consumer]]) -> Described:
    """`_describe` for one (group, members) pair, as a picklable function for a worker process."""
    return _describe(*job)
