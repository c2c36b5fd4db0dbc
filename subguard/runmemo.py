"""Replay a whole `subguard check` run when nothing it depends on has changed.

A pre-commit hook runs `check` on every commit, mostly over a tree that has not changed since the
last run. Such a run is answered from a memo of the previous one: its stdout, stderr, the files it
wrote and its exit code, replayed without loading the extractors, the engine or pydantic.

The memo is keyed by the invocation: the arguments, the working directory, today's date (waivers
expire), whether stdout and stderr are terminals (colour), the environment variables that change
output or configuration, the interpreter, and the installed subguard (version and the size and mtime of every
module and built-in policy). It is valid only while every input the run read is as it was:

- each scan root's listing, taken *before* the run read a file: every entry git lists (or the walk
  finds) with its type, size, mtime, ctime and inode, minus the cache folder and the run's own
  outputs when they lie inside the root (a run whose newest entry changed less than `RACY_NS` before
  the listing is not memoised: a second change within the same timestamp tick would be invisible;
  file systems with timestamps coarser than that, such as FAT, can still hide such an edit);
- each other file the run depended on (config files, including the absent ones it looked for,
  policy files, the baseline), by the same stat fields;
- the caches the run used, as the run left them (a cache corrupted since is a changed input).

Anything else (`--no-cache`, `--write-baseline`, an exit code other than 0 or 1, a run that noted no
inputs) is not memoised. Entries live in `<user cache>/runs/`, at most `KEEP` of them, signed with
the user's key like the content cache (`cache.write_signed`): an entry someone else wrote is a miss.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import os
import stat
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from subguard import __version__
from subguard.cache import read_signed, user_cache_dir, write_signed
from subguard.listing import excluded_dir, git_files, walk_tree

KEEP = 64
# an entry changed this close to the listing could change again within the same timestamp tick
# (Linux keeps coarse file times, a few ms) and look unchanged: such a run is not memoised
RACY_NS = 100_000_000
DISABLE_ENV = "SUBGUARD_NO_RUN_MEMO"
_ENV_EXACT = ("NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "TERM", "COLUMNS", "HOME", "XDG_CACHE_HOME",
              "LANG", "LC_ALL", "LC_CTYPE", "PYTHONIOENCODING")
_ENV_PREFIXES = ("SUBGUARD_", "GITHUB_", "RUNNER_")
Sig = list[int] | None


def runs_dir() -> Path:
    return user_cache_dir() / "runs"


def _stat(path: str) -> Sig:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return [stat.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _stamp(st: os.stat_result) -> bytes:
    return b"%d %d %d %d %d\n" % (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


class _Listing:
    """A running digest of (name, stat) pairs and the newest change time (ctime) among them."""

    __slots__ = ("h", "newest")

    def __init__(self, seed: str) -> None:
        self.h = hashlib.sha256(seed.encode("utf-8", "surrogateescape"))
        self.newest = 0

    def add(self, name: str, st: os.stat_result | None) -> None:
        if st is None:
            self.h.update(name.encode("utf-8", "surrogateescape") + b"\0-\n")
            return
        self.h.update(name.encode("utf-8", "surrogateescape") + b"\0" + _stamp(st))
        self.newest = max(self.newest, st.st_ctime_ns)  # ctime moves with every change; mtime can be set back


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _walk_listing(acc: _Listing, base: str, skip: tuple[str, ...]) -> None:
    """Add every entry below `base` as `listing.walk_tree` meets them (`discover`'s walk), one lstat
    each: real folders are entered unless `excluded_dir`; links and other entries are added."""
    def skipped(rel: str) -> bool:
        return bool(skip) and (rel + "/").startswith(skip)

    def enter(rel: str, name: str, _flag: bool) -> bool | None:
        return None if skipped(rel) or excluded_dir(name) else False

    for rel, entry, _ in walk_tree(base, enter):
        if skipped(rel):
            continue
        try:
            st: os.stat_result | None = entry.stat(follow_symlinks=False)
        except OSError:
            st = None
        acc.add(rel, st)


def root_listing(root: str, exclude: Sequence[str] = ()) -> tuple[str, int]:
    """A digest of every entry of a scan root as `discover` would list it (names and stat fields:
    git's listing inside a work tree, else the same filtered walk), and its newest ctime (ns)."""
    path = Path(root)
    top = path.resolve() if not path.is_symlink() else path.absolute()
    acc = _Listing(str(top))
    if not top.is_dir():
        acc.add("", _lstat(str(top)))
        return acc.h.hexdigest(), acc.newest
    skip = tuple(e.rstrip("/") + "/" for e in exclude)
    base = str(top)
    listed = git_files(top)
    if listed is None:
        _walk_listing(acc, base, skip)
    else:
        for name in listed:
            if not (skip and (name + "/").startswith(skip)):
                acc.add(name, _lstat(f"{base}/{name}"))
    return acc.h.hexdigest(), acc.newest


def root_signature(root: str, exclude: Sequence[str] = ()) -> str:
    return root_listing(root, exclude)[0]


def tree_signature(folder: str) -> str:
    """A digest of every file below a folder the run wrote itself (a cache), memo entries aside."""
    acc = _Listing(folder)
    memos = str(runs_dir())
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if os.path.join(dirpath, d) != memos)
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            acc.add(full, _lstat(full))
    return acc.h.hexdigest()


def _install_stamp() -> str:
    here = Path(__file__).resolve().parent
    h = hashlib.sha256(__version__.encode())
    for dirpath, dirnames, filenames in os.walk(here, followlinks=True):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith((".py", ".yaml", ".yml")):
                full = os.path.join(dirpath, name)
                st = os.stat(full)
                h.update(f"{full}\0{st.st_size}\0{st.st_mtime_ns}\0".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def invocation_key(argv: Sequence[str]) -> str:
    """What must be equal for two runs to print the same thing from the same inputs."""
    env = {k: v for k, v in os.environ.items() if k in _ENV_EXACT or k.startswith(_ENV_PREFIXES)}
    env.pop(DISABLE_ENV, None)
    parts = {
        "argv": list(argv), "cwd": os.getcwd(), "env": sorted(env.items()), "date": dt.date.today().isoformat(),
        "tty": [_isatty(sys.stdout), _isatty(sys.stderr)], "install": _install_stamp(),
        "python": [sys.executable, sys.version],  # another interpreter or venv: other library versions
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode("utf-8", "surrogateescape")).hexdigest()


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def enabled(argv: Sequence[str]) -> bool:
    return not os.environ.get(DISABLE_ENV) and "--no-cache" not in argv and not any(
        a == "--write-baseline" or a.startswith("--write-baseline=") for a in argv
    )


# --- replay ----------------------------------------------------------------------------------------


def _valid(entry: dict[str, Any]) -> bool:
    inputs = entry["inputs"]
    for root in inputs["roots"]:
        if root_signature(root["path"], root["exclude"]) != root["sig"]:
            return False
    if any(_stat(path) != sig for path, sig in inputs["files"].items()):
        return False
    return all(tree_signature(folder) == sig for folder, sig in inputs["after"].items())


def replay(argv: Sequence[str]) -> int | None:
    """The exit code of a replayed run (its output already written), or None to run for real."""
    if not enabled(argv):
        return None
    try:
        entry = read_signed(runs_dir() / f"{invocation_key(argv)}.memo")
        if not isinstance(entry, dict) or entry.get("version") != 1 or not _valid(entry):
            return None
        for target, text in entry["outputs"]["files"].items():
            if _read(target) != text:
                Path(target).write_text(text, encoding="utf-8", errors="backslashreplace")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    _emit(sys.stdout, entry["outputs"]["stdout"])
    _emit(sys.stderr, entry["outputs"]["stderr"])
    return int(entry["code"])


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="backslashreplace")
    except OSError:
        return None


def _emit(stream: TextIO, text: str) -> None:
    if text:
        stream.write(text)
        stream.flush()


# --- recording -------------------------------------------------------------------------------------


class _Tee(io.TextIOBase):
    """A text stream that writes through to `inner` and keeps a copy."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner
        self.copy: list[str] = []

    def write(self, text: str | bytes) -> int:
        if isinstance(text, (bytes, bytearray)):  # click writes bytes straight to a binary stream
            self.copy.append(bytes(text).decode("utf-8", "surrogateescape"))
            buffer = getattr(self.inner, "buffer", None)
            return int(buffer.write(text)) if buffer is not None else self.inner.write(self.copy[-1])
        self.copy.append(text)
        return self.inner.write(text)

    def flush(self) -> None:
        self.inner.flush()

    def isatty(self) -> bool:
        return _isatty(self.inner)

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self.inner, "encoding", "utf-8"))

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.inner, "errors", None)

    def fileno(self) -> int:
        return self.inner.fileno()


class Recorder:
    """Collects what one real run read and wrote; `finish` stores it as a memo entry."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.argv = list(argv)
        self.roots: list[dict[str, Any]] = []
        self.files: dict[str, Sig] = {}
        self.after: list[str] = []
        self.outputs: dict[str, str] = {}
        self.spoiled = ""
        self.out = _Tee(sys.stdout)
        self.err = _Tee(sys.stderr)

    def note_inputs(self, roots: Sequence[str], files: Sequence[str], caches: Sequence[str], exclude: Sequence[str]) -> None:
        """Before the scan reads anything: the roots (listed now), files it depends on, the caches
        it will use (signed when it is done), and paths inside roots the run writes itself."""
        for root in roots:
            top = Path(root).resolve()
            inside = []
            for path in exclude:
                try:
                    inside.append(Path(path).resolve().relative_to(top).as_posix())
                except ValueError:
                    continue
            listed_at = time.time_ns()
            digest, newest = root_listing(root, inside)
            if listed_at - newest < RACY_NS:
                self.spoil("a file changed within the timestamp granularity of the listing")
            self.roots.append({"path": root, "exclude": inside, "sig": digest})
        self.files.update({str(Path(f).absolute()): _stat(f) for f in files})
        self.after += [str(Path(c).absolute()) for c in caches]

    def note_output(self, path: str, text: str) -> None:
        self.outputs[str(Path(path).absolute())] = text

    def spoil(self, why: str) -> None:
        self.spoiled = self.spoiled or why

    def finish(self, code: int) -> None:
        if self.spoiled or code not in (0, 1) or not self.roots:
            return
        try:
            self._store(code)
        except Exception:  # noqa: BLE001 - a memo is an optimisation: never a reason to fail
            return

    def _store(self, code: int) -> None:
        entry = {
            "version": 1, "code": code,
            "inputs": {"roots": self.roots, "files": self.files, "after": {c: tree_signature(c) for c in self.after}},
            "outputs": {"stdout": "".join(self.out.copy), "stderr": "".join(self.err.copy), "files": self.outputs},
        }
        folder = runs_dir()
        write_signed(folder / f"{invocation_key(self.argv)}.memo", entry)
        _prune(folder)


def _prune(folder: Path) -> None:
    entries = sorted(folder.glob("*.memo"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in entries[KEEP:]:
        old.unlink(missing_ok=True)


ACTIVE: Recorder | None = None


@contextmanager
def recording(argv: Sequence[str]) -> Iterator[Recorder | None]:
    """Record the run inside the block (stdout and stderr are teed); None when memos are off."""
    global ACTIVE
    if not enabled(argv):
        yield None
        return
    rec = Recorder(argv)
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = rec.out, rec.err
    ACTIVE = rec
    try:
        yield rec
    finally:
        sys.stdout, sys.stderr = saved
        ACTIVE = None


def note_inputs(roots: Sequence[str], files: Sequence[str], caches: Sequence[str], exclude: Sequence[str]) -> None:
    if ACTIVE is not None:
        ACTIVE.note_inputs(roots, files, caches, exclude)


def note_output(path: str, text: str) -> None:
    if ACTIVE is not None:
        ACTIVE.note_output(path, text)


def spoil(why: str) -> None:
    if ACTIVE is not None:
        ACTIVE.spoil(why)
