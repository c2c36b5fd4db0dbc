"""The resident server: subguard loaded once, one forked process per `check` a client hands over.

A run after an edit spends about a third of its time importing subguard, pydantic, click and libcst.
The server imports them (`PRELOAD`, every extractor, every report format) and then waits on its
socket (`subguard.cli.resident.address`). For each request of a process of the same user it forks; the
child takes the client's standard streams, working directory, environment, umask and argv, and
replays or runs the check exactly as the console entry would (`subguard.cli.entry.check_here`: the
run memo, the caches, the recording), then reports its exit code. The server itself never runs a
check, so no run sees another's state; it imports, and once a run has ended it loads the cache files
that run read from disk (`subguard.cli.resident.warm`), which a later run gets from its memory while
they are unchanged (`subguard.core.kept`), and watches the trees that run walked, so that a later
run stamps them without a walk (`subguard.scan.watch`). It exits after `idle` seconds
without a request, when its socket is removed or replaced, or on `stop`, SIGTERM or SIGINT.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import io
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

from subguard.cli.resident import runahead, warm
from subguard.cli.streams import flush_streams
from subguard.core import frames, kept
from subguard.scan import watch

# what a check imports besides the CLI core: loaded before the first fork
PRELOAD = (
    "subguard.cli.main",
    "subguard.cli.commands.check",
    "subguard.cli.commands.common",
    "subguard.cli.commands.show_config",
    "subguard.scan.extraction",
    "subguard.scan.runrecord",
    "subguard.scan.ahead",
    "subguard.scan.gitrev",
    "subguard.rules.engine",
    "subguard.rules.impact",
    "subguard.rules.deploy_subjects",
    "subguard.deploy.link",
    "subguard.extract.python.parse",
    "libcst.native",  # the parser itself, loaded by libcst on the first parse
    "subguard.simulate",
    "subguard.simulate.impact",  # a changed group's simulated impact
    "encodings.utf_16_be",  # a group's hash as Java computes it (`rocketmq.expression.java_hash`)
)
DEFAULT_IDLE = 1800  # seconds without a request before the server exits
MOST_RUNNING = 8  # runs at once; a request beyond them is refused (its client runs the check itself)


def preload() -> list[str]:
    """Import what a check needs, then freeze what is loaded (`gc.freeze`: the forked runs' collections
    never walk, nor copy by touching, the server's objects), and mark the process as a server
    (`kept.serve`); the modules that failed to import (left to the runs)."""
    from subguard.extract import load_extractors
    from subguard.report import FORMATS, get_renderer

    failed: list[str] = []
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a run that needs it reports the error itself
            failed.append(name)
    try:
        load_extractors()
    except Exception:  # noqa: BLE001 - as above
        failed.append("the extractors")
    for fmt in FORMATS:
        try:
            get_renderer(fmt)
        except Exception:  # noqa: BLE001 - as above
            failed.append(f"the {fmt} report")
    kept.serve()
    gc.collect()
    gc.freeze()
    return failed


class Server:
    """One listening socket and its accept loop."""

    def __init__(self, path: str, idle: float, log: Callable[[str], None], ahead: bool = True) -> None:
        self.path = path
        self.idle = idle
        self.log = log
        self.served = 0
        self.started = time.time()
        self.children: dict[int, warm.Told] = {}  # pid -> the pipe its loaded cache files are named on
        self.requests: dict[int, tuple[dict[str, Any], bool]] = {}  # pid -> its client's request, ttys
        self.ahead = runahead.Ahead(enabled=ahead)  # the check run ahead after an edit
        # requests waiting for the run ahead of them: (connection, request, descriptors, until when)
        self.held: list[tuple[socket.socket, dict[str, Any], list[int], float]] = []
        self.listener = _listen(path)
        self.inode = os.stat(path).st_ino
        self.stopping = False

    def loop(self) -> None:
        """Serve until idle, stopped, or the socket file is no longer this server's."""
        last = time.monotonic()
        try:
            while not self.stopping:
                self._reap()
                self._release()
                self._run_ahead()
                wait = 1.0 if self.idle <= 0 else max(0.0, min(1.0, last + self.idle - time.monotonic()))
                due = self.ahead.wait()
                wait = min(wait, due) if due is not None else wait
                if self.held:
                    wait = min(wait, max(0.0, min(until for *_, until in self.held) - time.monotonic()))
                try:
                    told = {t.fd: t for t in self.children.values() if t.open}
                    watched = watch.descriptors()
                    ready, _, _ = select.select([self.listener.fileno(), *told, *watched], [], [], wait)
                except InterruptedError:
                    continue
                for fd in ready:
                    if fd in told:
                        told[fd].read()  # a run ended: the cache files it loaded, kept for the next
                if any(fd in told or fd in watched for fd in ready):
                    # a watched tree changed, or a run left the cache files it loaded: the walks are
                    # current before the next run asks, with what is made ahead of them (`watch.AFTER`)
                    watch.refresh()
                    self.ahead.changed()  # and when a root's stamp moved, the check runs ahead once they are quiet
                if self.listener.fileno() in ready:
                    self._accept()
                    last = time.monotonic()
                elif not self._own_socket():
                    self.log("the socket was removed or replaced: exiting")
                    break
                elif self.idle > 0 and time.monotonic() - last >= self.idle and not self.children and not self.held:
                    self.log(f"idle for {self.idle:g} s: exiting")
                    break
        finally:
            self.close()

    def close(self) -> None:
        self.listener.close()
        while self.held:  # their clients run the check themselves
            conn, _, fds, _ = self.held.pop()
            self._let_go(conn, fds)
        if self._own_socket():
            with contextlib.suppress(OSError):
                os.unlink(self.path)

    def _own_socket(self) -> bool:
        try:
            return os.stat(self.path).st_ino == self.inode
        except OSError:
            return False

    def _reap(self) -> None:
        for pid in list(self.children):
            with contextlib.suppress(ChildProcessError):
                done, _ = os.waitpid(pid, os.WNOHANG)
                if not done:
                    continue
            told = self.children.pop(pid)
            told.read()  # its message is in the pipe by now, if it wrote one
            told.close()  # a process it started may still hold the pipe open
            if pid == self.ahead.pid:
                self.ahead.pid = None
            served = self.requests.pop(pid, None)
            if served is not None:
                self.ahead.learn(served[0], told.memos, served[1])

    def _run_ahead(self) -> None:
        """Fork the check that is due to run ahead (`runahead`), its streams /dev/null."""
        request = self.ahead.take()
        if request is not None:
            self.ahead.pid = self._fork(None, request, {})
            self.log(f"ahead {self.ahead.started} (pid {self.ahead.pid}): subguard {' '.join(request['argv'])}")

    def _release(self) -> None:
        """Fork the held requests whose run ahead has ended (or that waited long enough)."""
        now = time.monotonic()
        waiting = [h for h in self.held if self.ahead.pid is not None and h[3] > now]
        for held in [h for h in self.held if h not in waiting]:
            conn, request, fds, _ = held
            try:
                self._run(conn, request, fds, hold=False)
            except (OSError, ValueError) as exc:
                self.log(f"a request failed: {type(exc).__name__}: {exc}")
            finally:
                self._let_go(conn, fds)
        self.held = waiting

    @staticmethod
    def _let_go(conn: socket.socket, fds: list[int]) -> None:
        """Close a request's connection and the descriptors it passed."""
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        conn.close()

    def _accept(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        fds: list[int] = []
        kept_open = False
        try:
            if not _same_user(conn):
                return  # another user's process: never served
            conn.settimeout(5)  # a request arrives whole at once, or not at all
            request, fds = frames.receive(conn, most_fds=3)
            if request is None:
                return
            op = request.get("op")
            conn.settimeout(None)
            if op == "run":
                kept_open = self._run(conn, request, fds)
            elif op == "status":
                frames.send(conn, self.status())
            elif op == "stop":
                frames.send(conn, {"stopping": True})
                self.stopping = True
        except (OSError, ValueError) as exc:
            self.log(f"a request failed: {type(exc).__name__}: {exc}")
        finally:
            if not kept_open:
                self._let_go(conn, fds)

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "socket": self.path,
            "served": self.served,
            "running": len(self.children),
            "up_seconds": round(time.time() - self.started, 1),
            "idle_limit": self.idle,
            "kept": kept.kept(),
            "watched": watch.watched(),
            "ahead": {
                "enabled": self.ahead.enabled,
                "started": self.ahead.started,
                "running": self.ahead.pid,
                "waited": self.ahead.waited,
            },
        }

    def _run(self, conn: socket.socket, request: dict[str, Any], fds: list[int], hold: bool = True) -> bool:
        """Fork the run a client asked for; True when the request is held instead (`hold`: the same
        check runs ahead, `runahead`), its connection and descriptors kept open until it is forked."""
        argv, wanted = request.get("argv"), request.get("fds")
        if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv) and argv[:1] == ["check"]):
            frames.send(conn, {"refused": "not a check"})
            return False
        if not isinstance(wanted, list) or len(wanted) != len(fds):
            frames.send(conn, {"refused": "the standard streams did not arrive"})
            return False
        if hold and self.ahead.ahead_of(request):
            self.held.append((conn, request, fds, time.monotonic() + runahead.MOST_WAIT))
            return True
        self._reap()
        if len(self.children) >= MOST_RUNNING:
            frames.send(conn, {"refused": f"{MOST_RUNNING} runs already running"})
            return False
        streams = dict(zip(wanted, fds, strict=True))
        ttys = any(_tty(streams[target]) for target in (1, 2) if target in streams)
        pid = self._fork(conn, request, streams)
        self.requests[pid] = ({k: v for k, v in request.items() if k != "fds"}, ttys)
        self.served += 1
        self.log(f"run {self.served} (pid {pid}): subguard {' '.join(argv)} in {request.get('cwd')}")
        return False

    def _fork(self, conn: socket.socket | None, request: dict[str, Any], streams: dict[int, int]) -> int:
        """Fork the run of `request` (with the client's `conn` and `streams`; none for a run ahead)."""
        watch.refresh()  # the walks the run stamps its trees with, as of now
        told, tell = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child's coverage is the run's (measured in its own process)
            code = 2
            try:
                self.listener.close()
                os.close(told)
                for other in self.children.values():
                    other.close()
                for waiting, _, passed, _ in self.held:  # another client's streams: never held open by this run
                    if waiting is not conn:
                        self._let_go(waiting, passed)
                code = _child(conn, request, streams)
                warm.tell(tell)
            finally:
                os._exit(code)
        os.close(tell)
        self.children[pid] = warm.Told(told)
        return pid


