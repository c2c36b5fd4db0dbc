"""Content cache: per-file prefilter verdicts and parse results, and whole-repo scan results.

Keys: a file's path, size and mtime (to skip reading it at all) and its content hash (to reuse a
parse). A namespace built from the subguard version and code, the policy set and the scan-relevant
config invalidates everything when any of them changes. The user's cache directory also holds small
signed memos keyed by content (parsed policies, simulated group impacts: `read_signed`, `MemoFile`).
Entries are pickles signed (`subguard.core.signing`: keyed BLAKE2b) with a key that lives in the user's
cache directory, outside every scanned repo, so a cache file planted in a repository is never
unpickled. The per-file state is appended to, not rewritten: a run that changed a few files adds
one signed frame with what it changed (`scan-*.log`), and the snapshot (`scan-*.pickle`) is rewritten
only when the frames outgrow half of it. A corrupt or unwritable cache is ignored with one warning, never fatal; one written by
another release of subguard is a silent miss.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from subguard.core import kept, signing

T = TypeVar("T")
_GITIGNORE = "# created by subguard\n*\n"


def user_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/subguard` (default `~/.cache/subguard`): per user, outside every scanned repo."""
    return Path(signing.cache_home())


_FRAME = struct.Struct(">Q")  # the length of one sealed frame of the append log
_COMPACT_FRAMES = 64  # a log of more frames than this (or half the snapshot's size) is folded into it


def sha1(data: bytes) -> str:
    """A file's content key: the hex sha1 of its bytes (the parses are kept by it; `ContentCache.digest`
    computes it once per file, and `RepoContext.sha1` defaults to it)."""
    return hashlib.sha1(data).hexdigest()


