"""Find the files of a scan: git's view inside a work tree, a filtered walk elsewhere.

Nothing is opened here except through `read_limited`; every path ends up either as a
`Candidate` or as a skipped `FileRecord` with a reason.
"""

from __future__ import annotations

import functools
import hashlib
import marshal
import operator
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from subguard.core.model import FileRecord, FileStatus
from subguard.extract import SUFFIXES
from subguard.scan import globs, watch
from subguard.scan.listing import DEFAULT_EXCLUDE_DIRS, excluded_dir, git_files, root_names, take_shared, walk_tree

__all__ = [
    "DEFAULT_EXCLUDE_DIRS",
    "LINK",
    "SPECIAL",
    "Candidate",
    "classify",
    "discover",
    "excluded_record",
    "excluded_dir",
    "git_files",
    "read_limited",
    "walk_tree",
]

DEFAULT_MAX_FILE_SIZE = 2 * 1024 * 1024
LINK = "symbolic link (not followed)"
SPECIAL = "not a regular file (device, FIFO or socket)"


class Candidate(NamedTuple):
    """A regular file inside the root, not yet read (a named tuple: a large tree makes one per file,
    at a third of a frozen dataclass's cost)."""

    path: str  # POSIX, relative to root
    abspath: str
    size: int
    data: bytes | None = None  # content already in memory (Spark's binaryFile rows); else read abspath
    mtime_ns: int = 0


@dataclass(frozen=True)
class Discovery:
    root: str
    candidates: tuple[Candidate, ...]
    skipped: tuple[FileRecord, ...]


def classify(root: Path | str, rel: str, max_size: int) -> tuple[Candidate | None, FileRecord | None]:
    """Decide whether a path may be read, without opening it."""
    try:
        st = os.lstat(f"{root}/{rel}")  # a string join: pathlib per file costs more than the lstat itself
    except OSError as exc:
        return None, FileRecord(path=rel, status=FileStatus.SKIPPED, reason=f"cannot stat: {exc.strerror}")
    return _classified(root, rel, max_size, st.st_mode, st.st_size, st.st_mtime_ns)


def _classified(
    root: Path | str, rel: str, max_size: int, mode: int, size: int, mtime_ns: int
) -> tuple[Candidate | None, FileRecord | None]:
    """`classify` of an entry whose lstat fields are known."""
    if stat.S_ISLNK(mode):
        return None, FileRecord(path=rel, status=FileStatus.SKIPPED, reason=LINK)
    if not stat.S_ISREG(mode):
        return None, FileRecord(path=rel, status=FileStatus.SKIPPED, reason=SPECIAL)
    if size > max_size:
        return None, FileRecord(
            path=rel,
            status=FileStatus.SKIPPED,
            size=size,
            reason=f"larger than the size limit ({size} > {max_size} bytes)",
        )
    return Candidate(rel, f"{root}/{rel}", size, mtime_ns=mtime_ns), None


def excluded_record(rel: str, pattern: str) -> FileRecord:
    """A file the config's `exclude` leaves out (`subguard.scan.globs`): counted, never stat-ed or read."""
    return FileRecord(path=rel, status=FileStatus.SKIPPED, reason=globs.reason(pattern))


def discover(
    root: Path,
    exclude_dirs: frozenset[str] = DEFAULT_EXCLUDE_DIRS,
    max_size: int = DEFAULT_MAX_FILE_SIZE,
    exclude: Callable[[Path], Callable[[str], str | None] | None] | None = None,
) -> Discovery:
    """List every file of a scan root (a directory or a single file). `exclude(folder)`: the
    matcher of the config's `exclude` for paths relative to the scan folder (`globs.matcher`)."""
    root = root.resolve() if not root.is_symlink() else root.absolute()
    if root.is_file():
        match = exclude(root.parent) if exclude is not None else None
        pattern = match(root.name) if match is not None else None
        if pattern is not None:
            return Discovery(str(root.parent), (), (excluded_record(root.name, pattern),))
        cand, rec = classify(root.parent, root.name, max_size)
        return Discovery(str(root.parent), tuple([cand] if cand else []), tuple([rec] if rec else []))
    shared = take_shared(str(root), exclude_dirs)  # the run memo's stamp of this root, taken just before
    match = exclude(root) if exclude is not None else None
    regular, top = stat.S_ISREG, str(root)
    made = shared[1] if shared is not None and match is None else None
    if isinstance(made, _Ahead) and made.top == top and made.largest <= max_size:  # every entry a candidate
        _TAKEN[:] = [made]
        return Discovery(top, made.candidates, ())
    entries = shared[0] if shared is not None else [(rel, None) for rel in root_names(root, exclude_dirs)]
    candidates: list[Candidate] = []
    skipped: list[FileRecord] = []
    new = tuple.__new__  # what `Candidate(...)` does, without its Python-level `__new__` per file
    for rel, st in entries:
        if match is not None and (pattern := match(rel)) is not None:
            skipped.append(excluded_record(rel, pattern))
            continue
        if st is not None and regular(st[0]) and st[1] <= max_size:  # most entries: as `_classified` makes them
            candidates.append(new(Candidate, (rel, f"{top}/{rel}", st[1], None, st[2])))
            continue
        cand, rec = classify(root, rel, max_size) if st is None else _classified(root, rel, max_size, *st)
        if cand is not None:
            candidates.append(cand)
        elif rec is not None:
            skipped.append(rec)
    return Discovery(str(root), tuple(candidates), tuple(skipped))


