"""Content cache: per-file prefilter verdicts and parse results, and whole-repo scan results.

Keys: a file's path, size and mtime (to skip reading it at all) and its content hash (to reuse a
parse). A namespace built from the subguard version, the policy set and the config invalidates
everything when any of them changes. Entries are pickles signed with an HMAC whose key lives in the
user's cache directory, outside every scanned repo, so a cache file planted in a repository is
never unpickled. A corrupt or unwritable cache is ignored with one warning, never fatal.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
_MAGIC = b"subguard-cache-v1\n"
_GITIGNORE = "# created by subguard\n*\n"


def _user_key() -> bytes:
    """The per-user HMAC key; created on first use with mode 0600."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "subguard"
    key_file = base / "hmac.key"
    try:
        return key_file.read_bytes()
    except OSError:
        pass
    base.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(32)
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key)
    return key


class ContentCache:
    """One cache file per scan root and namespace; load once, save once."""

    def __init__(self, directory: Path, namespace: str, warn: Callable[[str], None]) -> None:
        self.directory = directory
        self.file = directory / f"scan-{namespace}.pickle"
        self._warn = warn
        self._key = b""
        self.stats: dict[str, tuple[int, int, bool]] = {}  # path -> (size, mtime_ns, needle hit)
        self.parses: dict[tuple[str, str, str], Any] = {}  # (extractor, path, sha1) -> facts
        self.results: dict[str, Any] = {}  # manifest key -> ScanResult
        self._dirty = False
        self._used: set[tuple[str, str, str]] = set()
        try:
            self._key = _user_key()
        except OSError as exc:
            self._disable(f"no cache key ({exc})")
            return
        self._load()

    def _disable(self, why: str) -> None:
        self._warn(f"subguard: warning: cache disabled: {why}")
        self.file = Path()
        self._key = b""

    @property
    def enabled(self) -> bool:
        return bool(self._key)

    def _load(self) -> None:
        try:
            blob = self.file.read_bytes()
        except FileNotFoundError:
            return
        except OSError as exc:
            self._warn(f"subguard: warning: cache ignored: cannot read {self.file}: {exc.strerror}")
            return
        body = blob[len(_MAGIC) + 32:]
        sig = blob[len(_MAGIC):len(_MAGIC) + 32]
        if not blob.startswith(_MAGIC) or not hmac.compare_digest(sig, hmac.new(self._key, body, hashlib.sha256).digest()):
            self._warn(f"subguard: warning: cache ignored: {self.file} is corrupt or was not written by this user")
            return
        try:
            state = pickle.loads(body)
            self.stats, self.parses, self.results = state["stats"], state["parses"], state["results"]
        except Exception as exc:  # noqa: BLE001 - a signed but unreadable cache (older format): start over
            self._warn(f"subguard: warning: cache ignored: {self.file}: {type(exc).__name__}")
            self.stats, self.parses, self.results = {}, {}, {}

    def needle_hit(self, path: str, size: int, mtime_ns: int) -> bool | None:
        """The cached prefilter verdict for an unchanged file, else None."""
        entry = self.stats.get(path)
        if entry is not None and entry[0] == size and entry[1] == mtime_ns and mtime_ns:
            return entry[2]
        return None

    def record_needle(self, path: str, size: int, mtime_ns: int, hit: bool) -> None:
        if mtime_ns and self.stats.get(path) != (size, mtime_ns, hit):
            self.stats[path] = (size, mtime_ns, hit)
            self._dirty = True

    def memo(self, extractor: str, path: str, data: bytes, compute: Callable[[], T]) -> T:
        """Per-file parse result by content hash (the `RepoContext.memo` hook)."""
        key = (extractor, path, hashlib.sha1(data).hexdigest())
        self._used.add(key)
        if key in self.parses:
            return self.parses[key]  # type: ignore[no-any-return]
        value = compute()
        self.parses[key] = value
        self._dirty = True
        return value

    def result(self, manifest: str) -> Any:
        return self.results.get(manifest)

    def store_result(self, manifest: str, result: Any) -> None:
        self.results = {manifest: result}
        self._dirty = True

    def save(self) -> None:
        """Write the cache atomically; drop parse entries not used in this run."""
        if not self.enabled or not self._dirty:
            return
        if self._used:
            self.parses = {k: v for k, v in self.parses.items() if k in self._used}
        try:
            body = pickle.dumps({"stats": self.stats, "parses": self.parses, "results": self.results}, protocol=pickle.HIGHEST_PROTOCOL)
            self.directory.mkdir(parents=True, exist_ok=True)
            ignore = self.directory / ".gitignore"
            if not ignore.exists():
                ignore.write_text(_GITIGNORE, encoding="utf-8")
            sig = hmac.new(self._key, body, hashlib.sha256).digest()
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(_MAGIC + sig + body)
            os.replace(tmp, self.file)
        except Exception as exc:  # noqa: BLE001 - unwritable directory, full disk, unpicklable facts: never fatal
            self._warn(f"subguard: warning: cache not written: {type(exc).__name__}: {exc}")


def namespace(*parts: str) -> str:
    """A short hash of everything that invalidates the cache (version, policies, config)."""
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]
