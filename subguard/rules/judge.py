"""The one judging pipeline: `check`, the audit's Spark tasks and the rule-fixture harness call `judge`.

    evaluate (+ the change since a base revision) -> fingerprint -> members -> waivers (+ SG903) -> keep
    -> baseline -> impact -> self-check

Every step is a pure function of its inputs. What needs I/O is passed in as a callable: where the
inline waivers are read from (a disk, or the audit's in-memory files), how the baseline is read or
written, and how a group's impact is simulated (with or without the user's memo). So a repository
judged by `check` and the same repository inside an audit go through the same code.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from subguard.core.config import Config
from subguard.core.limits import gc_paused
from subguard.core.members import attach_members
from subguard.core.model import Consumer, Finding, Location, RuleDoc
from subguard.rules import baseline as baseline_mod
from subguard.rules import code_scope, selfcheck, suppress
from subguard.rules.engine import enabled_by, evaluate, selected
from subguard.rules.policy import Policy, rule_docs
from subguard.scan.extraction import ScanResult

TYPE_CHECKING = False
if TYPE_CHECKING:  # the change rules load only for a run with a base revision
    from subguard.rules.change import Change

GROUP_SCOPE = "group"


@dataclass(frozen=True)
class RuleSet:
    """The policies a run judges with, and their docs (severity, scope, messages for reporters)."""

    policies: tuple[Policy, ...]
    docs: Mapping[str, RuleDoc]

    @classmethod
    def of(cls, policies: Sequence[Policy]) -> RuleSet:
        return cls(tuple(policies), rule_docs(policies))

    @property
    def diagnostic(self) -> frozenset[str]:
        """Rules whose findings are about subguard's own view (`roles: [diagnostic]`)."""
        return self.with_role("diagnostic")

    def with_role(self, role: str) -> frozenset[str]:
        return frozenset(rule for rule, doc in self.docs.items() if role in doc.roles)

    def scope(self, rule: str) -> str:
        """The rule's scope kind: `group` for `group`, `group/topic`, `group/cluster`, ...; "" if unknown."""
        doc = self.docs.get(rule)
        return doc.scope.split("/", 1)[0] if doc is not None else ""


@dataclass(frozen=True)
class Waivers:
    """The waivers a run applies: inline ones (already read from their files), where the config's
    waivers are written, and the day expiries are judged on."""

    inline: Sequence[suppress.InlineWaiver] = ()
    config_locations: Sequence[Location] = ()
    today: dt.date = field(default_factory=dt.date.today)


# the waivers of a run, read once the evaluated findings say which files may hold them
WaiverSource = Callable[[Sequence[Finding]], Waivers]
# the baseline step: (findings after waivers) -> (findings with baselined ones marked, stale entries)
BaselineStep = Callable[[list[Finding]], tuple[list[Finding], int]]
# the simulated impact of groups: {group: members} -> {group: impact text, "" for none, None on failure}
Describe = Callable[[Mapping[str, Sequence[Consumer]]], Mapping[str, "str | None"]]


@dataclass(frozen=True)
class Judged:
    """What a run found: every finding in report order, the engine's own findings (before waivers,
    for callers that reuse them) and how many baseline entries matched nothing."""

    findings: list[Finding]
    evaluated: list[Finding]
    stale_baseline: int = 0


