"""Signed cache files: a per-user key outside every scanned repo, and a keyed BLAKE2b tag per file.

A cache file planted in a repository (or written by another user) fails the check and is never
decoded. Standard library only and cheap to import: the run memo reads its entries through this
module before anything else of subguard loads.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

try:  # hashlib would load OpenSSL (~10 ms) for a MAC the interpreter has built in
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b
try:
    from _operator import _compare_digest as compare_digest  # what hmac.compare_digest falls back to
except ImportError:  # pragma: no cover
    from hmac import compare_digest  # type: ignore[no-redef]

MAGIC = b"subguard-cache-v2\n"
_FAMILY = b"subguard-cache-v"
TAG_SIZE = 32


def cache_home(environ: Mapping[str, str] = os.environ) -> str:
    """`$XDG_CACHE_HOME/subguard` (default `~/.cache/subguard`): per user, outside every scanned repo
    (`environ`: of another process, which a test starts)."""
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "subguard")


def stored_key(home: str) -> bytes | None:
    """The signing key kept in the cache folder `home`; None when there is none (never created here)."""
    try:
        with open(os.path.join(home, "hmac.key"), "rb") as fh:
            return fh.read()
    except OSError:
        return None


def user_key() -> bytes:
    """The per-user signing key; created on first use with mode 0600. Raises OSError when it can be
    neither read nor created."""
    key = stored_key(cache_home())
    if key is not None:
        return key
    key_file = os.path.join(cache_home(), "hmac.key")
    os.makedirs(cache_home(), exist_ok=True)
    key = os.urandom(32)
    try:
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another subguard process made it first
        with open(key_file, "rb") as fh:
            return fh.read()
    with os.fdopen(fd, "wb") as fh:
        fh.write(key)
    return key


def _tag(key: bytes, body: bytes) -> bytes:
    return blake2b(body, key=key[:64], digest_size=TAG_SIZE).digest()


def seal(key: bytes, body: bytes) -> bytes:
    """The file content that carries `body` signed with `key`."""
    return MAGIC + _tag(key, body) + body


def unseal(key: bytes, blob: bytes) -> bytes | None:
    """The body of a sealed blob, or None when it is not signed with `key` by this format."""
    tag, body = blob[len(MAGIC) : len(MAGIC) + TAG_SIZE], blob[len(MAGIC) + TAG_SIZE :]
    if not blob.startswith(MAGIC) or not compare_digest(tag, _tag(key, body)):
        return None
    return body


def older_format(blob: bytes) -> bool:
    """A cache file from another release of subguard (a miss, not a sign of tampering)."""
    return blob.startswith(_FAMILY) and not blob.startswith(MAGIC)


def read_sealed(path: str, key: bytes | None = None) -> bytes | None:
    """The signed body of the file at `path` (signed with `key`, by default this user's); None when
    it is missing, unreadable or not signed with it."""
    try:
        with open(path, "rb") as fh:
            blob = fh.read()
        return unseal(user_key() if key is None else key, blob)
    except OSError:
        return None


def write_sealed(path: str, body: bytes) -> None:
    """Write `body` signed to `path` atomically (a temporary file beside it, then a rename). Raises
    OSError on failure; callers treat caches as optional."""
    blob = seal(user_key(), body)
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f".tmp-{os.getpid()}-{os.urandom(6).hex()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
