"""Find the files of a scan: git's view inside a work tree, a filtered walk elsewhere.

Nothing is opened here except through `read_limited`; every path ends up either as a
`Candidate` or as a skipped `FileRecord` with a reason.
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from subguard.model import FileRecord, FileStatus

DEFAULT_EXCLUDE_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".venv", "venv", "env", ".env", ".tox", ".nox", "node_modules",
        "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".subguard_cache", "build",
        "dist", "target", "out", ".gradle", ".idea", ".eggs", "site-packages", ".terraform",
    }
)
DEFAULT_MAX_FILE_SIZE = 2 * 1024 * 1024


@dataclass(frozen=True)
class Candidate:
    """A regular file inside the root, not yet read."""

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


def git_files(root: Path | str) -> list[str] | None:
    """What git lists below `root`: tracked plus untracked-not-ignored files, relative to root.

    None outside a work tree, and for a root the enclosing repository ignores (a vendored tree, a
    Python installation inside a git-managed tool directory): asked for explicitly, it is walked.
    """
    names = _git_listing(Path(root))
    if names is None or (not names and _git_ignored(Path(root))):
        return None
    return [n for n in names if not (set(n.split("/")[:-1]) & {".git"})]


def _git_listing(root: Path) -> list[str] | None:
    try:
        top = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--show-toplevel"],
            capture_output=True, text=True, timeout=30, check=False,
        )
        if top.returncode != 0:
            return None
        listing = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
            capture_output=True, timeout=120, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if listing.returncode != 0:
        return None
    names = listing.stdout.decode("utf-8", "surrogateescape").split("\0")
    return sorted({n for n in names if n})


def _git_ignored(root: Path) -> bool:
    """Whether the enclosing work tree ignores `root` itself."""
    try:
        proc = subprocess.run(["git", "-C", str(root), "check-ignore", "-q", "."], capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


def walk_tree(root: str, enter: Callable[[str, str, bool], bool | None]) -> Iterator[tuple[str, os.DirEntry[str], bool]]:
    """(relative path, entry, flag) for every entry below `root` that is not a real folder.

    Folder links are entries, never followed. For each real folder, `enter(relative path, name,
    parent's flag)` returns None to leave it out, else the flag its entries carry. Unreadable
    folders are left out (their entries cannot be named).
    """
    stack: list[tuple[str, bool]] = [("", False)]
    while stack:
        rel, flag = stack.pop()
        try:
            with os.scandir(f"{root}/{rel}" if rel else root) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            child = f"{rel}/{entry.name}" if rel else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if not is_dir:
                yield child, entry, flag
                continue
            inner = enter(child, entry.name, flag)
            if inner is not None:
                stack.append((child, inner))


def excluded_dir(name: str, exclude_dirs: frozenset[str] = DEFAULT_EXCLUDE_DIRS) -> bool:
    """A folder `subguard check` never walks into (VCS, dependencies, build output)."""
    return name in exclude_dirs or name.endswith(".egg-info")


def _walk(root: Path, exclude_dirs: frozenset[str]) -> Iterable[str]:
    """All entries below root (files, links, specials), not following directory links."""
    keep = lambda rel, name, flag: None if excluded_dir(name, exclude_dirs) else False
    return (rel for rel, _, _ in walk_tree(str(root), keep))


def classify(root: Path | str, rel: str, max_size: int) -> tuple[Candidate | None, FileRecord | None]:
    """Decide whether a path may be read, without opening it."""
    full = f"{root}/{rel}"  # a string join: pathlib per file costs more than the lstat itself
    try:
        st = os.lstat(full)
    except OSError as exc:
        return None, FileRecord(path=rel, status=FileStatus.SKIPPED, reason=f"cannot stat: {exc.strerror}")
    if stat.S_ISLNK(st.st_mode):
        return None, FileRecord(path=rel, status=FileStatus.SKIPPED, reason="symbolic link (not followed)")
    if not stat.S_ISREG(st.st_mode):
        return None, FileRecord(path=rel, status=FileStatus.SKIPPED, reason="not a regular file (device, FIFO or socket)")
    if st.st_size > max_size:
        return None, FileRecord(
            path=rel, status=FileStatus.SKIPPED, size=st.st_size,
            reason=f"larger than the size limit ({st.st_size} > {max_size} bytes)",
        )
    return Candidate(rel, full, st.st_size, mtime_ns=st.st_mtime_ns), None


def discover(root: Path, exclude_dirs: frozenset[str] = DEFAULT_EXCLUDE_DIRS, max_size: int = DEFAULT_MAX_FILE_SIZE) -> Discovery:
    """List every file of a scan root (a directory or a single file)."""
    root = root.resolve() if not root.is_symlink() else root.absolute()
    if root.is_file():
        cand, rec = classify(root.parent, root.name, max_size)
        return Discovery(str(root.parent), tuple([cand] if cand else []), tuple([rec] if rec else []))
    listed = git_files(root)
    names = list(_walk(root, exclude_dirs)) if listed is None else listed
    candidates: list[Candidate] = []
    skipped: list[FileRecord] = []
    for rel in names:
        cand, rec = classify(root, rel, max_size)
        if cand is not None:
            candidates.append(cand)
        elif rec is not None:
            skipped.append(rec)
    return Discovery(str(root), tuple(candidates), tuple(skipped))


def read_limited(path: str, max_size: int = DEFAULT_MAX_FILE_SIZE) -> bytes:
    """Read a regular file without following a final symlink or blocking on a FIFO."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError("not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(max_size + 1)
    finally:
        os.close(fd)
    if len(data) > max_size:
        raise OSError(f"larger than the size limit ({max_size} bytes)")
    return data
