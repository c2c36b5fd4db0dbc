"""Digests of what a scan root holds (names and stat fields), fast enough to answer an unchanged run.

A stamp is taken before a `check` reads anything and again when the next run starts; equal stamps
mean every entry has its old type, size, mtime, ctime and inode. Standard library only, and small
imports, so that `subguard.scan.runmemo` can stamp a root without loading the rest of subguard.

A walked tree is digested as a Merkle tree (one digest per folder, built from its sorted entries and
its subfolders' digests), so the same tree gives the same digest however the work is split. On
Linux, large trees are split between this process and one forked child: `lstat` is most of the cost
and two cores halve it. Both stamps also return the newest ctime (ns) met, for the racy-edit check.
"""

from __future__ import annotations

import marshal
import os
import sys
from stat import S_ISDIR as stat_isdir

try:  # hashlib would load OpenSSL (~10 ms) for a digest the interpreter has built in
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

SPLIT_FRONTIER = 8  # folders to share out before splitting; fewer: walk in one process
SPLIT_MIN_NAMES = 2000  # names (git listings) worth a second process
# marshal format 2: no shared references (format 3 on), so equal rows give equal bytes; 4x faster than repr
_CANONICAL = 2
LEFT_OUT, FOLDER, ENTRY = 0, 1, 2  # what the walk does with an entry (`_Walk._kind`)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _stamp(st: os.stat_result) -> bytes:
    return b"%d %d %d %d %d" % (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def _name(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


class _Walk:
    """One walk of a tree: folder digests by relative path, and the newest ctime met."""

    def __init__(
        self,
        base: str,
        skip: tuple[str, ...],
        excluded: Callable[[str], bool],
        unread: Callable[[str], str | None] | None = None,
    ) -> None:
        self.base = base
        self.skip = skip
        self.excluded = excluded
        self.unread = unread  # entries (relative path) counted by name alone: the config's `exclude`
        self.known: dict[str, bytes] = {}
        self.rows: dict[str, bytes] | None = None  # each folder's sorted rows (marshalled), when kept
        self.newest = 0
        # a walk kept current (`subguard.scan.watch`): each folder's own newest ctime, and what to do
        # with each folder's open descriptor before it is read (watch it)
        self.newest_of: dict[str, int] | None = None
        self.entered: Callable[[str, int], None] | None = None
        self.linked: set[str] | None = None  # and the folders holding a file with another hard link

    def _kind(self, prefix: str, entry: os.DirEntry[str]) -> int:
        """LEFT_OUT (under a `skip` prefix, or an excluded folder), FOLDER (to enter) or ENTRY (stamped)."""
        if self.skip and (prefix + entry.name + "/").startswith(self.skip):
            return LEFT_OUT
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        if not is_dir:
            return ENTRY
        return LEFT_OUT if self.excluded(entry.name) else FOLDER

    def subfolders(self, rel: str) -> list[str] | None:
        """The folders below `rel` the walk enters (relative paths); None when it cannot be read."""
        prefix = f"{rel}/" if rel else ""
        try:
            with os.scandir(f"{self.base}/{rel}" if rel else self.base) as it:
                return sorted(prefix + e.name for e in it if self._kind(prefix, e) == FOLDER)
        except OSError:
            return None

    def digest(self, rel: str, parent_fd: int | None = None, name: str = "") -> bytes:
        """The digest of the folder at `rel` (its entries' names and stat fields, its subfolders'
        digests), computed once. Folders are opened relative to their parent's descriptor, so each
        `lstat` resolves one name, not a whole path."""
        done = self.known.get(rel)
        if done is not None:
            return done
        try:  # a root given as a link to a folder is walked (as `discover` does); links below it never
            fd = (
                os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
                if parent_fd is not None
                else os.open(f"{self.base}/{rel}" if rel else self.base, _DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))
            )
        except OSError:
            rows: list[tuple[object, ...]] = [("!unreadable",)]
        else:
            try:
                if self.entered is not None:
                    self.entered(rel, fd)
                with os.scandir(fd) as it:
                    rows = self._rows(rel, fd, list(it))
            except OSError:
                rows = [("!unreadable",)]
            finally:
                os.close(fd)
        rows.sort()  # names are unique in a folder: listing order does not matter
        canonical = marshal.dumps(rows, _CANONICAL)
        value = blake2b(canonical, digest_size=20).digest()
        self.known[rel] = value
        if self.rows is not None:  # kept as marshalled: a forked half hands them over at no cost
            self.rows[rel] = canonical
        return value

    def _rows(self, rel: str, fd: int, found: list[os.DirEntry[str]]) -> list[tuple[object, ...]]:
        """One row per entry kept: (name, subfolder digest) or (name, *`fields`), built in the loop."""
        prefix = f"{rel}/" if rel else ""
        rows: list[tuple[object, ...]] = []
        append, kind_of, unread, linked = rows.append, self._kind, self.unread, self.linked
        newest = 0
        for entry in found:
            name = entry.name
            kind = kind_of(prefix, entry)
            if kind != ENTRY:
                if kind == FOLDER:
                    append((name, self.digest(prefix + name, fd, name)))
                continue
            if unread is not None and unread(prefix + name) is not None:
                append((name, "excluded"))
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                append((name, None))
                continue
            ctime = st.st_ctime_ns
            append((name, st.st_mode, st.st_size, st.st_mtime_ns, ctime, st.st_ino))
            if linked is not None and st.st_nlink > 1 and not stat_isdir(st.st_mode):
                linked.add(rel)
            if ctime > newest:  # ctime moves with every change; mtime can be set back
                newest = ctime
        self.newest = max(self.newest, newest)
        if self.newest_of is not None:
            self.newest_of[rel] = newest
        return rows

    def frontier(self) -> list[str]:
        """Folders below the root to share out: the root's subfolders, breadth first, until there are
        `SPLIT_FRONTIER` of them or no deeper level."""
        level = [""]
        for _ in range(4):
            deeper: list[str] = []
            for rel in level:
                listed = self.subfolders(rel)
                if listed is None:
                    return []
                deeper += listed
            if not deeper:
                return []
            level = deeper
            if len(level) >= SPLIT_FRONTIER:
                return level
        return level if len(level) >= SPLIT_FRONTIER else []


class Rows:
    """The rows a walk kept (`walk_stamp(keep=...)`): this process's folders at once, a forked
    child's only when asked for (`complete`), so that a stamp nobody lists from (a replayed run)
    does not pay for handing them over. `close` lets the child go without them."""

    def __init__(self) -> None:
        self.rows: dict[str, bytes] = {}
        self.pending: Pending | None = None
        self.partial = False  # the child went without handing its folders over
        # the entries in `listing.walk_tree`'s order, when a watched walk had them at hand (`watch`)
        self.order: list[tuple[str, tuple[int, int, int] | None]] | None = None
        self.made: object = None  # what the server made of them ahead (`watch.AHEAD`)

    def complete(self) -> dict[str, bytes]:
        """Every folder's rows (a folder whose rows the child could not send is missing)."""
        if self.pending is not None:
            more, self.pending = self.pending.more(), None
            if isinstance(more, dict):
                self.rows.update(more)
            else:
                self.partial = True
        return self.rows

    def close(self) -> None:
        if self.pending is not None:
            self.pending.close()
            self.pending = None
            self.partial = True


def fields(st: os.stat_result) -> tuple[int, int, int, int, int]:
    """The stat fields a listing keeps of an entry: mode, size, mtime, ctime, inode."""
    return st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def unchanged_since(kept: Any, top: str, since_ns: int) -> bool | None:
    """Whether every entry of a listing of folder `top` whose ctime is `since_ns` or later still has
    the stat fields the listing kept (`lstat` again); None when the listing's rows are not all at
    hand. `kept`: a walk's `Rows` or a git listing's `(names, stats)` (`runmemo.root_listing`)."""
    recent: list[tuple[str, tuple[object, ...]]] = []
    if isinstance(kept, Rows):
        rows = kept.complete()
        if kept.partial or "" not in rows:
            return None
        for rel, canonical in rows.items():
            prefix = f"{rel}/" if rel else ""
            recent += [
                (prefix + row[0], tuple(row[1:]))
                for row in marshal.loads(canonical)
                if len(row) == 6 and row[4] >= since_ns
            ]
    elif isinstance(kept, tuple) and len(kept) == 2 and isinstance(kept[1], dict):
        recent = [(name, tuple(kept_fields)) for name, kept_fields in kept[1].items() if kept_fields[3] >= since_ns]
    else:
        return None
    for rel, was in recent:
        try:
            if fields(os.lstat(f"{top}/{rel}")) != was:
                return False
        except OSError:
            return False
    return True


def walk_stamp(
    base: str,
    skip: Sequence[str],
    excluded: Callable[[str], bool],
    seed: str,
    unread: Callable[[str], str | None] | None = None,
    keep: Rows | None = None,
) -> tuple[str, int]:
    """Digest and newest ctime of every entry below the folder `base`, as `listing.walk_tree` meets
    them: real folders entered unless `excluded(name)` or under a `skip` prefix (relative, ending in
    "/"), links and other entries stamped by `lstat`, except those `unread(relative path)` names
    (by name alone). `keep` receives each folder's rows (`_Walk._rows`, sorted by name, marshalled),
    so that the scan after the stamp lists the tree from them instead of a second walk
    (`listing.take_shared`); a forked child's on request (`Rows`)."""
    walk = _Walk(base, tuple(skip), excluded, unread)
    walk.rows = keep.rows if keep is not None else None
    shares = walk.frontier()
    if shares:
        mine, theirs = shares[0::2], shares[1::2]
        pending = in_child(
            lambda: _folder_digests(walk, theirs), (lambda: walk.rows or {}) if keep is not None else None
        )
        for rel in mine:
            walk.digest(rel)
        answer = pending.result() if pending is not None else None
        if (
            isinstance(answer, tuple)
            and len(answer) == 2
            and isinstance(answer[0], dict)
            and isinstance(answer[1], int)
        ):
            walk.known.update(answer[0])
            walk.newest = max(walk.newest, answer[1])
            if keep is not None and pending is not None:
                keep.pending = pending
        elif pending is not None:
            pending.close()
    h = blake2b(_name(seed), digest_size=32)
    h.update(walk.digest(""))  # and every folder no child answered for, rows included
    return h.hexdigest(), walk.newest


def _folder_digests(walk: _Walk, rels: list[str]) -> tuple[dict[str, bytes], int]:
    for rel in rels:
        walk.digest(rel)
    return {rel: walk.known[rel] for rel in rels}, walk.newest


def names_stamp(
    base: str, names: Sequence[str], seed: str, keep: dict[str, tuple[int, int, int, int, int]] | None = None
) -> tuple[str, int]:
    """Digest and newest ctime of the listed entries (paths relative to `base`), by `lstat`. `keep`
    receives (mode, size, mtime, ctime, inode) of each entry stamped (`listing.share`)."""
    half = len(names) // 2 if len(names) >= SPLIT_MIN_NAMES else len(names)
    want = keep is not None
    pending = in_child(lambda: _stamps(base, names[half:], want)) if half < len(names) else None
    head, newest, stats = _stamps(base, names[:half] if pending is not None else names, want)
    h = blake2b(_name(seed), digest_size=32)
    h.update(head)
    if pending is not None:
        answer = pending.result()
        if (
            isinstance(answer, tuple)
            and len(answer) == 3
            and isinstance(answer[0], bytes)
            and isinstance(answer[1], int)
            and isinstance(answer[2], dict)
        ):
            tail, newest_tail, stats_tail = answer
        else:
            tail, newest_tail, stats_tail = _stamps(base, names[half:], want)
        h.update(tail)
        newest = max(newest, newest_tail)
        stats.update(stats_tail)
    if keep is not None:
        keep.update(stats)
    return h.hexdigest(), newest


def _stamps(
    base: str, names: Sequence[str], keep: bool = False
) -> tuple[bytes, int, dict[str, tuple[int, int, int, int, int]]]:
    out: list[bytes] = []
    stats: dict[str, tuple[int, int, int, int, int]] = {}
    newest = 0
    for name in names:
        try:
            st = os.lstat(f"{base}/{name}")
        except OSError:
            out.append(_name(name) + b"\0-\n")
            continue
        out.append(_name(name) + b"\0" + _stamp(st) + b"\n")
        newest = max(newest, st.st_ctime_ns)
        if keep:
            stats[name] = fields(st)
    return b"".join(out), newest, stats


def _can_fork() -> bool:
    """Forking is safe and cheap here: Linux, and no other thread that a child could inherit mid-lock."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


def in_child(work: Callable[[], Any], more: Callable[[], Any] | None = None) -> Pending | None:
    """Start `work` in a forked child; a handle whose `result()` is its (marshalled) value, or None
    when no child could be started (the caller does the work itself). With `more`, the child then
    waits: `Pending.more()` has it send `more()` as well, `Pending.close()` lets it go."""
    if not _can_fork():
        return None
    try:
        read_fd, write_fd = os.pipe()
        ask_read, ask_write = os.pipe() if more is not None else (-1, -1)
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        for fd in (read_fd, write_fd, ask_read, ask_write):
            if fd >= 0:
                os.close(fd)
        return None
    if pid == 0:  # the child: compute, write, leave without running the parent's exit handlers
        code = 1
        try:
            os.close(read_fd)
            if ask_write >= 0:
                os.close(ask_write)
            _send(write_fd, marshal.dumps(work()))
            if more is not None and os.read(ask_read, 1) == b"1":  # b"0" or the end of the pipe: go
                _send(write_fd, marshal.dumps(more()))
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    if ask_read >= 0:
        os.close(ask_read)
    return Pending(pid, read_fd, ask_write)


_LENGTH = 8  # each answer is its length (8 bytes, big-endian) and its marshalled value


def _send(fd: int, data: bytes) -> None:
    view = memoryview(len(data).to_bytes(_LENGTH, "big") + data)
    while view:
        view = view[os.write(fd, view) :]


class Pending:
    """A forked child's answers, read when the parent needs them."""

    def __init__(self, pid: int, fd: int, ask: int = -1) -> None:
        self.pid, self.fd, self.ask = pid, fd, ask

    def _receive(self) -> object | None:
        chunks: list[bytes] = []
        want, got = _LENGTH, 0
        header = True
        while True:
            try:
                chunk = os.read(self.fd, min(want - got, 1 << 20))
            except OSError:
                return None
            if not chunk:
                return None  # the child ended before it answered in full
            chunks.append(chunk)
            got += len(chunk)
            if got < want:
                continue
            if header:
                want, got, header = int.from_bytes(b"".join(chunks), "big"), 0, False
                chunks = []
                if want == 0:
                    return None
                continue
            try:
                value: object = marshal.loads(b"".join(chunks))
            except (EOFError, ValueError, TypeError):
                return None
            return value

    def result(self) -> object | None:
        """The child's first answer (a child asked for nothing more is waited for)."""
        value = self._receive()
        if self.ask < 0 or value is None:
            self.close()
        return value

    def more(self) -> object | None:
        """The child's second answer; the child is done after it."""
        try:
            os.write(self.ask, b"1")
        except OSError:
            self.close()
            return None
        value = self._receive()
        self.close()
        return value

    def close(self) -> None:
        """Let the child go (without its second answer) and wait for it."""
        if self.pid < 0:
            return
        if self.ask >= 0:
            try:
                os.write(self.ask, b"0")
            except OSError:
                pass
            os.close(self.ask)
            self.ask = -1
        os.close(self.fd)
        os.waitpid(self.pid, 0)
        self.pid = -1
