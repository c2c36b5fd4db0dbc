"""Walks a resident server keeps current, so that a served run stamps a tree without walking it.

The run memo stamps each scan root, and each cache folder the run wrote, by walking it
(`subguard.scan.treestamp`): about 50 ms at 20,000 files, paid by every run, the unchanged ones
included. A run notes each tree it walked (`wanted`); once it has ended, a resident server
(`subguard serve`) walks that tree itself (`start`) with an inotify watch on every folder it enters,
added before the folder is read, and keeps the walk: one digest, one set of rows and one newest
ctime per folder. An event in a folder drops the digest of that folder and of its ancestors (and of
the whole subfolder an event names), and the server's next `refresh` (before it forks a run, and
whenever events wait) recomputes those folders only, with the walk's own code: the same digest, rows
and newest ctime a new walk gives. A forked run takes the stamp from that walk (`stamp`) when no
event waits and the server read none since the fork (a count of its reads, in a page the runs share:
the queue a run sees may be empty because the server emptied it); else it walks as without a server.
A scan root inside a git work tree is watched for its edits alone (`WORK_TREE`: the server's run
ahead), as its listing is git's. A lost event (the queue overflowed), a folder moved, or the root
itself removed makes the server walk the tree again whole; a watch that cannot be added (the watch
limit), or a tree on a file system whose changes may come from elsewhere (network, FUSE), is not
watched.

What no inotify-based watcher sees, this does not see either: a write through a shared memory
mapping, and a change made through a hard link from outside the watched folder. Outside a server
(and off Linux) nothing is watched and `stamp` returns None.
Standard library only; `subguard.scan.inotify` (ctypes) is loaded by the server alone.
"""

from __future__ import annotations

import marshal
import mmap
import os
import struct
import time

from subguard.scan import listing, treestamp

try:  # as `treestamp` digests: hashlib would load OpenSSL
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from subguard.scan.inotify import Event, Instance

    # base, skip prefixes, excluded folder names, seed, entries counted by name alone
    Params = tuple[str, tuple[str, ...], Callable[[str], bool], str, Callable[[str], str | None] | None]

