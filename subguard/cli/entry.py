"""Console entry point: a `check` goes to the resident server when one listens (`subguard.cli.resident`);
else an unchanged one is answered from the run memo before the CLI loads."""

from __future__ import annotations

import sys

from subguard.cli.streams import escape_streams

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


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
    from subguard.cli.resident import address

    path = address.served()  # one stat when no server was ever started
    if path is not None or "--serve" in argv[1:]:
        from subguard.cli.resident import client

        served = client.delegate(argv, path) if path is not None else None  # `subguard serve` runs it
        if served is not None:
            return served
        if "--serve" in argv[1:]:
            client.start_server()  # for the next run: this one does not wait for it
    return check_here(argv)


def check_here(argv: Sequence[str]) -> int:
    """`subguard check ...` in this process: replayed from the run memo, else run and recorded."""
    from subguard.scan import runmemo

    try:
        replayed = runmemo.replay(argv[1:])
    except BrokenPipeError:  # `subguard check | head`: as the CLI itself, not an error
        return 0
    if replayed is not None:
        return replayed
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
    sys.exit(run(sys.argv[1:]))
