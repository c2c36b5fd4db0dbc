"""Path lists with their stats, as an extractor's kept state holds them: a digest of the list and a
digest of each listed path's (size, mtime) in order, the list itself kept once in the content
cache under its digest (`SECTION`).

An extractor's state names the files it was given and those it read (a search reads every Python
file of a repo). Held as a tuple per path, every run that changed one file stored those tuples again:
on a 20,000-file tree about 0.4 MB appended to the cache per edit, unpickled by every later run. A
`Stamped` is a few dozen bytes; its list is stored again only when the paths themselves change.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from subguard.core.cache import ContentCache

try:  # hashlib would load OpenSSL for a digest the interpreter has built in
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

SECTION = "paths"  # the content cache's section of path lists, by `key_of`
Stat = tuple[int, int] | None  # a path's (size, mtime_ns); None: not a file of the scan


@dataclass(frozen=True)
class Stamped:
    """A path list by its digest (`key_of`) and the digest of its paths' stats (`stats_digest`)."""

    key: str
    stats: bytes


def key_of(paths: Iterable[str]) -> str:
    """The digest of a path list (its order included)."""
    listed = "".join([f"{path}\0" for path in paths])  # each path NUL-ended: one C hash
    return blake2b(listed.encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


def stats_digest(stats: Iterable[Stat]) -> bytes:
    """The digest of stats in order (marshal version 2 keeps no references: equal lists, equal bytes)."""
    return blake2b(marshal.dumps(list(stats), 2), digest_size=16).digest()


def listed(cache: ContentCache, key: str) -> tuple[str, ...] | None:
    """The path list `key` names in `cache`, or None (never stored, or dropped)."""
    got = cache.section(SECTION).get(key)
    return got if isinstance(got, tuple) else None


def stamp(cache: ContentCache, stats: Mapping[str, Stat], before: Stamped | None) -> Stamped:
    """`stats` (path -> stat) as a `Stamped`, its list stored in `cache` when new. The
    paths are sorted, in the order of `before`'s list when it lists the same paths (sorting a
    search's 10,000 paths again after every edit costs more than that check)."""
    old = listed(cache, before.key) if before is not None else None
    if before is not None and old is not None and len(old) == len(stats) and all(map(stats.__contains__, old)):
        return Stamped(before.key, stats_digest(map(stats.__getitem__, old)))
    paths = sorted(stats)
    key = key_of(paths)
    if listed(cache, key) is None:
        cache.put(SECTION, key, tuple(paths))
    return Stamped(key, stats_digest(map(stats.__getitem__, paths)))


def holds(cache: ContentCache, stamped: Stamped, stat: Callable[[str], Stat]) -> bool:
    """Whether each path of `stamped`'s list has the stat it had then (False when the list is gone)."""
    paths = listed(cache, stamped.key)
    return paths is not None and stats_digest(map(stat, paths)) == stamped.stats


def forget(cache: ContentCache, key: str, still: Iterable[Any]) -> None:
    """Drop the list `key` unless one of the `Stamped` values in `still` names it."""
    if listed(cache, key) is not None and all(not (isinstance(s, Stamped) and s.key == key) for s in still):
        cache.put(SECTION, key, None)
