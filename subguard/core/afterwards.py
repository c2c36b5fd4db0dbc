"""Work a `check` does for the next run only (writing its caches, noting what it did not read), put
off until its answer is out.

A run's caches and run memo serve the runs after it; the user waiting for this one needs its report
and exit code. While `deferring` is active (the console entry's `check`, `subguard.cli.entry`),
`later` queues such work, and the entry does it, in order, once the report is written: a run a
resident server forked has sent its exit code by then, so its client is done before the caches are.
Anywhere else `later` does the work at once.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator

_QUEUE: list[Callable[[], None]] | None = None


def later(work: Callable[[], None]) -> None:
    """Do `work` once the run's answer is out (at once when no run defers)."""
    if _QUEUE is None:
        work()
    else:
        _QUEUE.append(work)


def now() -> None:
    """Do the work queued so far (a step that reads what it writes comes next)."""
    if _QUEUE is not None:
        _do(_QUEUE)


def _do(queue: list[Callable[[], None]]) -> None:
    """Each work of `queue`, in order, once (work it queues meanwhile too)."""
    while queue:
        queue.pop(0)()


@contextlib.contextmanager
def deferring() -> Iterator[Callable[[], None]]:
    """Queue `later` work within; yields what does the queued work (in order, each once). Work left
    queued when the block ends (an exception) is done then."""
    global _QUEUE
    outer, queue = _QUEUE, list[Callable[[], None]]()
    _QUEUE = queue
    try:
        yield functools.partial(_do, queue)
    finally:
        _QUEUE = outer
        _do(queue)
