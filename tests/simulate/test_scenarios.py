"""Scenario-level behaviours of §10: different topics, mixed generations, pop, rolling deploys."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from subguard.simulate.runs import Report

Run = Callable[..., Report]


def two(expr_a: str, expr_b: str, **b: Any) -> dict[str, Any]:
    return {
        "topics": {"T": 4},
        "members": [
            {"name": "a", "subscriptions": {"T": expr_a}},
            {"name": "b", "subscriptions": {"T": expr_b}, "start": 5000, **b},
        ],
        "messages": [{"tag": t, "count": 100, "at": 30_000, "interval": 20, "producer": t} for t in ("TagA", "TagB")],
    }


def test_cpp_member_with_the_newest_subversion_poisons_java_push_members(run_dict: Run) -> None:
    # the C++ host's clock runs a minute ahead: its heartbeat holds G[T] with atoi codes (0)
    report = run_dict(two("TagA", "TagA", client="python-native-4x", clock_skew="60s"), 10)
    assert report.consumers["a"].max == 0  # Java push member: filtered by code 0, then by its own tags
    assert report.consumers["b"].min > 0  # the C++ member filters with its own expression
    assert report.winners["b"]["share"] == 1.0
    assert report.tags["TagA"].loss_rate > 0.3


def test_own_expression_clients_lose_the_other_tag_in_their_queues(run_dict: Run) -> None:
    report = run_dict(two("TagA", "TagB", client="java-lite-pull") | {"client": "java-lite-pull"}, 10)
    assert report.events["subscription_not_latest"].max == 0  # requests carry their own expression
    for tag in ("TagA", "TagB"):
        assert 0.3 < report.tags[tag].loss_rate < 0.7


def test_different_topics_flip_the_table_and_strand_queues(run_dict: Run) -> None:
    data = {
        "topics": {"T1": 4, "T2": 4},
        "members": [
            {"name": "a", "subscriptions": {"T1": "*"}},
            {"name": "b", "subscriptions": {"T2": "*"}, "start": 5000},
        ],
        "messages": [{"topic": t, "count": 200, "at": 30_000, "interval": 50, "producer": t} for t in ("T1", "T2")],
    }
    report = run_dict(data, 5)
    assert report.events["subscription_not_exist"].min > 0  # 24 after the other member's heartbeat
    for tag in report.tags.values():
        assert tag.stuck_mean == 100  # half of each topic sits in the other member's share
        assert tag.lost_mean == 0


def test_pop_members_skip_non_matching_messages_group_wide(run_dict: Run) -> None:
    data = two("TagA", "TagB", client="python-grpc-5x") | {"client": "python-grpc-5x"}
    report = run_dict(data, 10)
    for tag in ("TagA", "TagB"):
        assert 0.3 < report.tags[tag].loss_rate < 0.7  # whoever pops first decides
    assert report.tags["TagA"].stuck_mean == 0


def test_rolling_deploy_loses_only_while_versions_are_mixed(run_example: Run) -> None:
    report = run_example("rolling-deploy.yaml", 5)
    assert report.tags["TagA"].lost_mean == 0
    assert 0 < report.tags["TagB"].lost_mean < report.tags["TagB"].sent
    assert report.tags["TagB"].unwanted_mean > 0  # before the deploy nobody wanted TagB


def test_old_clients_retry_after_3_seconds(run_dict: Run) -> None:
    data = {
        "topics": {"T1": 4, "T2": 4},
        "members": [
            {"name": "a", "subscriptions": {"T1": "*"}, "retry_delay": "3s"},
            {"name": "b", "subscriptions": {"T2": "*"}, "start": 5000, "retry_delay": "3s"},
        ],
        "messages": [{"topic": "T1", "count": 3000, "at": 10_000, "interval": 50}],  # always something to pull
    }
    fast = {**data, "members": [{k: v for k, v in m.items() if k != "retry_delay"} for m in data["members"]]}
    slow_24 = run_dict(data, 3).events["subscription_not_exist"].mean
    fast_24 = run_dict(fast, 3).events["subscription_not_exist"].mean
    assert 2.5 < fast_24 / slow_24 < 3.5
