"""Content cache: per-file prefilter verdicts and parse results, and whole-repo scan results.

Keys: a file's path, size and mtime (to skip reading it at all) and its content hash (to reuse a
parse). A namespace built from the subguard version and code, the policy set and the scan-relevant
config invalidates everything when any of them changes. The user's cache directory also holds small
signed memos keyed by content (parsed policies, simulated group impacts: `read_signed`, `MemoFile`).
Entries are pickles signed (`subguard.core.signing`: keyed BLAKE2b) with a key that lives in the user's
cache directory, outside every scanned repo, so a cache file planted in a repository is never
unpickled. A corrupt or unwritable cache is ignored with one warning, never fatal; one written by
another release of subguard is a silent miss.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from subguard.core import signing

T = TypeVar("T")
_GITIGNORE = "# created by subguard\n*\n"


def user_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/subguard` (default `~/.cache/subguard`): per user, outside every scanned repo."""
    return Path(signing.cache_home())


class ContentCache:
    """The cache of one scan root and namespace, in two signed files loaded on first use: the
    whole-repo result (`result-*.pickle`, all a warm run with nothing changed reads) and the per-file
    state (`scan-*.pickle`: prefilter verdicts and parse results, read only when something changed)."""

    def __init__(self, directory: Path, namespace: str, warn: Callable[[str], None]) -> None:
        self.directory = directory
        self.file = directory / f"scan-{namespace}.pickle"
        self.result_file = directory / f"result-{namespace}.pickle"
        self._warn = warn
        self._key = b""
        self._stats: dict[str, tuple[int, int, bool]] | None = None  # path -> (size, mtime_ns, needle hit)
        self._parses: dict[tuple[str, str, str], Any] = {}  # (extractor, path, sha1) -> facts
        self._results: tuple[str, bytes] | None = None  # (manifest key, the pickled ScanResult)
        self._dirty = self._results_dirty = False
        self._used: set[tuple[str, str, str]] = set()
        try:
            self._key = signing.user_key()
        except OSError as exc:
            self._disable(f"no cache key ({exc})")

    def _disable(self, why: str) -> None:
        self._warn(f"subguard: warning: cache disabled: {why}")
        self._key = b""

    @property
    def enabled(self) -> bool:
        return bool(self._key)

    def _read(self, file: Path) -> Any:
        """The unpickled content of one signed cache file; None (with a warning when it exists) otherwise."""
        if not self.enabled:
            return None
        try:
            blob = file.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            self._warn(f"subguard: warning: cache ignored: cannot read {file}: {exc.strerror}")
            return None
        if signing.older_format(blob):  # written by another release: start over, silently
            return None
        body = signing.unseal(self._key, blob)
        if body is None:
            self._warn(f"subguard: warning: cache ignored: {file} is corrupt or was not written by this user")
            return None
        try:
            return pickle.loads(body)
        except Exception as exc:  # noqa: BLE001 - a signed but unreadable cache (older format): start over
            self._warn(f"subguard: warning: cache ignored: {file}: {type(exc).__name__}")
            return None

    @property
    def stats(self) -> dict[str, tuple[int, int, bool]]:
        if self._stats is None:
            state = self._read(self.file)
            ok = isinstance(state, dict) and isinstance(state.get("stats"), dict) and isinstance(state.get("parses"), dict)
            self._stats = state["stats"] if ok else {}
            self._parses = state["parses"] if ok else {}
        return self._stats

    @property
    def parses(self) -> dict[tuple[str, str, str], Any]:
        self.stats  # noqa: B018 - loads the per-file state
        return self._parses

    @property
    def results(self) -> tuple[str, bytes]:
        """The stored whole-repo result, still pickled: a run whose manifest differs (something
        changed) does not pay for unpickling a result it cannot use."""
        if self._results is None:
            loaded = self._read(self.result_file)
            ok = isinstance(loaded, tuple) and len(loaded) == 2 and isinstance(loaded[0], str) and isinstance(loaded[1], bytes)
            self._results = loaded if ok else ("", b"")
        return self._results

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

    def has_parse(self, extractor: str, path: str, data: bytes) -> bool:
        """Whether a per-file parse result is cached (so nothing needs computing ahead of time)."""
        return (extractor, path, hashlib.sha1(data).hexdigest()) in self.parses

    def memo(self, extractor: str, path: str, data: bytes, compute: Callable[[], T]) -> T:
        """Per-file parse result by content hash (the `RepoContext.memo` hook)."""
        key = (extractor, path, hashlib.sha1(data).hexdigest())
        self._used.add(key)
        parses = self.parses
        if key in parses:
            return parses[key]  # type: ignore[no-any-return]
        value = compute()
        parses[key] = value
        self._dirty = True
        return value

    def result(self, manifest: str) -> Any:
        key, blob = self.results
        if not manifest or key != manifest:
            return None
        try:
            return pickle.loads(blob)
        except Exception:  # noqa: BLE001 - signed by us but unreadable (another version of the code): a miss
            return None

    def store_result(self, manifest: str, result: Any) -> None:
        try:
            blob = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - unpicklable facts: never fatal
            self._warn(f"subguard: warning: cache not written: {type(exc).__name__}: {exc}")
            return
        self._results = (manifest, blob)
        self._results_dirty = True

    def save(self) -> None:
        """Write what changed, atomically; drop parse entries not used in this run."""
        if not self.enabled or not (self._dirty or self._results_dirty):
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            ignore = self.directory / ".gitignore"
            if not ignore.exists():
                ignore.write_text(_GITIGNORE, encoding="utf-8")
            if self._dirty:
                if self._used:
                    self._parses = {k: v for k, v in self.parses.items() if k in self._used}
                write_signed(self.file, {"stats": self.stats, "parses": self.parses})
            if self._results_dirty:
                write_signed(self.result_file, self.results)
        except Exception as exc:  # noqa: BLE001 - unwritable directory, full disk, unpicklable facts: never fatal
            self._warn(f"subguard: warning: cache not written: {type(exc).__name__}: {exc}")
        self._dirty = self._results_dirty = False


