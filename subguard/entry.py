"""Console entry point: an unchanged `check` is answered from the run memo before the CLI loads."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def escape_streams() -> None:
    """Scanned values may hold lone surrogates ("\\ud800"): stdout and stderr escape them, never crash."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def run(argv: Sequence[str]) -> int:
    """The exit code of `subguard ARGV...`; `check` runs are replayed (`subguard.runmemo`) or
    recorded (`subguard.runrecord`)."""
    escape_streams()
    if list(argv) == ["--version"]:  # what click's version option prints, without loading click
        from subguard import __version__

        print(f"subguard, version {__version__}")
        return 0
    if list(argv[:1]) != ["check"]:
        from subguard.cli import main

        return main(argv)
    from subguard import runmemo

    try:
        replayed = runmemo.replay(argv[1:])
    except BrokenPipeError:  # `subguard check | head`: as the CLI itself, not an error
        return 0
    if replayed is not None:
        return replayed
    from subguard import runrecord

    with runrecord.recording(argv[1:]) as recorder:
        from subguard.cli import main

        code = main(argv)
    if recorder is not None:
        recorder.finish(code)
    return code


def main() -> None:
    sys.exit(run(sys.argv[1:]))
