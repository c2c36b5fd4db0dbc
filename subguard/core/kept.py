"""Cache files a resident server keeps loaded for the runs it forks.

Each run of `subguard check` reads the same signed cache files again: the content cache's per-file
state (about 3 MB and 20 ms to check and unpickle at 20,000 files), the policy and impact memos.
A run notes each file it loads (`take`: the kind of file, its path, the signing key's folder). A
resident server (`subguard.cli.resident.server`) hears those names when the run ends, loads the
files itself (`warm`: the loaders named in `LOADERS`, the same ones a run uses) and keeps the
objects; a run it forks later gets them from the server's memory (copy-on-write) instead of the
disk, once each, when every file is as it was when loaded (device, inode, size, mtime and ctime)
and was signed with the same key. subguard replaces a cache file by renaming a new one over it, or
appends to it, so a changed file never keeps all five. Outside a server nothing is kept, and `take`
only notes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

Stamp = tuple[tuple[int, ...], ...]
# a kind of cache file: (the files one load reads, given the path; the load itself, given the path
# and the signing key: the object, or None when the files are missing, unreadable or not signed)
Loader = tuple[Callable[[str], tuple[str, ...]], Callable[[str, bytes], Any]]
LOADERS: dict[str, Loader] = {}  # filled by the modules that define the kinds (`subguard.core.cache`)
MOST_KEPT = 16  # entries a server keeps: the files of its latest runs


@dataclass(frozen=True)
class _Entry:
    stamp: Stamp
    key: bytes
    value: Any


_KEPT: dict[tuple[str, str], _Entry] = {}
_SERVING: list[bool] = [False]  # this process is a resident server, or a run one forked
_USED: dict[tuple[str, str, str], None] = {}  # (kind, path, key folder) loaded from disk by this process


def register(kind: str, files: Callable[[str], tuple[str, ...]], load: Callable[[str, bytes], Any]) -> None:
    """Name a kind of cache file, its files and its loader."""
    LOADERS[kind] = (files, load)


def stamp(files: Sequence[str]) -> Stamp:
    """Device, inode, size, mtime and ctime of each file; () for a missing one (an append log not
    written yet)."""
    out: list[tuple[int, ...]] = []
    for path in files:
        try:
            st = os.stat(path)
        except OSError:
            out.append(())
            continue
        out.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(out)


def serve(on: bool = True) -> None:
    """Mark this process as a resident server (or, with `on` false, no longer): it and the runs it
    forks are `serving`."""
    _SERVING[0] = on


def serving() -> bool:
    """Whether a file this run notes is loaded and kept for the next (a server forked it): what
    only a served run can use is written only then."""
    return _SERVING[0]


def take(kind: str, path: str, key: bytes, home: str) -> Any:
    """The object a server loaded from `path` (of `kind`, signed with `key`, the key of the folder
    `home`) if its files are unchanged since, once; else None. Either way the file is noted for the
    server (`used`): the run may change it."""
    _USED[(kind, path, home)] = None  # kept or not: the server loads it again once this run has ended
    entry = _KEPT.pop((kind, path), None)
    if entry is not None and entry.key == key and entry.stamp == stamp(LOADERS[kind][0](path)):
        return entry.value
    return None


def held(kind: str, path: str) -> Any:
    """In the server: the object it keeps for (`kind`, `path`), or None."""
    entry = _KEPT.get((kind, path))
    return entry.value if entry is not None else None


def values(kind: str) -> list[Any]:
    """In the server: the objects it keeps of `kind`, oldest first."""
    return [value for _, value in items(kind)]


def items(kind: str) -> list[tuple[str, Any]]:
    """In the server: (path, object) of each entry it keeps of `kind`, oldest first."""
    return [(path, entry.value) for (k, path), entry in _KEPT.items() if k == kind]


def kept() -> list[list[str]]:
    """What is kept: [kind, path] of each entry, oldest first (`subguard serve --status`)."""
    return [[kind, path] for kind, path in _KEPT]


def used() -> list[tuple[str, str, str]]:
    """What this process loaded: (kind, path, key folder) in order."""
    return list(_USED)


def drain() -> list[tuple[str, str, str]]:
    """`used`, then forgotten: what this process loaded since the last drain."""
    loaded = used()
    _USED.clear()
    return loaded


def warm(wanted: Sequence[tuple[str, str, str]], read_key: Callable[[str], bytes | None]) -> int:
    """In the server: load each wanted file (`read_key(home)`: the key kept in that folder, None when
    there is none) and keep the object with its files' stamp, taken before the load and found equal
    after it (a file replaced meanwhile is not kept); an entry whose files are as they were when it
    was loaded is held as it is (no run changes the server's objects: each has its own copy). The
    newest `MOST_KEPT` entries stay. The number of entries loaded or held."""
    loaded = 0
    for kind, path, home in wanted:
        loader = LOADERS.get(kind)
        key = read_key(home)
        if loader is None or key is None:
            continue
        files = loader[0](path)
        before = stamp(files)
        held = _KEPT.pop((kind, path), None)
        if held is not None and held.key == key and held.stamp == before:  # unchanged: the object held
            _KEPT[(kind, path)] = held
            loaded += 1
            continue
        try:
            value = loader[1](path, key)
        except Exception:  # noqa: BLE001 - the run that needs it reads (and reports) it itself
            continue
        if value is None or not before or not before[0] or stamp(files) != before:  # the first file must exist
            continue
        _KEPT.pop((kind, path), None)
        _KEPT[(kind, path)] = _Entry(before, key, value)
        loaded += 1
    while len(_KEPT) > MOST_KEPT:
        del _KEPT[next(iter(_KEPT))]
    return loaded


def forget() -> None:
    """Drop everything kept and noted."""
    _KEPT.clear()
    _USED.clear()
