"""The Python worker daemon of a local audit, started beside the JVM instead of after it.

Spark starts its worker daemon (`spark.python.daemon.module`: `subguard.audit.daemon`) at the first
Python task, once the session is up, and no worker runs before that daemon has imported pyspark's
worker, the audit's modules and the extractors (`preload`: 0.7 s of CPU, 1.4 s of wall
beside the JVM's own work). `start` runs a daemon of our own (this module) as the audit starts, so
the imports overlap the JVM's start; it listens on a Unix socket in a private folder whose path the
JVM, and so Spark's daemon process, inherit (`ENV`). Spark's daemon process sends it its standard
streams, environment, working folder and arguments (`hand_over`) and waits; this one takes them as
its own and runs pyspark's daemon loop (`pyspark.daemon.manager`), which the JVM then talks to as
to the daemon it started. Spark's process stays the JVM's handle on it: it passes SIGTERM on and
exits once this one has ended.

One hand-over per run. Refused, and Spark's daemon runs itself as before, when the variables a
Python interpreter reads at its start (`STARTUP`) differ from this one's, when the peer is another
user, or when this one is gone. Unused, it exits when the audit closes its stdin (`Zygote.close`,
or the audit's process ending).
"""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from subguard.core import frames

ENV = "SUBGUARD_AUDIT_ZYGOTE"  # the socket's path, for Spark's daemon process
# what an interpreter reads from the environment as it starts (the rest is read at run time from
# os.environ, which the hand-over replaces): a zygote started with other values is not used
STARTUP = ("PYTHONHASHSEED", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONOPTIMIZE", "PYTHONSAFEPATH")
ANSWER_SECONDS = 60.0  # how long Spark's daemon process waits for the zygote's imports and answer
READ_SECONDS = 10.0  # how long the zygote waits for a connected process's request


@dataclass
class Zygote:
    """A started zygote, owned by the audit's driver."""

    proc: subprocess.Popen[bytes]
    folder: str

    def close(self) -> None:
        """Let an unused zygote exit (one handed over ends with the JVM) and remove its folder."""
        os.environ.pop(ENV, None)
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            self.proc.poll()
        except OSError:
            pass
        _remove(os.path.join(self.folder, "socket"))


def _remove(socket_path: str) -> None:
    """The socket and its folder, if still there."""
    for remove, path in ((os.unlink, socket_path), (os.rmdir, os.path.dirname(socket_path))):
        try:
            remove(path)
        except OSError:
            pass


def preload() -> None:
    """Import what every worker runs: pyspark's worker, the audit's task modules, the extractors."""
    try:
        import pyspark.worker  # noqa: F401 - what each forked worker runs

        from subguard.audit import incremental, tasks, transforms  # noqa: F401
        from subguard.extract import load_extractors

        load_extractors()
    except Exception:  # noqa: BLE001, S110 - the workers import what they need themselves
        pass


def environment(base: dict[str, str]) -> dict[str, str]:
    """The zygote's environment: `base` with the start-up variables a local Spark gives its daemon
    (PYTHONHASHSEED as pyspark's SparkContext passes it on, unbuffered output as Spark sets it)."""
    return {**base, "PYTHONHASHSEED": base.get("PYTHONHASHSEED", "0"), "PYTHONUNBUFFERED": "YES"}


SOCKET_PATH_MAX = 107  # bytes of a Unix socket's path (Linux's sun_path holds 108, its NUL included)


def start() -> Zygote | None:
    """Start a zygote and name its socket in this process's environment (`ENV`, inherited by a JVM
    started later); None when it cannot be started (Spark's daemon then runs itself)."""
    folder = tempfile.mkdtemp(prefix="subguard-zygote-")  # mode 0700: only this user reaches the socket
    if len(os.fsencode(os.path.join(folder, "socket"))) > SOCKET_PATH_MAX and os.path.isdir("/tmp"):
        os.rmdir(folder)  # a long TMPDIR: a Unix socket's path must be short
        folder = tempfile.mkdtemp(prefix="subguard-zygote-", dir="/tmp")
    if len(os.fsencode(os.path.join(folder, "socket"))) > SOCKET_PATH_MAX:
        os.rmdir(folder)
        return None
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "subguard.audit.zygote", os.path.join(folder, "socket")],
            stdin=subprocess.PIPE,
            env=environment(dict(os.environ)),
        )
    except OSError:
        os.rmdir(folder)
        return None
    os.environ[ENV] = os.path.join(folder, "socket")
    return Zygote(proc, folder)


