"""A scan root as it was at a git revision (`check --base REF`), read from git's object store.

Nothing is checked out and the work tree is never touched: `git ls-tree` lists the revision's files
(below the scan root), `git diff` against the work tree says which of them changed since, and
`git cat-file --batch` reads only those. A file the work tree still holds unchanged is handed to the
scan as the work-tree file itself (same path, size and mtime), so the content cache's prefilter
verdicts and parses serve it as they serve the head scan; only changed files are parsed anew. The
whole result is also kept per revision tree, so a second run against the same base reads no file.

Every way this can fail (no git, not a work tree, a revision the clone does not have, a shallow
clone) is a `RevisionError` whose message is one line saying what to fetch.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from subguard.core import signing
from subguard.core.config import Config
from subguard.core.limits import gc_paused
from subguard.core.model import FileRecord, FileStatus
from subguard.extract.base import Extractor
from subguard.scan import globs
from subguard.scan.discover import LINK, SPECIAL, Candidate
from subguard.scan.extraction import (
    ScanResult,
    _scan_files,
    config_dir,
    discovered,
    exclude_files,
    open_cache,
)

GIT_TIMEOUT = 120
FETCH_HINT = "fetch it first (`git fetch origin {ref}`; in GitHub Actions, actions/checkout with `fetch-depth: 0`)"


class RevisionError(Exception):
    """`--base` cannot be used: one line that says why and what to do."""


@dataclass(frozen=True)
class Revision:
    """The base revision of a run: the ref as given, the commit it names and that commit's tree."""

    ref: str
    commit: str
    tree: str

    @property
    def short(self) -> str:
        return self.commit[:12]

    @property
    def label(self) -> str:
        """`origin/main (1a2b3c4d5e6f)`, or the short commit alone when the ref is the commit."""
        return self.short if self.commit.startswith(self.ref.lower()) else f"{self.ref} ({self.short})"


def _git(root: str, *args: str, data: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            ["git", "-C", root, *args], input=data, capture_output=True, timeout=GIT_TIMEOUT, check=False
        )
    except FileNotFoundError:
        raise RevisionError("--base needs git, and no `git` executable is on PATH") from None
    except (OSError, subprocess.SubprocessError) as exc:
        raise RevisionError(f"--base: git failed: {exc}") from None


def _out(proc: subprocess.CompletedProcess[bytes]) -> str:
    return proc.stdout.decode("utf-8", "surrogateescape").strip()


def _folder(root: Path) -> Path:
    return root if root.is_dir() else root.parent


