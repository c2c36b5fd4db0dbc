"""The simulator's self-check: a group the consistency rules pass must simulate without loss.

The verdict of the consistency rules is taken from the policy engine itself, with every one of them
on (a `--select`, `--ignore` or waiver changes what is shown, not whether the group is consistent).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from subguard.core.config import Config
from subguard.core.inventory import group_map, split_key
from subguard.core.model import SAMPLE, Consumer, Finding, Related, RuleDoc, Severity
from subguard.rules.code_scope import finding_key, sample_of
from subguard.rules.policy import Policy, with_role
from subguard.scan.extraction import ScanResult

RULE = "SG905"


def flagged_groups(
    results: Sequence[ScanResult],
    policies: Sequence[Policy],
    config: Config,
    evaluated: Sequence[Finding] | None = None,
) -> frozenset[str]:
    """Groups (`group_key`s) that a consistency rule finds inconsistent, whatever the selection. `evaluated`: the
    findings the engine already gave under `config`; when that selection ran every consistency rule,
    they are the answer and the rules are not evaluated a second time."""
    from subguard.rules.engine import evaluate, selected

    consistency = with_role(policies, "consistency")
    rules = [p for p in policies if p.id in consistency]
    if evaluated is None or not all(selected(p.id, config) for p in rules):
        everything = config.model_copy(update={"select": (), "ignore": ()})
        evaluated = evaluate(results, rules, everything)
    return frozenset(finding_key(f) for f in evaluated if f.rule in consistency and f.group)


def _fully_known(c: Consumer) -> bool:
    return bool(c.subscriptions) and all(
        s.topic.value is not None and s.expression.value is not None for s in c.subscriptions
    )


def candidates(consumers: Iterable[Consumer], flagged: frozenset[str], config: Config) -> dict[str, list[Consumer]]:
    """Groups to self-check, by `group_key` (the name the broker sees, namespace%group, plus the sample
    `config` keeps apart): a known name, two or more members (a lone consumer cannot disagree), every
    subscription known, and no consistency finding."""
    groups = group_map(consumers, lambda c: sample_of(c, config)).groups
    return {
        key: list(g.members)
        for key, g in groups.items()
        if len(g.members) > 1 and key not in flagged and all(_fully_known(c) for c in g.members)
    }


def message(group: str, impact: str) -> str:
    return (
        f"internal error: the consistency rules pass group {group!r}, but the simulator predicts loss "
        f"({impact}); one of subguard's two models of the broker is wrong - please report it"
    )


def finding(key: str, members: Sequence[Consumer], impact: str, docs: Mapping[str, RuleDoc]) -> Finding:
    """The SG905 finding (of a `group_key`) at the group's first member's first subscription, the others related."""
    group, sample = split_key(key)
    locations = [c.subscriptions[0].location if c.subscriptions else c.location for c in members]
    doc = docs.get(RULE)
    return Finding(
        rule=RULE,
        severity=doc.severity if doc else Severity.ERROR,
        message=message(group, impact),
        location=locations[0],
        related=tuple(Related(location=loc, message="member") for loc in locations[1:]),
        group=group,
        properties=((SAMPLE, sample),) if sample else (),
    )
