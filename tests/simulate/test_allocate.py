"""AllocateMessageQueueAveragely against a table written from the fact sheet's prose (§4.2)."""

from __future__ import annotations

import pytest

from subguard.simulate.allocate import averagely, by_circle


def prose_table(queues: int, consumers: int) -> list[list[int]]:
    """Independent derivation: hand out queues in order, in contiguous blocks; when there are at least
    as many consumers as queues each of the first `queues` consumers gets one; otherwise every
    consumer gets the floor share and the first (queues mod consumers) consumers one more."""
    blocks: list[list[int]] = []
    if queues <= consumers:
        return [[q] for q in range(queues)] + [[] for _ in range(consumers - queues)]
    base, extra = queues // consumers, queues % consumers
    nxt = 0
    for c in range(consumers):
        size = base + (1 if c < extra else 0)
        blocks.append(list(range(nxt, nxt + size)))
        nxt += size
    return blocks


@pytest.mark.parametrize("queues", range(1, 65))
def test_averagely_matches_the_prose_for_every_size(queues: int) -> None:
    for consumers in range(1, 65):
        cids = [f"c{i:02d}" for i in range(consumers)]
        expected = prose_table(queues, consumers)
        got = [list(averagely(cid, queues, cids)) for cid in cids]
        assert got == expected, (queues, consumers)
        flat = sorted(q for block in got for q in block)
        assert flat == list(range(queues))  # every queue exactly once


def test_worked_examples_of_the_sheet() -> None:
    cids = ["c0", "c1", "c2"]
    assert [averagely(c, 8, cids) for c in cids] == [(0, 1, 2), (3, 4, 5), (6, 7)]
    assert [averagely(c, 2, cids) for c in cids] == [(0,), (1,), ()]


def test_duplicate_id_takes_the_first_slot_and_strands_the_rest() -> None:
    cids = ["x", "x"]
    assert averagely("x", 4, cids) == (0, 1)
    assert averagely("y", 4, cids) == ()  # "[BUG] not in cidAll"


def test_empty_inputs_raise() -> None:
    with pytest.raises(ValueError):
        averagely("a", 0, ["a"])
    with pytest.raises(ValueError):
        averagely("a", 4, [])


def test_by_circle_deals_queues_round_robin() -> None:
    cids = ["a", "b", "c"]
    assert [by_circle(c, 8, cids) for c in cids] == [(0, 3, 6), (1, 4, 7), (2, 5)]