def _tty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def _same_user(conn: socket.socket) -> bool:
    """The peer runs as this user (Linux's SO_PEERCRED; elsewhere the private folder is the guard)."""
    known = frames.peer(conn)
    return known is None or known[1] == os.getuid()


def _child(conn: socket.socket | None, request: dict[str, Any], streams: dict[int, int]) -> int:
    """In the forked child: become the client's run, run the check, report its exit code (to the
    client on `conn`; a run ahead has none). A Ctrl-C the client passes on at any point ends the run
    as the CLI ends an interrupted one ("aborted", 2)."""
    relayed = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT}
    signal.pthread_sigmask(signal.SIG_BLOCK, relayed)  # until the run has the client's streams
    for sig in (*relayed, signal.SIGCHLD):
        signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)
    code = 2
    answered = False
    log = os.dup(2)  # the server's own stderr (its log)

    def answer(done: int) -> None:
        """The client's exit code, as soon as the run's outputs are written; then the client's
        streams are let go (a hook runner reading them sees their end now), and what the run writes
        for the next run follows, any warning of it in the server's log."""
        nonlocal answered
        flush_streams()
        answered = True
        if conn is not None:
            with contextlib.suppress(OSError, ValueError):
                frames.send(conn, {"code": done})
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd, to in ((0, devnull), (1, devnull), (2, log)):
            os.dup2(to, fd)
        os.close(devnull)

    try:
        if conn is not None:
            frames.send(conn, {"pid": os.getpid()})
        argv = _become(request, streams)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, relayed)  # one passed on meanwhile arrives now
        gc.disable()  # as the console entry runs a check (`entry.main`): it ends with os._exit
        from subguard.cli.entry import check_here

        code = check_here(argv, served=True, answer=answer)  # replayed or run here, never handed over again
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except KeyboardInterrupt:
        sys.stderr.write("aborted\n")
    except _NoWorkdir as exc:
        sys.stderr.write(f"subguard: error: the working directory: {exc}\n")
    except BaseException:
        import traceback

        traceback.print_exc()
        raise
    finally:
        flush_streams()
        if not answered and conn is not None:
            with contextlib.suppress(OSError, ValueError):
                frames.send(conn, {"code": code})
    return code


