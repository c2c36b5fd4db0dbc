"""The change, judged against the rollout that ships it (`check --base REF`): SG601 and SG602.

Base and head are the same repositories extracted at two revisions. Each head consumer is paired
with its base self by identity: the same file and group, else the same file in declaration order
(a rename keeps the construction), else the same group and service (a moved file). Then:

- SG601 subscription-changed-in-rolling-update: a paired member's topics, tag set, expression type,
  SQL92 text or message model differ, and the workloads that run the group replace pods while old
  ones still run (a Deployment's RollingUpdate, a StatefulSet or DaemonSet update, no workload at
  all: assumed rolling). During that overlap the group holds old and new members: rocketmq-semantics
  §10's "different tags/topics". Its impact is `simulate.impact.predict` on the mixed group of each
  rollout step (old members started first, the new pods after them).
- SG602 group-renamed: a consumer whose group at base is gone at head and whose head group is new:
  where the new group starts reading (§5.2-5.3) and the old group's abandoned backlog.

Members of repositories without a base (another repository's rows, such as an org map's) are old
for the whole rollout. Pure: `judge` passes the base results in (`Change`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from subguard.core.config import Config
from subguard.core.inventory import group_name, sort_consumers
from subguard.core.model import (
    BASE_REVISION,
    BEFORE_AFTER,
    POP_FAMILIES,
    Consumer,
    Deployment,
    ExpressionType,
    Finding,
    Location,
    MessageModel,
    Related,
    Severity,
)
from subguard.deploy.link import link
from subguard.rocketmq.expression import parse
from subguard.rules.engine import selected
from subguard.rules.policy import Policy
from subguard.scan.extraction import ScanResult
from subguard.simulate.impact import DEFAULT_RUNS, predict

CHANGED = "SG601"
RENAMED = "SG602"
MAX_PODS = 8  # a rollout step is simulated with at most this many pods of the rolling workload
MAX_STEPS = 4
ASSUMED_PODS = 2  # pods of a rolling update nobody declared (no workload, DaemonSet nodes)
NO_OVERLAP = frozenset({"Recreate"})
K8S_KINDS = frozenset({"Deployment", "DeploymentConfig", "Rollout", "ReplicaSet", "StatefulSet", "DaemonSet", "Pod"})
ONE_AT_A_TIME = frozenset({"StatefulSet", "DaemonSet", "Pod"})  # an old pod stops before its new one starts


@dataclass(frozen=True)
class Change:
    """What `judge` needs to judge a change: the base revision's scan results and its name."""

    base: tuple[ScanResult, ...]
    ref: str
    commit: str
    label: str  # `origin/main (1a2b3c4d5e6f)`
    runs: int = DEFAULT_RUNS

    @property
    def revision(self) -> tuple[tuple[str, str], ...]:
        return (("ref", self.ref), ("commit", self.commit))


# --- pairing -------------------------------------------------------------------------------------


def _members(consumers: Iterable[Consumer]) -> list[Consumer]:
    """Consumers that take part in a group (as `core.inventory.group_map` counts them)."""
    return sort_consumers([c for c in consumers if c.registers and not c.template and not c.startup_failure])


def pair(base: Sequence[Consumer], head: Sequence[Consumer]) -> list[tuple[Consumer, Consumer]]:
    """(base, head) consumer pairs: same file and group, else same file in declaration order, else
    same group and service (each key unique on both sides)."""
    pairs: list[tuple[Consumer, Consumer]] = []
    left, right = list(base), list(head)

    def by_key(key: Any) -> None:
        nonlocal left, right
        lk: dict[Any, list[Consumer]] = {}
        rk: dict[Any, list[Consumer]] = {}
        for c in left:
            lk.setdefault(key(c), []).append(c)
        for c in right:
            rk.setdefault(key(c), []).append(c)
        taken: set[int] = set()
        for k, ls in lk.items():
            rs = rk.get(k, [])
            if k is None or not rs:
                continue
            if len(ls) == len(rs) == 1 or key is _in_file:
                for b, h in zip(ls, rs):
                    pairs.append((b, h))
                    taken |= {id(b), id(h)}
        left = [c for c in left if id(c) not in taken]
        right = [c for c in right if id(c) not in taken]

    by_key(_same_group_file)
    by_key(_in_file)
    by_key(_same_group_service)
    return pairs


