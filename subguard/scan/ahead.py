"""Parse a run's edited Python consumer files on the second core while the run loads.

A `check` after an edit of a file the Python extractor parsed pays for libcst's import (about a
fifth of a second) and the file's parse on the critical path, after the CLI, the config and the scan
of every other file. The run memo already knows which files changed since the run it recorded
(`subguard.scan.unread.changed_entries`): right after its replay misses, `start` forks one child that
parses those of them the last run parsed with the Python extractor (`parse_full`, the same function
on the same bytes as the extractor's memo), while this process imports the rest of subguard and
scans. The parse memo (`subguard.scan.parallel.Prefetcher`) takes the child's answer for a file
whose bytes it was given (`take`); a file that changed again, failed to parse or was never asked for
is parsed as without this module. When the replay waits on those parses to confirm it (an edited
consumer file whose new bytes may parse as the recorded ones: `subguard.scan.runmemo.PENDING`), the
run asks for them once it has loaded (`answered`, `parse_digest`). Standard library only: it is
loaded before the CLI.
"""

from __future__ import annotations

import os
import select
import signal

from subguard.scan import treestamp, unread

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

IMPORTS = ("subguard.extract.python.parse",)  # what the child imports (`_parse`), libcst with it
MOST_FILES = 8  # an edit larger than this is a bulk change: the extractor's own pool parses it
KIND = "python"  # the extractor whose full parses are taken ahead, and its memo kind
CONFIRM_SECONDS = 2.0  # how long a replay waits for the parses that may confirm it (`answered`)
_MISSING: Any = object()
_pending: treestamp.Pending | None = None
_answers: dict[tuple[str, str], tuple[float, bytes]] | None = None
_forked = False  # whether this run forked a child that parses (`forked`)


def start(changed: Mapping[str, tuple[Sequence[str], Mapping[str, str], int]]) -> None:
    """Fork the child that parses, for each root (its folder -> the entries that changed, the
    extractor that parsed each file last time and the size limit), the changed files the Python
    extractor parsed that are still regular files within the limit."""
    global _pending, _forked
    forget()
    _forked = False
    jobs: list[tuple[str, bytes]] = []
    for top, (paths, parsed, most) in changed.items():
        for rel in paths:
            if parsed.get(rel) != KIND or len(jobs) >= MOST_FILES:
                continue
            data = unread.read_regular(f"{top}/{rel}", most)  # never a FIFO, a link or a huge file
            if data is not None:
                jobs.append((rel, data))
    if jobs:
        _pending = treestamp.in_child(lambda: _parse(jobs))
        _forked = True


def _parse(jobs: Sequence[tuple[str, bytes]]) -> list[tuple[str, str, float, bytes]]:
    """In the child: (path, sha1 of the bytes, seconds taken, pickled parse) of each job that parsed
    without raising."""
    import hashlib
    import pickle
    import time

    from subguard.extract.python.parse import parse_full  # IMPORTS

    out: list[tuple[str, str, float, bytes]] = []
    for path, data in jobs:
        try:
            began = time.perf_counter()
            value = parse_full(path, data)
            took = time.perf_counter() - began
            out.append((path, hashlib.sha1(data).hexdigest(), took, pickle.dumps(value, pickle.HIGHEST_PROTOCOL)))
        except Exception:  # noqa: BLE001, S112 - the parse memo parses it again and reports it
            continue
    return out


def take(kind: str, path: str, digest: str, seconds: float) -> Any:
    """The child's parse of `path` when its bytes had the sha1 `digest` and it took less than
    `seconds` (the parse budget, as the memo's own parse would be given); `_MISSING` otherwise. The
    first call waits for the child (at most `seconds`; then it is stopped)."""
    global _answers
    if kind != KIND or (_pending is None and _answers is None):
        return _MISSING
    if _answers is None:
        _answers = _collect(seconds)
    answer = _answers.get((path, digest))
    if answer is None or (seconds > 0 and answer[0] >= seconds):
        return _MISSING
    import pickle

    return pickle.loads(answer[1])


def answered(seconds: float) -> bool:
    """Whether the child has answered, waiting for it at most `seconds` (it is never stopped here:
    a later `take` waits for it within the parse budget)."""
    global _answers
    if _answers is None and _pending is not None:
        ready, _, _ = select.select([_pending.fd], [], [], seconds)
        if ready:
            _answers = _collect(0)
    return _answers is not None


def parse_digest(path: str, digest: str) -> str | None:
    """The sha1 of the child's pickled parse of `path` when its bytes had the sha1 `digest` (what the
    parse memo's pickle of it would be: `subguard.core.cache.ContentCache.prints`), or None."""
    answer = _answers.get((path, digest)) if _answers is not None else None
    if answer is None:
        return None
    from hashlib import sha1

    return sha1(answer[1]).hexdigest()


def forked() -> bool:
    """Whether the last `start` forked a child that parses (which imported `IMPORTS`, not this one)."""
    return _forked


def missing(value: object) -> bool:
    return value is _MISSING


def _collect(seconds: float) -> dict[tuple[str, str], tuple[float, bytes]]:
    global _pending
    pending, _pending = _pending, None
    if pending is None:
        return {}
    ready, _, _ = select.select([pending.fd], [], [], seconds if seconds > 0 else None)
    if not ready:  # over the budget: the memo parses it here, under the budget, and reports it
        _stop(pending)
        return {}
    answer = pending.result()
    if not isinstance(answer, list):
        return {}
    return {
        (row[0], row[1]): (row[2], row[3])
        for row in answer
        if isinstance(row, tuple) and len(row) == 4 and isinstance(row[3], bytes)
    }


def forget() -> None:
    """Let the child of an earlier run go (a test runs many in one process)."""
    global _answers, _pending
    if _pending is not None:
        _stop(_pending)
    _pending, _answers = None, None


def _stop(pending: treestamp.Pending) -> None:
    try:
        os.kill(pending.pid, signal.SIGKILL)
    except OSError:
        pass
    pending.close()
