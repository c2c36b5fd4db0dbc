"""The extractor contract: what a scan hands an extractor and what it gets back."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from subguard.core.cache import sha1
from subguard.core.config import Config
from subguard.core.model import Consumer, Deployment, FileRecord, Finding


@dataclass(frozen=True)
class SourceFile:
    """One file of a repo, read once. `path` is POSIX and relative to the repo root."""

    path: str
    data: bytes

    def text(self) -> str:
        """Decode as UTF-8 (with BOM); raises UnicodeDecodeError for other encodings."""
        return self.data.decode("utf-8-sig")


T = TypeVar("T")


def no_prefetch(extractor: str, items: Sequence[tuple[str, bytes]], fn: Callable[[str, bytes], Any]) -> None:
    """The default `RepoContext.prefetch`: nothing is computed ahead of time."""


def no_memo(extractor: str, path: str, data: bytes, compute: Callable[[], T]) -> T:
    """The default per-file memo: no cache, just compute."""
    return compute()


def no_last(key: str) -> Any:
    """The default `RepoContext.last`: nothing was kept."""
    return None


def no_keep(key: str, value: Any) -> None:
    """The default `RepoContext.keep`: nothing is kept."""


def content_digests(repo: RepoContext, files: Sequence[SourceFile]) -> Callable[[str], bytes] | None:
    """Each file's content digest (its sha1, `RepoContext.sha1`; b"" when it cannot be read), made
    once: the given files' from their bytes, the others' as `repo.read` gives them; what an
    extractor's kept work is checked against (`RepoContext.last`). None when the scan keeps nothing."""
    if repo.last is no_last and repo.keep is no_keep:
        return None
    given = {f.path: f.data for f in files}
    digests: dict[str, bytes] = {}

    def digest(path: str) -> bytes:
        got = digests.get(path)
        if got is None:
            data = given.get(path)
            data = data if data is not None else repo.read(path)
            got = digests[path] = b"" if data is None else bytes.fromhex(repo.sha1(data))
        return got

    return digest


@dataclass(frozen=True)
class RepoContext:
    """Everything an extractor may know about the repo besides its own files.

    `read(path)` loads another file of the repo on demand (for example a constants module that the
    prefilter skipped); it returns None when the path is not part of the scan or cannot be read.
    `prior` holds the results of the extractors that ran before this one, by name.
    `memo(extractor, path, data, compute)` returns `compute()` for one file's per-file parse, possibly
    from the content cache: extractors put their pure per-file work (parse -> picklable facts)
    behind it and do the cross-file linking outside it.
    `prefetch(extractor, [(path, data), ...], fn)` may compute those per-file parses ahead of time in
    worker processes (`fn(path, data)` must be a picklable module-level function returning exactly
    what the memo's `compute` would); calling it is optional and never changes a result.
    `matching(pattern, paths)` is the paths whose content `pattern` (a bytes regex) finds, as reading
    each with `read` would say; a scan with a content cache answers an unchanged file from the
    verdict it kept (`search`), without reading it. `paths_ending(suffixes)` is the paths with one
    of those endings, in order (`ending` gives them when the scan has them listed).
    `last(key)` is what this extractor kept under `key` (`keep(key, value)`) in an earlier scan of
    the same root with the same code, else None: an extractor may reuse work across runs through it
    when it checks that what the work read is unchanged (None is never kept: `keep(key, None)`
    forgets). `sha1(data)` is the hex sha1 of a file's bytes (a scan with a content cache computes
    it once per file for the parse memo and the kept work alike).
    """

    root: str
    repo: str
    config: Config
    paths: frozenset[str]
    read: Callable[[str], bytes | None]
    prior: Mapping[str, ExtractResult] = field(default_factory=dict)
    memo: Callable[[str, str, bytes, Callable[[], Any]], Any] = no_memo
    prefetch: Callable[[str, Sequence[tuple[str, bytes]], Callable[[str, bytes], Any]], None] = no_prefetch
    search: Callable[[bytes, Sequence[str]], list[str]] | None = None
    ending: Callable[[tuple[str, ...]], Sequence[str]] | None = None
    last: Callable[[str], Any] = no_last
    keep: Callable[[str, Any], None] = no_keep
    sha1: Callable[[bytes], str] = sha1

    def paths_ending(self, suffixes: tuple[str, ...]) -> Sequence[str]:
        """The repo's paths that end with one of `suffixes`, sorted."""
        if self.ending is not None:
            return self.ending(suffixes)
        return sorted([p for p in self.paths if p.endswith(suffixes)])

    def matching(self, pattern: bytes, paths: Iterable[str]) -> list[str]:
        """The paths (in the order given) whose content the regex `pattern` finds; unreadable ones never."""
        wanted = list(paths)
        if self.search is not None:
            return self.search(pattern, wanted)
        rx = re.compile(pattern)
        return [p for p in wanted if (data := self.read(p)) is not None and rx.search(data)]


@dataclass(frozen=True)
class ExtractResult:
    """An extractor's output for one repo. `files` has one record per file it was given or loaded."""

    consumers: tuple[Consumer, ...] = ()
    deployments: tuple[Deployment, ...] = ()
    files: tuple[FileRecord, ...] = ()
    findings: tuple[Finding, ...] = ()
    facts: Mapping[str, Any] = field(default_factory=dict)


class Extractor(Protocol):
    """One source kind. `claims` picks files by path; `needles` is the byte prefilter (empty: all)."""

    name: str
    needles: tuple[bytes, ...]

    def claims(self, path: str) -> bool: ...

    def extract(self, files: Sequence[SourceFile], repo: RepoContext) -> ExtractResult: ...