ROOT = "root"  # the kind of a scan root's tree (`runmemo`: a cache folder's is "tree")
# a scan root inside a git work tree: its listing is git's, so no run takes a stamp from its walk;
# the server watches it only to see edits (`subguard.cli.resident.runahead`)
WORK_TREE = "work tree"
Key = tuple[str, str, str]  # (kind, path, extra): what `PARAMS[kind](path, extra)` turns into walk parameters
PARAMS: dict[str, Callable[[str, str], Params]] = {}  # filled by the modules that stamp trees (`runmemo`)
# what a server makes ahead from a watched tree's folder and its entries in scan order, for the runs
# it forks (the scan's candidates); filled by the module that uses it (`subguard.scan.discover`)
AHEAD: list[Callable[[str, list[tuple[str, tuple[int, int, int] | None]]], object]] = []
# what a server makes ahead for its runs once every walk is current (`refresh`), from the walks and
# the cache files it keeps (`passedover.prepare`); filled by the modules that define them
AFTER: list[Callable[[], object]] = []
MOST_TREES = 8  # trees a server keeps watched: those of its latest runs
MOST_FOLDERS = 100_000  # a tree with more folders is not watched (inotify's per-user watch limit)
# file systems whose every change is made through this kernel (no other host, no userspace daemon)
LOCAL_FILE_SYSTEMS = frozenset(
    {"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "overlay", "zfs", "f2fs", "jfs", "reiserfs", "bcachefs"}
)
RETRY_SECONDS = 600.0  # a tree that could not be watched is not tried again sooner
_TREES: dict[Key, _Tree] = {}
_WANTED: dict[Key, None] = {}  # trees this process walked that no kept walk answered
_REFUSED: dict[Key, float] = {}  # trees that could not be watched, and when


class _Lost(Exception):
    """The watched walk can no longer follow its tree."""


class _Tree:
    """One watched walk: the walk, its inotify instance, and which folder each watch is on."""

    def __init__(self, params: Params, instance: Instance, kind: str = ROOT) -> None:
        base, skip, excluded, self.seed, unread = params
        self.base = base
        self.kind = kind
        self.inotify = instance
        self.walk = treestamp._Walk(base, skip, excluded, unread)
        self.walk.rows, self.walk.newest_of, self.walk.entered = {}, {}, self._entered
        # the folders looked at again on every refresh: a change through another hard link sends no event
        self.walk.linked = set()
        self.folders: dict[int, str] = {}  # watch descriptor -> folder (relative path)
        self.children: dict[str, tuple[str, ...]] = {}  # folder -> the subfolders its rows name
        self.lost = False
        self.stamp: tuple[str, int] | None = None  # (digest, newest ctime) as of the last refresh
        # how many times events were read, in a page shared with every run forked since: a run
        # whose copy of the walk is older than the server's reading (`seen`) must not use it
        self.reads = mmap.mmap(-1, 8)
        self.seen = 0
        # a scan root's entries, listed in scan order, and what `AHEAD` made of them (no other kind's)
        self.order: list[tuple[str, tuple[int, int, int] | None]] | None = None
        self.made: object = None

    def _entered(self, rel: str, fd: int) -> None:
        if self.lost:
            return
        if len(self.folders) >= MOST_FOLDERS:
            self.lost = True
            return
        try:
            wd = self.inotify.add(f"/proc/self/fd/{fd}")
        except OSError:
            self.lost = True  # never raised into the walk: it would read as an unreadable folder
            return
        self.folders[wd] = rel

    def refresh(self) -> None:
        """Apply the events queued since the last refresh and recompute the folders they touched;
        _Lost when the walk cannot follow them."""
        dirty: set[str] = set()
        gone: set[str] = set()
        events = self.inotify.read()
        if events:  # gone from the queue for every process: a run forked before must not trust its walk now
            struct.pack_into("Q", self.reads, 0, self.read_count() + 1)
        for event in events:
            self._apply(event, dirty, gone)
        walk = self.walk
        assert walk.linked is not None
        dirty |= walk.linked
        if self.stamp is not None and not dirty:
            self.seen = self.read_count()  # what was read changed nothing
            return
        walk.linked.clear()  # each of them is recomputed below, and names itself again
        for rel in gone:
            self._drop_below(rel)
        for rel in dirty:
            self._drop(rel)
        before = set(walk.known)
        root = walk.digest("")
        if self.lost or "" not in self.folders.values():  # the root unwatched: nothing would tell of it
            raise _Lost
        assert walk.rows is not None and walk.newest_of is not None
        for rel in set(walk.known) - before:  # recomputed: which subfolders its rows name now
            prefix = f"{rel}/" if rel else ""
            self.children[rel] = tuple(
                prefix + row[0] for row in marshal.loads(walk.rows[rel]) if len(row) == 2 and isinstance(row[1], bytes)
            )
        reachable = self._reachable()
        for table in (walk.known, walk.rows, walk.newest_of, self.children):
            for rel in [r for r in table if r not in reachable]:
                del table[rel]
        self.folders = {wd: rel for wd, rel in self.folders.items() if rel in reachable}
        digest = blake2b(treestamp._name(self.seed), digest_size=32)
        digest.update(root)
        self.stamp = (digest.hexdigest(), max(walk.newest_of.values(), default=0))
        self.seen = self.read_count()
        if self.kind == ROOT:  # a scan lists this tree from its walk: its entries in order, ahead
            self.order = listing._walk_order(walk.rows)
            self.made = AHEAD[0](self.base, self.order) if AHEAD and self.order is not None else None

    def read_count(self) -> int:
        """How many times the server read this walk's events (shared with the runs it forked)."""
        return int(struct.unpack_from("Q", self.reads, 0)[0])

    def current(self) -> bool:
        """Whether this process's copy of the walk takes in every event read so far, and none waits."""
        return (
            self.stamp is not None and not self.lost and self.seen == self.read_count() and not self.inotify.pending()
        )

    def _apply(self, event: Event, dirty: set[str], gone: set[str]) -> None:
        """Note which folders `event` changes (`dirty`) and which subfolder it names (`gone`: its
        digests, and those of every folder below it, are recomputed)."""
        from subguard.scan import inotify

        mask = event.mask
        if mask & inotify.Q_OVERFLOW:
            raise _Lost
        if mask & inotify.IGNORED:
            self.folders.pop(event.wd, None)
            return
        rel = self.folders.get(event.wd)
        if rel is None:
            return  # a folder the walk left since
        if mask & (inotify.DELETE_SELF | inotify.MOVE_SELF | inotify.UNMOUNT):
            if rel == "":
                raise _Lost  # the root itself went
            return  # its parent's event says so
        if mask & inotify.ISDIR and mask & (inotify.MOVED_FROM | inotify.MOVED_TO):
            raise _Lost  # the watches below it now name other folders
        dirty.add(rel)
        if event.name and mask & inotify.ISDIR:
            gone.add(f"{rel}/{event.name}" if rel else event.name)

    def _drop(self, rel: str) -> None:
        """Forget the digest and newest ctime of `rel` and of its ancestors (their rows hold it):
        a folder that cannot be read now names no newest ctime."""
        assert self.walk.newest_of is not None
        known, newest = self.walk.known, self.walk.newest_of
        known.pop(rel, None)
        newest.pop(rel, None)
        while rel:
            rel = rel.rpartition("/")[0]
            known.pop(rel, None)
            newest.pop(rel, None)

    def _drop_below(self, rel: str) -> None:
        """Forget the digests and newest ctimes of `rel` and of every folder below it."""
        assert self.walk.newest_of is not None
        prefix = f"{rel}/"
        for done in [r for r in self.walk.known if r == rel or r.startswith(prefix)]:
            del self.walk.known[done]
            self.walk.newest_of.pop(done, None)

    def _reachable(self) -> set[str]:
        seen = {""} if "" in self.walk.known else set()
        stack = list(seen)
        while stack:
            for child in self.children.get(stack.pop(), ()):
                if child not in seen and child in self.walk.known:
                    seen.add(child)
                    stack.append(child)
        return seen

    def close(self) -> None:
        self.inotify.close()
        self.reads.close()


def stamp(key: Key, keep: treestamp.Rows | None = None) -> tuple[str, int] | None:
    """(digest, newest ctime) of the tree `key` names from the walk a server keeps, as
    `treestamp.walk_stamp` would return them now (its rows given to `keep`); None when none is kept,
    or an event came since the server's last refresh (then the run walks, and the tree is `wanted`)."""
    tree = _TREES.get(key)
    if tree is None or not tree.current():
        _WANTED[key] = None
        return None
    if keep is not None:
        assert tree.walk.rows is not None
        keep.rows, keep.order, keep.made = dict(tree.walk.rows), tree.order, tree.made
    return tree.stamp


def stamps(kind: str) -> dict[Key, tuple[str, int] | None]:
    """In the server: the stamp of each watched tree of `kind` as of its last refresh."""
    return {key: tree.stamp for key, tree in _TREES.items() if key[0] == kind}


def want(key: Key) -> None:
    """In a run: ask the server to watch the tree `key` names (it takes no stamp from it)."""
    if key not in _TREES:
        _WANTED[key] = None


def wanted() -> list[Key]:
    """The trees this process walked that no kept walk answered, then forgotten (`warm.tell`)."""
    out = list(_WANTED)
    _WANTED.clear()
    return out


def start(key: Key) -> bool:
    """In the server: watch and walk the tree `key` names (bring it up to date, when it is watched
    already); the newest `MOST_TREES` stay. False when it cannot be watched (then it is not tried
    again for `RETRY_SECONDS`)."""
    try:
        if _watch(key):
            return True
    except Exception:  # noqa: BLE001 - _Lost, no inotify, a watch refused: the runs walk it, never fatal
        _TREES.pop(key, None)
    _REFUSED[key] = time.monotonic()
    return False


def _watch(key: Key) -> bool:
    refused = _REFUSED.get(key)
    if refused is not None and time.monotonic() - refused < RETRY_SECONDS:
        return False
    old = _TREES.pop(key, None)
    if old is not None:
        try:
            if not old.lost:
                old.refresh()
                _TREES[key] = old  # the newest again
                return True
        except _Lost:
            pass
        finally:
            if key not in _TREES:
                old.close()
    make = PARAMS.get(key[0])
    if make is None:
        return False
    params = make(key[1], key[2])  # ValueError for parameters no run wrote
    if not local_file_system(params[0]):
        return False
    from subguard.scan import inotify

    tree = _Tree(params, inotify.Instance(), key[0])
    try:
        tree.refresh()
    except BaseException:
        tree.close()
        raise
    _TREES[key] = tree
    while len(_TREES) > MOST_TREES:
        _TREES.pop(next(iter(_TREES))).close()
    return True


def refresh() -> None:
    """In the server: bring every watched walk up to date (a walk that lost its tree is walked
    again whole, or dropped when that fails), then make what `AFTER` makes of them."""
    for key, tree in list(_TREES.items()):
        try:
            tree.refresh()
        except Exception:  # noqa: BLE001 - _Lost, or anything else: walked again whole, else dropped
            tree.lost = True
            start(key)
    for make in AFTER:
        try:
            make()
        except Exception:  # noqa: BLE001 - made ahead to save a run the work: a run does it itself
            continue


def made() -> list[object]:
    """In the server: what `AHEAD` made of each watched scan root, as of its last refresh."""
    return [tree.made for tree in _TREES.values() if tree.made is not None]


def descriptors() -> list[int]:
    """The inotify descriptors of the watched walks (the server waits on them as well)."""
    return [tree.inotify.fd for tree in _TREES.values()]


def watched() -> list[list[str]]:
    """[kind, path] of each watched tree (`subguard serve --status`)."""
    return [[kind, path] for kind, path, _ in _TREES]


def forget() -> None:
    """Stop watching everything, and forget what was wanted or refused."""
    for tree in _TREES.values():
        tree.close()
    _TREES.clear()
    _WANTED.clear()
    _REFUSED.clear()


def local_file_system(path: str) -> bool:
    """Whether `path` and every mount below it are on a file system of `LOCAL_FILE_SYSTEMS`
    (`/proc/self/mountinfo`); False when that cannot be told."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as fh:
            mounts = [m for m in map(_mount, fh) if m[0]]
    except OSError:
        return False
    real = os.path.realpath(path).rstrip("/") + "/"
    holding = [(len(point), kind) for point, kind in mounts if real.startswith(point)]  # the mounts it is on
    below = [kind for point, kind in mounts if point.startswith(real) and point != real]
    return bool(holding) and all(kind in LOCAL_FILE_SYSTEMS for kind in [max(holding)[1], *below])


def _mount(line: str) -> tuple[str, str]:
    """(mount point ending in "/", file system type) of one `mountinfo` line; ("", "") for another."""
    fields = line.split()
    if "-" not in fields[6:]:
        return "", ""
    point = fields[4].replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")
    return point.rstrip("/") + "/", fields[fields.index("-", 6) + 1]
