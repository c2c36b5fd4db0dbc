"""A console `check`'s work for the next run, done after the process has ended for its caller.

A `check` writes its caches and its run memo for the runs after it (`subguard.core.afterwards`),
once its report is out. Its caller (pre-commit, CI, a shell) waits for the process to end, not for
the report: after an edit of a consumer file, that work is a tenth of the run. So the console
entry (`subguard.cli.entry`) hands it to a forked process (`answer`): the run's own process ends
with the exit code as soon as its report is written, and the fork, in a session of its own and with
its stdin and stdout on /dev/null (a caller reading them to the end is not kept waiting), writes
the caches and the run memo, then ends. Its warnings (a cache it could not write) still reach a
terminal or a file the run's stderr was; a pipe's reader would wait for them, so there they go
only into the run memo's record, which the next unchanged run replays.

The fork holds an exclusive lock on `writing.lock` in the user's cache folder until it ends; every
run (`wait`, from the console entry) first waits for that lock, so a run never reads what an
earlier run is still writing (two runs in a row, as a test or a script makes them, see exactly
what they would see without this module). A run that cannot take the lock (another run's fork
still writes) or cannot fork writes its own caches before it ends, as before.
"""

from __future__ import annotations

import os
import time

from subguard.cli.streams import flush_streams
from subguard.core import signing

LOCK_NAME = "writing.lock"
WAIT_SECONDS = 60.0  # a fork still writing after this long is left to finish: caches are written atomically
_POLL = 0.005


def lock_path(home: str | None = None) -> str:
    """The lock of the user's cache folder `home` (by default this process's: `signing.cache_home`)."""
    return os.path.join(signing.cache_home() if home is None else home, LOCK_NAME)


def wait(seconds: float = WAIT_SECONDS, home: str | None = None) -> bool:
    """Wait until no earlier run's fork is writing in the cache folder `home` (at most `seconds`);
    whether none is now. One `open` when no run ever forked there."""
    import fcntl

    try:
        fd = os.open(lock_path(home), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return True
    try:
        deadline = time.monotonic() + seconds
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return True
            except OSError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(_POLL)
    finally:
        os.close(fd)


def answer(code: int) -> None:
    """Called once the run's report is written: end this process with `code` and go on in a fork
    that holds the writing lock (returns in the fork only). Returns at once, in this process, when
    the lock is taken by another run's fork, the process cannot fork, or it is its container's init
    (PID 1: the container ends with it, and the fork with it): the run then writes its own."""
    if not hasattr(os, "fork") or os.getpid() == 1:
        return
    import fcntl

    try:
        os.makedirs(signing.cache_home(), exist_ok=True)
        fd = os.open(lock_path(), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return
    flush_streams()  # before the fork: nothing buffered is written twice (a run's recorded streams flush theirs)
    try:
        pid = os.fork()
    except OSError:
        os.close(fd)  # and with it the lock
        return
    if pid:
        os._exit(code)  # the lock stays with the fork: it shares this descriptor
    os.setsid()  # a Ctrl-C or hang-up meant for the caller is not this fork's
    null = os.open(os.devnull, os.O_RDWR)
    for stream_fd in (0, 1, 2) if _piped(2) else (0, 1):  # a terminal or a file still gets its warnings
        os.dup2(null, stream_fd)
    os.close(null)


def _piped(fd: int) -> bool:
    """Whether `fd` is a pipe or a socket: its reader waits for every writer to close it."""
    import stat

    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