class ContentCache:
    """The cache of one scan root and namespace, in signed files loaded on first use: the
    whole-repo result (`result-*.pickle`, all a warm run with nothing changed reads) and the per-file
    state (`scan-*.pickle` plus its append log `scan-*.log`: prefilter verdicts, parse results, which
    extractor claims each path, and each extractor's last result with the inputs it read; read only
    when something changed)."""

    def __init__(self, directory: Path, namespace: str, warn: Callable[[str], None]) -> None:
        self.directory = directory
        self.file = directory / f"scan-{namespace}.pickle"
        self.log_file = directory / f"scan-{namespace}.log"
        self.result_file = directory / f"result-{namespace}.pickle"
        self._warn = warn
        self._key = b""
        self._stats: dict[str, tuple[int, int, bool]] | None = None  # path -> (size, mtime_ns, needle hit)
        self._parses: dict[tuple[str, str, str], bytes] = {}  # (extractor, path, sha1) -> pickled facts
        self._incremental: dict[str, Any] = {}  # section -> {key: value}: claims, extractor states (`scan.extraction`)
        self._generation = ""  # the snapshot's id: frames of another snapshot's log are ignored
        self._snapshot_size = 0
        self._log_size = 0
        self._log_frames = 0
        self._new_stats: set[str] = set()
        self._new_parses: set[tuple[str, str, str]] = set()
        self._new_incremental: dict[str, set[str]] = {}
        self._present: frozenset[str] | None = None  # the paths of this run's scan, for pruning
        self._results: tuple[str, bytes] | None = None  # (manifest key, the pickled ScanResult)
        self._dirty = self._results_dirty = False
        self._used: set[tuple[str, str, str]] = set()
        self._unpickled: dict[int, tuple[bytes, Any]] = {}
        self._ahead: dict[str, Any] = {}
        self._digests: dict[int, tuple[bytes, str]] = {}  # id(bytes) -> (the bytes, their sha1): `digest`
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

    @property
    def key(self) -> bytes:
        """The key its files are signed with (b"" when it is disabled)."""
        return self._key

    def _read(self, file: Path) -> Any:
        """The unpickled content of one signed cache file; None (with a warning when it exists) otherwise."""
        if not self.enabled:
            return None
        return _read_pickle(file, self._key, self._warn)[0]

    def _load_state(self) -> None:
        loaded = kept.take(SCAN_STATE, str(self.file), self._key, signing.cache_home()) if self.enabled else None
        if isinstance(loaded, LoadedState):
            for message in loaded.warnings:  # as loading it from disk would have warned
                self._warn(message)
        else:
            loaded = load_state(self.file, self.log_file, self._key, self._warn) if self.enabled else LoadedState()
        self._stats, self._parses, self._incremental = loaded.stats, loaded.parses, loaded.incremental
        self._generation = loaded.generation
        self._snapshot_size, self._log_size, self._log_frames = loaded.snapshot_size, loaded.log_size, loaded.log_frames
        self._unpickled = loaded.unpickled
        self._ahead = loaded.ahead

    @property
    def stats(self) -> dict[str, tuple[int, int, bool]]:
        if self._stats is None:
            self._load_state()
        assert self._stats is not None
        return self._stats

    @property
    def parses(self) -> dict[tuple[str, str, str], bytes]:
        self.stats  # noqa: B018 - loads the per-file state
        return self._parses

    def section(self, name: str) -> dict[str, Any]:
        """One section of the incremental state (read it; write through `put`)."""
        self.stats  # noqa: B018 - loads the per-file state
        section = self._incremental.get(name)
        if not isinstance(section, dict):
            section = self._incremental[name] = {}
        return section

    def put(self, section: str, key: str, value: Any) -> None:
        """Store one entry of the incremental state (appended to the log when the run is saved)."""
        self.section(section)[key] = value
        self._new_incremental.setdefault(section, set()).add(key)
        self._dirty = True

    def drop_section(self, name: str) -> None:
        """Forget a section (its entries were made for other extractors)."""
        self.section(name).clear()
        self._new_incremental.pop(name, None)
        self._generation = ""  # a removal cannot be appended: the next save writes a snapshot
        self._dirty = True

    def retain(self, paths: frozenset[str]) -> None:
        """The paths of this run's scan: a snapshot keeps no prefilter verdict or parse of another path."""
        self._present = paths

    @property
    def results(self) -> tuple[str, bytes]:
        """The stored whole-repo result, still pickled: a run whose manifest differs (something
        changed) does not pay for unpickling a result it cannot use."""
        if self._results is None:
            loaded = self._read(self.result_file)
            ok = (
                isinstance(loaded, tuple)
                and len(loaded) == 2
                and isinstance(loaded[0], str)
                and isinstance(loaded[1], bytes)
            )
            self._results = loaded if ok else ("", b"")
        return self._results

    def needle_hit(self, path: str, size: int, mtime_ns: int) -> bool | None:
        """The cached prefilter verdict for an unchanged file, else None."""
        entry = (self._stats if self._stats is not None else self.stats).get(path)  # once loaded: no property
        if entry is not None and entry[0] == size and entry[1] == mtime_ns and mtime_ns:
            return entry[2]
        return None

    def record_needle(self, path: str, size: int, mtime_ns: int, hit: bool) -> None:
        if mtime_ns and self.stats.get(path) != (size, mtime_ns, hit):
            self.stats[path] = (size, mtime_ns, hit)
            self._new_stats.add(path)
            self._dirty = True

    def digest(self, data: bytes) -> str:
        """The sha1 of `data`, computed once per bytes object while `digests_held` (the parse memo,
        its prefetch and the check for a cached parse all key a file's bytes by it)."""
        held = self._digests.get(id(data))
        if held is not None and held[0] is data:  # held: the id cannot name another object meanwhile
            return held[1]
        digest = sha1(data)
        self._digests[id(data)] = (data, digest)
        return digest

    @contextlib.contextmanager
    def digests_held(self) -> Iterator[None]:
        """The bytes `digest` holds are let go at the end of the body (an extractor's run: its files)."""
        try:
            yield
        finally:
            self._digests.clear()

    def has_parse(self, extractor: str, path: str, data: bytes) -> bool:
        """Whether a per-file parse result is cached (so nothing needs computing ahead of time)."""
        return (extractor, path, self.digest(data)) in self.parses

    def memo(self, extractor: str, path: str, data: bytes, compute: Callable[[], T]) -> T:
        """Per-file parse result by content hash (the `RepoContext.memo` hook)."""
        key = (extractor, path, self.digest(data))
        self._used.add(key)
        parses = self.parses
        if key in parses:
            try:
                return self.unpickle(parses[key])  # type: ignore[no-any-return]
            except Exception:  # noqa: BLE001 - signed by us but unreadable: compute it again
                pass
        value = compute()
        try:  # kept pickled: loading the cache does not unpickle (and import the classes of) every parse
            parses[key] = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 - an unpicklable parse is not cached
            return value
        self._new_parses.add(key)
        self._dirty = True
        return value

    def prints(self, kind: str) -> dict[str, tuple[str, str]]:
        """Path -> (sha1 of its bytes, sha1 of the pickled parse) of each parse of `kind` this run
        asked the memo for and the cache holds: equal parse digests, equal parses (a parse pickles
        to the same bytes in every process)."""
        parses = self.parses
        out: dict[str, tuple[str, str]] = {}
        for key in self._used:
            blob = parses.get(key) if key[0] == kind else None
            if blob is not None:
                out[key[1]] = (key[2], sha1(blob))
        return out

    def ahead(self, maker: str) -> Any:
        """What a resident server made ahead of this cache's state (`LoadedState.ahead`), or None."""
        self.stats  # noqa: B018 - loads the per-file state
        return self._ahead.get(maker)

    def unpickle(self, blob: bytes) -> Any:
        """`pickle.loads(blob)` of a pickle held in this cache's state; the object a resident server
        unpickled ahead, once (a second call unpickles again: each caller may change what it gets)."""
        ahead = self._unpickled.pop(id(blob), None)
        if ahead is not None and ahead[0] is blob:
            return ahead[1]
        return pickle.loads(blob)

    def held(self, blob: bytes) -> Any:
        """The object a resident server unpickled ahead from `blob`, to look at only (None when it
        did not): what `unpickle` would give without unpickling, left for it."""
        ahead = self._unpickled.get(id(blob))
        return ahead[1] if ahead is not None and ahead[0] is blob else None

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
        """Write what changed: one frame appended to the log, or (no snapshot yet, or a log grown
        past half of it) a new snapshot that drops the parses this run replaced and those of paths
        no longer scanned, and the entries put away (None)."""
        if not self.enabled or not (self._dirty or self._results_dirty):
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            ignore = self.directory / ".gitignore"
            if not ignore.exists():
                ignore.write_text(_GITIGNORE, encoding="utf-8")
            if self._dirty:
                self._save_state()
            if self._results_dirty:
                write_signed(self.result_file, self.results)
        except Exception as exc:  # noqa: BLE001 - unwritable directory, full disk, unpicklable facts: never fatal
            self._warn(f"subguard: warning: cache not written: {type(exc).__name__}: {exc}")
        self._dirty = self._results_dirty = False

    def _save_state(self) -> None:
        if self._generation and self._log_frames < _COMPACT_FRAMES and self._log_size * 2 < self._snapshot_size:
            delta = {
                "generation": self._generation,
                "stats": {p: self.stats[p] for p in self._new_stats},
                "parses": {k: self.parses[k] for k in self._new_parses if k in self.parses},
                "incremental": {
                    s: {k: self._incremental[s][k] for k in keys if k in self._incremental.get(s, {})}
                    for s, keys in self._new_incremental.items()
                },
            }
            frame = signing.seal(self._key, pickle.dumps(delta, protocol=pickle.HIGHEST_PROTOCOL))
            fd = os.open(self.log_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with os.fdopen(fd, "ab") as fh:  # one write: concurrent runs append whole frames
                fh.write(_FRAME.pack(len(frame)) + frame)
            self._log_size += _FRAME.size + len(frame)
            self._log_frames += 1
        else:
            self._compact()
        self._new_stats.clear()
        self._new_parses.clear()
        self._new_incremental.clear()

    def _compact(self) -> None:
        replaced = {(k, p) for k, p, _sha in self._used}
        present = self._present
        self._parses = {
            key: value
            for key, value in self.parses.items()
            if (key in self._used or (key[0], key[1]) not in replaced) and (present is None or key[1] in present)
        }
        if present is not None:
            self._stats = {p: v for p, v in self.stats.items() if p in present}
        for section in self._incremental.values():  # None: an entry put away (`put(section, key, None)`)
            for key in [k for k, v in section.items() if v is None] if isinstance(section, dict) else ():
                del section[key]
        self._generation = os.urandom(8).hex()
        body = {
            "stats": self.stats,
            "parses": self.parses,
            "incremental": self._incremental,
            "generation": self._generation,
        }
        blob = signing.seal(self._key, pickle.dumps(body, protocol=pickle.HIGHEST_PROTOCOL))
        write_signed_blob(self.file, blob)
        self._snapshot_size = len(blob)
        with contextlib.suppress(FileNotFoundError):
            self.log_file.unlink()
        self._log_size = self._log_frames = 0


@dataclass
class LoadedState:
    """The per-file state of a content cache as loaded: its snapshot with the log's frames applied."""

    stats: dict[str, tuple[int, int, bool]] = field(default_factory=dict)
    parses: dict[tuple[str, str, str], bytes] = field(default_factory=dict)
    incremental: dict[str, Any] = field(default_factory=dict)
    generation: str = ""  # the snapshot's id: frames of another snapshot's log are ignored
    snapshot_size: int = 0
    log_size: int = 0
    log_frames: int = 0
    # id(pickle) -> (the pickle, its object): what a resident server unpickled ahead (`_kept_state`)
    unpickled: dict[int, tuple[bytes, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # what loading it warned, for a run given it to warn again
    # what a resident server made of it ahead for the runs it forks, by the maker (`ContentCache.ahead`)
    ahead: dict[str, Any] = field(default_factory=dict)


def _read_pickle(file: Path, key: bytes, warn: Callable[[str], None]) -> tuple[Any, int]:
    """The unpickled content of one signed cache file and its size; (None, 0) (with a warning when
    it exists but is not ours or not readable) otherwise."""
    try:
        blob = file.read_bytes()
    except FileNotFoundError:
        return None, 0
    except OSError as exc:
        warn(f"subguard: warning: cache ignored: cannot read {file}: {exc.strerror}")
        return None, 0
    if signing.older_format(blob):  # written by another release: start over, silently
        return None, 0
    body = signing.unseal(key, blob)
    if body is None:
        warn(f"subguard: warning: cache ignored: {file} is corrupt or was not written by this user")
        return None, 0
    try:
        return pickle.loads(body), len(blob)
    except Exception as exc:  # noqa: BLE001 - a signed but unreadable cache (older format): start over
        warn(f"subguard: warning: cache ignored: {file}: {type(exc).__name__}")
        return None, 0


def load_state(file: Path, log_file: Path, key: bytes, warn: Callable[[str], None]) -> LoadedState:
    """The per-file state kept in `file` plus the frames appended to `log_file` since (a torn last
    frame, from a run killed while appending, ends the log; a frame not signed with `key` or of
    another snapshot is ignored)."""
    state, size = _read_pickle(file, key, warn)
    ok = (
        isinstance(state, dict)
        and isinstance(state.get("stats"), dict)
        and isinstance(state.get("parses"), dict)
        and isinstance(state.get("incremental", {}), dict)
    )
    if not ok:
        return LoadedState(snapshot_size=size)
    loaded = LoadedState(
        state["stats"], state["parses"], state.get("incremental", {}), str(state.get("generation", "")), size
    )
    if loaded.generation:
        _replay_log(loaded, log_file, key, warn)
    return loaded


def _replay_log(loaded: LoadedState, log_file: Path, key: bytes, warn: Callable[[str], None]) -> None:
    try:
        blob = log_file.read_bytes()
    except OSError:
        return
    loaded.log_size = len(blob)
    at = 0
    while at + _FRAME.size <= len(blob):
        (size,) = _FRAME.unpack_from(blob, at)
        frame = blob[at + _FRAME.size : at + _FRAME.size + size]
        if len(frame) < size:
            break
        at += _FRAME.size + size
        body = signing.unseal(key, frame)
        if body is None:
            warn(f"subguard: warning: cache log frame ignored: {log_file} is corrupt or was not written by this user")
            continue
        try:
            delta = pickle.loads(body)
        except Exception:  # noqa: BLE001 - signed but unreadable: skip it
            continue
        if not isinstance(delta, dict) or delta.get("generation") != loaded.generation:
            continue
        loaded.log_frames += 1
        loaded.stats.update(delta.get("stats", {}))
        loaded.parses.update(delta.get("parses", {}))
        for section, entries in delta.get("incremental", {}).items():
            loaded.incremental.setdefault(section, {}).update(entries)


def _state_files(path: str) -> tuple[str, ...]:
    """A content cache's snapshot and its append log."""
    return path, path.removesuffix(".pickle") + ".log"


# section -> the pickles one entry of it holds (`ContentCache.section`), unpickled ahead by a resident
# server with the parses (`_kept_state`); filled by the module that defines the section
PICKLES: dict[str, Callable[[Any], tuple[bytes, ...]]] = {}
AHEAD_BYTES = 16 * 1024 * 1024  # pickles unpickled ahead per state (about ten times as much in memory)


def _kept_state(path: str, key: bytes) -> LoadedState:
    """A content cache's state as a resident server keeps it: loaded (what loading it warns is kept
    with it), and the pickles `PICKLES` names, then the parses, unpickled ahead up to `AHEAD_BYTES`
    (one that does not unpickle is left to the run)."""
    warnings: list[str] = []
    loaded = load_state(Path(path), Path(_state_files(path)[1]), key, warnings.append)
    loaded.warnings = warnings
    blobs = [
        blob
        for section, pickles in PICKLES.items()
        for e in loaded.incremental.get(section, {}).values()
        for blob in pickles(e)
    ]
    budget = AHEAD_BYTES
    for blob in [*blobs, *loaded.parses.values()]:
        budget -= len(blob)
        if budget < 0:
            break
        with contextlib.suppress(Exception):
            loaded.unpickled[id(blob)] = (blob, pickle.loads(blob))
    return loaded


SCAN_STATE, SIGNED = "scan-state", "signed"
kept.register(SCAN_STATE, _state_files, _kept_state)


def namespace(*parts: str) -> str:
    """A short hash of everything that invalidates the cache (version, policies, config)."""
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def read_signed(path: Path) -> Any:
    """The object pickled in `path` by `write_signed`, or None when the file is missing, unreadable or
    not signed with this user's key (then it is never unpickled)."""
    try:
        key = signing.user_key()
    except OSError:
        return None
    value = kept.take(SIGNED, str(path), key, signing.cache_home())
    return value if value is not None else _load_signed(str(path), key)


def _load_signed(path: str, key: bytes) -> Any:
    body = signing.read_sealed(path, key)
    if body is None:
        return None
    try:
        return pickle.loads(body)
    except Exception:  # noqa: BLE001 - signed by us but from another version of the code: a miss
        return None


kept.register(SIGNED, lambda path: (path,), _load_signed)


def write_signed(path: Path, value: Any) -> None:
    """Pickle `value` to `path` atomically, signed with the user's key. Raises OSError (or a pickling
    error) on failure; callers treat the cache as optional."""
    signing.write_sealed(str(path), pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def write_signed_blob(path: Path, blob: bytes) -> None:
    """Write an already sealed blob to `path` atomically (see `signing.write_sealed`)."""
    tmp = path.with_name(f".tmp-{os.getpid()}-{os.urandom(6).hex()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


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

    @property
    def dirty(self) -> bool:
        """Whether something was put since the memo was read or saved."""
        return self._dirty

    def save(self) -> None:
        """Write when something changed; failures are silent (the memo is only an optimisation)."""
        if not self._dirty:
            return
        if len(self.data) > self.limit:
            self.data = dict(list(self.data.items())[-self.limit :])
        with contextlib.suppress(Exception):
            write_signed(self.path, self.data)
        self._dirty = False
