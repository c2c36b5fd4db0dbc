"""Hand a `check` to the resident server of this install, when one listens (`subguard serve`): the
run it forks replays the run memo or runs the check, with the listings the server keeps current
(`subguard.scan.watch`), so that this process lists nothing.

The request carries the run's argv, working directory, environment and umask, and its standard
streams themselves (passed descriptors): the forked run writes to the same terminal, pipe or file,
sees the same tty, and exits with a code this process exits with. Signals this process receives
(Ctrl-C, a hook runner's timeout) are passed on to the run. When no server answers, or one refuses
before the run starts, nothing has happened and the caller runs the check itself.
Standard library only: it is loaded before the CLI.
"""

from __future__ import annotations

import _socket
import os
import signal
import sys

from subguard.cli.resident import address
from subguard.core import frames

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import FrameType
    from typing import Any

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def delegate(argv: Sequence[str], path: str) -> int | None:
    """The exit code of `subguard ARGV...` run by the server at `path` (`address.served`); None when
    no server took it."""
    try:
        cwd = os.getcwd()
    except OSError:  # a deleted working directory: the run itself says so
        return None
    relay = _Relay()
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)  # not `socket`: its imports cost a served run
    try:
        with relay:
            sock.connect(path)
            fds = [fd for fd in (0, 1, 2) if _open(fd)]
            umask = os.umask(0o022)
            os.umask(umask)
            request = {
                "op": "run",
                "argv": list(argv),
                "argv0": sys.argv[0] if sys.argv else "subguard",
                "cwd": cwd,
                "env": dict(os.environ),
                "umask": umask,
                "fds": fds,
            }
            frames.send(sock, request, fds)
            started, _ = frames.receive(sock)
            if started is None or not isinstance(started.get("pid"), int):
                return None  # refused, or gone before the run began: nothing ran
            relay.to(started["pid"])
            return _await(sock, started["pid"])
    except (OSError, ValueError):
        return None
    finally:
        sock.close()


class _Relay:
    """While a run is handed over: the signals this process receives go to the run, those that
    came before its pid was known as soon as it is; when no run started, they are delivered to
    this process again, as if no server had been asked."""

    def __init__(self) -> None:
        self.pid = 0
        self.early: list[int] = []
        self.saved: dict[int, Any] = {}

    def __enter__(self) -> _Relay:
        self.saved = {sig: signal.signal(sig, self._forward) for sig in FORWARDED}
        return self

    def _forward(self, signum: int, frame: FrameType | None) -> None:
        if not self.pid:
            self.early.append(signum)
            return
        try:
            os.kill(self.pid, signum)
        except OSError:
            pass

    def to(self, pid: int) -> None:
        self.pid = pid
        early, self.early = self.early, []
        for signum in early:
            self._forward(signum, None)

    def __exit__(self, *exc: object) -> None:
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)
        for signum in self.early:  # no run took them: as if they came now
            os.kill(os.getpid(), signum)


def start_server() -> None:
    """Start `subguard serve` of this interpreter in a new session, in the background (its log in
    `<socket>.log`); never fails the run that asked for it. Two runs that start one at once leave
    one: the later server replaces the socket and the earlier one exits."""
    import subprocess

    if not address.supported():
        return
    try:
        address.make_folder()
        log = address.open_log()
    except OSError:
        return
    try:
        subprocess.Popen(
            [sys.executable, "-m", "subguard", "serve"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )
    except OSError:
        pass
    finally:
        os.close(log)


def _await(sock: _socket.socket, pid: int) -> int:
    """The code the run at `pid` reports."""
    try:
        answer, _ = frames.receive(sock)
    except (OSError, ValueError):
        answer = None
    code = answer.get("code") if answer is not None else None
    if isinstance(code, int):
        return code
    sys.stderr.write(f"subguard: error: the run of the resident server (pid {pid}) ended without an exit code\n")
    return 2


def _open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True
