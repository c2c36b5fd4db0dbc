"""The policy engine: scan results + policies -> findings, deterministic and line-free fingerprints.

`evaluate` builds one `Universe` over all results (so a group spanning repos and languages is
one group), builds each subject kind a selected policy needs once, and judges every subject with
the policy's three-valued condition:

- True: a finding. With `variants:`, the primary location is the first member of the smallest
  variant (ties: the earliest), `related` is every other member with what it declares, and
  `{variants}` lists each variant with its locations.
- Unknown: the values it depended on are recorded; each such value becomes one SG902 note that
  names every rule that needed it (a rule never passes silently on an unknown value).
- False: nothing.

Tool findings: SG901 for every FAILED file, SG902 as above; extractor findings in the results are
passed through. `config.select` / `config.ignore` are id prefixes (ruff style) applied to all.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from subguard.core import afterwards
from subguard.core.config import Config
from subguard.core.members import attach_members
from subguard.core.model import SAMPLE, Consumer, FileStatus, Finding, Location, Related, Severity, fingerprint
from subguard.rules import evalmemo
from subguard.rules.baseline import with_fingerprint
from subguard.rules.code_scope import member_key
from subguard.rules.conditions import UNKNOWN
from subguard.rules.conditions import evaluate as judge
from subguard.rules.policy import Policy, builtin
from subguard.rules.subjects import KINDS, NOT_KNOWN, KindSpec, Subject, Universe, Unknown, Variant, kind_spec
from subguard.scan.extraction import ScanResult

UNPARSEABLE, UNRESOLVED, STARTUP_FAILURE = "SG901", "SG902", "SG906"
_LINE = re.compile(r"(?:\bline\s+|:)(\d+)(?::\d+)?\b", re.IGNORECASE)
_MAX_WHERE = 4


def selected(rule: str, config: Config) -> bool:
    """Ruff-style selection: `select` (empty = all) and `ignore` are id prefixes."""
    if config.select and not any(rule.startswith(p) for p in config.select):
        return False
    return not any(rule.startswith(p) for p in config.ignore)


def enabled_by(config: Config) -> Callable[[str], bool]:
    """`selected` for one config, as a predicate (what waiver checks take)."""
    return lambda rule: selected(rule, config)


def _text(value: Any) -> str:
    if value is None:
        return "-"
    if value is UNKNOWN:
        return "?"
    if isinstance(value, (list, tuple, set, frozenset)):
        return ", ".join(str(v) for v in (sorted(value) if isinstance(value, (set, frozenset)) else value))
    return str(value)


def _where(loc: Location, with_repo: bool) -> str:
    return f"{loc.repo + ':' if with_repo and loc.repo else ''}{loc.path}:{loc.line}"


def _loc_key(loc: Location) -> tuple[str, str, int, int]:
    return (loc.repo, loc.path, loc.line, loc.column)


def variants_text(variants: Sequence[Variant]) -> str:
    """`{tag1} at a.py:10, {tag2} at b.py:7 and c.py:3` (repo-qualified when members span repos)."""
    repos = {m.location.repo for v in variants for m in v.members}
    parts = []
    for v in variants:
        wheres = [_where(m.location, len(repos) > 1) for m in v.members]
        shown = wheres[:_MAX_WHERE]
        more = f" and {len(wheres) - len(shown)} more" if len(wheres) > len(shown) else ""
        parts.append(f"{v.label} at {' and '.join(shown) if not more else ', '.join(shown)}{more}")
    return ", ".join(parts)


def _place(variants: Sequence[Variant]) -> tuple[Location, tuple[Related, ...]]:
    smallest = min(variants, key=lambda v: (len(v.members), _loc_key(v.members[0].location)))
    primary = smallest.members[0]
    others = [m for v in variants for m in v.members if m is not primary]
    others.sort(key=lambda m: _loc_key(m.location))
    return primary.location, tuple(Related(location=m.location, message=m.text) for m in others)


def _format(template: str, values: Mapping[str, Any], source: str) -> str:
    try:
        return template.format_map({k: _text(v) for k, v in values.items()})
    except (KeyError, IndexError, ValueError) as exc:  # checked at load; a late-registered kind may differ
        return f"{template} [message template error in {source}: {exc}]"


def _severity(policy: Policy, subject: Subject) -> Severity:
    if policy.severity_from:
        value = subject.fields.get(policy.severity_from)
        if isinstance(value, str) and value in {s.value for s in Severity}:
            return Severity(value)
    return policy.severity


def _finding(policy: Policy, subject: Subject) -> Finding:
    location, related = subject.location, tuple(Related(location=loc, message=msg) for loc, msg in subject.related)
    values: dict[str, Any] = {**subject.fields, "rule": policy.id, "name": policy.name}
    if policy.variants:
        variants = subject.variants.get(policy.variants, ())
        if variants:
            location, related = _place(variants)
            values["variants"] = variants_text(variants)
        else:
            values["variants"] = ""
    return Finding(
        rule=policy.id,
        severity=_severity(policy, subject),
        message=_format(policy.message, values, policy.source),
        location=location,
        related=related,
        group=subject.group,
        topic=subject.topic,
        fingerprint=fingerprint(policy.id, *subject.key),
        properties=(("subject", subject.kind), *(((SAMPLE, subject.sample),) if subject.sample else ())),
    )


@dataclass
class _Needs:
    unknown: Unknown
    rules: set[str]


def _tool(policies: Mapping[str, Policy], rule: str) -> tuple[Severity, str]:
    policy = policies.get(rule) or builtin(rule)  # a caller may judge with a subset of the policies
    return policy.severity, policy.message


def _line_of(reason: str) -> int:
    m = _LINE.search(reason)
    return int(m.group(1)) if m and int(m.group(1)) > 0 else 1


def unparseable(results: Sequence[ScanResult], policies: Mapping[str, Policy]) -> list[Finding]:
    """SG901: one finding per FAILED file, at the line the reason names (else line 1)."""
    severity, template = _tool(policies, UNPARSEABLE)
    out = []
    for res in results:
        for rec in res.read_files():
            if rec.status is not FileStatus.FAILED:
                continue
            repo = rec.repo or res.repo
            out.append(
                Finding(
                    rule=UNPARSEABLE,
                    severity=severity,
                    message=_format(
                        template, {"path": rec.path, "reason": rec.reason or "unknown reason"}, UNPARSEABLE
                    ),
                    location=Location(path=rec.path, line=_line_of(rec.reason), repo=repo),
                    fingerprint=fingerprint(UNPARSEABLE, repo, rec.path),
                )
            )
    return out


_GROUP_SCOPES = frozenset({"group"})
_DEPLOYMENT_SCOPES = frozenset({"deployment", "consumer+deployment"})


def _could_share_a_group(owner: str, universe: Universe, beyond: bool) -> bool:
    """Whether a construction can meet another member of its group: its group has another member,
    or its group is unknown and any other consumer exists, here or `beyond` these results (it could
    be any group), or the construction itself makes several at run time (`Consumer.repeated`)."""
    consumer = universe.by_id.get(owner)
    if consumer is None:
        return True
    key = member_key(consumer, universe.config)
    if key is None:
        return beyond or consumer.repeated or len(universe.consumers) > 1
    group = universe.groups.groups.get(key)
    return group is not None and len(group.members) > 1


def _hides_a_finding(
    unknown: Unknown, rule: str, universe: Universe, by_id: Mapping[str, Policy], beyond: bool
) -> bool:
    """Whether not knowing `unknown` can hide a finding of `rule`: a group rule only when the
    construction could share its group with another member; a deployment rule always (it was linked
    to a deployment a rule judges); other rules only for a value subguard has but cannot judge
    (e.g. a SQL92 expression too deep to check)."""
    policy = by_id.get(rule)
    scope = policy.scope if policy is not None else ""
    if scope in _DEPLOYMENT_SCOPES or not unknown.owner:
        return True
    if scope in _GROUP_SCOPES:
        return _could_share_a_group(unknown.owner, universe, beyond)
    return unknown.state != NOT_KNOWN


def blind_spots(
    needs: Iterable[_Needs], universe: Universe, by_id: Mapping[str, Policy], beyond: bool = False
) -> list[_Needs]:
    """One need per blind spot: the unknown values of one consumer construction merge into one, naming
    every rule they blind, and a need that can hide no finding is dropped."""
    merged: dict[str, list[_Needs]] = {}
    out: list[_Needs] = []
    for need in needs:
        rules = {r for r in need.rules if _hides_a_finding(need.unknown, r, universe, by_id, beyond)}
        if not rules:
            continue
        kept = _Needs(need.unknown, rules)
        if need.unknown.owner:
            merged.setdefault(need.unknown.owner, []).append(kept)
        else:
            out.append(kept)
    for owner, parts in merged.items():
        out.append(parts[0] if len(parts) == 1 else _merge(owner, parts, universe))
    return out


def _merge(owner: str, parts: Sequence[_Needs], universe: Universe) -> _Needs:
    """The needs of one construction as one: at the construction, every unknown part and reason."""
    parts = sorted(parts, key=lambda n: (*_loc_key(n.unknown.location), n.unknown.what))
    consumer = universe.by_id.get(owner)
    whats = list(dict.fromkeys(n.unknown.what for n in parts))
    reasons = list(dict.fromkeys(n.unknown.reason or "dynamic value" for n in parts))
    states = {n.unknown.state for n in parts}
    state = states.pop() if len(states) == 1 else "cannot be judged"
    unknown = Unknown(
        " and ".join(whats),
        "; ".join(reasons),
        consumer.location if consumer else parts[0].unknown.location,
        tuple(k for n in parts for k in n.unknown.key),
        state=state.replace("is ", "are ", 1) if len(whats) > 1 else state,
        owner=owner,
    )
    return _Needs(unknown, set().union(*(n.rules for n in parts)))


def startup_failures(consumers: Iterable[Consumer], policies: Mapping[str, Policy]) -> list[Finding]:
    """SG906: one finding per declaration the client or its framework refuses at startup."""
    severity, template = _tool(policies, STARTUP_FAILURE)
    out = []
    for c in consumers:
        if c.startup_failure is None:
            continue
        what = f"consumer of group '{c.group.value}'" if c.group.value else "consumer"
        out.append(
            Finding(
                rule=STARTUP_FAILURE,
                severity=severity,
                message=_format(template, {"what": what, "reason": c.startup_failure.reason}, STARTUP_FAILURE),
                location=c.startup_failure.location or c.location,
                group=c.group.value or "",
                fingerprint=fingerprint(
                    STARTUP_FAILURE, c.repo or c.location.repo, c.location.path, c.group.value or "?"
                ),
            )
        )
    return out


def unresolved(needs: Iterable[_Needs], policies: Mapping[str, Policy]) -> list[Finding]:
    """SG902: one note per unknown value, naming every rule that needed it."""
    severity, template = _tool(policies, UNRESOLVED)
    out = []
    for need in needs:
        u = need.unknown
        values = {
            "what": u.what,
            "state": u.state,
            "reason": u.reason or "dynamic value",
            "rules": ", ".join(sorted(need.rules)),
        }
        out.append(
            Finding(
                rule=UNRESOLVED,
                severity=severity,
                message=_format(template, values, UNRESOLVED),
                location=u.location,
                fingerprint=fingerprint(UNRESOLVED, *u.key),
                properties=(("rules", tuple(sorted(need.rules))),),
            )
        )
    return out


def _order(f: Finding) -> tuple[Any, ...]:
    return (f.rule, *_loc_key(f.location), f.group, f.topic, f.message, f.fingerprint)


def evaluate(
    results: Sequence[ScanResult], policies: Sequence[Policy], config: Config, beyond: bool = False
) -> list[Finding]:
    """Every finding of every selected policy over all results, in a deterministic order; the
    last answer for the same records, policies, config and code when the scans were cached, and
    else the last judgement of each unchanged group (`subguard.rules.evalmemo`)."""
    judged_by = evalmemo.settings(policies, config)
    memo_key = evalmemo.key(results, judged_by, beyond)
    kept = evalmemo.load(memo_key) if memo_key is not None else None
    if kept is not None:
        return kept
    parts = evalmemo.Parts(judged_by) if memo_key is not None else None
    findings = _evaluate(results, policies, config, beyond, parts)
    if memo_key is not None and parts is not None:  # for the next run, once this one has answered
        afterwards.later(functools.partial(evalmemo.store, memo_key, list(findings)))  # a copy: callers extend theirs
        afterwards.later(parts.save)
    return findings


_Chosen = Sequence[tuple[KindSpec, Sequence[Policy]]]  # each kind's spec and its selected policies, in order


def _evaluate(
    results: Sequence[ScanResult],
    policies: Sequence[Policy],
    config: Config,
    beyond: bool,
    parts: evalmemo.Parts | None = None,
) -> list[Finding]:
    """The findings of `evaluate`: the policies of `per_group` kinds judged part by part (each part's
    judgement taken from `parts` when kept), the others over the whole universe."""
    universe = Universe.of(
        [c for r in results for c in r.consumers], [d for r in results for d in r.deployments], config
    )
    by_id = {p.id: p for p in policies}
    by_kind: dict[str, list[Policy]] = {}
    for p in policies:
        if p.scope != "tool" and selected(p.id, config) and p.kind in KINDS:
            by_kind.setdefault(p.kind, []).append(p)
    chosen = [(kind_spec(kind), kept) for kind, kept in by_kind.items()]
    by_part = [(spec, kept) for spec, kept in chosen if spec.per_group]
    judged = [_judged_part(by_part, part, parts) for part in universe.parts()] if by_part else []
    judged.append(_judge([(spec, kept) for spec, kept in chosen if not spec.per_group], universe))
    needs: dict[tuple[Any, ...], _Needs] = {}
    findings: list[Finding] = []
    for found, needed in judged:
        findings += found
        for unknown, rule in needed:  # one note per value: its key plus where it is
            ident = (*unknown.key, *_loc_key(unknown.location))
            needs.setdefault(ident, _Needs(unknown, set())).rules.add(rule)
    if selected(UNPARSEABLE, config):
        findings += unparseable(results, by_id)
    if selected(STARTUP_FAILURE, config):
        findings += startup_failures(universe.consumers, by_id)
    if selected(UNRESOLVED, config):
        findings += unresolved(blind_spots(needs.values(), universe, by_id, beyond), by_id)
    findings += [f for r in results for f in r.findings if selected(f.rule, config)]
    unique = {(_order(f)): f for f in findings}
    return [unique[k] for k in sorted(unique)]


def _judged_part(chosen: _Chosen, part: Universe, parts: evalmemo.Parts | None) -> evalmemo.Judgement:
    """`_judge` of one part, as kept in `parts` when it judged the very same consumers."""
    digest = parts.digest(part.scanned) if parts is not None else None  # what `with_repo` placed
    kept = parts.get(digest) if parts is not None and digest is not None else None
    if kept is not None:
        return kept
    judged = _judge(chosen, part)
    if parts is not None and digest is not None:
        parts.put(digest, judged)
    return judged


def _judge(chosen: _Chosen, universe: Universe) -> evalmemo.Judgement:
    """Each policy's findings over `universe`, and each unknown value a verdict needed, with the rule:
    each kind's subjects built once, then judged by each of its policies."""
    findings: list[Finding] = []
    needed: list[tuple[Unknown, str]] = []
    for spec, kept in chosen:
        subjects = list(spec.build(universe))
        unplaced = list(spec.unplaced(universe))
        for policy in kept:
            needed += [(unknown, policy.id) for unknown in unplaced]
            for subject in subjects:
                verdict = judge(policy.condition, subject.fields)
                if verdict:
                    findings.append(_finding(policy, subject))
                elif verdict is None:
                    needed += [(unknown, policy.id) for unknown in subject.unknowns or (_fallback(subject),)]
    # fingerprinted and with their members, as `judge` gives them: a part's judgement kept in the
    # memo spares each later run this work for the groups nobody changed
    ready = attach_members([with_fingerprint(f) for f in merged(findings)], universe.consumers)
    return tuple(ready), tuple(needed)