def _same_group_file(c: Consumer) -> tuple[str, str, str] | None:
    name = group_name(c)
    return None if name is None else (c.repo, c.location.path, name)


def _in_file(c: Consumer) -> tuple[str, str]:
    return c.repo, c.location.path


def _same_group_service(c: Consumer) -> tuple[str, str, str] | None:
    name = group_name(c)
    return None if name is None else (c.repo, c.service, name)


# --- what changed --------------------------------------------------------------------------------

Sig = tuple[str, bool, tuple[str, ...], str]  # expression type, match-all, sorted tags, SQL92 text


def _view(c: Consumer) -> dict[str, tuple[Sig, str]] | None:
    """topic -> (what the broker filters by, the expression as written); None when a value is unknown."""
    out: dict[str, tuple[Sig, str]] = {}
    for s in c.subscriptions:
        topic, expr = s.topic.value, s.expression.value
        if topic is None or expr is None:
            return None
        parsed = parse(expr, s.expression_type)
        sql = expr.strip() if s.expression_type is ExpressionType.SQL92 else ""
        out[topic] = ((s.expression_type.value, parsed.sub_string == "*", tuple(sorted(set(parsed.tags))), sql), expr)
    return out


def _shown(sig: Sig, expr: str) -> str:
    return f"SQL92 `{expr}`" if sig[0] == ExpressionType.SQL92.value else f"`{expr}`"


def differences(b: Consumer, h: Consumer) -> tuple[list[str], list[tuple[str, str, str]]] | None:
    """What differs between a member's base and head subscriptions, as short phrases (`TopicOrders:
    +refunded`), and (topic, before, after) rows; None when either side holds an unknown value."""
    vb, vh = _view(b), _view(h)
    if vb is None or vh is None or b.message_model.value is None or h.message_model.value is None:
        return None
    phrases: list[str] = []
    rows: list[tuple[str, str, str]] = []
    for topic in sorted(set(vb) | set(vh)):
        before, after = vb.get(topic), vh.get(topic)
        if before is not None and after is not None and before[0] == after[0]:
            continue
        if before is None and after is not None:
            phrases.append(f"+topic {topic}")
        elif after is None and before is not None:
            phrases.append(f"-topic {topic}")
        elif before is not None and after is not None:
            (sb, eb), (sa, ea) = before, after
            if sb[0] == sa[0] == ExpressionType.TAG.value and not sb[1] and not sa[1]:
                plus = [t for t in sa[2] if t not in sb[2]]
                minus = [t for t in sb[2] if t not in sa[2]]
                phrases.append(f"{topic}: " + " ".join([*(f"+{t}" for t in plus), *(f"-{t}" for t in minus)]))
            else:
                phrases.append(f"{topic}: {_shown(sb, eb)} -> {_shown(sa, ea)}")
        rows.append((topic, _shown(*before) if before else "-", _shown(*after) if after else "-"))
    if b.message_model.value != h.message_model.value:
        phrases.append(f"{b.message_model.value} -> {h.message_model.value}")
        rows.append(("(message model)", str(b.message_model.value), str(h.message_model.value)))
    return phrases, rows


# --- the rollout ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rollout:
    """How one workload replaces its pods: how many, whether old and new overlap, and the steps."""

    workload: str  # `Deployment 'orders' (3 replicas, RollingUpdate)`
    pods: int
    overlaps: bool
    surge: bool  # a new pod starts before an old one stops (Deployment RollingUpdate)
    assumed: str = ""  # what was assumed, said in the message

    def steps(self) -> list[tuple[int, int]]:
        """(new pods, old pods) of each step with both, at most MAX_STEPS of them, scaled to MAX_PODS."""
        n = self.pods
        raw = [(k, n - k + 1) for k in range(1, n + 1)] if self.surge else [(k, n - k) for k in range(1, n)]
        if not raw:
            raw = [(1, 1)]
        if len(raw) > MAX_STEPS:
            picks = sorted({round(i * (len(raw) - 1) / (MAX_STEPS - 1)) for i in range(MAX_STEPS)})
            raw = [raw[i] for i in picks]
        scale = max(1.0, n / MAX_PODS)
        return list(dict.fromkeys((max(1, round(a / scale)), max(1, round(b / scale))) for a, b in raw))

    def span(self) -> str:
        """`1-3 of 3 pods`: how many pods run the new subscription while old ones still run."""
        last = self.pods if self.surge else self.pods - 1
        return f"1 of {self.pods} pods" if last <= 1 else f"1-{last} of {self.pods} pods"


