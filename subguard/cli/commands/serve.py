"""`subguard serve`: keep subguard loaded, so that each `check` of this install starts warm."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import NoReturn

import click

from subguard.cli.resident import address
from subguard.cli.resident.server import DEFAULT_IDLE, Server, ask, preload
from subguard.core import identity


@click.command()
@click.option(
    "--idle",
    type=click.FloatRange(min=0),
    default=DEFAULT_IDLE,
    show_default=True,
    help="Exit after this many seconds without a run (0: never).",
)
@click.option(
    "--detach", is_flag=True, help="Run in the background (its log beside the socket); return once it listens."
)
@click.option(
    "--no-ahead",
    is_flag=True,
    help="Do not run the latest check again on its own after an edit (so that the next one replays it).",
)
@click.option("--status", "show_status", is_flag=True, help="Print the running server's state; exit 1 when none runs.")
@click.option("--stop", is_flag=True, help="Stop the running server; exit 1 when none runs.")
def serve(idle: float, detach: bool, no_ahead: bool, show_status: bool, stop: bool) -> int:
    """Serve `subguard check` runs of this install from one loaded process.

    Each `check` then forks from this process instead of importing subguard (about a third of a run
    after an edit): same output, exit code and files as without it. Only runs of this user, this
    interpreter, this subguard code and start-up environment are served; `SUBGUARD_NO_SERVER=1`
    makes a run ignore it. After an edit of a scan root it watches, it runs the latest check whose
    output is not a terminal again on its own, so that the check a commit makes next replays it
    (`--no-ahead`: not)."""
    if not address.supported():
        click.echo("subguard: error: serving needs fork and Unix sockets (not available here)", err=True)
        return 2
    identity.hold_install_stamp()  # the socket's name is made of it
    path = address.socket_path()
    if show_status or stop:
        answer = ask(path, "stop" if stop else "status")
        if answer is None:
            click.echo(f"subguard: no server listens at {path}", err=True)
            return 1
        click.echo(json.dumps(answer, indent=2) if show_status else f"subguard: stopped the server at {path}")
        return 0
    try:
        address.make_folder()
    except OSError as exc:
        click.echo(f"subguard: error: {exc}", err=True)
        return 2
    if len(os.fsencode(path)) > address.MOST_PATH_BYTES:
        click.echo(
            f"subguard: error: the socket path {path} is longer than a socket allows"
            f" ({address.MOST_PATH_BYTES} bytes): set XDG_RUNTIME_DIR to a shorter folder",
            err=True,
        )
        return 2
    if detach:
        running = ask(path, "status")
        if running is not None:  # idempotent: a hook may start it before every run
            click.echo(f"subguard: already serving checks of this install at {path} (pid {running.get('pid')})")
            return 0
        return _detach(path, idle, not no_ahead)
    return _serve(path, idle, not no_ahead)


def _serve(path: str, idle: float, ahead: bool = True) -> int:
    def log(line: str) -> None:
        sys.stderr.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} subguard serve: {line}\n")
        sys.stderr.flush()

    failed = preload()
    try:
        server = Server(path, idle, log, ahead)
    except OSError as exc:
        click.echo(f"subguard: error: {exc}", err=True)
        return 2
    limit = "none" if idle <= 0 else f"{idle:g} s"
    log(f"serving checks of this install at {path} (pid {os.getpid()}, idle limit {limit})")
    if failed:
        log(f"not loaded ahead (the runs import them): {', '.join(failed)}")

    def leave(signum: int, frame: object) -> NoReturn:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, leave)
    signal.signal(signal.SIGHUP, leave)
    try:
        server.loop()
    except KeyboardInterrupt:
        server.close()
    return 0


def _detach(path: str, idle: float, ahead: bool = True) -> int:
    """Start the server in a new session, its stderr in `<socket>.log`; wait until it answers."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the detached server (its behaviour is tested in the foreground)
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
        devnull = os.open(os.devnull, os.O_RDWR)
        log = address.open_log()
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        os.dup2(log, 2)
        code = 2
        try:
            code = _serve(path, idle, ahead)
        finally:
            os._exit(code)
    os.waitpid(pid, 0)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        answer = ask(path, "status")
        if answer is not None:
            click.echo(f"subguard: serving checks of this install at {path} (pid {answer.get('pid')})")
            return 0
        time.sleep(0.05)
    click.echo(f"subguard: error: the server did not start; see {address.log_path()}", err=True)
    return 2