def _adopt(conn: socket.socket) -> bool:
    """Take over the connected daemon process's streams, environment, working folder, arguments and
    module path; False (and nothing taken) when its start-up variables differ or it is gone."""
    conn.settimeout(READ_SECONDS)
    fds: list[int] = []
    try:
        request, fds = frames.receive(conn, most_fds=3)
        if request is None:
            raise OSError("closed")
        env: dict[str, str] = request["env"]
        if len(fds) != 3 or any(env.get(k) != os.environ.get(k) for k in STARTUP):
            frames.send(conn, {"refused": "other start-up variables"})
            raise OSError("refused")
        frames.send(conn, {"pid": os.getpid()})
    except (OSError, ValueError, KeyError):
        for fd in fds:
            os.close(fd)
        return False
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.clear()
    os.environ.update(env)
    os.chdir(request["cwd"])
    sys.argv[1:] = request["argv"]  # pyspark.daemon reads the worker module from it
    # where an interpreter started with this PYTHONPATH would look first (after the script's folder)
    sys.path[1:1] = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p not in sys.path]
    return True


def serve(path: str) -> None:
    """The zygote: listen, import what the workers run, wait for one hand-over (or for stdin to
    close: the audit is done with it), then run pyspark's daemon loop on the streams handed over."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(4)
    preload()
    try:
        while True:
            ready, _, _ = select.select([listener, sys.stdin], [], [])
            if sys.stdin in ready and not os.read(sys.stdin.fileno(), 1):
                return
            if listener in ready:
                conn, _ = listener.accept()
                known = frames.peer(conn)
                if known is not None and known[1] == os.getuid() and _adopt(conn):
                    break
                conn.close()
    finally:  # nothing left behind, also when the audit's process was killed
        listener.close()
        _remove(path)
    # no worker keeps the connection open: its end tells Spark's daemon process that this one ended
    os.register_at_fork(after_in_child=conn.close)
    import pyspark.daemon

    pyspark.daemon.manager()


def hand_over() -> bool:
    """In Spark's daemon process: hand this process's streams, environment, folder and arguments to
    the zygote `ENV` names, then wait until it ends (passing SIGTERM on). False when there is none,
    it refused, or it did not answer in time (it is then killed)."""
    path = os.environ.get(ENV)
    if not path:
        return False
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(ANSWER_SECONDS)
    try:
        conn.connect(path)
        known = frames.peer(conn)
    except OSError:
        return False
    if known is None:
        return False
    pid = known[0]
    request = {"env": dict(os.environ), "cwd": os.getcwd(), "argv": sys.argv[1:]}
    try:
        frames.send(conn, request, [0, 1, 2])
        answer, _ = frames.receive(conn)
    except TimeoutError:
        os.kill(pid, signal.SIGKILL)  # never two daemons on the JVM's pipes
        return False
    except (OSError, ValueError):
        return False
    if answer != {"pid": pid}:
        return False

    def forward(signum: int, _: object) -> None:
        try:
            os.kill(pid, signum)
        finally:
            os._exit(0)

    signal.signal(signal.SIGTERM, forward)
    conn.settimeout(None)
    try:
        while conn.recv(64):
            pass
    except OSError:
        pass
    return True


if __name__ == "__main__":  # pragma: no cover - started by `start`
    serve(sys.argv[1])
