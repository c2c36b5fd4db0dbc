"""Acceptance: the production failures of seeds 000, 002 and 004 come out of the model."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from subguard.simulate.runs import Report

Run = Callable[..., Report]


def test_seed002_winner_gets_4_5_or_6_with_quarter_half_quarter_odds(run_example: Run) -> None:
    runs = 800
    report = run_example("seed002-tags-race.yaml", runs, seed=2)
    c1, c2 = report.consumers["consumer1"], report.consumers["consumer2"]
    both = 0
    for res in report.results:
        got = sorted([res.received["consumer1"], res.received["consumer2"]])
        assert got[0] == 0 and got[1] in (4, 5, 6)  # one member gets nothing, the other 4-6 of 10
        winner = max(res.received, key=lambda n: res.received[n])
        assert max(res.winners, key=lambda n: res.winners[n]) == winner  # the broker held its subscription
        both += 1
    assert both == runs
    hist: dict[int, int] = {}
    for spread in (c1, c2):
        for value, n in spread.histogram:
            if value:
                hist[value] = hist.get(value, 0) + n
    assert abs(hist[4] / runs - 0.25) < 0.06
    assert abs(hist[5] / runs - 0.50) < 0.06
    assert abs(hist[6] / runs - 0.25) < 0.06
    # every run: the loser's tag is 100% lost, the winner's tag 40-60% lost
    win_runs = {name: w["runs"] for name, w in report.winners.items()}
    assert win_runs["consumer1"] + win_runs["consumer2"] == runs
    assert 0 < win_runs["consumer1"] < runs and 0 < win_runs["consumer2"] < runs  # the race is open
    total_lost = report.tags["tag1"].lost_mean + report.tags["tag2"].lost_mean
    assert total_lost == pytest.approx(20 - c1.mean - c2.mean)


def test_seed002_timeline_consumer2_rebalances_last_and_wins_every_run(run_example: Run) -> None:
    report = run_example("seed002-tags-timeline.yaml", 200, seed=3)
    assert report.consumers["consumer1"].max == 0
    assert {v for v, _ in report.consumers["consumer2"].histogram} <= {4, 5, 6}
    assert report.winners["consumer2"]["runs"] == 200 and "consumer1" not in report.winners
    assert report.tags["tag1"].loss_rate == 1.0
    assert 0.4 <= report.tags["tag2"].loss_rate <= 0.6


def test_seed004_ephemeral_store_loses_exactly_what_was_sent_while_down(run_example: Run) -> None:
    report = run_example("seed004-broadcast-ephemeral-stable-id.yaml", 20, seed=4)
    for res in report.results:
        back = min(t for t, what, who in res.trace if what == "rebalance_changed" and t > 90_000)
        # messages are sent at 10 s + k s; the member stopped at 60 s and read the max offset at `back`
        expected = sum(1 for k in range(120) if 60_000 <= 10_000 + k * 1000 < back)
        tally = res.tally["digg"]["digg-topic"]
        assert sum(tally[3]) == expected  # skipped
        assert sum(tally[1]) == 0  # nothing filtered
        assert res.received["digg"] == 120 - expected
        assert res.events["offset_moved"] == 4  # one jump per queue


def test_seed004_persistent_store_and_stable_id_lose_nothing(run_example: Run) -> None:
    report = run_example("seed004-broadcast-persistent-stable-id.yaml", 20, seed=4)
    assert report.consumers["digg"].min == 120
    assert report.tags["(untagged)"].lost_mean == 0


def test_seed004_persistent_store_with_a_new_ip_loses_again(run_example: Run) -> None:
    report = run_example("seed004-broadcast-persistent-new-ip.yaml", 20, seed=4)
    assert report.tags["(untagged)"].skipped_mean >= 30
    assert report.consumers["digg"].max <= 90


def test_seed000_join_gives_code_25_only_between_rebalance_and_heartbeat_and_no_loss(run_example: Run) -> None:
    report = run_example("seed000-join.yaml", 60, seed=5)
    seen = 0
    for res in report.results:
        for t, what, who in res.trace:
            if what != "25":
                continue
            seen += 1
            last_rebalance = max(x for x, w, m in res.trace if w == "rebalance_changed" and m == who and x <= t)
            landed = [x for x, w, m in res.trace if w == "heartbeat" and m == who and x > last_rebalance]
            assert landed and min(landed) > t, (t, who)  # its heartbeat had not landed yet
        assert res.events["subscription_not_exist"] == 0
    assert seen > 0  # the race does happen
    for stats in report.tags.values():
        assert stats.lost_mean == 0 and stats.stuck_mean == 0 and stats.loss_rate == 0
