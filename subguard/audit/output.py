"""Where an audit writes, and how a finished run replaces the previous output in one step.

A run never writes into `--out`. It writes into a staging folder beside it
(`<parent>/.<name>.staging-<token>`) and switches over at the end:

- local and mounted file systems: the staging folder and `--out` are exchanged in one atomic
  `renameat2(RENAME_EXCHANGE)` (Linux), and the previous output, now under the staging name, is
  deleted. Where that call is missing, `--out` is renamed to `<parent>/.<name>.old-<token>` and
  the staging folder to `--out`; a run killed between the two renames leaves the previous output
  whole under the `.old-` name, and the next run moves it back before anything else. So a run
  killed at any point (`kill -9` included) leaves the previous output whole at `--out` (or, in
  that one window, restorable beside it).
- other file systems (HDFS, object stores): the same staging folder and renames through the Hadoop
  FileSystem API. A rename on an object store copies file by file, so there the switch is not
  atomic: readers must check the manifest.

Every complete output holds `_subguard_manifest.json`, written last (after every table and
report; on other file systems after the switch): the run's token and time and every file of the
output with its size (`audit.log` aside: the JVM may still append to it). `complete(path)` is
the check a reader makes: the manifest is there and every file it lists has its size.

A live run holds an exclusive `flock` on `<parent>/.<name>.<token>.lock`. Each run starts by
removing the staging and `.old-` folders whose lock nobody holds (runs that died), on local and
mounted file systems; on other file systems such folders stay until deleted by hand.

A `--out` that exists must be empty or hold a previous audit output (only the names an audit
writes): the switch replaces the whole folder, and nothing else may be lost with it.
"""

from __future__ import annotations

import ctypes
import datetime as dt
import fcntl
import json
import os
import re
import secrets
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field

MANIFEST = "_subguard_manifest.json"
LOG = "audit.log"
TABLES = ("files", "consumers", "subscriptions", "deployments", "groups", "findings")
REPORTS = ("summary.json", "findings.json", "findings.sarif", "report.html", "history.jsonl")
OURS = frozenset({*TABLES, *REPORTS, MANIFEST, LOG, "teams"}) | {
    f".{n}.crc" for n in REPORTS
}  # .crc: outputs of older versions
OURS |= {"org-map.sqlite"}  # the org map (`subguard.audit.orgmap`)
OURS |= {"state"}  # what an incremental audit reuses (`subguard.audit.incremental`)
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


class OutputError(ValueError):
    """An `--out` the audit cannot use: the message names it."""


def local_path(uri: str) -> str | None:
    """The local path of a `file:` URI or a plain path; None for any other scheme."""
    if uri.startswith("file:"):
        rest = uri[5:]
        return "/" + rest.lstrip("/") if rest.startswith("/") else None
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", uri):
        return None
    return os.path.abspath(uri)


