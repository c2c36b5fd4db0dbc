"""Per-file parses spread over worker processes, handed to extractors through `RepoContext.memo`.

An extractor that knows its per-file parse up front calls `ctx.prefetch(kind, items, fn)` with a
picklable module-level `fn(path, data) -> facts`; the parses that the memo below would compute are
run in a process pool (fork, so imports are shared), and its later `memo(kind, path, data, ...)`
calls take the ready result. A parse that raises or runs over its time budget in a worker fails
that file exactly as the inline path would (`FileFailure`); a crashed worker process leaves every
file to the inline path. Parallelism never changes a result, only when it is computed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from subguard.core.cache import sha1
from subguard.core.limits import FileFailure, ParseTimeout, describe, time_budget
from subguard.scan import ahead

Memo = Callable[[str, str, bytes, Callable[[], Any]], Any]
ParseFn = Callable[[str, bytes], Any]

MIN_FILES = 16  # below this a pool costs more than it saves


def worker_count(configured: int) -> int:
    """`jobs` from config: 0 = as many as the machine has cores (capped at 8), else the number."""
    if configured > 0:
        return configured
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 8))


class _Failed:
    """A parse that raised or ran over its budget in a worker; `memo` raises it as `FileFailure`."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _run(job: tuple[ParseFn, str, bytes, float]) -> Any:
    fn, path, data, seconds = job
    try:
        with time_budget(seconds):  # the worker's main thread: SIGALRM applies
            return fn(path, data)
    except (Exception, ParseTimeout) as exc:  # noqa: BLE001 - attributed to the file, as inline
        return _Failed(describe(exc))


def pmap(fn: Callable[[Any], Any], items: Sequence[Any], jobs: int) -> list[Any] | None:
    """`[fn(x) for x in items]` over `jobs` forked worker processes; None when a pool cannot be used
    or a worker dies (the caller then computes inline). `fn` must be picklable and catch its own errors."""
    if jobs < 2 or len(items) < MIN_FILES:
        return None
    import multiprocessing  # here: a run with nothing to parse (most edited runs) never loads a pool
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    chunk = max(1, len(items) // (jobs * 4))
    try:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            return list(pool.map(fn, items, chunksize=chunk))
    except (BrokenProcessPool, OSError, RuntimeError):
        return None


class Prefetcher:
    """Wraps a memo: results computed ahead of time in workers are served first."""

    def __init__(
        self,
        inner: Memo,
        jobs: int,
        seconds: float,
        known: Callable[[str, str, bytes], bool] = lambda *_: False,
        digest: Callable[[bytes], str] = sha1,
    ) -> None:
        self._inner = inner
        self._jobs = jobs
        self._seconds = seconds
        self._known = known  # already in the persistent cache: no need to compute
        self._digest = digest  # the sha1 of a file's bytes (the content cache's, computed once per file)
        self._ready: dict[tuple[str, str, str], Any] = {}

    def _key(self, kind: str, path: str, data: bytes) -> tuple[str, str, str]:
        return kind, path, self._digest(data)

    def memo(self, kind: str, path: str, data: bytes, compute: Callable[[], Any]) -> Any:
        key = self._key(kind, path, data)
        if key not in self._ready and not ahead.missing(early := ahead.take(kind, path, key[2], self._seconds)):
            self._ready[key] = early  # parsed while the run loaded (`subguard.scan.ahead`)
        if key in self._ready:
            value = self._ready[key]  # kept: an isolation re-run of the extractor asks again
            if isinstance(value, _Failed):
                raise FileFailure(path, value.reason)
            return self._inner(kind, path, data, lambda: value)
        return self._inner(kind, path, data, compute)

    def prefetch(self, kind: str, items: Sequence[tuple[str, bytes]], fn: ParseFn) -> None:
        """Compute `fn(path, data)` for the items the memo does not have yet, in parallel."""
        todo = [(p, d) for p, d in items if not self._known(kind, p, d) and self._key(kind, p, d) not in self._ready]
        results = pmap(_run, [(fn, p, d, self._seconds) for p, d in todo], self._jobs)
        if results is None:
            return  # too few, one job, or a worker died: everything goes inline
        for (path, data), value in zip(todo, results):
            self._ready[self._key(kind, path, data)] = value
