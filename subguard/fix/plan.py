"""Findings -> fixes. One planner per fixable rule, in `PLANNERS` (an explicit registry).

- SG103 (safe): every member of the group that writes the topic's expression differently is
  rewritten to the group's canonical text: the form most members write, ties broken by the first
  member by path. Same tags, so the broker filters exactly as before; only the text mqadmin and
  cloud consoles compare changes.
- SG401: where the broker's meaning is unambiguous the text is normalised (see `normalise`).
- SG107 (unsafe): the overridden `subscribe` call is removed.

A value that comes from a constant or a placeholder is fixed at its definition, and the fix is safe
only when every reference to that name lies in the subscriptions being fixed; otherwise it is unsafe
and says where else the name is used.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from subguard.core.config import Config
from subguard.core.inventory import group_map
from subguard.core.model import Consumer, ExpressionType, Finding, Location, Subscription
from subguard.fix import java, python
from subguard.fix.locate import BY_NAME, Locator, lang_of
from subguard.fix.model import SAFE, UNSAFE, Edit, Fix, Safety, Site
from subguard.rocketmq.expression import SUB_ALL, parse, smells
from subguard.rules.code_scope import finding_key, sample_of
from subguard.scan.extraction import ScanResult

_UNCLEAR = frozenset({"split-error", "blank", "star-in-list", "hash-collision"})


@dataclass(frozen=True)
class Member:
    root: str
    consumer: Consumer
    subscription: Subscription
    active: bool = True  # False for an earlier subscribe() a later one overrode


@dataclass
class Context:
    results: Sequence[ScanResult]
    config: Config
    locator: Locator
    members: list[Member]

    @classmethod
    def of(cls, results: Sequence[ScanResult], config: Config, locator: Locator | None = None) -> Context:
        members = [
            Member(r.root, c, s, active)
            for r in results
            for c in r.consumers
            for subs, active in ((c.subscriptions, True), (c.overridden, False))
            for s in subs
        ]
        return cls(results, config, locator or Locator(results), members)

    def root_of(self, consumer: Consumer) -> str:
        return next((m.root for m in self.members if m.consumer is consumer), "")


def normalise(raw: str) -> tuple[str, Safety, str] | None:
    """The tag expression `raw` meant, when that is unambiguous: (text, safety, why).

    Safe (the broker parses the same tags in the same order, only the text changes): leading or
    trailing blanks (`" a||b "`), empty fields (`a||b||`, `a||||b`), a repeated tag (`a||b||a`).
    Unsafe (what is delivered changes): `" * "` -> `*` (from only a literal tag '*' to every
    message: the handler starts receiving every tag), `a | b` -> `a||b` (from one literal tag
    'a | b' to both tags). No fix where the meaning needs a person: `||` alone, a blank
    expression, `a || *` (match-all or just 'a'?), and tags whose hash codes collide."""
    codes = {sm.code for sm in smells(raw)}
    if not codes or codes & _UNCLEAR:
        return None
    spaced = re.search(r"\S \|\|? \S", raw) is not None and re.search(r"\S\|\|?\S", raw) is None
    sep = " || " if spaced else "||"
    if "padded-star" in codes:
        return (
            SUB_ALL,
            UNSAFE,
            f"{raw!r} delivers only messages tagged with a literal '*'; '*' delivers every message of the topic",
        )
    tags = list(parse(raw).tags)
    if "single-pipe" in codes:
        split = [t.strip() for tag in tags for t in tag.split("|") if t.strip()]
        tags = list(dict.fromkeys(split))
        new = sep.join(tags)
        return (
            new,
            UNSAFE,
            f"{raw!r} is one literal tag containing '|'; {new!r} delivers each tag: messages start arriving",
        )
    return sep.join(tags), SAFE, ""


def _order(m: Member) -> tuple[str, str, int, int]:
    loc = m.subscription.location
    return (loc.repo or m.consumer.repo, loc.path, loc.line, loc.column)


def _uses_outside(site: Site, claimed: Iterable[tuple[Path, int, int]]) -> list[str]:
    spans = list(claimed)
    return [where for f, off, where in site.uses if not any(f == d[0] and d[1] <= off < d[2] for d in spans)]


def rewrite(
    ctx: Context, targets: Sequence[Member], scope: Sequence[Member], new: str
) -> tuple[list[Edit], list[str]] | str:
    """The edits that write `new` as the expression of every target, and why they are unsafe (a
    constant or placeholder also read outside `scope`); or why it cannot be done."""
    edits: dict[tuple[Path, int, int], Edit] = {}
    reasons: list[str] = []
    sites: dict[tuple[Path, int, int], Site] = {}
    for m in targets:
        site = ctx.locator.site(m.root, m.subscription)
        if isinstance(site, str):
            return f"{m.subscription.location.path}:{m.subscription.location.line}: {site}"
        mod = BY_NAME[site.slice.lang]
        text = mod.encode(site.slice.style, new)
        if text is None:
            return f"{new!r} cannot be written in the literal at {site.path}"
        sites[site.key] = site
        edits[site.key] = Edit(
            site.file, site.path, site.slice.lang, site.slice.start, site.slice.end, text, new, site.slice.style
        )
    for key, site in sites.items():
        if not site.name:
            continue
        sharing = [
            m
            for m in scope
            if (s := ctx.locator.site(m.root, m.subscription)) and not isinstance(s, str) and s.key == key
        ]
        claimed = [d for m in sharing if (d := ctx.locator.declaration(m.root, m.subscription.location)) is not None]
        outside = _uses_outside(site, claimed)
        if outside:
            shown = ", ".join(outside[:3]) + (f" and {len(outside) - 3} more" if len(outside) > 3 else "")
            reasons.append(
                f"'{site.name}' (defined at {site.path}) is also used at {shown}, outside the subscriptions fixed"
            )
        elif len(site.uses) < len(claimed) or not site.uses:
            reasons.append(f"no reference to '{site.name}' was found in the subscription itself")
        if site.doubt:
            reasons.append(site.doubt)
    return list(edits.values()), reasons


def _group_topic(ctx: Context, f: Finding) -> list[Member]:
    """The members of the finding's group (the sample's, for a finding confined to one sample: as the
    rules keep samples apart) that subscribe its topic."""
    consumers = [c for r in ctx.results for c in r.consumers]
    g = group_map(consumers, lambda c: sample_of(c, ctx.config)).groups.get(finding_key(f))
    if g is None:
        return []
    ids = {id(c) for c in g.members}
    return sorted(
        (m for m in ctx.members if id(m.consumer) in ids and m.active and m.subscription.topic.value == f.topic),
        key=_order,
    )


def plan_order(ctx: Context, f: Finding) -> Fix | str:
    """SG103: every member to the canonical text."""
    scope = _group_topic(ctx, f)
    raws = [m.subscription.expression.value for m in scope]
    if (
        not scope
        or any(r is None for r in raws)
        or any(m.subscription.expression_type is not ExpressionType.TAG for m in scope)
    ):
        return "a member's expression is not known or not a TAG expression"
    counts = Counter(raws)
    top = max(counts.values())
    canonical = next(r for r in raws if counts[r] == top)
    assert canonical is not None
    targets = [m for m in scope if m.subscription.expression.value != canonical]
    got = rewrite(ctx, targets, scope, canonical)
    if isinstance(got, str):
        return got
    edits, reasons = got
    desc = f"write {canonical!r} for topic '{f.topic}' in every member of group '{f.group}' ({top} of {len(scope)} write it)"
    return Fix(f.rule, f.fingerprint, UNSAFE if reasons else SAFE, desc, tuple(edits), tuple(reasons))


def _at(m: Member, loc: Location) -> bool:
    s = m.subscription
    mine = s.expression.location or s.location
    return (mine.path, mine.line, mine.column) == (loc.path, loc.line, loc.column)


def plan_smell(ctx: Context, f: Finding) -> Fix | str:
    """SG401: the normalised expression, when its meaning is unambiguous."""
    found = [
        m for m in ctx.members if m.active and _at(m, f.location) and (m.subscription.topic.value or "") == f.topic
    ]
    if not found:
        return "the subscription is not found"
    m = found[0]
    raw = m.subscription.expression.value
    if raw is None:
        return "the expression is not known"
    smell = next((sm for sm in smells(raw) if sm.message in f.message or f"({sm.code})" in f.message), None)
    meant = normalise(raw)
    if meant is None or smell is None:
        return "the expression's meaning is not clear: a person has to choose"
    new, safety, why = meant
    if smell.code in {sm.code for sm in smells(new)}:
        return f"normalising does not remove '{smell.code}'"
    scope = [
        x
        for x in ctx.members
        if x.consumer.group.value == m.consumer.group.value
        and x.subscription.topic.value == m.subscription.topic.value
        and x.active
    ]
    got = rewrite(ctx, found[:1], scope, new)
    if isinstance(got, str):
        return got
    edits, reasons = got
    if safety is UNSAFE:
        reasons.insert(0, why)
    return Fix(
        f.rule,
        f.fingerprint,
        UNSAFE if reasons else SAFE,
        f"write {new!r} instead of {raw!r}",
        tuple(edits),
        tuple(reasons),
    )


def plan_overridden(ctx: Context, f: Finding) -> Fix | str:
    """SG107: remove the overridden subscribe call (always unsafe)."""
    found = [m for m in ctx.members if not m.active and _at_call(m, f.location)]
    if not found:
        return "the overridden subscribe call is not found"
    m = found[0]
    loc = m.subscription.location
    mod = lang_of(loc.path)
    src = ctx.locator.source(m.root, loc.path)
    if mod not in (python, java) or src is None:
        return "only a subscribe call in Python or Java code can be removed"
    span = mod.statement(src, loc.line, loc.column)
    if isinstance(span, str):
        return span
    old = m.subscription.expression.value
    later = next(
        (s.expression.value for s in m.consumer.subscriptions if s.topic.value == m.subscription.topic.value), None
    )
    edit = Edit(src.path, loc.path, mod.LANG, span[0], span[1], "")
    why = (
        f"the later subscribe() with {later!r} already wins, but the removed call may register another listener or have "
        f"side effects, and its author expected {old!r}: decide whether both tag sets were meant"
    )
    desc = f"remove the overridden subscribe() of '{m.subscription.topic.value}' with {old!r}"
    return Fix(f.rule, f.fingerprint, UNSAFE, desc, (edit,), (why,))


def _at_call(m: Member, loc: Location) -> bool:
    s = m.subscription.location
    return (s.path, s.line, s.column) == (loc.path, loc.line, loc.column)


PLANNERS: dict[str, Callable[[Context, Finding], Fix | str]] = {
    "SG401": plan_smell,
    "SG103": plan_order,
    "SG107": plan_overridden,
}


def plan(
    results: Sequence[ScanResult], findings: Sequence[Finding], config: Config, locator: Locator | None = None
) -> dict[str, Fix | str]:
    """{finding fingerprint: its fix, or why it has none} for every unsuppressed fixable finding, in
    the order fixes are applied (SG401 before SG103: a normalised member then joins the majority)."""
    ctx = Context.of(results, config, locator)
    out: dict[str, Fix | str] = {}
    for rule, planner in PLANNERS.items():
        for f in findings:
            if f.rule == rule and f.suppressed is None and f.fingerprint not in out:
                out[f.fingerprint] = planner(ctx, f)
    return out
