"""Console entry point: an unchanged `check` is answered from the run memo before the CLI loads; any
other goes to the resident server when one listens (`subguard.cli.resident`), else runs here."""

from __future__ import annotations

import gc
import os
import sys

from subguard.cli.streams import escape_streams, flush_streams

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import NoReturn


def run(argv: Sequence[str]) -> int:
    """The exit code of `subguard ARGV...`; `check` runs are replayed (`subguard.scan.runmemo`) or
    recorded (`subguard.scan.runrecord`)."""
    escape_streams()
    if list(argv) == ["--version"]:  # what click's version option prints, without loading click
        from subguard import __version__

        print(f"subguard, version {__version__}")
        return 0
    if list(argv[:1]) != ["check"]:
        from subguard.cli.main import main

        return main(argv)
    return check_here(argv)


def check_here(argv: Sequence[str], handed: bytes | None = None) -> int:
    """`subguard check ...`: replayed from the run memo, else handed to the resident server of this
    install when one listens (`subguard.cli.resident`), else run here and recorded. `handed`: what
    the replay of the client that handed this run over learned (`runmemo.take_over`)."""
    from subguard.scan import runmemo

    if handed is None:
        try:
            replayed = runmemo.replay(argv[1:])
        except BrokenPipeError:  # `subguard check | head`: as the CLI itself, not an error
            return 0
        if replayed is not None:
            return replayed
        served = _serve(argv)
        if served is not None:
            return served
    else:
        runmemo.take_over(handed)
    from subguard.scan import ahead, runrecord

    ahead.start(runmemo.CHANGED)  # the edited consumer files, parsed on the other core meanwhile
    try:
        with runrecord.recording(argv[1:]) as recorder:
            from subguard.cli.main import main

            code = main(argv)
    finally:
        ahead.forget()
    if recorder is not None:
        recorder.finish(code)
    return code


def main() -> None:
    argv = sys.argv[1:]
    if argv[:1] == ["check"]:
        gc.disable()  # a short run: its scan and judging pause the collector anyway (`limits.gc_paused`)
        leave(run(argv))  # and no collection catches up on what they allocated, nor does a teardown
    sys.exit(run(argv))


def leave(code: int) -> NoReturn:
    """End a finished `check` without the interpreter's teardown: freeing every object and module a
    run built costs about a tenth of a second on a 20,000-file tree (mypy leaves the same way). By
    now its files are written and closed, its worker pools and forked helpers are gone, and no
    thread runs; the standard streams are flushed here."""
    flush_streams()
    os._exit(code)


def _serve(argv: Sequence[str]) -> int | None:
    """The exit code of the run a resident server of this install ran, or None (none listens, or it
    refused); with `--serve`, a server is started for the next run when none listens."""
    from subguard.cli.resident import address

    path = address.served()  # one stat when no server was ever started
    if path is None and "--serve" not in argv[1:]:
        return None
    from subguard.cli.resident import client
    from subguard.scan import runmemo

    served = client.delegate(argv, path, runmemo.handover) if path is not None else None
    if served is None and "--serve" in argv[1:]:
        client.start_server()  # for the next run: this one does not wait for it
    return served