@gc_paused()
def judge(
    results: Sequence[ScanResult],
    rules: RuleSet,
    config: Config,
    *,
    waivers: WaiverSource | None = None,
    keep: Callable[[Finding], bool] | None = None,
    baseline: BaselineStep | None = None,
    describe: Describe | None = None,
    change: Change | None = None,
    beyond: bool = False,
) -> Judged:
    """Judge scanned repositories with `rules` under `config` (selection, waivers, thresholds).

    `keep` narrows the findings after the waivers (the audit judges a repository's own rules per
    repository and group rules per group); `describe` turns on the simulated impact on group
    findings and the simulator's self-check (SG905) on the groups the consistency rules pass; `change`
    (the base revision's results) turns on the change rules (SG6xx, `rules.change`); `beyond` says that
    other repositories' consumers exist outside `results` (the audit judges one repository of an
    organisation), so a consumer whose group is unknown could be any group's member."""
    evaluated = evaluate(results, rules.policies, config, beyond)  # selection applied, extractor findings included
    if change is not None:
        from subguard.rules.change import change_findings

        evaluated += change_findings(results, change, rules.policies, config)
    consumers = [c for r in results for c in r.consumers]
    found = attach_members([baseline_mod.with_fingerprint(f) for f in evaluated], consumers)
    if waivers is not None:
        found = apply_waivers(found, waivers(found), config, rules.docs)
    found = code_scope.mark(found, config, rules.diagnostic, rules.with_role("topology"))
    if keep is not None:
        found = [f for f in found if keep(f)]
    stale = 0
    if baseline is not None:
        found, stale = baseline(found)
    if describe is not None:
        found = attach_impact(found, consumers, rules, describe, config)
        if selected(selfcheck.RULE, config):
            found += [baseline_mod.with_fingerprint(f) for f in self_check(results, rules, config, describe, evaluated)]
    return Judged(found, evaluated, stale)


def apply_waivers(
    found: Sequence[Finding], waivers: Waivers, config: Config, docs: Mapping[str, RuleDoc]
) -> list[Finding]:
    """Inline, then config waivers: the findings marked, then SG903 for every waiver that is
    malformed, forbidden, expired or unused (for enabled rules)."""
    marked, problems = suppress.apply_waivers(
        found, waivers.inline, config, waivers.config_locations, docs, enabled_by(config), waivers.today
    )
    return [*marked, *problems]


def _is_group(f: Finding, rules: RuleSet) -> bool:
    doc = rules.docs.get(f.rule)
    return rules.scope(f.rule) == GROUP_SCOPE if doc else bool(f.related)


def attach_impact(
    found: Sequence[Finding],
    consumers: Sequence[Consumer],
    rules: RuleSet,
    describe: Describe,
    config: Config,
) -> list[Finding]:
    """Put the simulated impact of its group on every unsuppressed group finding (once per group; a
    finding confined to one sample is simulated over that sample's members, as `config` keeps them)."""

    def wanted(f: Finding) -> bool:
        return bool(f.group) and _is_group(f, rules) and not f.impact and f.suppressed is None

    by_group: dict[str, list[Consumer]] = {}
    for c in consumers:  # keyed as findings name groups: namespace%group when a namespace is known
        key = code_scope.member_key(c, config)
        if c.registers and key is not None:  # one that registers no subscription takes no part in filtering
            by_group.setdefault(key, []).append(c)
    keys = {id(f): code_scope.finding_key(f) for f in found if wanted(f)}
    texts = describe({g: by_group.get(g, []) for g in sorted(set(keys.values()))})
    out: list[Finding] = []
    for f in found:
        text = texts.get(keys[id(f)]) if id(f) in keys else None
        out.append(f.model_copy(update={"impact": text}) if text else f)
    return out


def self_check(
    results: Sequence[ScanResult],
    rules: RuleSet,
    config: Config,
    describe: Describe,
    evaluated: Sequence[Finding] | None = None,
) -> list[Finding]:
    """SG905 for every group the consistency rules pass that the simulator predicts to lose messages
    (`evaluated`: the engine's findings under `config`, reused when they cover every consistency rule)."""
    consumers = [c for r in results for c in r.consumers]
    groups = selfcheck.candidates(
        consumers, selfcheck.flagged_groups(results, rules.policies, config, evaluated), config
    )
    texts = describe(groups)
    return [selfcheck.finding(g, groups[g], text, rules.docs) for g, text in sorted(texts.items()) if text]
