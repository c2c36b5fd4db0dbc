"""Property tests: conservation for arbitrary groups, zero loss for consistent ones."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from subguard.simulate.engine import CATEGORIES, simulate_once
from subguard.simulate.scenario import compile_scenario, parse_scenario

EXPRESSIONS = ["*", "tagA", "tagB", "tagA || tagB", "tagB||tagA", " ", "tagC", "Aa", "BB"]
FAMILIES = ["java-push-4x", "java-lite-pull", "python-native-4x", "python-grpc-5x", "spring-listener"]
TAGS = ["tagA", "tagB", "tagC", "Aa", None]

member = st.fixed_dictionaries(
    {
        "expr": st.sampled_from(EXPRESSIONS),
        "second_topic": st.booleans(),
        "client": st.sampled_from(FAMILIES),
        "broadcasting": st.booleans(),
        "start": st.integers(0, 60_000),
        "restart": st.one_of(st.none(), st.tuples(st.integers(0, 120_000), st.integers(0, 40_000))),
        "persistent": st.booleans(),
        "stable": st.booleans(),
    }
)
mix = st.lists(
    st.tuples(st.sampled_from(TAGS), st.integers(0, 40), st.integers(0, 120_000), st.booleans()), min_size=1, max_size=5
)


def scenario(members: list[dict[str, Any]], messages: list[Any], queues: int, jitter: int) -> dict[str, Any]:
    return {
        "topics": {"T1": queues, "T2": 3},
        "jitter": jitter,
        "members": [
            {
                "name": f"m{i}",
                "subscriptions": {"T2" if m["second_topic"] else "T1": m["expr"]},
                "client": m["client"],
                "message_model": "BROADCASTING" if m["broadcasting"] else "CLUSTERING",
                "start": m["start"],
                "restarts": [{"at": m["start"] + m["restart"][0], "down": m["restart"][1]}] if m["restart"] else [],
                "offset_store": "persistent" if m["persistent"] else "ephemeral",
                "stable_client_id": m["stable"],
            }
            for i, m in enumerate(members)
        ],
        "messages": [
            {
                "topic": "T2" if second else "T1",
                "tag": tag,
                "count": count,
                "at": at,
                "interval": 7,
                "producer": f"p{n}",
            }
            for n, (tag, count, at, second) in enumerate(messages)
        ],
    }


@settings(max_examples=60, deadline=None)
@given(st.lists(member, min_size=1, max_size=4), mix, st.integers(1, 9), st.integers(0, 30), st.integers(0, 10**6))
def test_every_message_is_accounted_for_once_per_entity(
    members: list[dict[str, Any]], messages: list[Any], queues: int, jitter: int, seed: int
) -> None:
    for spec in compile_scenario(parse_scenario(scenario(members, messages, queues, jitter))):
        res = simulate_once(spec, seed)
        for entity, per_topic in res.tally.items():
            for topic, cats in per_topic.items():
                for k, sent in enumerate(res.sent[topic]):
                    assert sum(cats[c][k] for c in range(len(CATEGORIES))) == sent, (entity, topic, k)
        delivered = sum(cats[0][k] for per in res.tally.values() for cats in per.values() for k in range(len(cats[0])))
        assert delivered == sum(res.received.values())


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(EXPRESSIONS[:5]),
    st.sampled_from(FAMILIES),
    st.booleans(),
    st.lists(st.integers(0, 90_000), min_size=1, max_size=5),
    st.integers(1, 16),
    st.integers(0, 10**6),
)
def test_consistent_groups_lose_nothing_under_any_start_order(
    expr: str, client: str, broadcasting: bool, starts: list[int], queues: int, seed: int
) -> None:
    data = {
        "topics": {"T": queues},
        "members": [
            {
                "name": f"m{i}",
                "subscriptions": {"T": expr},
                "client": client,
                "start": s,
                "message_model": "BROADCASTING" if broadcasting else "CLUSTERING",
            }
            for i, s in enumerate(starts)
        ],
        "messages": [
            {"tag": tag, "count": 50, "at": max(starts) + 5_000, "interval": 13, "producer": f"p{n}"}
            for n, tag in enumerate(["tagA", "tagB", "tagC"])
        ],
    }
    for spec in compile_scenario(parse_scenario(data)):
        res = simulate_once(spec, seed)
        for per_topic in res.tally.values():
            for cats in per_topic.values():
                assert sum(cats[1]) == 0 and sum(cats[3]) == 0 and sum(cats[5]) == 0  # lost, skipped, stuck


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(EXPRESSIONS[:5]),
    st.sampled_from(FAMILIES),
    st.lists(st.integers(0, 90_000), min_size=1, max_size=5),
    st.integers(1, 16),
    st.integers(0, 300),
    st.integers(0, 10**6),
)
def test_consistent_groups_lose_nothing_while_members_join(
    expr: str, client: str, starts: list[int], queues: int, jitter: int, seed: int
) -> None:
    """Messages flow from t=0 while the members join in any order (CLUSTERING, one client family):
    nothing is lost, skipped or stuck (what predates the group's first offsets is its own category)."""
    data = {
        "topics": {"T": queues},
        "jitter": jitter,
        "members": [
            {"name": f"m{i}", "subscriptions": {"T": expr}, "client": client, "start": s} for i, s in enumerate(starts)
        ],
        "messages": [
            {"tag": tag, "count": 200, "at": 0, "interval": 503, "producer": f"p{n}"}
            for n, tag in enumerate(["tagA", "tagB", "tagC"])
        ],
    }
    for spec in compile_scenario(parse_scenario(data)):
        res = simulate_once(spec, seed)
        for per_topic in res.tally.values():
            for cats in per_topic.values():
                assert sum(cats[1]) == 0 and sum(cats[3]) == 0 and sum(cats[5]) == 0, cats  # lost, skipped, stuck


def test_same_seed_same_result() -> None:
    data = scenario(
        [
            {
                "expr": "tagA",
                "second_topic": False,
                "client": "java-push-4x",
                "broadcasting": False,
                "start": 0,
                "restart": (30_000, 5_000),
                "persistent": False,
                "stable": True,
            },
            {
                "expr": "tagB",
                "second_topic": False,
                "client": "java-push-4x",
                "broadcasting": False,
                "start": 3_000,
                "restart": None,
                "persistent": False,
                "stable": True,
            },
        ],
        [("tagA", 30, 10_000, False), ("tagB", 30, 12_000, False)],
        4,
        10,
    )
    spec = compile_scenario(parse_scenario(data))[0]
    assert simulate_once(spec, 7) == simulate_once(spec, 7)