def rollout(dep: Deployment) -> Rollout:
    """How a workload's pods are replaced when its template changes: Kubernetes' defaults where the
    manifest is silent (1 replica; RollingUpdate with a surge pod for Deployments, one pod at a time
    for StatefulSets and DaemonSets), an assumed rolling update for anything else (compose, a
    Dockerfile, Helm values), said in the text."""
    kind, strategy = dep.kind, dep.strategy
    assumed: list[str] = []
    if kind == "DaemonSet":
        pods = ASSUMED_PODS
        assumed.append(f"one pod per node, {ASSUMED_PODS} nodes assumed")
    elif dep.replicas is not None:
        pods = max(dep.replicas, 1)
    elif kind in K8S_KINDS:
        pods = 1  # Kubernetes' default replicas
    else:
        pods = ASSUMED_PODS
        assumed.append(f"{ASSUMED_PODS} instances assumed")
    if kind not in K8S_KINDS:
        assumed.append(f"{kind or 'workload'} updates assumed rolling")
    surge = kind not in ONE_AT_A_TIME
    overlaps = strategy not in NO_OVERLAP and kind != "Pod" and (surge or pods > 1)
    how = strategy or ("replaced" if kind == "Pod" else "rolling update assumed")
    noun = "replica" if pods == 1 else "replicas"
    what = f"{kind} '{dep.name}'" if dep.name else kind
    return Rollout(f"{what} ({pods} {noun}, {how})", pods, overlaps, surge, "; ".join(assumed))


NO_WORKLOAD = Rollout(
    "no workload in this repository (a rolling update is assumed)",
    ASSUMED_PODS,
    True,
    False,
    f"{ASSUMED_PODS} instances assumed",
)


def _workloads(deps: Iterable[Deployment]) -> list[Deployment]:
    """One deployment record per workload (a workload has one per container)."""
    seen: dict[tuple[str, str, str, str], Deployment] = {}
    for d in deps:
        seen.setdefault((d.location.path, d.kind, d.namespace, d.name), d)
    return [seen[k] for k in sorted(seen)]


# --- the simulated overlap -----------------------------------------------------------------------


def _instance(c: Consumer, phase: str, n: int) -> Consumer:
    """Pod `n` of a member at `phase` ("0-old" starts before "1-new": the group map orders by repo)."""
    return c.model_copy(update={"consumer_id": f"{c.consumer_id}#{phase}{n}", "repo": f"{phase}:{c.repo}"})


def overlap_loss(
    old: Sequence[Consumer],
    new: Sequence[Consumer],
    steady: Sequence[Consumer],
    plan: Rollout,
    runs: int,
) -> list[tuple[str, float, float]]:
    """(tag label, lowest, highest loss rate) over the rollout's steps: at each step the changed
    members' old versions on the old pods, their new versions on the new pods (started last), and the
    group's unchanged members once, predicted by `simulate.impact.predict`."""
    per_step: list[dict[str, float]] = []
    for new_pods, old_pods in plan.steps():
        members = [_instance(c, "0-steady", 0) for c in steady]
        members += [_instance(c, "0-old", i) for c in old for i in range(old_pods)]
        members += [_instance(c, "1-new", i) for c in new for i in range(new_pods)]
        impact = predict(members, runs)
        got = dict(impact.loss)
        for label, rate in impact.stuck:
            got[label] = got.get(label, 0.0) + rate
        per_step.append(got)
    labels = sorted({label for got in per_step for label in got})
    spans = [(label, [got.get(label, 0.0) for got in per_step]) for label in labels]
    return [(label, min(v), max(v)) for label, v in spans if max(v) > 0]


def _percent(rate: float) -> str:
    return f"{rate * 100:.0f}%" if rate >= 0.01 else "<1%"


def _span(lo: float, hi: float) -> str:
    """`25-75%`, or one figure when the steps agree."""
    a, b = _percent(lo), _percent(hi)
    if a == b:
        return a
    return f"{a}-{b}" if a.startswith("<") else f"{a.rstrip('%')}-{b}"


