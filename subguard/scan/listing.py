"""Which entries a scan root holds: git's view inside a work tree, an lstat-only walk elsewhere.

Standard library only, so that the run memo (`subguard.scan.runmemo`) can list a root without loading
the rest of subguard. Nothing here opens a file.
"""

from __future__ import annotations

import marshal
import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # kept out of the run memo's imports (`subguard.scan.runmemo` lists roots through here)
    from collections.abc import Callable, Iterable, Iterator
    from pathlib import Path

    from subguard.scan.treestamp import Rows

    Stat = tuple[int, int, int]  # (st_mode, st_size, st_mtime_ns) of one entry

DEFAULT_EXCLUDE_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        "env",
        ".env",
        ".tox",
        ".nox",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".subguard_cache",
        "build",
        "dist",
        "target",
        "out",
        ".gradle",
        ".idea",
        ".eggs",
        "site-packages",
        ".terraform",
    }
)


def git_files(root: Path | str) -> list[str] | None:
    """What git lists below `root`: tracked plus untracked-not-ignored files, relative to root.

    None outside a work tree, and for a root the enclosing repository ignores (a vendored tree, a
    Python installation inside a git-managed tool directory): asked for explicitly, it is walked.
    """
    names = _git_listing(str(root))
    if names is None or (not names and _git_ignored(str(root))):
        return None
    return [n for n in names if not (set(n.split("/")[:-1]) & {".git"})]


def may_be_in_work_tree(root: Path | str) -> bool:
    """False only when git cannot find a repository for `root`: no `.git` entry (folder, or file
    of a worktree or submodule) in it or any folder above it, and no `GIT_DIR` in the environment.
    A few lstat calls that spare starting git for every folder of a tree that is not under git."""
    if "GIT_DIR" in os.environ:
        return True
    here = os.path.abspath(root)
    while True:
        if os.path.lexists(os.path.join(here, ".git")):
            return True
        parent = os.path.dirname(here)
        if parent == here:
            return False
        here = parent


def _git_listing(root: str) -> list[str] | None:
    if not may_be_in_work_tree(root):
        return None
    import subprocess  # only for a root inside a work tree

    try:
        top = subprocess.run(
            ["git", "-C", root, "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if top.returncode != 0:
            return None
        listing = subprocess.run(
            ["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
            capture_output=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if listing.returncode != 0:
        return None
    names = listing.stdout.decode("utf-8", "surrogateescape").split("\0")
    return sorted({n for n in names if n})


def _git_ignored(root: str) -> bool:
    """Whether the enclosing work tree ignores `root` itself."""
    import subprocess

    try:
        proc = subprocess.run(
            ["git", "-C", root, "check-ignore", "-q", "."], capture_output=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


def walk_tree(
    root: str, enter: Callable[[str, str, bool], bool | None]
) -> Iterator[tuple[str, os.DirEntry[str], bool]]:
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

    def keep(rel: str, name: str, flag: bool) -> bool | None:
        return None if excluded_dir(name, exclude_dirs) else False

    return (rel for rel, _, _ in walk_tree(str(root), keep))


def root_names(root: Path, exclude_dirs: frozenset[str] = DEFAULT_EXCLUDE_DIRS) -> list[str]:
    """The entries of a folder root, relative to it: what git lists, else the filtered walk."""
    listed = git_files(root)
    return list(_walk(root, exclude_dirs)) if listed is None else listed


# The latest stamp's listing of each scan root (`share`), for the scan of the same run: the run memo
# stamps a root before anything is read (`subguard.scan.runmemo`), and the scan lists it from those
# rows instead of walking and lstat-ing every entry a second time. An entry changed in between is
# scanned with its earlier size and mtime: its content is read now, and the next run sees a changed
# stat (a miss, never a stale reuse).
_SHARED: dict[str, tuple[object, ...]] = {}


def share(
    top: str,
    skip: tuple[str, ...],
    walk_rows: Rows | None = None,
    names: list[str] | None = None,
    stats: dict[str, tuple[int, int, int, int, int]] | None = None,
) -> None:
    """Keep the listing a stamp took of `top`: a walk's rows per folder (`treestamp.walk_stamp`), or
    git's names with the stat of each stamped one (`treestamp.names_stamp`). `skip`: the prefixes the
    stamp left out (the run's caches and outputs inside the root)."""
    _close(_SHARED.pop(top, None))
    _SHARED[top] = (skip, walk_rows, names, stats)


def _close(kept: tuple[object, ...] | None) -> None:
    rows = kept[1] if kept is not None else None
    close = getattr(rows, "close", None)
    if close is not None:  # a forked child still holding rows: let it go
        close()


def shared() -> dict[str, tuple[object, ...]]:
    """The kept listings by folder: (skip, walk rows, names, stats) as `share` was given them."""
    return dict(_SHARED)


def forget_shared() -> None:
    """Drop every kept listing (the run that took them is over)."""
    for kept in _SHARED.values():
        _close(kept)
    _SHARED.clear()


def take_shared(top: str, exclude_dirs: frozenset[str]) -> tuple[list[tuple[str, Stat | None]], object] | None:
    """The entries of `top` in the order `root_names` gives them, each with its stat (None: stat it
    again), from the listing `share` kept, and what a resident server made of them ahead (`watch.AHEAD`,
    else None); None when there is none, or when it left out an entry the scan lists (a skipped
    prefix outside every excluded folder, other excluded folders)."""
    kept = _SHARED.pop(top, None)
    if kept is None or exclude_dirs != DEFAULT_EXCLUDE_DIRS:
        _close(kept)
        return None
    skip, walk_rows, names, stats = kept
    assert isinstance(skip, tuple)
    if not all(any(excluded_dir(part) for part in prefix.split("/")[:-1]) for prefix in skip):
        _close(kept)
        return None
    complete = getattr(walk_rows, "complete", None)
    if complete is not None:
        # put in order ahead by a resident server (`watch`): read, never changed, so not copied (a copy
        # would touch each of the server's entries, and so copy their pages into the run)
        order = getattr(walk_rows, "order", None)
        entries = order if order is not None else _walk_order(complete())
        return (entries, getattr(walk_rows, "made", None)) if entries is not None else None
    if isinstance(names, list) and isinstance(stats, dict):
        return [(name, st[:3] if (st := stats.get(name)) is not None else None) for name in names], None
    return None


def _walk_order(rows: dict[str, bytes]) -> list[tuple[str, Stat | None]] | None:
    """`walk_tree`'s order (entries of a folder by name, then its subfolders last-first) over a
    stamp's rows: (name, digest) a subfolder, (name, mode, size, mtime, ctime, inode) a stamped
    entry, (name, "excluded") or (name, None) one counted without a stat, ("!unreadable",) a folder
    that could not be read (it lists nothing, as in `walk_tree`)."""
    out: list[tuple[str, Stat | None]] = []
    stack = [""]
    while stack:
        rel = stack.pop()
        blob = rows.get(rel)
        if blob is None:
            return None
        folder = marshal.loads(blob)
        prefix = f"{rel}/" if rel else ""
        for row in folder:
            if len(row) == 1:
                break
            name = row[0]
            assert isinstance(name, str)
            if len(row) == 2 and isinstance(row[1], bytes):
                stack.append(prefix + name)
            elif len(row) == 6:
                out.append((prefix + name, (row[1], row[2], row[3])))
            else:
                out.append((prefix + name, None))
    return out
