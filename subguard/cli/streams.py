"""The console streams: scanned values may hold lone surrogates, so they are escaped, never fatal."""

from __future__ import annotations

import sys


def escape_streams() -> None:
    """Scanned values may hold lone surrogates ("\\ud800"): stdout and stderr escape them, never crash."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def flush_streams() -> None:
    """Flush stdout and stderr before the process ends without the interpreter's teardown (a reader
    that went away, or a stream already closed, is not an error)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
