"""Queue allocation strategies of remoting clients (rocketmq-semantics.md §4.2).

Both functions take the sorted queue list and the sorted client-id list the client fetched from the
broker and return the indices into the queue list that `current` gets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

Strategy = Callable[[str, int, Sequence[str]], tuple[int, ...]]


def _index(current: str, cids: Sequence[str]) -> int:
    """First index of `current` in cidAll (a duplicated id takes its first slot), -1 if absent."""
    try:
        return list(cids).index(current)
    except ValueError:
        return -1


def averagely(current: str, queue_count: int, cids: Sequence[str]) -> tuple[int, ...]:
    """`AllocateMessageQueueAveragely` (AVG): contiguous blocks, the first M mod N clients one larger."""
    if queue_count <= 0 or not cids or not current:
        raise ValueError("current id, queue list and id list must be non-empty")
    i = _index(current, cids)
    if i < 0:
        return ()
    n = len(cids)
    mod = queue_count % n
    if queue_count <= n:
        size = 1
    else:
        size = queue_count // n + (1 if i < mod else 0)
    start = i * size if i < mod else i * size + mod
    span = min(size, queue_count - start)
    return tuple(range(start, start + span)) if span > 0 else ()


def by_circle(current: str, queue_count: int, cids: Sequence[str]) -> tuple[int, ...]:
    """`AllocateMessageQueueAveragelyByCircle`: every N-th queue starting at the client's index."""
    if queue_count <= 0 or not cids or not current:
        raise ValueError("current id, queue list and id list must be non-empty")
    i = _index(current, cids)
    if i < 0:
        return ()
    return tuple(range(i, queue_count, len(cids)))


STRATEGIES: dict[str, Strategy] = {"AVG": averagely, "AVG_BY_CIRCLE": by_circle}
