"""Record a `subguard check` run for the run memo: its inputs, stdout, stderr and written files.

What a memo entry holds and when it is valid is `subguard.scan.runmemo`; the recorder tees the run's
streams, lists each scan root before anything is read, and stores the entry when the run ends.
"""

from __future__ import annotations

import io
import marshal
import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from subguard.scan import listing, runmemo, unread


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
        return runmemo.is_tty(self.inner)

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
        self.listings: list[Any] = []  # what each root's listing kept of its entries (`runmemo.root_listing`)
        self.unread: dict[str, dict[str, Any]] = {}  # by root: the files the run did not see (`note_unread`)
        self.files: dict[str, list[int] | None] = {}
        self.after: list[str] = []
        self.outputs: dict[str, str] = {}
        self.spoiled = ""
        self.out = _Tee(sys.stdout)
        self.err = _Tee(sys.stderr)

    def note_inputs(
        self,
        roots: Sequence[str],
        files: Sequence[str],
        caches: Sequence[str],
        exclude: Sequence[str],
        patterns: Sequence[str] = (),
        config_dir: str | None = None,
    ) -> None:
        """Before the scan reads anything: the roots (listed now), files it depends on, the caches
        it will use (signed when it is done), and paths inside roots the run writes itself.
        `patterns` are the config's `exclude` globs, relative to `config_dir` (`subguard.scan.globs`)."""
        globs = [list(patterns), config_dir or ""] if patterns else []
        for root in roots:
            top = Path(root).resolve()
            inside = []
            for path in exclude:
                try:
                    inside.append(Path(path).resolve().relative_to(top).as_posix())
                except ValueError:
                    continue
            listed_at, digest, newest, kept = runmemo.listing_for_record(root, inside, globs)
            if listed_at - newest < runmemo.RACY_NS:
                self.spoil("a file changed within the timestamp granularity of the listing")
            self.roots.append({"path": root, "exclude": inside, "globs": globs, "sig": digest})
            self.listings.append(kept)
        self.files.update({str(Path(f).absolute()): runmemo.file_stat(f) for f in files})
        self.after += [str(Path(c).absolute()) for c in caches]

    def note_output(self, path: str, text: str) -> None:
        self.outputs[str(Path(path).absolute())] = text

    def note_unread(self, root: str, recorded: dict[str, Any]) -> None:
        self.unread[root] = recorded

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
        path = runmemo.memo_path(self.argv)
        earlier = runmemo.aside_roots(path)
        aside: list[tuple[bytes, bytes, bytes] | None] = []
        for i, (root, kept) in enumerate(zip(self.roots, self.listings)):
            recorded = self.unread.get(root["path"])
            blob = unread.snapshot(kept) if recorded else None
            # the unread files apart: a replay after an edit of a file the run parsed never loads them
            rest = {k: v for k, v in recorded.items() if k != "paths"} if recorded else {}
            if rest.get("prints") and i < len(earlier):  # with what the same files' earlier contents parsed to
                rest["prints"] = unread.with_earlier_prints(rest["prints"], earlier[i])
            paths = recorded.get("paths", {}) if recorded else {}
            aside.append((blob, marshal.dumps(rest), marshal.dumps(paths)) if blob is not None else None)
        token = ""
        if any(aside):  # beside the entry: an unchanged run's replay never reads it
            token = os.urandom(16).hex()
            runmemo.write_entry(runmemo.aside_path(path), {"version": runmemo.FORMAT, "token": token, "roots": aside})
        entry = {
            "version": runmemo.FORMAT,
            "code": code,
            "inputs": {
                "roots": self.roots,
                "files": self.files,
                "after": {c: runmemo.tree_signature(c) for c in self.after},
                "aside": token,
            },
            "outputs": {"stdout": "".join(self.out.copy), "stderr": "".join(self.err.copy), "files": self.outputs},
        }
        runmemo.write_entry(path, entry)
        _prune(Path(runmemo.runs_dir()))


def _prune(folder: Path) -> None:
    entries = sorted(folder.glob("*.memo"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in entries[runmemo.KEEP :]:
        old.unlink(missing_ok=True)
        Path(runmemo.aside_path(str(old))).unlink(missing_ok=True)


ACTIVE: Recorder | None = None


@contextmanager
def recording(argv: Sequence[str]) -> Iterator[Recorder | None]:
    """Record the run inside the block (stdout and stderr are teed); None when memos are off."""
    global ACTIVE
    if not runmemo.enabled(argv):
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
        listing.forget_shared()  # a listing the run did not use must not serve a later run of this process


def note_inputs(
    roots: Sequence[str],
    files: Sequence[str],
    caches: Sequence[str],
    exclude: Sequence[str],
    patterns: Sequence[str] = (),
    config_dir: str | None = None,
) -> None:
    if ACTIVE is not None:
        ACTIVE.note_inputs(roots, files, caches, exclude, patterns, config_dir)


def note_unread(
    root: str,
    paths: dict[str, str],
    needles: dict[str, tuple[bytes, ...]],
    patterns: Iterable[bytes],
    max_size: int,
    parsed: dict[str, str],
    prints: Mapping[str, tuple[str, str]] | None = None,
    full: Mapping[str, tuple[str, tuple[bytes, ...]]] | None = None,
    waiver: bytes = b"",
) -> None:
    """After the scan of `root`: the files the run skipped for want of needles and did not otherwise
    use (path -> extractor), each extractor's needles, the patterns extractors searched other files
    for and the size limit (`subguard.scan.unread`), the files extractors parsed (path ->
    extractor: `subguard.scan.ahead` parses them ahead after an edit), and of those whose parse is
    all the run took from them, the digest of their bytes and of that parse (path -> (sha1, sha1):
    `subguard.scan.extraction.parse_prints`), with what a file must still hold to be parsed in full
    (`full`: `subguard.extract.PARSED_IN_FULL`) and the inline waivers' pattern it must not match."""
    if ACTIVE is not None and (paths or parsed):
        recorded = {
            "paths": paths,
            "needles": needles,
            "patterns": sorted(patterns),
            "max_size": max_size,
            "parsed": parsed,
            "full": {name: list(wanted) for name, (_, wanted) in (full or {}).items()},
            "waiver": waiver,
            "printed": {path: digest for path, (digest, _) in (prints or {}).items()},
            "prints": {path: {digest: parse} for path, (digest, parse) in (prints or {}).items()},
        }
        ACTIVE.note_unread(root, recorded)


def note_output(path: str, text: str) -> None:
    if ACTIVE is not None:
        ACTIVE.note_output(path, text)


def spoil(why: str) -> None:
    if ACTIVE is not None:
        ACTIVE.spoil(why)