def loss_text(plan: Rollout, losses: Sequence[tuple[str, float, float]], runs: int) -> str:
    """`while 1-3 of 3 pods run the new subscription: refunded 25-50% lost (simulated, 20 runs per step)`."""
    where = f"while {plan.span()} run the new subscription"
    if not losses:
        return f"{where}: no loss predicted (simulated, {runs} runs per step)"
    parts = [f"{label} {_span(lo, hi)} lost" for label, lo, hi in losses]
    return f"{where}: {', '.join(parts)} (simulated, {runs} runs per step)"


# --- the rules -----------------------------------------------------------------------------------


def _format(policies: Mapping[str, Policy], rule: str, fallback: str, fields: Mapping[str, str]) -> str:
    policy = policies.get(rule)
    try:
        return (policy.message if policy is not None else fallback).format(**fields)
    except (KeyError, IndexError, ValueError):
        return fallback.format(**fields)


def _severity(policies: Mapping[str, Policy], rule: str, default: Severity) -> Severity:
    policy = policies.get(rule)
    return policy.severity if policy is not None else default


def changed_in_rollout(
    head: Sequence[ScanResult],
    change: Change,
    policies: Mapping[str, Policy],
    config: Config,
) -> list[Finding]:
    """SG601 for each group whose members' subscription changes while its workloads overlap."""
    base_repos = {r.repo for r in change.base}
    head_all = [c for r in head for c in r.consumers]
    own = _members(c for c in head_all if c.repo in base_repos)
    others = _members(c for c in head_all if c.repo not in base_repos)
    base = _members(c for r in change.base for c in r.consumers)
    links = link(head_all, [d for r in head for d in r.deployments], config)
    changed: dict[str, list[tuple[Consumer, Consumer, list[str], list[tuple[str, str, str]]]]] = {}
    for b, h in pair(base, own):
        name = group_name(h)
        if name is None or name != group_name(b):
            continue
        diff = differences(b, h)
        if diff is not None and diff[0]:
            changed.setdefault(name, []).append((b, h, *diff))
    out: list[Finding] = []
    for name in sorted(changed):
        rows = changed[name]
        moved = {id(h) for _, h, _, _ in rows}
        steady = [c for c in [*own, *others] if group_name(c) == name and id(c) not in moved]
        deps = _workloads(d for _, h, _, _ in rows for d in links.deployments_of(h))
        plans = [rollout(d) for d in deps] or [NO_WORKLOAD]
        elsewhere = _workloads(d for c in steady for d in links.deployments_of(c) if d not in deps)
        foreign = [c for c in steady if c.repo not in base_repos]
        if not any(p.overlaps for p in plans) and not elsewhere and not foreign:
            continue  # replaced all at once, and nothing else runs the group
        plan = next((p for p in plans if p.overlaps), plans[0])
        losses = overlap_loss([b for b, _, _, _ in rows], [h for _, h, _, _ in rows], steady, plan, change.runs)
        out.append(_changed_finding(name, rows, plans, elsewhere, foreign, plan, losses, change, policies))
    return out


def _changed_finding(
    name: str,
    rows: Sequence[tuple[Consumer, Consumer, list[str], list[tuple[str, str, str]]]],
    plans: Sequence[Rollout],
    elsewhere: Sequence[Deployment],
    foreign: Sequence[Consumer],
    plan: Rollout,
    losses: Sequence[tuple[str, float, float]],
    change: Change,
    policies: Mapping[str, Policy],
) -> Finding:
    phrases = list(dict.fromkeys(p for _, _, ps, _ in rows for p in ps))
    workloads = [p.workload for p in plans] + [f"{rollout(d).workload}, not changed" for d in elsewhere]
    if foreign:
        repos = sorted({c.repo for c in foreign})
        workloads.append(f"members in {', '.join(repos)} (old for the whole rollout)")
    assumed = sorted({p.assumed for p in plans if p.assumed})
    fields = {
        "group": name,
        "change": "; ".join(phrases),
        "workloads": "; ".join(workloads),
        "base": change.label,
        "assumed": f" ({'; '.join(assumed)})" if assumed else "",
    }
    message = _format(
        policies,
        CHANGED,
        "Group '{group}' changes its subscription ({change}) since {base}, and "
        "{workloads} runs old and new members side by side during the rollout{assumed}",
        fields,
    )
    first_b, first_h, _, first_rows = rows[0]
    topic = first_rows[0][0] if first_rows and not first_rows[0][0].startswith("(") else ""
    location = _subscription_location(first_h, topic)
    related = tuple(
        Related(location=_subscription_location(h, ""), message="changed member") for _, h, _, _ in rows[1:]
    )
    table = tuple(
        (f"{h.location.path}:{h.location.line}", t, before, after) for _, h, _, rs in rows for t, before, after in rs
    )
    return Finding(
        rule=CHANGED,
        severity=_severity(policies, CHANGED, Severity.WARNING),
        message=message,
        location=location,
        related=related,
        group=name,
        topic=topic,
        impact=loss_text(plan, losses, change.runs),
        properties=((BASE_REVISION, change.revision), (BEFORE_AFTER, table)),
    )


