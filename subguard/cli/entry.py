"""Console entry point: a `check` goes to the resident server when one listens (`subguard.cli.resident`),
else an unchanged one is answered from the run memo before the CLI loads, and any other runs here."""

from __future__ import annotations

import gc
import os
import sys

from subguard.cli import background, pydantic_plugins
from subguard.cli.streams import escape_streams, flush_streams

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import NoReturn


# what a run loads first, in steps of 10-150 ms: imported while the parses that may confirm a replay
# are made, until they are in (`check_here`)
_RUN_MODULES = (
    "click",
    "pydantic.main",
    "subguard.core.model",
    "subguard.core.config",
    "subguard.scan.extraction",
    "subguard.rules.judge",
    "subguard.cli.main",
    "subguard.cli.commands.check",
)


def run(argv: Sequence[str], answer: Callable[[int], None] | None = None) -> int:
    """The exit code of `subguard ARGV...`; `check` runs are replayed (`subguard.scan.runmemo`) or
    recorded (`subguard.scan.runrecord`), `answer` as `check_here` takes it. Every run but
    `--version` first waits for an earlier run's caches to be written (`subguard.cli.background`)."""
    escape_streams()
    if list(argv) == ["--version"]:  # what click's version option prints, without loading click
        from subguard import __version__

        print(f"subguard, version {__version__}")
        return 0
    background.wait()
    if list(argv[:1]) != ["check"]:
        from subguard.cli import dataclass_code
        from subguard.cli.main import main

        dataclass_code.install()
        try:
            return main(argv)
        finally:
            dataclass_code.save()
    return check_here(argv, answer=answer)


def check_here(argv: Sequence[str], served: bool = False, answer: Callable[[int], None] | None = None) -> int:
    """`subguard check ...`: handed to the resident server of this install when one listens
    (`subguard.cli.resident`), else replayed from the run memo (at once, or once the parses made
    ahead confirm that edited files parse as the recorded run's: `runmemo.confirm`), else run here
    and recorded. `served`: this is the run a server forked for a client (it replays, or runs,
    here). `answer(code)` is called once the run's outputs are written and before its caches and run
    memo are (`subguard.core.afterwards`)."""
    if not served:
        code = _serve(argv)
        if code is not None:
            return code
    from subguard.scan import runmemo  # not before: a served run's client never needs it

    try:
        replayed = runmemo.replay(argv[1:])
    except BrokenPipeError:  # `subguard check | head`: as the CLI itself, not an error
        return 0
    if replayed is not None:
        return replayed
    if not served and "--serve" in argv[1:]:
        from subguard.cli.resident import client

        client.start_server()  # for the next run: this one does not wait for it
    from subguard.cli import dataclass_code
    from subguard.core import afterwards
    from subguard.scan import ahead, runrecord

    dataclass_code.install()  # before the fork below: the child makes libcst's classes of that code too
    ahead.start(runmemo.CHANGED)  # the edited consumer files, parsed on the other core meanwhile
    if runmemo.PENDING:  # a replay those parses may confirm: the run loads until they are in, then asks
        import importlib

        for module in _RUN_MODULES:
            if ahead.answered(0):
                break  # a confirmed replay needs none of them, a run that is not imports them itself
            importlib.import_module(module)
        parsed = ahead.answered(ahead.CONFIRM_SECONDS)
        confirmed = runmemo.confirm(ahead.parse_digest if parsed else lambda *_: None)
        if confirmed is not None:
            ahead.forget()
            return confirmed
    try:
        with runrecord.recording(argv[1:]) as recorder, afterwards.deferring() as for_the_next_run:
            from subguard.cli.main import main

            code = main(argv)
            if answer is not None:
                answer(code)
            for_the_next_run()  # the caches, and what the run memo needs besides its listings
            dataclass_code.save(ahead.IMPORTS, fetch=ahead.forked())  # the classes the child makes, too
    finally:
        ahead.forget()
    if recorder is not None:
        recorder.finish(code)
    return code


def main() -> None:
    pydantic_plugins.skip_lookup()  # this process is subguard's: its models need no plugin lookup
    argv = sys.argv[1:]
    if argv[:1] == ["check"]:
        gc.disable()  # a short run: its scan and judging pause the collector anyway (`limits.gc_paused`)
        # and no collection catches up on what they allocated, nor does a teardown; its caches are
        # written by a fork once its report is out (`subguard.cli.background`)
        leave(run(argv, answer=background.answer))
    sys.exit(run(argv))


def leave(code: int) -> NoReturn:
    """End a finished `check` without the interpreter's teardown: freeing every object and module a
    run built costs about a tenth of a second on a 20,000-file tree (mypy leaves the same way). By
    now its files are written and closed, its worker pools and forked helpers are gone, and no
    thread runs; the standard streams are flushed here."""
    flush_streams()
    os._exit(code)


def _serve(argv: Sequence[str]) -> int | None:
    """The exit code of the run a resident server of this install ran (replayed or not), or None
    (none listens, or it refused)."""
    from subguard.cli.resident import address

    path = address.served()  # one stat when no server was ever started
    if path is None:
        return None
    from subguard.cli.resident import client

    return client.delegate(argv, path)