class _NoWorkdir(Exception):
    """The client's working directory cannot be entered."""


def _become(request: dict[str, Any], streams: dict[int, int]) -> list[str]:
    """Take the client's streams, environment, umask, argv and working directory; its argv after
    `subguard`."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for target in (0, 1, 2):
        os.dup2(streams.get(target, devnull), target)
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in dict(request.get("env") or {}).items()})
    umask = request.get("umask")
    if isinstance(umask, int):
        os.umask(umask)
    argv = [str(a) for a in request["argv"]]
    sys.argv = [str(request.get("argv0") or "subguard"), *argv]
    _new_streams()
    try:
        os.chdir(str(request.get("cwd")))
    except OSError as exc:
        raise _NoWorkdir(str(exc)) from None
    return argv


def _new_streams() -> None:
    """Standard streams over the client's descriptors, made as the interpreter makes them at start-up
    (same encoding and errors as the server's: the address keeps its start-up environment), so that
    buffering and seeking follow what the descriptors are now, not what the server's were."""
    made = []
    for fd, old, mode in ((0, sys.stdin, "r"), (1, sys.stdout, "w"), (2, sys.stderr, "w")):
        encoding = getattr(old, "encoding", None) or "utf-8"
        errors = getattr(old, "errors", None) or "strict"
        tty = os.isatty(fd)
        raw = io.FileIO(fd, mode, closefd=False)
        buffered = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
        made.append(
            io.TextIOWrapper(
                buffered,
                encoding=encoding,
                errors=errors,
                line_buffering=tty or fd == 2,
                write_through=fd == 2,
            )
        )
    sys.stdin, sys.stdout, sys.stderr = made


def _listen(path: str) -> socket.socket:
    """A socket listening at `path`, put in place atomically; OSError when a live server holds it."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(path)
    except OSError:
        pass
    else:
        raise OSError(f"a server already listens at {path}")
    finally:
        probe.close()
    staging = f"{path}.{os.getpid()}.new"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staging)
        sock.bind(staging)
        sock.listen(16)
        os.replace(staging, path)
    except OSError:
        sock.close()
        with contextlib.suppress(OSError):
            os.unlink(staging)
        raise
    return sock


def ask(path: str, op: str) -> dict[str, Any] | None:
    """The answer of the server at `path` to `status` or `stop`; None when none listens there."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(5)
        sock.connect(path)
        frames.send(sock, {"op": op})
        answer, _ = frames.receive(sock)
        return answer
    except (OSError, ValueError):
        return None
    finally:
        sock.close()
