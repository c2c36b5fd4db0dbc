"""What an incremental audit (`--since PREVIOUS_OUT`) compares: a repository's stamp and the run's
settings. Plain Python, no Spark: the stamps are taken inside the extraction tasks.

A repository's stamp is its commit when it is a clean git work tree (`commit:<HEAD>`), else a tree
hash of its folder (`tree:<digest>`: every entry's name, type, size, mtime, ctime and inode, by
`lstat`, as `subguard.scan.treestamp` digests a scan root), each prefixed with the folder's path,
so a repository moved elsewhere is scanned again. Git-ignored files are not in a commit: their
records (skipped, with their size) are as of the run that scanned the repository.

The rule for a plain folder is one `lstat` of every entry, never less. A cheaper signature of its
folders alone (each folder's mtime, size and inode) was considered and refused: writing into an
existing file changes that file's mtime and ctime but no folder's, and a file rewritten at the
same size with its mtime set back (`touch -r`, an archive extractor, a sync tool) is told only by
its own ctime, which the tree hash includes (tests/audit/test_since.py edits a file so). The
`lstat`s are the floor of a plain folder's stamp: about 0.9 s per 200,000 files in one process on
the benchmark's VM, 0.65 s of it the system calls alone. A git work tree is stamped by its commit
when `git status` finds it clean (git compares the same stat fields with its index).

A repository whose inventory row names its commit (`commit` column: the clone a nightly job
fetched and checked out at that commit) is stamped by that commit when the folder's HEAD, read from
its `.git` files without running git, is that commit (`inventory_commit`): no walk and no process at
all. The inventory's word is trusted that the checkout holds no edits of its own (the fetch job's
folders hold none); a HEAD that is not the named commit falls back to the rules above.

The settings key covers everything else a repository's or a group's result depends on: the
subguard code (its files' sizes and mtimes), the audit's config file and config, the policy files,
`--runs`, and which config waivers have expired by today. Another key: nothing is reused.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import os
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from subguard.core.config import Config
from subguard.scan.listing import may_be_in_work_tree
from subguard.scan.treestamp import walk_stamp

GIT_SECONDS = 60.0


def _git(path: str, *args: str) -> str | None:
    try:
        proc = subprocess.run(
            ["git", "-C", path, *args],
            capture_output=True,
            timeout=GIT_SECONDS,
            check=False,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.decode("utf-8", "surrogateescape") if proc.returncode == 0 else None


def commit_of(path: str) -> str | None:
    """HEAD's commit when `path` is the top of a git work tree with nothing changed or untracked
    (ignored files aside); None otherwise."""
    if not os.path.lexists(os.path.join(path, ".git")) or not may_be_in_work_tree(path):
        return None
    top = _git(path, "rev-parse", "--show-toplevel", "HEAD")
    if top is None:
        return None
    lines = top.split("\n")
    if len(lines) < 2 or os.path.realpath(lines[0]) != os.path.realpath(path):
        return None
    status = _git(path, "status", "--porcelain", "--untracked-files=normal", "--ignore-submodules=none")
    return lines[1].strip() if status == "" else None


_SHA = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(4096).strip()
    except OSError:
        return None


def head_commit(path: str) -> str | None:
    """The commit HEAD of the git work tree at `path` names, read from its `.git` files (a folder, or
    a `gitdir:` file of a linked work tree; loose or packed refs); None when there is none."""
    dot = os.path.join(path, ".git")
    gitdir = dot
    if os.path.isfile(dot):
        text = _read(dot) or ""
        if not text.startswith("gitdir:"):
            return None
        gitdir = os.path.join(path, text[len("gitdir:") :].strip())
    elif not os.path.isdir(dot):
        return None
    head = _read(os.path.join(gitdir, "HEAD"))
    if head is None:
        return None
    if head.startswith("ref:"):
        ref = head[4:].strip()
        common = _read(os.path.join(gitdir, "commondir"))
        dirs = [gitdir] + ([os.path.join(gitdir, common)] if common else [])
        head = ""
        for d in dirs:
            head = _read(os.path.join(d, ref)) or ""
            if head:
                break
            packed = _read_packed(os.path.join(d, "packed-refs"), ref)
            if packed:
                head = packed
                break
    head = head.lower()
    return head if _SHA.fullmatch(head) else None


def _read_packed(path: str, ref: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                sha, _, name = line.strip().partition(" ")
                if name == ref:
                    return sha
    except OSError:
        return None
    return None


def inventory_commit(path: str, named: str) -> str | None:
    """The commit an inventory names for the folder at `path` (full, or a prefix of 7 or more hex
    digits) when its HEAD is that commit: the full commit; else None."""
    named = named.strip().lower()
    if len(named) < 7 or not re.fullmatch(r"[0-9a-f]+", named):
        return None
    head = head_commit(path)
    return head if head is not None and head.startswith(named) else None


def tree_hash(path: str, nested: Sequence[str] = ()) -> str:
    """The digest of every entry below `path` (lstat only, links never followed); `nested`: absolute
    paths of folders inside it that other units walk, left out."""
    skip = tuple(f"{n[len(path) + 1 :]}/" for n in nested if n.startswith(f"{path}/"))
    digest, _ = walk_stamp(path, skip, lambda _name: False, "subguard-audit-tree")
    return digest


def stamp(path: str, nested: Sequence[str] = (), commit: str | None = None) -> str:
    """A repository folder's stamp: `commit` when the inventory names one, else its clean commit,
    else its tree hash; prefixed with the folder's path."""
    found = commit or commit_of(path)
    return f"{path}\0commit:{found}" if found else f"{path}\0tree:{tree_hash(path, nested)}"


@functools.lru_cache(maxsize=1)
def _code_digest() -> str:
    """Sizes and mtimes of subguard's own files, taken once per process (the code it loaded at its
    start): results made by other code are never reused."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.blake2b(digest_size=16)
    for folder, dirs, files in os.walk(root, followlinks=True):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".yaml", ".yml", ".properties")):
                full = os.path.join(folder, name)
                try:
                    st = os.stat(full)
                except OSError:
                    continue
                h.update(f"{os.path.relpath(full, root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def settings_key(config: Config, runs: int, today: dt.date) -> str:
    """The digest of what every result of a run depends on besides the repositories themselves."""
    from subguard import __version__
    from subguard.rules.policy import policy_dirs, policy_files

    h = hashlib.blake2b(digest_size=16)
    h.update(f"{__version__}\0{_code_digest()}\0{runs}\0{config.model_dump_json()}\n".encode())
    if config.source and os.path.isfile(config.source):
        h.update(Path(config.source).read_bytes())
    source = config.source if config.source and Path(config.source).is_absolute() else None
    try:
        files = policy_files(policy_dirs(config.policies, source))
    except Exception:  # noqa: BLE001 - a broken policy folder fails the run elsewhere; here it is only a key
        files = []
    for path in files:
        h.update(str(path).encode() + b"\0")
        try:
            h.update(path.read_bytes())
        except OSError:
            h.update(b"?")
    # each dated waiver: before, on or after its expiry day (a waiver that expires changes results)
    days = [max(-1, min(1, (w.expires - today).days)) if w.expires is not None else 2 for w in config.waivers]
    h.update(f"waivers:{days}".encode())
    return h.hexdigest()