class Index:
    """What a scan derives from its candidates, each part made once, when first asked for. For a tree
    a resident server watches, the server makes them all ahead, with the candidates (`_made_ahead`):
    at 20,000 files each costs a run a few milliseconds."""

    def __init__(self, candidates: Sequence[Candidate]) -> None:
        self.candidates = candidates
        self._endings: dict[tuple[str, ...], tuple[str, ...]] = {}

    @functools.cached_property
    def by_path(self) -> Mapping[str, Candidate]:
        return {c.path: c for c in self.candidates}

    @functools.cached_property
    def paths(self) -> frozenset[str]:
        return frozenset(self.by_path)

    @functools.cached_property
    def stats(self) -> Mapping[str, tuple[int, int]]:
        """Each path's (size, mtime)."""
        return {c.path: (c.size, c.mtime_ns) for c in self.candidates}

    @functools.cached_property
    def names(self) -> str:
        """A digest of the path set."""
        # each path, NUL-ended: one C hash; sorted from the listing's order, whose runs (each folder's
        # entries by name) make the sort about ten times faster than from the set's order
        listed = "".join([f"{path}\0" for path in sorted(self.by_path)])
        return hashlib.sha256(listed.encode("utf-8", "surrogateescape")).hexdigest()

    @functools.cached_property
    def listed(self) -> bytes:
        """A digest of every candidate's path, size and mtime; b"" when one has no mtime or holds its
        content in memory (nothing on disk says whether it changed)."""
        candidates = self.candidates
        if 0 in map(_MTIME, candidates) or not {None}.issuperset(map(_DATA, candidates)):
            return b""
        # one C pass over them all; marshal version 2 keeps no references (a third of the time)
        return hashlib.sha256(marshal.dumps(list(map(_PATH_SIZE_MTIME, candidates)), 2)).digest()

    def ending(self, suffixes: tuple[str, ...]) -> tuple[str, ...]:
        """The paths that end with one of `suffixes`, sorted."""
        made = self._endings.get(suffixes)
        if made is None:
            made = self._endings[suffixes] = tuple(sorted([p for p in self.by_path if p.endswith(suffixes)]))
        return made

    def complete(self) -> Index:
        """Every part made (what a server does ahead), and the paths of each extractor that claims by
        ending (`subguard.extract.SUFFIXES`)."""
        for part in ("by_path", "paths", "stats", "names", "listed"):
            getattr(self, part)
        for suffixes in SUFFIXES.values():
            self.ending(suffixes)
        return self


_MTIME, _DATA, _PATH_SIZE_MTIME = operator.itemgetter(4), operator.itemgetter(3), operator.itemgetter(0, 2, 4)
assert Candidate._fields.index("mtime_ns") == 4 and Candidate._fields.index("data") == 3  # noqa: S101
assert (Candidate._fields.index("path"), Candidate._fields.index("size")) == (0, 2)  # noqa: S101


@dataclass(frozen=True)
class _Ahead:
    """A watched tree's candidates, made by a resident server for the runs it forks: each entry a
    regular file with its stat, so that a scan without `exclude` patterns and a size limit of at
    least `largest` makes exactly these."""

    top: str
    candidates: tuple[Candidate, ...]
    largest: int
    index: Index


_TAKEN: list[_Ahead] = []  # the candidates made ahead that this run's `discover` took (a forked run)


def _made_ahead(top: str, entries: list[tuple[str, tuple[int, int, int] | None]]) -> _Ahead | None:
    """In the server (`watch.AHEAD`): the candidates `discover` makes of `entries` under `top`, and
    their index, when each is a regular file with its stat (else None: the run looks at the others
    itself)."""
    regular, new = stat.S_ISREG, tuple.__new__
    if not all(st is not None and regular(st[0]) for _, st in entries):
        return None
    made = tuple(new(Candidate, (rel, f"{top}/{rel}", st[1], None, st[2])) for rel, st in entries if st is not None)
    return _Ahead(top, made, max((c.size for c in made), default=0), Index(made).complete())


def made_indexes() -> dict[str, Index]:
    """In the server: the index of the candidates made ahead for each watched scan root, by its folder."""
    out: dict[str, Index] = {}
    for ahead in watch.made():
        if isinstance(ahead, _Ahead):
            out[ahead.top] = ahead.index
    return out


def index(candidates: Sequence[Candidate]) -> Index:
    """The index of `candidates`: the one made ahead when they are the candidates made ahead."""
    if _TAKEN and candidates is _TAKEN[-1].candidates:
        return _TAKEN[-1].index
    return Index(candidates)


watch.AHEAD.append(_made_ahead)


def read_limited(path: str, max_size: int = DEFAULT_MAX_FILE_SIZE) -> bytes:
    """Read a regular file without following a final symlink or blocking on a FIFO."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError("not a regular file")
        # one read() of the known size (plus one byte, to notice growth) is the whole file mostly
        data = os.read(fd, min(st.st_size, max_size) + 1)
        if len(data) != st.st_size:  # a short read (network file systems), or it changed: read on to EOF or the limit
            chunks, total = [data], len(data)
            while total <= max_size and (chunk := os.read(fd, 1 << 16)):
                chunks.append(chunk)
                total += len(chunk)
            data = b"".join(chunks)
    finally:
        os.close(fd)
    if len(data) > max_size:
        raise OSError(f"larger than the size limit ({max_size} bytes)")
    return data