def resolve(root: Path, ref: str) -> Revision:
    """The commit `ref` names in the repository that holds `root`; RevisionError when git is missing,
    `root` is not in a work tree, or the clone does not have the commit (shallow or not fetched)."""
    if shutil.which("git") is None:
        raise RevisionError("--base needs git, and no `git` executable is on PATH")
    if not ref or ref.startswith("-"):
        raise RevisionError(f"--base: {ref!r} is not a git revision")
    folder = str(_folder(root))
    if _git(folder, "rev-parse", "--is-inside-work-tree").returncode != 0:
        raise RevisionError(f"--base {ref}: {root} is not inside a git work tree (clone the repository, not an export)")
    found = _git(folder, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    if found.returncode != 0:
        shallow = _out(_git(folder, "rev-parse", "--is-shallow-repository")) == "true"
        if shallow:
            raise RevisionError(
                f"--base {ref}: this is a shallow clone without that commit; fetch the history "
                f"(actions/checkout with `fetch-depth: 0`, or `git fetch --unshallow origin`, or `git fetch origin {ref}`)"
            )
        raise RevisionError(f"--base {ref}: unknown revision in this clone; " + FETCH_HINT.format(ref=ref))
    commit = _out(found)
    tree = _out(_git(folder, "rev-parse", "--verify", "--quiet", f"{commit}^{{tree}}"))
    return Revision(ref, commit, tree)


class _Entry(NamedTuple):
    mode: str
    kind: str
    blob: str
    size: int
    path: str


def _ls_tree(rev: Revision) -> tuple[str, ...]:
    return ("-c", "core.quotePath=false", "ls-tree", "-r", "-z", "--long", rev.commit, "--", ".")


def _diff(rev: Revision) -> tuple[str, ...]:
    options = ("--no-renames", "--no-ext-diff", "--name-only", "--relative", "-z")
    return ("-c", "core.quotePath=false", "diff", *options, rev.commit, "--", ".")


def _list(rev: Revision, proc: subprocess.CompletedProcess[bytes]) -> list[_Entry]:
    """The revision's entries below the folder, paths relative to it (`git ls-tree -r --long`)."""
    if proc.returncode != 0:
        raise RevisionError(
            f"--base {rev.ref}: git ls-tree failed: {proc.stderr.decode('utf-8', 'replace').strip()[:200]}"
        )
    out: list[_Entry] = []
    for item in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if not item:
            continue
        head, _, path = item.partition("\t")
        mode, kind, blob, size = head.split(maxsplit=3)
        out.append(_Entry(mode, kind, blob, int(size) if size.strip().isdigit() else 0, path))
    return out


def _changed(proc: subprocess.CompletedProcess[bytes]) -> set[str] | None:
    """Paths below the folder whose work-tree content differs from the revision (or that it lacks);
    None when git cannot say (e.g. no index yet)."""
    if proc.returncode != 0:
        return None
    return {p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p}


class _Started:
    """A git command started now and answered later: its output goes to temporary files, so a
    listing larger than a pipe's buffer never stalls it while the caller does other work."""

    def __init__(self, folder: str, args: Sequence[str]) -> None:
        self.out = tempfile.TemporaryFile()
        self.err = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(
                ["git", "-C", folder, *args], stdin=subprocess.DEVNULL, stdout=self.out, stderr=self.err
            )
        except FileNotFoundError:
            self._close()
            raise RevisionError("--base needs git, and no `git` executable is on PATH") from None
        except (OSError, subprocess.SubprocessError) as exc:
            self._close()
            raise RevisionError(f"--base: git failed: {exc}") from None

    def _close(self) -> None:
        self.out.close()
        self.err.close()

    def result(self) -> subprocess.CompletedProcess[bytes]:
        try:
            code = self.proc.wait(timeout=GIT_TIMEOUT)
        except subprocess.TimeoutExpired as exc:
            self.proc.kill()
            self.proc.wait()
            self._close()
            raise RevisionError(f"--base: git failed: {exc}") from None
        self.out.seek(0)
        self.err.seek(0)
        done = subprocess.CompletedProcess(self.proc.args, code, self.out.read(), self.err.read())
        self._close()
        return done


# the base's listing and diff, started when the revision was resolved (`resolve_roots`): they run
# beside the head's scan
_STARTED: dict[tuple[str, str], tuple[_Started, _Started]] = {}


def _key(folder: str, rev: Revision) -> tuple[str, str]:
    return os.path.realpath(folder), rev.commit


def _start_listing(folder: str, rev: Revision) -> tuple[_Started, _Started]:
    return _Started(folder, _ls_tree(rev)), _Started(folder, _diff(rev))


def _list_and_diff(folder: str, rev: Revision) -> tuple[list[_Entry], set[str]]:
    """The revision's entries and the paths changed since (every path when git cannot compare:
    correct, only slower), from the two git commands started by `resolve_roots` or now."""
    started = _STARTED.pop(_key(folder, rev), None)
    listing, diff = started if started is not None else _start_listing(folder, rev)
    changed = _changed(diff.result())
    entries = _list(rev, listing.result())
    return entries, changed if changed is not None else {e.path for e in entries}


def read_blobs(folder: str, blobs: Sequence[str]) -> dict[str, bytes]:
    """The content of each blob id, read through one `git cat-file --batch`."""
    if not blobs:
        return {}
    proc = _git(folder, "cat-file", "--batch", data="".join(f"{b}\n" for b in blobs).encode())
    if proc.returncode != 0:
        raise RevisionError(f"--base: git cat-file failed: {proc.stderr.decode('utf-8', 'replace').strip()[:200]}")
    out: dict[str, bytes] = {}
    data, pos = proc.stdout, 0
    for blob in blobs:
        end = data.index(b"\n", pos)
        header = data[pos:end].split()
        pos = end + 1
        if len(header) < 3 or header[1] != b"blob":  # "<id> missing": a partial clone without it
            raise RevisionError(f"--base: blob {blob} is missing from this clone; " + FETCH_HINT.format(ref="<base>"))
        size = int(header[2])
        out[blob] = data[pos : pos + size]
        pos += size + 1
    return out


def _unchanged_file(folder: str, entry: _Entry) -> Candidate | None:
    """The work-tree file that still holds the entry's content, as the head scan lists it."""
    full = f"{folder}/{entry.path}"
    try:
        st = os.lstat(full)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size != entry.size:
        return None
    return Candidate(entry.path, full, st.st_size, mtime_ns=st.st_mtime_ns)


def _unchanged(seen: Candidate | None, folder: str, entry: _Entry) -> Candidate | None:
    if seen is not None and seen.size == entry.size:
        return seen
    return _unchanged_file(folder, entry)


def candidates(
    folder: str,
    rev: Revision,
    max_size: int,
    inside: str = "",
    only: str | None = None,
    head: Sequence[Candidate] = (),
) -> tuple[list[Candidate], list[FileRecord]]:
    """The revision's files below `folder` as the scan's candidates (unchanged ones on disk, the
    others in memory) and the entries that are skipped (links, submodules, too large), as `discover`
    would skip them. `inside`: a folder prefix to leave out (the cache directory); `only`: the one
    file of a single-file scan root; `head`: the work tree's files as the head scan just found them
    (an unchanged file among them is taken as it is, not looked at again)."""
    listed, changed = _list_and_diff(folder, rev)
    entries = [e for e in listed if not (inside and e.path.startswith(inside)) and (only is None or e.path == only)]
    found = {c.path: c for c in head if c.data is None and c.mtime_ns}
    skipped: list[FileRecord] = []
    cands: list[Candidate] = []
    wanted: list[_Entry] = []
    for e in entries:
        if e.mode == "120000":
            skipped.append(FileRecord(path=e.path, status=FileStatus.SKIPPED, reason=LINK))
        elif e.kind != "blob":
            skipped.append(FileRecord(path=e.path, status=FileStatus.SKIPPED, reason=SPECIAL))
        elif e.size > max_size:
            skipped.append(
                FileRecord(
                    path=e.path,
                    status=FileStatus.SKIPPED,
                    size=e.size,
                    reason=f"larger than the size limit ({e.size} > {max_size} bytes)",
                )
            )
        elif e.path not in changed and (on_disk := _unchanged(found.get(e.path), folder, e)) is not None:
            cands.append(on_disk)
        else:
            wanted.append(e)
    blobs = read_blobs(folder, sorted({e.blob for e in wanted}))
    cands += [Candidate(e.path, f"{folder}/{e.path}", e.size, blobs[e.blob]) for e in wanted]
    cands.sort(key=lambda c: c.path)
    return cands, skipped


def _inside(directory: Path, root: Path) -> str:
    try:
        rel = directory.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return ""
    return "" if rel == "." else rel + "/"


def scan_revision(
    root: str,
    repo: str,
    rev: Revision,
    config: Config,
    extractors: Sequence[Extractor] | None = None,
    cache_key: str | None = None,
    only: str | None = None,
) -> ScanResult:
    """Extract the scan root `root` (the folder the head scan reported) as it was at `rev`, under
    the same root and repo name, so base and head records compare path for path: its consumers,
    deployments and findings (its file records are left out: nothing reports them). `only`: the
    file name when the head scanned a single file of that folder."""
    folder = str(_folder(Path(root)))
    cache = open_cache(Path(folder), config, cache_key) if cache_key is not None else None
    # the whole base result, by the revision's tree and the folder inside it, beside the head's
    base_cache = open_cache(Path(folder), config, f"{cache_key}\x1fbase") if cache_key is not None else None
    key = f"{rev.tree}\x1f{_out(_git(folder, 'rev-parse', '--show-prefix'))}\x1f{only or ''}"
    if base_cache is not None:
        hit = base_cache.result(key)
        if isinstance(hit, ScanResult) and hit.root == root and hit.repo == repo:
            _STARTED.pop(_key(folder, rev), None)  # its listing is not needed (git finishes on its own)
            return hit
    inside = _inside(cache.directory, Path(folder)) if cache is not None else ""
    head = discovered(root) if only is None else None
    with gc_paused():  # the head's records are all alive: collections would walk them again and again
        cands, skipped = candidates(folder, rev, config.max_file_size, inside, only, head or ())
        prefix = globs.root_prefix(folder, config_dir(config))
        kept, skipped_all = exclude_files(cands, skipped, config.exclude, prefix)
        # the head's cache serves every file and extractor the change left as they are, and keeps its
        # own; the change rules read consumers and deployments only: no file records, no facts
        result = _scan_files(
            root,
            repo,
            kept,
            skipped_all,
            config,
            extractors,
            cache,
            incremental=True,
            readonly=True,
            file_records=False,
        )
    if cache is not None and base_cache is not None:
        cache.save()
        base_cache.store_result(key, result)
        base_cache.save()
        _saw_tree(folder, rev.tree, base_cache.result_file)
    return result


def resolve_roots(roots: Sequence[str], ref: str) -> list[Revision]:
    """`ref` resolved in the repository of each scan root (RevisionError on the first that fails).
    Each base's git listing starts at once, to run while the head is scanned."""
    revisions = [resolve(Path(r), ref) for r in roots]
    seen = _seen_trees()
    for r, rev in zip(roots, revisions):
        folder = str(_folder(Path(r)))
        if Path(r).is_dir() and not _kept(seen.get(os.path.realpath(folder)), rev):
            _STARTED.setdefault(_key(folder, rev), _start_listing(folder, rev))
    return revisions


def _kept(hint: tuple[str, str, str] | None, rev: Revision) -> bool:
    """Whether the base cache likely holds this tree's result: the file written for it is still there."""
    if hint is None or hint[0] != rev.tree:
        return False
    try:
        return str(os.stat(hint[1]).st_mtime_ns) == hint[2]
    except OSError:
        return False


_SEEN_KEEP = 64


def _seen_file() -> str:
    return os.path.join(signing.cache_home(), "base-trees")


def _seen_trees() -> dict[str, tuple[str, str, str]]:
    """Folder -> (revision tree, result file, its mtime) of the result each folder's base cache kept
    last: a hint only (a wrong one makes the listing start later, never a wrong result), not signed."""
    try:
        with open(_seen_file(), encoding="utf-8", errors="surrogateescape") as fh:
            rows = (line.rstrip("\n").split("\0") for line in fh)
            return {r[0]: (r[1], r[2], r[3]) for r in rows if len(r) == 4}
    except OSError:
        return {}


def _saw_tree(folder: str, tree: str, result_file: Path) -> None:
    seen = _seen_trees()
    seen.pop(os.path.realpath(folder), None)  # the latest last: the oldest are dropped first
    try:
        seen[os.path.realpath(folder)] = (tree, str(result_file), str(os.stat(result_file).st_mtime_ns))
    except OSError:
        return
    rows = [(f, *v) for f, v in seen.items() if not any("\n" in x or "\0" in x for x in (f, *v))]
    text = "".join("\0".join(r) + "\n" for r in rows[-_SEEN_KEEP:])
    target = _seen_file()
    tmp = f"{target}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except OSError:  # a hint: never fatal
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def scan_base(
    roots: Sequence[str],
    revisions: Sequence[Revision],
    heads: Sequence[ScanResult],
    config: Config,
    cache_key: str | None = None,
) -> list[ScanResult]:
    """Each scan root at its base revision, as the head scan `heads` reported it (root, repo name)."""
    out: list[ScanResult] = []
    for path, rev, head in zip(roots, revisions, heads):
        only = Path(path).name if Path(path).is_file() else None
        out.append(
            scan_revision(
                head.root, head.repo, rev, config, cache_key=cache_key if Path(path).is_dir() else None, only=only
            )
        )
    return out