def complete(path: str) -> bool:
    """Whether the local folder `path` holds a complete audit output: its manifest, and every file
    the manifest lists with the size it lists."""
    try:
        with open(os.path.join(path, MANIFEST), encoding="utf-8") as fh:
            manifest = json.load(fh)
        files = manifest["files"]
        return isinstance(files, dict) and all(
            os.path.getsize(os.path.join(path, rel)) == size for rel, size in files.items()
        )
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _exchange(a: str, b: str) -> bool:
    """Swap two paths in one step (Linux `renameat2`); False where the call or the file system lacks it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return int(renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)) == 0


def _held(lock: str) -> bool:
    """Whether a live run holds the lock file (False when it is missing: nobody does)."""
    try:
        fd = os.open(lock, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops a lock taken here
    return False


@dataclass
class Output:
    """One run's output: `staging` (a URI or local path) while it runs, `out` once switched."""

    out: str
    token: str = field(default_factory=lambda: f"{os.getpid()}-{secrets.token_hex(4)}")
    local: str | None = None
    _lock_fd: int | None = None

    def __post_init__(self) -> None:
        self.out = self.out.rstrip("/") or "/"
        self.local = local_path(self.out)

    @property
    def parent(self) -> str:
        return os.path.dirname(self.local) if self.local is not None else self.out.rsplit("/", 1)[0]

    @property
    def name(self) -> str:
        return os.path.basename(self.local) if self.local is not None else self.out.rsplit("/", 1)[-1]

    def sibling(self, kind: str, token: str | None = None) -> str:
        return f"{self.parent}/.{self.name}.{kind}-{token or self.token}"

    @property
    def staging(self) -> str:
        return self.sibling("staging")

    def lock_path(self, token: str | None = None) -> str:
        return f"{self.parent}/.{self.name}.{token or self.token}.lock"

    # --- local and mounted file systems ------------------------------------------------------------

    def open_local(self) -> None:
        """Recover or remove what dead runs left, check `--out`, take the lock, create the staging folder."""
        assert self.local is not None
        try:
            os.makedirs(self.parent, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"{self.out}: cannot create the output folder: {exc.strerror or exc}") from None
        self.sweep()
        if os.path.lexists(self.local):
            if not os.path.isdir(self.local) or os.path.islink(self.local):
                raise OutputError(f"{self.out}: not a folder")
            others = sorted(set(os.listdir(self.local)) - OURS)
            if others:
                raise OutputError(
                    f"{self.out}: holds files that are not an audit output ({', '.join(others[:3])}): the audit replaces "
                    "the whole folder, so choose an empty or new one"
                )
        try:
            self._lock_fd = os.open(self.lock_path(), os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.mkdir(self.staging)
        except OSError as exc:
            self.release()
            raise OutputError(
                f"{self.out}: cannot create the staging folder {self.staging}: {exc.strerror or exc}"
            ) from None

    def sweep(self) -> None:
        """Runs that died: an `.old-` folder is moved back when `--out` is missing (killed between the
        two renames), else deleted with every staging folder; only folders whose lock nobody holds."""
        assert self.local is not None
        pattern = re.compile(rf"^\.{re.escape(self.name)}\.(staging|old)-(.+)$")
        try:
            names = sorted(os.listdir(self.parent))
        except OSError:
            return
        for entry in names:
            m = pattern.match(entry)
            if not m or m.group(2) == self.token or _held(self.lock_path(m.group(2))):
                continue
            path = f"{self.parent}/{entry}"
            if m.group(1) == "old" and not os.path.lexists(self.local):
                try:
                    os.rename(path, self.local)
                except OSError:
                    continue
            else:
                shutil.rmtree(path, ignore_errors=True)
            try:
                os.unlink(self.lock_path(m.group(2)))
            except OSError:
                pass
        for entry in names:  # lock files of dead runs whose folders are gone
            if entry.startswith(f".{self.name}.") and entry.endswith(".lock"):
                token = entry[len(self.name) + 2 : -5]
                if (
                    token != self.token
                    and not os.path.lexists(self.sibling("staging", token))
                    and not _held(self.lock_path(token))
                ):
                    try:
                        os.unlink(f"{self.parent}/{entry}")
                    except OSError:
                        pass

    def write_text(self, rel: str, text: str, remote: Callable[[str, str], None] | None = None) -> None:
        """A report file of the run (plain file I/O on a local output: no Hadoop checksum files), in
        UTF-8 (a lone surrogate written as its escape)."""
        data = text.encode("utf-8", "backslashreplace")
        self.write_bytes(rel, data, None if remote is None else lambda uri, _: remote(uri, text))

    def write_bytes(self, rel: str, data: bytes, remote: Callable[[str, bytes], None] | None = None) -> None:
        """A file of the run (a report, a small table's Parquet file): plain file I/O on a local
        output, else `remote(uri, data)`."""
        if self.local is not None:
            if os.path.dirname(rel):
                os.makedirs(os.path.join(self.staging, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(self.staging, rel), "wb") as fh:
                fh.write(data)
        else:
            assert remote is not None
            remote(f"{self.staging}/{rel}", data)

    def manifest(self, sizes: dict[str, int]) -> str:
        return (
            json.dumps(
                {
                    "format": 1,
                    "run": self.token,
                    "written": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                    "files": dict(sorted(sizes.items())),
                },
                indent=2,
            )
            + "\n"
        )

    def commit_local(self) -> None:
        """Manifest last, then the switch (see the module docs); the previous output goes after it."""
        assert self.local is not None
        sizes: dict[str, int] = {}
        for dirpath, _, filenames in os.walk(self.staging):
            for fname in filenames:
                full = os.path.join(dirpath, fname)
                rel = os.path.relpath(full, self.staging)
                if rel != LOG:
                    sizes[rel] = os.path.getsize(full)
        self.write_text(MANIFEST, self.manifest(sizes))
        if not os.path.lexists(self.local):
            os.rename(self.staging, self.local)
        elif _exchange(self.staging, self.local):
            shutil.rmtree(self.staging, ignore_errors=True)  # the previous output, under the staging name now
        else:
            old = self.sibling("old")
            os.rename(self.local, old)
            os.rename(self.staging, self.local)
            shutil.rmtree(old, ignore_errors=True)
        self.release()

    def abandon(self) -> None:
        """A run that stops early: its staging folder goes, the previous output stays as it was."""
        if self.local is not None:
            shutil.rmtree(self.staging, ignore_errors=True)
        self.release()

    def release(self) -> None:
        if self._lock_fd is not None:
            if self.local is not None:
                try:
                    os.unlink(self.lock_path())
                except OSError:
                    pass
            os.close(self._lock_fd)
            self._lock_fd = None


def remote_sizes(listing: list[tuple[str, int]], base: str) -> dict[str, int]:
    """Manifest entries of a remote output from (uri, size) of its files."""
    prefix = base.rstrip("/") + "/"
    out: dict[str, int] = {}
    for uri, size in listing:
        rel = uri[len(prefix) :] if uri.startswith(prefix) else uri
        if rel not in (LOG, MANIFEST) and not rel.rsplit("/", 1)[-1].endswith(".crc"):
            out[rel] = size
    return out