def merged(findings: Sequence[Finding]) -> list[Finding]:
    """One finding per rule, place and message: subjects a reader cannot tell apart (the listeners
    of one container whose offsets share a directory, at one compose line) are one problem with one
    fix, shown once with every subject's related locations. It keeps the smallest of their
    fingerprints, and their group when they share one (a message that names no group can span
    several)."""
    same: dict[tuple[Any, ...], list[Finding]] = {}
    for f in findings:
        same.setdefault((f.rule, f.severity, *_loc_key(f.location), f.message, f.topic), []).append(f)
    out: list[Finding] = []
    for fs in same.values():
        if len(fs) == 1:
            out.append(fs[0])
            continue
        ordered = sorted(fs, key=lambda f: f.fingerprint)
        related = tuple(dict.fromkeys(r for f in ordered for r in f.related))
        groups = {f.group for f in fs}
        out.append(
            ordered[0].model_copy(update={"related": related, "group": groups.pop() if len(groups) == 1 else ""})
        )
    return out


def _fallback(subject: Subject) -> Unknown:
    """A subject judged unknown without a recorded unknown value (e.g. a user field): still a note."""
    names = sorted(k for k, v in subject.fields.items() if v is UNKNOWN)
    return Unknown(
        f"{', '.join(names) or 'a value'} of this {subject.kind}",
        "not statically known",
        subject.location,
        (subject.kind, *subject.key),
    )


def run(results: Sequence[ScanResult], config: Config, extra_dirs: Sequence[str] | None = None) -> list[Finding]:
    """Convenience: load built-in + configured policies and evaluate."""
    from subguard.rules.policy import load_policies, policy_dirs

    dirs = policy_dirs(config.policies, config.source, extra_dirs or ())
    return evaluate(results, load_policies(dirs), config)
