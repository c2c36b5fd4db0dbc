"""Console entry point: an unchanged `check` is answered from the run memo before the CLI loads."""

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
