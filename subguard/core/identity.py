"""What identifies this install to a resident server: a digest of the installed subguard (a client
reaches only a server whose socket is named with the stamp it computes itself), and the variable
that keeps a run from any server. Standard library only: a served check's client loads it, and
little else, before it hands itself over."""

from __future__ import annotations

import os

from subguard import __version__

try:  # hashlib would load OpenSSL for a digest the interpreter has built in
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

NO_SERVER_ENV = "SUBGUARD_NO_SERVER"  # never hand a run to a resident server (`subguard.cli.resident`)
_HELD: list[str] = []  # a resident server's `install_stamp`, as of its start


def hold_install_stamp() -> None:
    """In a resident server, before it names its socket: its `install_stamp` from now on, for the
    runs it forks as well. A client finds the server by a socket name made of the stamp it computed
    (`subguard.cli.resident.address.name`), so each run the server forks is of a client whose
    install had this very stamp, and the run need not walk the install again."""
    _HELD[:] = [install_stamp()]


def install_stamp() -> str:
    """A digest of the installed subguard: its version and each module's path, size and mtime."""
    if _HELD:
        return _HELD[0]
    here = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # the subguard package
    h = blake2b(__version__.encode(), digest_size=32)
    for dirpath, dirnames, filenames in os.walk(here, followlinks=True):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".py", ".yaml", ".yml")):
                full = os.path.join(dirpath, name)
                st = os.stat(full)
                h.update(f"{full}\0{st.st_size}\0{st.st_mtime_ns}\0".encode("utf-8", "surrogateescape"))
    return h.hexdigest()
