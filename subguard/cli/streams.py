"""The console streams: scanned values may hold lone surrogates, so they are escaped, never fatal."""

from __future__ import annotations

import sys


def escape_streams() -> None:
    """Scanned values may hold lone surrogates ("\\ud800"): stdout and stderr escape them, never crash."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
