"""Subscriptions of one topic written in branches of one another: which one a consumer registers.

A consumer keeps one subscription per topic: a later `subscribe` of the topic replaces the earlier.
It replaces it for sure only when it runs whenever the earlier one ran: it is in the same branches
of its method, or in fewer of them (an `if`'s body after a subscription before the `if`: it does).
Otherwise, in the other arm of an `if` / `else` or `switch`, or further in (`if (tags != null)` after
a subscription of '*'), both may be what is registered: the topic is subscribed as one of them,
chosen at run time, its expression unknown (`one_of`)."""

from __future__ import annotations

from collections.abc import Sequence

from subguard.core.model import Subscription, Value

# where a call is among its method's branches, outermost first: (file, the branching statement, the arm taken)
Branch = tuple[tuple[str, int, int], ...]


# a subscription with the branches it was written in
Written = tuple[Subscription, Branch]


def runs_after(later: Branch, earlier: Branch) -> bool:
    """Whether a call in the branches `later`, made after one in `earlier`, runs whenever that one
    ran: `later`'s branches are the outermost of `earlier`'s (or none)."""
    return earlier[: len(later)] == later


def subscribe_again(
    earlier: Sequence[Written], sub: Subscription, branch: Branch
) -> tuple[list[Written], list[Subscription]]:
    """A later `subscribe` of a topic (`sub`, written in `branch`) after the subscriptions the topic
    may be (`earlier`): those it may be now, and those `sub` overrides (each it runs after whenever
    that one ran). The topic is subscribed as `one_of` the first."""
    live: list[Written] = []
    overridden: list[Subscription] = []
    for old, where in earlier:
        if runs_after(branch, where):
            overridden.append(old)
        else:
            live.append((old, where))
    live.append((sub, branch))
    return live, overridden


def one_of(subs: tuple[Subscription, ...]) -> Subscription:
    """The subscription of a topic that may be any of `subs` (in the order written): the one when they
    all subscribe the same known expression, else one whose expression is unknown, with them as its
    alternatives."""
    last = subs[-1]
    if (
        len(subs) == 1
        or last.expression.known
        and all((s.expression.value, s.expression_type) == (last.expression.value, last.expression_type) for s in subs)
    ):
        return last
    first = subs[0]
    lines = ", ".join(str(s.location.line) for s in subs)
    why = f"one of {len(subs)} subscriptions of this topic, chosen at run time by the branch taken (lines {lines})"
    return Subscription(
        topic=last.topic,
        expression=Value.unknown(why, first.location),
        expression_type=first.expression_type,
        location=first.location,
        alternatives=subs,
    )
