"""The check a resident server runs ahead after an edit, so that the commit that follows replays it.

A pre-commit hook runs `check` a few seconds after the edits it checks were saved. A server that
watches the scan roots (`subguard.scan.watch`: a root inside a git work tree is watched for this
alone, its excluded folders such as `.git` left out) sees the edit when it is saved; once the roots
have been quiet for `QUIET` seconds (longer than the run memo's racy window: a run that lists a file
changed within it is not memoised), it forks the latest served check again, as its client asked it,
with /dev/null for its streams. That run replays or runs and records its memo entry as any run does
(`subguard.scan.runrecord`); the client's check that comes next is forked as always and replays the
entry when nothing changed since the run ahead listed the tree (else it runs: the memo's own
checks decide, as for every replay). A client asking for that same check while it runs waits for it
(at most `MOST_WAIT` seconds) instead of doing the same work beside it.

Only a check that can be replayed is run ahead: its client's stdout and stderr were not terminals
(the memo is keyed by that: a hook runner's pipes are not), and its memo entry (read in the server
once the run ended, `subguard.core.kept`) wrote no file but a character device (`--output report.json`
is never written before the user asks for it; `--output /dev/null` is). A change the roots' stamps do
not show (the cache folder, the run's own outputs) starts nothing, so a run ahead never starts
another. `subguard serve --no-ahead` turns it off.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass, field
from typing import Any

from subguard.core import kept
from subguard.scan import runmemo, watch

QUIET = 0.15  # seconds without a change of a watched root before a run ahead starts (> RACY_NS)
MOST_WAIT = 10.0  # seconds a client's check waits for the run ahead of it
assert runmemo.RACY_NS / 1e9 < QUIET  # noqa: S101 - a run ahead that lists a racy file records nothing


def identity(request: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two requests the same check: argv, working directory, environment and umask."""
    env = request.get("env") or {}
    return (tuple(request.get("argv") or ()), request.get("cwd"), tuple(sorted(env.items())), request.get("umask"))


def replayable(memos: list[str], ttys: bool) -> bool:
    """Whether a served run (the memo entries it named, whether its client's stdout or stderr was a
    terminal) may be run ahead: its entry is held and wrote nothing but character devices."""
    if ttys:
        return False
    for path in memos:
        entry = kept.held(runmemo.KEPT_KIND, path)
        if isinstance(entry, dict) and path.endswith(".memo"):
            written = entry.get("outputs", {}).get("files", {})
            return isinstance(written, dict) and all(_device(target) for target in written)
    return False


def _digests() -> dict[Any, str | None]:
    """The digest of each watched root (its newest ctime aside: the cache folder inside a root moves
    that, not the digest, and a root's digest is what a memo entry compares)."""
    roots = {**watch.stamps(watch.ROOT), **watch.stamps(watch.WORK_TREE)}
    return {key: stamp[0] if stamp is not None else None for key, stamp in roots.items()}


def _device(path: str) -> bool:
    try:
        return stat.S_ISCHR(os.stat(path).st_mode)
    except OSError:
        return False


@dataclass
class Ahead:
    """The server's run ahead: the check to run (`plan`), when (`due`), the one running (`pid`), and
    the watched roots' digests as last seen (`stamps`)."""

    enabled: bool = True
    plan: dict[str, Any] | None = None
    due: float | None = None
    pid: int | None = None
    started: int = 0
    waited: int = 0  # client requests held until the run ahead of them ended
    stamps: dict[Any, str | None] = field(default_factory=dict)

    def learn(self, request: dict[str, Any], memos: list[str], ttys: bool) -> None:
        """A client's run ended: its check is the one to run ahead next, when it may be (else none is).
        A change already seen since (`due`) still runs it ahead; else the roots as they are now are
        what that run saw, or older."""
        self.plan = request if self.enabled and replayable(memos, ttys) else None
        if self.due is None:
            self.stamps = _digests()

    def changed(self) -> None:
        """The watched walks were brought up to date: when a root's stamp moved, run ahead once the
        roots have been quiet for `QUIET` (a later change moves that on)."""
        now = _digests()
        if self.plan is not None and now != self.stamps:
            self.stamps = now
            self.due = time.monotonic() + QUIET

    def wait(self) -> float | None:
        """Seconds until the run ahead is due (0 when it is), None when none is."""
        if self.due is None or self.plan is None:
            return None
        return max(0.0, self.due - time.monotonic())

    def take(self) -> dict[str, Any] | None:
        """The request to fork now, when one is due and none runs."""
        if self.pid is not None or self.plan is None or self.due is None or time.monotonic() < self.due:
            return None
        self.due = None
        self.started += 1
        return self.plan

    def ahead_of(self, request: dict[str, Any]) -> bool:
        """Whether `request` is the check running ahead (it waits for it); one that comes before the
        run ahead started makes it needless (it is not started)."""
        if self.plan is None or identity(request) != identity(self.plan):
            return False
        if self.pid is None:
            self.due = None
            return False
        self.waited += 1
        return True