def namespace(*parts: str) -> str:
    """A short hash of everything that invalidates the cache (version, policies, config)."""
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def read_signed(path: Path) -> Any:
    """The object pickled in `path` by `write_signed`, or None when the file is missing, unreadable or
    not signed with this user's key (then it is never unpickled)."""
    body = signing.read_sealed(str(path))
    if body is None:
        return None
    try:
        return pickle.loads(body)
    except Exception:  # noqa: BLE001 - signed by us but from another version of the code: a miss
        return None


def write_signed(path: Path, value: Any) -> None:
    """Pickle `value` to `path` atomically, signed with the user's key. Raises OSError (or a pickling
    error) on failure; callers treat the cache as optional."""
    signing.write_sealed(str(path), pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def code_stamp(*folders: Path) -> str:
    """Names, sizes and mtimes of the `.py` files in `folders` and their subfolders: memos of pure
    functions are keyed by it, so a changed implementation (even at the same version) does not reuse
    old answers."""
    parts: list[str] = []
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            rel = os.path.relpath(dirpath, folder.parent)
            for name in filenames:
                if name.endswith(".py"):
                    try:
                        st = os.stat(os.path.join(dirpath, name))
                    except OSError:
                        continue
                    parts.append(f"{rel}/{name}:{st.st_size}:{st.st_mtime_ns}")
    return ",".join(sorted(parts))


class MemoFile:
    """A small signed key -> value memo in the user's cache directory, for pure results that are
    costly to recompute (simulated group impacts). Keeps the `limit` most recently stored entries."""

    def __init__(self, name: str, limit: int = 4096) -> None:
        self.path = user_cache_dir() / f"{name}.pickle"
        self.limit = limit
        loaded = read_signed(self.path)
        self.data: dict[str, Any] = loaded if isinstance(loaded, dict) else {}
        self._dirty = False

    def get(self, key: str) -> Any:
        return self.data.get(key)

    def __contains__(self, key: str) -> bool:
        return key in self.data

    def put(self, key: str, value: Any) -> None:
        self.data.pop(key, None)
        self.data[key] = value
        self._dirty = True

    def save(self) -> None:
        """Write when something changed; failures are silent (the memo is only an optimisation)."""
        if not self._dirty:
            return
        if len(self.data) > self.limit:
            self.data = dict(list(self.data.items())[-self.limit:])
        with contextlib.suppress(Exception):
            write_signed(self.path, self.data)
        self._dirty = False
