"""Where the resident server of this install listens: one socket per user, interpreter, subguard code
and start-up environment, so that a client only ever reaches a server that runs what it would run.

The socket lives in `$XDG_RUNTIME_DIR/subguard`, else in `$TMPDIR/subguard-<uid>` (`/tmp` without
`TMPDIR`): a folder this user owns and nobody else may enter (a folder that is not so is never used). Its name is a digest of
the interpreter (path and version), the subguard package (version, and each module's path, size and
mtime: an upgrade or an edit of a development install reaches no older server) and every environment
variable the interpreter reads at start-up or that picks the text encoding (`PYTHON*`, `LANG`,
`LC_*`): a run that would start otherwise is not served, it runs as without a server.
It loads nothing but the install's identity (`subguard.core.identity`).
"""

from __future__ import annotations

import os
import stat
import sys

from subguard.core.identity import NO_SERVER_ENV, install_stamp

try:  # hashlib would load OpenSSL for a digest the interpreter has built in
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

MOST_PATH_BYTES = 90  # of a socket path (the system allows 107; the server binds a longer staging name first)
LOG_BYTES = 1 << 20  # a server log larger than this is emptied when the next server starts


def supported() -> bool:
    """The platform forks and passes descriptors over Unix sockets (not Windows)."""
    return sys.platform != "win32" and hasattr(os, "fork") and hasattr(os, "getuid")


def folder() -> str:
    """The folder that holds this user's server sockets (not created here)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        return os.path.join(runtime, "subguard")
    temp = next((v for k in ("TMPDIR", "TEMP", "TMP") if os.path.isabs(v := os.environ.get(k, ""))), "/tmp")  # noqa: S108
    return os.path.join(temp, f"subguard-{os.getuid()}")


def private(path: str) -> bool:
    """`path` is a real folder (not a link) of this user that no other user may enter or write."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def make_folder() -> str:
    """`folder()`, created private when missing; OSError when it exists but is not private."""
    path = folder()
    try:
        os.makedirs(path, mode=0o700)
    except FileExistsError:
        pass
    if not private(path):
        raise OSError(f"{path} is not a private folder of this user (mode 0700, not a link): not used")
    return path


def _startup_env() -> list[tuple[str, str]]:
    return sorted((k, v) for k, v in os.environ.items() if k.startswith(("PYTHON", "LC_")) or k in ("LANG", "LANGUAGE"))


def name() -> str:
    """The socket's file name for this interpreter, install and start-up environment."""
    parts = (
        os.path.realpath(sys.executable),
        sys.version,
        repr(sys.flags),
        install_stamp(),
        _startup_env(),
    )
    return blake2b(repr(parts).encode("utf-8", "surrogateescape"), digest_size=10).hexdigest() + ".sock"


def socket_path() -> str:
    """The path a server of this install listens on (whether or not one does)."""
    return os.path.join(folder(), name())


def log_path() -> str:
    """The log of the server of this install: beside its socket."""
    return socket_path() + ".log"


def open_log() -> int:
    """The server log, opened for appending (emptied first when it outgrew `LOG_BYTES`: one line a
    run, kept short across restarts); the folder must exist (`make_folder`)."""
    path = log_path()
    try:
        if os.stat(path).st_size > LOG_BYTES:
            os.truncate(path, 0)
    except FileNotFoundError:
        pass
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)


def served() -> str | None:
    """The socket path to try, or None: serving is disabled, no private socket folder exists (no
    server was ever started by this user: one `stat`, nothing else), or no socket of this install."""
    if os.environ.get(NO_SERVER_ENV) or not supported():
        return None
    base = folder()
    if not private(base):
        return None
    path = os.path.join(base, name())
    return path if os.path.exists(path) else None
