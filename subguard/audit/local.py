"""Repositories on a local or mounted file system, listed and read inside the audit's Spark tasks.

Hadoop's local file system, under Spark's `binaryFile` source, follows symbolic links: a directory
link `up -> ..` makes the listing loop until it runs out of depth, and a file link to
`/etc/passwd` is read as if it were in the repository. So for `file:` roots the job hands each
task one folder (a `Unit`) and the task walks it the way `subguard check` does: `lstat` only,
links and special files recorded as skipped and never followed or opened, files read with
`O_NOFOLLOW | O_NONBLOCK` by the scan itself. Every entry below the unit ends as a file record.

Plain Python, no Spark: `transforms.extract_local` runs `tasks.unit_task` in the tasks.
"""

from __future__ import annotations

import bisect
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from subguard.core.model import FileRecord, FileStatus
from subguard.scan.discover import Candidate, classify, excluded_dir, excluded_record, git_files, walk_tree

UnitKind = Literal["repo", "hidden", "loose"]
OUTSIDE = "not inside a repository (top-level file of an organisation folder)"
HIDDEN_TOP = "in a hidden folder of an organisation folder (not a repository)"
EXCLUDED = "in a folder subguard does not scan (build output, VCS, dependencies)"
GIT_IGNORED = "ignored by git (.gitignore)"


@dataclass(frozen=True)
class Unit:
    """One folder a task lists: a repository, a hidden first-level folder of an organisation folder
    (`hidden`: every file skipped), or the top level of an organisation folder (`loose`: its files)."""

    path: str  # absolute local path of the folder
    repo: str  # "" outside any repository
    kind: UnitKind
    nested: tuple[str, ...] = ()  # absolute paths of other units' folders inside this one: not walked here
    commit: str = ""  # the commit an inventory names for this repository (`stamps.inventory_commit`)


def local_path(uri: str) -> str | None:
    """The local path of a `file:` URI (or a plain absolute path); None for any other scheme."""
    if uri.startswith("file:"):
        rest = uri[5:]
        return "/" + rest.lstrip("/") if rest.startswith("/") else None
    return uri if uri.startswith("/") else None


def is_hidden_top(name: str) -> bool:
    """A first-level folder of an organisation folder that is no repository (`.git`, `_archive`)."""
    return name.startswith((".", "_"))


def _skipped(root: str, rel: str, reason: str) -> FileRecord:
    """A file the scan does not read, skipped for `reason`; links, special files and entries that
    cannot be stat-ed say what they are, in `discover.classify`'s words."""
    cand, rec = classify(root, rel, sys.maxsize)
    if rec is not None:
        return rec
    assert cand is not None
    return FileRecord(path=rel, status=FileStatus.SKIPPED, reason=reason, size=cand.size)


def walk(root: str, nested: frozenset[str] = frozenset()) -> Iterator[tuple[str, os.DirEntry[str], bool]]:
    """(relative path, entry, inside an excluded folder) for every non-folder entry below `root`;
    folder links are entries (never followed); `nested` folders are left out."""

    def enter(rel: str, name: str, excluded: bool) -> bool | None:
        return None if f"{root}/{rel}" in nested else excluded or excluded_dir(name)

    return walk_tree(root, enter)


def list_repo(
    unit: Unit,
    max_size: int,
    exclude: Callable[[str], str | None] | None = None,
) -> tuple[list[Candidate], list[FileRecord]]:
    """A repository's files, classified as `subguard check` classifies them (same reasons), plus the
    files `check` never lists (excluded folders, git-ignored files) as skipped records. Files the
    config's `exclude` names (`exclude`: `globs.matcher` over repo-relative paths) are skipped
    unread and never stat-ed, as `check` skips them."""
    tracked = git_files(unit.path)  # None outside a work tree (or without git): every file counts
    keep = set(tracked) if tracked is not None else None
    candidates: list[Candidate] = []
    skipped: list[FileRecord] = []
    root = unit.path
    for rel, _, excluded in walk(root, frozenset(unit.nested)):
        if excluded:
            skipped.append(_skipped(root, rel, EXCLUDED))
        elif keep is not None and rel not in keep:
            skipped.append(_skipped(root, rel, GIT_IGNORED))
        elif exclude is not None and (pattern := exclude(rel)) is not None:
            skipped.append(excluded_record(rel, pattern))
        else:
            cand, rec = classify(root, rel, max_size)
            if cand is not None:
                candidates.append(cand)
            elif rec is not None:
                skipped.append(rec)
    return candidates, skipped


def list_outside(unit: Unit) -> list[FileRecord]:
    """The records of a `hidden` or `loose` unit: everything skipped, paths relative to the
    organisation folder (`loose`: only the top-level entries that are not folders)."""
    if unit.kind == "hidden":
        base, name = unit.path.rsplit("/", 1)
        return [_skipped(base, f"{name}/{rel}", HIDDEN_TOP) for rel, _, _ in walk(unit.path, frozenset(unit.nested))]
    try:
        entries = first_level(unit.path)
    except OSError as exc:
        return [FileRecord(path=".", status=FileStatus.FAILED, reason=f"cannot list: {exc.strerror}")]
    return [_skipped(unit.path, name, OUTSIDE) for name, is_dir in entries if not is_dir]


def first_level(path: str) -> list[tuple[str, bool]]:
    """(name, is a real folder) of a local folder's entries; a link to a folder is not one."""
    out: list[tuple[str, bool]] = []
    with os.scandir(path) as it:
        for entry in it:
            try:
                out.append((entry.name, entry.is_dir(follow_symlinks=False)))
            except OSError:
                out.append((entry.name, False))
    return sorted(out)


def plan_units(roots: list[tuple[str, str, str]]) -> list[Unit]:
    """The units of local roots (base path, mode, repo): `parent` -> one unit per first-level
    folder plus one `loose` unit for the base's own files; `repo` -> the base itself.

    A folder named twice (an inventory entry inside an organisation folder) is one unit, named as
    the inventory names it; a unit inside another is walked by the inner one only.
    """
    by_path: dict[str, Unit] = {}
    for base, mode, repo in roots:
        if mode == "repo":
            by_path[base] = Unit(base, repo, "repo")
            continue
        by_path.setdefault(f"{base}/", Unit(base, "", "loose"))
        for name, is_dir in first_level(base):
            if is_dir:
                kind: UnitKind = "hidden" if is_hidden_top(name) else "repo"
                by_path.setdefault(f"{base}/{name}", Unit(f"{base}/{name}", "" if kind == "hidden" else name, kind))
    folders = sorted(p for p, u in by_path.items() if u.kind != "loose")
    units: list[Unit] = []
    for _, unit in sorted(by_path.items()):
        if unit.kind == "loose":
            units.append(unit)
            continue
        units.append(Unit(unit.path, unit.repo, unit.kind, _below(folders, f"{unit.path}/")))
    return units


def _below(folders: list[str], prefix: str) -> tuple[str, ...]:
    """The sorted `folders` starting with `prefix`: one run of neighbours in sorted order, found by
    bisection (a scan of every folder per unit took 5 s for 5,000 repositories)."""
    start = bisect.bisect_left(folders, prefix)
    end = start
    while end < len(folders) and folders[end].startswith(prefix):
        end += 1
    return tuple(folders[start:end])


def link_or_copy(src: str, dest: str) -> None:
    """`dest` as a hard link of `src` (an output's file carried into the next one unchanged), a copy
    when the two are on different file systems or links are refused."""
    import shutil

    try:
        os.link(src, dest)
    except OSError:
        shutil.copyfile(src, dest)