def _subscription_location(c: Consumer, topic: str) -> Location:
    for s in c.subscriptions:
        if not topic or s.topic.value == topic:
            return s.location
    return c.location


def start_text(c: Consumer) -> str:
    """Where a consumer of a new group starts reading (rocketmq-semantics §5.2-5.3)."""
    if c.client in POP_FAMILIES:
        return (
            "where the broker starts a group it has no progress for (consumeFromWhere does not apply to "
            "5.x gRPC consumers)"
        )
    cfw = c.consume_from_where.value if c.consume_from_where is not None else "CONSUME_FROM_LAST_OFFSET"
    if cfw is None:
        return "where its consumeFromWhere says (not statically known)"
    broadcasting = c.message_model.value == MessageModel.BROADCASTING.value
    if "FIRST" in cfw or cfw.endswith("MIN_OFFSET"):
        return "at offset 0 of each queue (CONSUME_FROM_FIRST_OFFSET): it reads every retained message again"
    if "TIMESTAMP" in cfw:
        return (
            "at the offset of its consumeTimestamp (CONSUME_FROM_TIMESTAMP, default 30 minutes before it starts): "
            "messages around the cut-over are read twice or skipped"
        )
    young = "" if broadcasting else ", except on a queue so young that offset 0 is still in memory, read from 0"
    return (
        f"at the newest offset of each queue ({cfw}{', the default' if c.consume_from_where is None else ''}){young}: "
        "messages sent before its first start are never delivered to it"
    )


def renamed(head: Sequence[ScanResult], change: Change, policies: Mapping[str, Policy]) -> list[Finding]:
    """SG602 for each consumer whose base group is gone at head and whose head group is new."""
    base_repos = {r.repo for r in change.base}
    head_all = _members(c for r in head for c in r.consumers)
    base_all = _members(c for r in change.base for c in r.consumers)
    head_groups = {group_name(c) for c in head_all}
    base_groups = {group_name(c) for c in base_all}
    out: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for b, h in pair(base_all, [c for c in head_all if c.repo in base_repos]):
        old, new = group_name(b), group_name(h)
        if old is None or new is None or old == new or old in head_groups or new in base_groups or (old, new) in seen:
            continue
        seen.add((old, new))
        fields = {"group": new, "old_group": old, "start": start_text(h), "base": change.label}
        message = _format(
            policies,
            RENAMED,
            "Group '{old_group}' is renamed to '{group}' since {base}: '{group}' has no "
            "offsets, so it starts {start}; the backlog '{old_group}' had not consumed is abandoned "
            "unless it is drained first",
            fields,
        )
        where = h.group.location or h.location
        out.append(
            Finding(
                rule=RENAMED,
                severity=_severity(policies, RENAMED, Severity.NOTE),
                message=message,
                location=where,
                group=new,
                properties=(
                    (BASE_REVISION, change.revision),
                    (BEFORE_AFTER, ((f"{h.location.path}:{h.location.line}", "(group)", f"`{old}`", f"`{new}`"),)),
                ),
            )
        )
    return out


def change_findings(
    head: Sequence[ScanResult], change: Change, policies: Sequence[Policy], config: Config
) -> list[Finding]:
    """Every selected SG6xx finding of the change from `change.base` to `head`."""
    by_id = {p.id: p for p in policies}
    out: list[Finding] = []
    if selected(CHANGED, config) and CHANGED in by_id:
        out += changed_in_rollout(head, change, by_id, config)
    if selected(RENAMED, config) and RENAMED in by_id:
        out += renamed(head, change, by_id)
    return out
