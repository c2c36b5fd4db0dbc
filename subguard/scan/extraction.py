"""One repo in, records out: discover -> prefilter -> extract -> service/environment attribution.

`scan_repo` is the single entry point used by the CLI commands and, inside Spark tasks, by the audit,
so one repo gives the same records everywhere.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import marshal
import os
import pickle
import re
import sys
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from subguard.core import afterwards, tools
from subguard.core.cache import PICKLES, SCAN_STATE, ContentCache, LoadedState, code_stamp, namespace, sha1
from subguard.core.config import Config
from subguard.core.kept import held as kept_held
from subguard.core.kept import serving as kept_for_runs
from subguard.core.limits import FileFailure, describe, gc_paused, guard_memo, scrub
from subguard.core.model import WAIVER_PATTERN, Consumer, Deployment, FileRecord, FileStatus, Finding
from subguard.deploy.service import ModuleRoots, attribute, know_roots, module_roots
from subguard.extract import NEEDLES, PARSED_IN_FULL, REGISTRY, load_extractors
from subguard.extract.base import Extractor, ExtractResult, RepoContext, SourceFile, no_keep, no_last, no_memo
from subguard.scan import globs, passedover, pathlists, watch
from subguard.scan.discover import Candidate, Index, discover, excluded_record, index, made_indexes, read_limited
from subguard.scan.parallel import Prefetcher, worker_count
from subguard.scan.pathlists import Stamped
from subguard.scan.records import PLAIN as PLAIN_RECORDS
from subguard.scan.records import plain_text
from subguard.scan.records import skipped as skipped_record
from subguard.scan.records import updated as updated_record


@dataclass(frozen=True)
class Looked:
    """What extractors looked at besides the files they were given: the files they read, and the
    patterns they searched other files for (`RepoContext.matching`; a file that matches none of
    them gave every search the answer it gives unread). The run memo trusts an edit of any other
    file that no extractor takes without its needles (`subguard.scan.runmemo`)."""

    read: frozenset[str] = frozenset()
    patterns: frozenset[bytes] = frozenset()

    def __or__(self, other: Looked) -> Looked:
        return Looked(self.read | other.read, self.patterns | other.patterns)


@dataclass(frozen=True)
class ScanResult:
    root: str
    repo: str
    files: tuple[FileRecord, ...]
    consumers: tuple[Consumer, ...]
    deployments: tuple[Deployment, ...]
    findings: tuple[Finding, ...] = ()
    facts: Mapping[str, object] = field(default_factory=dict)
    # what the policies judge (consumers, deployments, findings, failed files) as a digest, when a
    # cached scan knows every extractor's result ("" otherwise): equal digests, equal judgements
    # (`subguard.rules.engine.evaluate` reuses its last answer); never part of equality
    digest: str = field(default="", compare=False)
    # what the extractors looked at besides the files they were given (`Looked`); never part of equality
    looked: Looked = field(default_factory=Looked, compare=False)
    # the parsed and failed files whose content holds the inline waivers' needle, when the scan
    # searched them (None: not searched, read them); never part of equality
    marked: frozenset[str] | None = field(default=None, compare=False)
    # path -> (sha1 of its bytes, sha1 of its parse) of the files whose parse is all the run took from
    # them (`parse_prints`); never part of equality
    prints: Mapping[str, tuple[str, str]] = field(default_factory=dict, compare=False)

    def read_files(self) -> tuple[FileRecord, ...]:
        """The records of the files an extractor parsed or failed on (not skipped), in order: one
        pass over `files`, kept on the result (most files of a large tree are skipped, and a run
        asks for these several times: counts, SG901, the inline waivers' sources)."""
        got: tuple[FileRecord, ...] | None = self.__dict__.get(_READ_FILES)
        if got is None:
            skipped = FileStatus.SKIPPED
            got = tuple([r for r in self.files if r.status != skipped])
            object.__setattr__(self, _READ_FILES, got)
        return got

    def counts(self) -> dict[str, int]:
        read = self.read_files()
        failed = sum(1 for r in read if r.status == FileStatus.FAILED)
        return {"parsed": len(read) - failed, "skipped": len(self.files) - len(read), "failed": failed}

    def __getstate__(self) -> dict[str, object]:
        """Pickled without what `read_files` kept (it follows from `files`)."""
        return {k: v for k, v in self.__dict__.items() if k != _READ_FILES}


_READ_FILES = "_read_files"
assert [s.value for s in FileStatus] == ["parsed", "skipped", "failed"]  # noqa: S101 - `counts` names each


NO_EXTRACTOR = "not a file type subguard reads"
KEEP_BYTES = 64 * 1024 * 1024  # contents kept in memory after the prefilter read, for extractors' lazy reads
NO_REFERENCE = "no RocketMQ reference (prefilter)"
UNREADABLE = "cannot read"
_PASSED_OVER = frozenset({NO_EXTRACTOR, NO_REFERENCE})  # the prefilter's reasons (`subguard.scan.passedover`)
EXCLUDED_BY_CONFIG = "excluded by config"  # globs.REASON: counted in --stats, never named file by file


def unread_files(result: ScanResult, cited: Collection[str]) -> dict[str, str]:
    """The files of a scan no extractor saw (path -> the extractor that claims it): skipped for want
    of its needles, read by no extractor, and not among `cited` (the paths findings name). An edit
    of one that adds no needle and matches no searched pattern leaves the result as it is
    (`subguard.scan.unread`)."""
    seen = result.looked.read
    return {
        r.path: r.extractor
        for r in result.files
        if r.reason == NO_REFERENCE and r.extractor in NEEDLES and r.path not in seen and r.path not in cited
    }


def config_dir(config: Config) -> str | None:
    """The folder `exclude` patterns are relative to: the config file's (None without one)."""
    return os.path.dirname(os.path.abspath(config.source)) if config.source else None


def exclude_files(
    candidates: Sequence[Candidate],
    skipped: Sequence[FileRecord],
    patterns: Sequence[str],
    prefix: str = "",
) -> tuple[Sequence[Candidate], Sequence[FileRecord]]:
    """The config's `exclude` applied (`subguard.scan.globs`): a matching file becomes a skipped
    record "excluded by config (exclude: PATTERN)", whatever it was before (never read)."""
    match = globs.matcher(patterns, prefix)
    if match is None:
        return candidates, skipped
    kept: list[Candidate] = []
    out: list[FileRecord] = []
    for rec in skipped:
        pattern = match(rec.path)
        out.append(rec if pattern is None else excluded_record(rec.path, pattern).model_copy(update={"repo": rec.repo}))
    for cand in candidates:
        pattern = match(cand.path)
        if pattern is None:
            kept.append(cand)
        else:
            out.append(excluded_record(cand.path, pattern))
    return kept, out


def unusual_skip(rec: FileRecord) -> bool:
    """A file skipped for a reason a user would not guess: before any extractor looked at it (size
    limit, link, device or FIFO, cannot stat) or because it could not be read. `--stats` names each."""
    if rec.status is not FileStatus.SKIPPED or not rec.reason or rec.reason.startswith(EXCLUDED_BY_CONFIG):
        return False
    return (not rec.extractor and rec.reason != NO_EXTRACTOR) or rec.reason.startswith(UNREADABLE)


def _load(cand: Candidate, max_size: int) -> bytes:
    if cand.data is not None:
        if len(cand.data) > max_size:
            raise OSError(f"larger than the size limit ({max_size} bytes)")
        return cand.data
    return read_limited(cand.abspath, max_size)


def scan_files(
    root: str,
    repo: str,
    candidates: Sequence[Candidate],
    skipped: Sequence[FileRecord],
    config: Config,
    extractors: Sequence[Extractor] | None = None,
    cache: ContentCache | None = None,
    prefix: str = "",
) -> ScanResult:
    """Run the extractors over already-discovered files of one repo (reusing `cache` when given).
    Files the config's `exclude` names (matched as `prefix` + path) are skipped, unread."""
    candidates, skipped = exclude_files(candidates, skipped, config.exclude, prefix)
    manifest = _manifest(repo, candidates, skipped) if cache is not None else ""
    if cache is not None and manifest:
        cached = cache.result(manifest)
        if isinstance(cached, ScanResult) and cached.root == root:
            return cached
    result = _scan_files(root, repo, candidates, skipped, config, extractors, cache, incremental=bool(manifest))
    if cache is not None and manifest:
        # the whole result serves only a later run over the very same files (the run memo answers
        # most of those): pickled and written (~0.1 s at 20,000 files) once a second run met them,
        # never by each run of an edit loop, whose files differ every time
        if cache.section(_SEEN).get("manifest") == manifest:
            cache.store_result(manifest, result)
        else:
            cache.put(_SEEN, "manifest", manifest)
    return result


def _manifest(repo: str, candidates: Sequence[Candidate], skipped: Sequence[FileRecord]) -> str:
    """Hash of every file's path, size and mtime; "" when a file has no mtime (in-memory content)."""
    listed = index(candidates).listed
    if not listed:
        return ""
    others = [(r.path, r.reason) for r in skipped]
    return hashlib.sha256(marshal.dumps((repo, listed, others), 2)).hexdigest()


def _scan_files(
    root: str,
    repo: str,
    candidates: Sequence[Candidate],
    skipped: Sequence[FileRecord],
    config: Config,
    extractors: Sequence[Extractor] | None,
    cache: ContentCache | None,
    incremental: bool = False,
    readonly: bool = False,
    file_records: bool = True,
) -> ScanResult:
    """Extract `candidates`. With `incremental` (a cache, every file on disk with an mtime), an
    extractor whose inputs are as the cache last saw them is not run (not even imported): its last
    result is reused (`_Incremental`). With `readonly` as well (another revision of the tree the
    cache belongs to, some files in memory), the cache's extractor results serve the extractors whose
    inputs are unchanged but are never replaced by this scan's. Without `file_records`, the result
    has no file records (nor facts), for a caller that reads its consumers and deployments only."""
    registry = _Registry(extractors)
    records: dict[str, FileRecord] = (
        {r.path: updated_record(r, {"repo": repo}) for r in skipped} if file_records else {}
    )
    found = index(candidates)
    by_path = found.by_path
    inc = (
        _Incremental(cache, registry.names, found, readonly)
        if incremental and cache is not None and cache.enabled
        else None
    )

    unread: list[str] = []  # files that could not be read: skipped records no extractor result holds
    passed = (
        _Passed.of(passedover.take(str(cache.file), cache.key, registry.names, repo), records, candidates)
        if inc is not None and cache is not None and not readonly and file_records and kept_for_runs()
        else None
    )

    def skip(cand: Candidate, reason: str, extractor: str = "") -> None:
        if reason.startswith(UNREADABLE):
            unread.append(cand.path)
        if file_records:  # most of a large repo's files: built unvalidated (every field is typed here)
            records[cand.path] = skipped_record(cand.path, reason, extractor, repo, cand.size)
        if passed is not None and reason in _PASSED_OVER:  # for the next served run
            passed.new.append((cand, reason, extractor))

    chosen, kept = _prefilter(candidates, registry, inc, cache, config.max_file_size, skip, passed)
    if passed is not None and cache is not None:
        passedover.write_later(str(cache.file), registry.names, repo, passed.held, passed.hits, passed.new)

    def read(path: str) -> bytes | None:
        if path in kept:
            return kept[path]
        cand = by_path.get(path)
        if cand is None:
            return None
        try:
            return _load(cand, config.max_file_size)
        except OSError:
            return None

    prior: dict[str, ExtractResult] = {}
    read_by_extractors: set[str] = set()  # the files given to extractors and those they recorded (a few of the repo's)
    consumers: list[Consumer] = []
    deployments: list[Deployment] = []
    findings: list[Finding] = []
    facts = Facts()
    looked = Looked()
    paths = found.paths
    if inc is not None:
        inc.module_roots(paths)
    memo = cache.memo if cache is not None and cache.enabled else no_memo
    known = (lambda k, p, d: cache.has_parse(k, p, d)) if cache is not None and cache.enabled else (lambda *_: False)
    digest = cache.digest if cache is not None and cache.enabled else sha1
    ahead = Prefetcher(memo, worker_count(config.jobs), config.parse_timeout, known, digest)
    searcher = _Search(cache, by_path, read).search if cache is not None and cache.enabled else None
    guarded = guard_memo(ahead.memo, config.parse_timeout)
    live = cache if cache is not None and cache.enabled else None
    for name in registry.names:
        reused = inc.reuse(name, chosen[name]) if inc is not None else None
        if reused is not None:
            result, given = reused, {c.path for c in chosen[name]}
            looked |= inc.looked(name) if inc is not None else Looked()
        else:
            ex = registry.get(name)
            files: list[SourceFile] = []
            for cand in chosen[name]:
                data_or_none = kept.get(cand.path)
                if data_or_none is None:
                    try:
                        data_or_none = _load(cand, config.max_file_size)
                    except OSError as exc:
                        skip(cand, f"{UNREADABLE}: {exc.strerror or exc}", name)
                        continue
                files.append(SourceFile(cand.path, data_or_none))
            kept_by = _Kept(live, name, repo) if live is not None else None
            base = RepoContext(
                root=root,
                repo=repo,
                config=config,
                paths=paths,
                read=read,
                memo=guarded,
                prefetch=ahead.prefetch,
                search=searcher,
                ending=found.ending,
                last=kept_by.last if kept_by is not None else no_last,
                keep=kept_by.keep if kept_by is not None and not readonly else no_keep,
                sha1=digest,
            )
            stats = inc.stat if inc is not None else None
            with live.digests_held() if live is not None else contextlib.nullcontext():  # not past its run
                result, isolated, reads, seen_priors, seen_files = _run_recorded(ex, files, base, prior, by_path, stats)
            given = {f.path for f in files}
            looked |= seen_files
            if inc is not None:
                inc.ran(name, chosen[name], reads, seen_priors, result, isolated, seen_files)
        prior[name] = result
        read_by_extractors.update(given)
        read_by_extractors.update(rec.path for rec in result.files)
        for rec in result.files if file_records else ():
            records[rec.path] = updated_record(
                rec,
                {
                    "repo": repo,
                    "extractor": rec.extractor or name,
                    "size": by_path[rec.path].size if rec.path in by_path else rec.size,
                },
            )
        for path in given - {r.path for r in result.files} if file_records else ():
            records[path] = FileRecord(
                path=path, status=FileStatus.PARSED, extractor=name, repo=repo, size=by_path[path].size
            )
        consumers.extend(result.consumers)
        deployments.extend(result.deployments)
        findings.extend(result.findings)
        facts.add(name, result.facts)
    if inc is not None and not readonly:
        inc.cache.retain(paths)
    depends = facts.get("manifests.depends")
    consumers_out, deployments_out = attribute(
        consumers, deployments, paths, repo, config, depends if isinstance(depends, dict) else None
    )
    marked = (  # which files may hold an inline waiver, from the verdicts the cache keeps (`_Search`)
        frozenset(
            searcher(
                WAIVER_PATTERN, sorted(p for p in read_by_extractors if records[p].status is not FileStatus.SKIPPED)
            )
        )
        if searcher is not None and file_records
        else None
    )
    # the served prefilter's memo: releasing its 20,000 records costs a served run ~10 ms, after the answer
    afterwards.later(functools.partial(_release, passed))
    # lone surrogates from escapes in scanned text would crash every UTF-8 writer downstream
    return ScanResult(
        root=root,
        repo=repo,
        files=_scrub_files(tuple(map(records.__getitem__, sorted(records))), passed.clean() if passed else None)
        if file_records
        else (),
        consumers=scrub(tuple(consumers_out)),
        deployments=scrub(tuple(deployments_out)),
        findings=scrub(tuple(findings)),
        facts=facts if file_records else {},
        digest=inc.digest(registry.names, repo, unread) if inc is not None and file_records else "",
        looked=looked,
        marked=marked,
        prints=parse_prints(live, records, looked, marked) if live is not None and file_records else {},
    )


def parse_prints(
    cache: ContentCache, records: Mapping[str, FileRecord], looked: Looked, marked: frozenset[str] | None
) -> dict[str, tuple[str, str]]:
    """Path -> (sha1 of its bytes, sha1 of its parse) of each file an extractor was given and parsed in
    full this run (`PARSED_IN_FULL`) that no extractor read besides and that holds no inline waiver:
    an edit that leaves such a file's parse as it was leaves the run's output as it was
    (`subguard.scan.unread.same_parses`). Empty when the scan did not search for waivers."""
    if marked is None:
        return {}
    out: dict[str, tuple[str, str]] = {}
    for name, (kind, _) in PARSED_IN_FULL.items():
        for path, pair in cache.prints(kind).items():
            rec = records.get(path)
            if (
                rec is not None
                and rec.status is FileStatus.PARSED
                and rec.extractor == name
                and not rec.reason
                and path not in looked.read
                and path not in marked
            ):
                out[path] = pair
    return out


def _release(*_objects: object) -> None:
    """Nothing: what it is given is released when the work queued with it is done (`afterwards`)."""


class _Kept:
    """`RepoContext.last` and `keep` of one extractor and repo over a cache's kept section. Each value
    is kept pickled on its own and unpickled when the extractor asks for it: loading the cache's
    state neither unpickles nor imports what another extractor kept (a Python edit never loads the
    Java linker's steps). Within a run a value is unpickled once, so an extractor that keeps again
    what `last` gave it (the same object) changes nothing; a value that pickles as the kept one does
    is not written again."""

    def __init__(self, cache: ContentCache, extractor: str, repo: str) -> None:
        self.cache = cache
        self.prefix = f"{extractor}\0{repo}\0"
        self.given: dict[str, Any] = {}  # key -> the object `last` gave or `keep` was given, this run

    def last(self, key: str) -> Any:
        if key in self.given:
            return self.given[key]
        blob = self.cache.section(_KEPT).get(self.prefix + key)
        value = None
        if isinstance(blob, bytes):  # else nothing, or a value of a release that kept objects
            try:
                value = self.cache.unpickle(blob)
            except Exception:  # noqa: BLE001 - signed by us but unreadable: as if nothing was kept
                value = None
        self.given[key] = value
        return value

    def keep(self, key: str, value: Any) -> None:
        kept = self.cache.section(_KEPT).get(self.prefix + key)
        self.given[key] = value
        blob = None
        if value is not None:
            try:
                blob = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001 - unpicklable: not kept (the next run does the work)
                self.given[key] = None
        if blob != kept and (blob is not None or kept is not None):
            self.cache.put(_KEPT, self.prefix + key, blob)


def _scrub_files(
    files: tuple[FileRecord, ...], clean: Mapping[str, FileRecord] | None = None
) -> tuple[FileRecord, ...]:
    """`scrub(files)`, found to have nothing to do when their text fields encode as UTF-8
    (`records.plain_text`). `clean`: records by path known to hold no lone surrogate (the server's
    pass, checked when it was made); those of `files` are not looked at again."""
    if not PLAIN_RECORDS:
        return scrub(files)
    rest = files if not clean else [r for r in files if clean.get(r.path) is not r]
    return files if plain_text(rest) else scrub(files)


class _Passed:
    """The prefilter's memo in a served run (`subguard.scan.passedover`): the records the server
    holds by candidate, those used (`hits`), those passed over anew (candidate, reason, extractor)
    and the scan's records, where a held record goes."""

    def __init__(
        self,
        held: Mapping[Candidate, FileRecord],
        records: dict[str, FileRecord],
        made: passedover.Pass | None = None,
    ) -> None:
        self.held = held
        self.records = records
        self.made = made  # the server's pass over the scan's very candidates, made ahead
        self.hits: list[Candidate] = []
        self.new: list[tuple[Candidate, str, str]] = []

    def clean(self) -> Mapping[str, FileRecord] | None:
        """The records of the pass made ahead, when the server found their text clean (`scrub`)."""
        return self.made.records if self.made is not None and self.made.plain else None

    @classmethod
    def of(
        cls, memo: passedover.Memo | None, records: dict[str, FileRecord], candidates: Sequence[Candidate]
    ) -> _Passed:
        return cls({}, records) if memo is None else cls(memo.records, records, memo.pass_over(candidates))


def _prefilter(
    candidates: Sequence[Candidate],
    registry: _Registry,
    inc: _Incremental | None,
    cache: ContentCache | None,
    max_size: int,
    skip: Callable[[Candidate, str, str], None],
    passed: _Passed | None = None,
) -> tuple[dict[str, list[Candidate]], dict[str, bytes]]:
    """Each candidate's extractor (the claims kept by path, else asked) and prefilter verdict (kept
    by size and mtime, else the file is read and searched for the extractor's needles): the files
    each extractor is given, and the contents read on the way. With `passed`, a candidate whose
    record a server holds is passed over with it (`skip` notes what is passed over anew)."""
    chosen: dict[str, list[Candidate]] = {name: [] for name in registry.names}
    kept: dict[str, bytes] = {}
    kept_bytes = 0
    claims = inc.claims if inc is not None else {}
    needle_hit = cache.needle_hit if cache is not None else None
    held = passed.held.get if passed is not None and passed.held else None
    hits: list[Candidate] = passed.hits if passed is not None else []
    records = passed.records if passed is not None else {}
    if passed is not None and passed.made is not None:  # the held ones taken as the server found them
        records.update(passed.made.records)
        hits.extend(passed.made.hits)
        candidates, held = passed.made.others, None
    for cand in candidates:
        if held is not None:
            rec = held(cand)
            if rec is not None:
                records[cand.path] = rec
                hits.append(cand)
                continue
        name = claims.get(cand.path)
        if name is None:
            name = registry.claim(cand.path)
            if inc is not None:
                inc.claimed(cand.path, name)
        if not name:
            skip(cand, NO_EXTRACTOR, "")
            continue
        verdict = needle_hit(cand.path, cand.size, cand.mtime_ns) if needle_hit is not None else None
        if verdict is False:  # recorded False only for an extractor with needles
            skip(cand, NO_REFERENCE, name)
            continue
        if verdict is True and inc is not None:  # unchanged and relevant: read only if its extractor runs
            chosen[name].append(cand)
            continue
        try:
            data = _load(cand, max_size)
        except OSError as exc:
            skip(cand, f"{UNREADABLE}: {exc.strerror or exc}", name)
            continue
        if kept_bytes + len(data) <= KEEP_BYTES:  # extractors' lazy `read` of skipped files: no second read
            kept[cand.path] = data
            kept_bytes += len(data)
        needles = registry.get(name).needles
        hit_needle = not needles or any(n in data for n in needles)
        if cache is not None:
            cache.record_needle(cand.path, cand.size, cand.mtime_ns, hit_needle)
        if not hit_needle:
            skip(cand, NO_REFERENCE, name)
            continue
        chosen[name].append(cand)

    return chosen, kept


def _run_recorded(
    ex: Extractor,
    files: Sequence[SourceFile],
    base: RepoContext,
    prior: Mapping[str, ExtractResult],
    by_path: Mapping[str, Candidate],
    stats: Mapping[str, tuple[int, int]] | None = None,
) -> tuple[ExtractResult, bool, dict[str, tuple[int, int] | None], set[str], Looked]:
    """`_extract_isolated`, noting what the extractor read besides its files: other files (with their
    size and mtime, read or searched), earlier extractors' results, and what it read and searched for.
    `stats`: each candidate's (size, mtime) by path, when the caller has them at hand."""
    reads: dict[str, tuple[int, int] | None] = {}
    seen: set[str] = set()
    read: set[str] = set()
    patterns: set[bytes] = set()

    def context(failed: frozenset[str]) -> RepoContext:
        def read_ok(wanted: str) -> bytes | None:
            cand = by_path.get(wanted)
            reads[wanted] = (cand.size, cand.mtime_ns) if cand is not None else None
            read.add(wanted)
            return None if wanted in failed else base.read(wanted)

        def search_ok(pattern: bytes, paths: Sequence[str]) -> list[str]:
            patterns.add(pattern)
            if stats is None:
                for wanted in paths:
                    cand = by_path.get(wanted)
                    reads[wanted] = (cand.size, cand.mtime_ns) if cand is not None else None
            else:  # the same, in one C pass (a search names most of a repo's paths)
                reads.update(zip(paths, map(stats.get, paths)))
            shown = [p for p in paths if p not in failed]
            return (
                base.search(pattern, shown)
                if base.search is not None
                else [p for p in shown if _finds(pattern, read_ok(p))]
            )

        return dataclasses.replace(base, read=read_ok, prior=_Seen(prior, seen), search=search_ok)

    result, isolated = _extract_isolated(ex, files, context)
    return result, isolated, reads, seen, Looked(frozenset(read), frozenset(patterns))


class _Registry:
    """The extractors of a scan by name, in order; without an explicit list, each registered one is
    imported only when it has to run, claim a new path or prefilter a changed file."""

    def __init__(self, extractors: Sequence[Extractor] | None) -> None:
        self._loaded: dict[str, Extractor] = {ex.name: ex for ex in extractors} if extractors is not None else {}
        self.names: tuple[str, ...] = tuple(ex.name for ex in extractors) if extractors is not None else tuple(REGISTRY)

    def get(self, name: str) -> Extractor:
        if name not in self._loaded:
            self._loaded[name] = load_extractors([name])[0]
        return self._loaded[name]

    def claim(self, path: str) -> str:
        """The name of the first extractor that claims `path` ("" for none), importing only as far as it."""
        return next((name for name in self.names if self.get(name).claims(path)), "")


class _Seen(Mapping[str, ExtractResult]):
    """`RepoContext.prior` that notes which earlier extractors' results were looked at."""

    def __init__(self, prior: Mapping[str, ExtractResult], seen: set[str]) -> None:
        self._prior = dict(prior)
        self._seen = seen

    def __getitem__(self, key: str) -> ExtractResult:
        self._seen.add(key)
        return self._prior[key]

    def __iter__(self) -> Iterator[str]:
        self._seen.update(self._prior)
        return iter(self._prior)

    def __len__(self) -> int:
        return len(self._prior)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self._seen.add(key)
        return key in self._prior


def _finds(pattern: bytes, data: bytes | None) -> bool:
    return data is not None and re.search(pattern, data) is not None


class _Search:
    """`RepoContext.search` over one cache: whether a file's content matches a pattern is kept by
    path, size and mtime (the two latest patterns of each path), so an unchanged file is not read.
    An entry is one flat tuple, `(size, mtime_ns, key, hit, key, hit)` (`_verdicts` reads it): the
    cache's state holds one for most files of a repository, and it loads in every edited run."""

    KEEP = 2

    def __init__(self, cache: ContentCache, by_path: Mapping[str, Candidate], read: Callable[[str], bytes | None]):
        self.cache = cache
        self.by_path = by_path
        self.read = read

    def search(self, pattern: bytes, paths: Sequence[str]) -> list[str]:
        key = hashlib.sha1(pattern).hexdigest()[:16]
        made = self.cache.ahead(_SEARCH)  # the verdicts a server found valid for these very candidates
        found = made[1].get(key) if isinstance(made, tuple) and made[0] is self.by_path else None
        if found is None:
            return self._each(key, pattern, paths)
        hits, valid = found
        todo = [p for p in paths if p not in valid]
        more = set(self._each(key, pattern, todo)) if todo else set()
        return [p for p in paths if p in hits or p in more]

    def _each(self, key: str, pattern: bytes, paths: Sequence[str]) -> list[str]:
        """The search, file by file: each verdict kept by path, size and mtime."""
        kept = self.cache.section(_SEARCH)
        out: list[str] = []
        candidate, known = self.by_path.get, kept.get  # bound once: called for every Python file of a repo
        for path in paths:
            cand = candidate(path)
            on_disk = cand is not None and cand.data is None and cand.mtime_ns
            entry = known(path) if on_disk else None
            verdicts: tuple[str | bool, ...] = ()
            if cand is not None and _searched(entry, cand.size, cand.mtime_ns):
                verdicts = entry[2:]
                hit = None
                for i in range(0, len(verdicts), 2):  # at most KEEP of them: a loop, not a generator per file
                    if verdicts[i] == key:
                        hit = verdicts[i + 1]
                        break
                if hit is not None:
                    if hit:
                        out.append(path)
                    continue
            found = _finds(pattern, self.read(path))
            if found:
                out.append(path)
            if on_disk and cand is not None:
                older = [v for pair in _verdicts(verdicts) if pair[0] != key for v in pair]
                kept_verdicts = (key, found, *older)[: 2 * self.KEEP]
                self.cache.put(_SEARCH, path, (cand.size, cand.mtime_ns, *kept_verdicts))
        return out


def _searched(entry: object, size: int, mtime_ns: int) -> TypeGuard[tuple[Any, ...]]:
    """Whether a search entry (`_Search`) holds verdicts for the file at this size and mtime."""
    return isinstance(entry, tuple) and len(entry) >= 2 and entry[0] == size and entry[1] == mtime_ns


def _verdicts(flat: tuple[Any, ...]) -> Iterator[tuple[str, bool]]:
    """The (pattern key, hit) pairs of a search entry's verdicts (`_Search`: the entry past its stat)."""
    for i in range(0, len(flat) - 1, 2):
        yield flat[i], flat[i + 1]


_CLAIMS, _STATES, _ROOTS, _SEARCH, _SEEN = "claims", "extract", "roots", "search", "seen"
_KEPT = "kept"  # what extractors keep for their next run (`RepoContext.keep`), by extractor, repo and key


def _search_ahead() -> None:
    """In the server (`watch.AFTER`): for each content cache it keeps whose scan root it watches, the
    search verdicts still valid for the candidates it made of that root (same size and mtime), by
    pattern: (the files that match, the files with a verdict). A run it forks then looks at the
    other files only (`_Search.search`)."""
    made = made_indexes()
    for cache_file, top in passedover.roots():
        index, state = made.get(top), kept_held(SCAN_STATE, cache_file)
        if index is None or not isinstance(state, LoadedState):
            continue
        old = state.ahead.get(_SEARCH)
        if isinstance(old, tuple) and old[0] is index.by_path:
            continue
        stats = index.stats
        by_key: dict[str, tuple[set[str], set[str]]] = {}
        for path, entry in state.incremental.get(_SEARCH, {}).items():
            stat = stats.get(path)
            if stat is None or not stat[1] or not _searched(entry, *stat):
                continue
            for key, hit in _verdicts(entry[2:]):
                hits, valid = by_key.setdefault(key, (set(), set()))
                valid.add(path)
                if hit:
                    hits.add(path)
        state.ahead[_SEARCH] = (index.by_path, {k: (frozenset(h), frozenset(v)) for k, (h, v) in by_key.items()})


watch.AFTER.append(_search_ahead)


@dataclass(frozen=True)
class _State:
    """What one extractor read in the run that produced `blob` (its pickled result): the files it was
    given and the files it read, with their size and mtime (`pathlists.Stamped`), the digest of the
    scan's path set, and the earlier extractors whose results it looked at. The result's facts are
    pickled one by one (`Facts`): reusing a result does not import the extractor that defines them."""

    chosen: Stamped  # its list is not kept: a run compares the files it gives the extractor
    reads: Stamped
    paths: str
    priors: frozenset[str]
    blob: bytes
    facts: tuple[tuple[str, bytes], ...] = ()
    looked: Looked = Looked()
    # names the result's content and facts (not its pickle: equal results pickle apart when they share
    # strings differently); kept while a run gives an equal result and facts (`_Incremental.digest`)
    digest: str = ""


# a resident server unpickles each extractor's last result ahead (`cache.PICKLES`)
PICKLES[_STATES] = lambda state: (state.blob,) if isinstance(state, _State) else ()
PICKLES[_KEPT] = lambda blob: (blob,) if isinstance(blob, bytes) else ()  # `_Kept`


class Facts(Mapping[str, object]):
    """Extractors' facts, each unpickled when first read: a reused result's facts are classes of its
    extractor, which a run that reads no fact of it never imports. Pickles as the pickled values."""

    def __init__(self, blobs: Mapping[str, bytes] | None = None) -> None:
        self._blobs: dict[str, bytes] = dict(blobs or {})
        self._values: dict[str, object] = {}

    @staticmethod
    def pickled(facts: Mapping[str, object]) -> dict[str, bytes]:
        if isinstance(facts, Facts):
            return {k: facts._blob(k) for k in facts}
        return {k: pickle.dumps(v, protocol=pickle.HIGHEST_PROTOCOL) for k, v in facts.items()}

    def _blob(self, key: str) -> bytes:
        if key not in self._blobs:
            self._blobs[key] = pickle.dumps(self._values[key], protocol=pickle.HIGHEST_PROTOCOL)
        return self._blobs[key]

    def add(self, prefix: str, facts: Mapping[str, object]) -> None:
        """Take one extractor's facts as `prefix.key` (unread ones stay pickled)."""
        for key in facts:
            if isinstance(facts, Facts) and key not in facts._values:
                self._blobs[f"{prefix}.{key}"] = facts._blobs[key]
                self._values.pop(f"{prefix}.{key}", None)
            else:
                self._values[f"{prefix}.{key}"] = facts[key]
                self._blobs.pop(f"{prefix}.{key}", None)

    def __getitem__(self, key: str) -> object:
        if key not in self._values:
            self._values[key] = pickle.loads(self._blobs[key])
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._blobs, *self._values]))

    def __len__(self) -> int:
        return len(self._blobs.keys() | self._values.keys())

    def __contains__(self, key: object) -> bool:
        return key in self._values or key in self._blobs

    def __reduce__(self) -> tuple[type[Facts], tuple[dict[str, bytes]]]:
        return Facts, (Facts.pickled(self),)

    def __repr__(self) -> str:
        return f"Facts({sorted(self)!r})"


class _Incremental:
    """Per-extractor reuse between runs over one cache. An extractor runs again when a file it was
    given or read changed (size or mtime), when it is given other files, when a path was added or
    removed, or when an earlier extractor whose result it looked at now gives another result;
    otherwise its last result is the result (the extractor is a pure function of those inputs). The
    claims (which extractor takes a path) are kept by path, so an unchanged path needs no extractor."""

    def __init__(self, cache: ContentCache, names: Sequence[str], candidates: Index, readonly: bool = False) -> None:
        self.cache = cache
        self.readonly = readonly  # reuse the cache's results, never store this scan's (`_scan_files`)
        key = "\0".join(names)
        self.shared = cache.section("names").get("names") == key  # the claims and states are of these extractors
        if not self.shared and not readonly:
            cache.drop_section(_CLAIMS)
            cache.drop_section(_STATES)
            cache.put("names", "names", key)
            self.shared = True
        self.claims: dict[str, str] = cache.section(_CLAIMS) if self.shared else {}
        self.states: dict[str, _State] = cache.section(_STATES) if self.shared else {}
        self.stat = candidates.stats
        self.paths = candidates.names
        self.changed: set[str] = set()  # extractors whose result differs from the stored one
        self.digests: dict[str, str] = {}  # each extractor's result digest (`_State.digest`), reused or stored

    def module_roots(self, paths: frozenset[str]) -> None:
        """The module roots of the path set (`deploy.service`), kept while no path is added or removed."""
        kept = self.cache.section(_ROOTS).get("roots")
        if isinstance(kept, tuple) and len(kept) == 2 and kept[0] == self.paths and isinstance(kept[1], ModuleRoots):
            know_roots(paths, kept[1])
        elif not self.readonly:
            self.cache.put(_ROOTS, "roots", (self.paths, module_roots(paths)))

    def claimed(self, path: str, name: str) -> None:
        if self.shared:  # a claim depends on the path alone: true at every revision
            self.cache.put(_CLAIMS, path, name)
        else:
            self.claims[path] = name

    def reuse(self, name: str, chosen: Sequence[Candidate]) -> ExtractResult | None:
        state = self.states.get(name)
        if not isinstance(state, _State) or state.paths != self.paths or state.priors & self.changed:
            return None
        if state.chosen != _stamped(chosen) or not pathlists.holds(self.cache, state.reads, self.stat.get):
            return None
        try:
            result = self.cache.unpickle(state.blob)
        except Exception:  # noqa: BLE001 - signed by us but unreadable: run it
            return None
        if not isinstance(result, ExtractResult):
            return None
        self.digests[name] = state.digest or _digest(state.blob, state.facts)
        return dataclasses.replace(result, facts=Facts(dict(state.facts)))

    def looked(self, name: str) -> Looked:
        """What the extractor `name` read and searched for in the run whose result `reuse` gave."""
        state = self.states.get(name)
        return state.looked if isinstance(state, _State) else Looked()

    def digest(self, names: Sequence[str], repo: str, unread: Sequence[str]) -> str:
        """A digest of what the scan's result holds besides file records and facts: the cache's
        namespace (version, code, scan config, root), the path set, the repo name, the unreadable
        files and each extractor's result digest (its consumers, deployments, findings and failed
        files: `_State.digest`); "" when an extractor's result has none (a failure run in isolation,
        an unpicklable result)."""
        if any(name not in self.digests for name in names):
            return ""
        h = hashlib.blake2b(self.cache.file.name.encode(), digest_size=20)
        h.update(f"\0{self.paths}\0{repo}\0{sorted(unread)}".encode("utf-8", "surrogateescape"))
        for name in names:
            h.update(f"\0{name}\0{self.digests[name]}".encode())
        return h.hexdigest()

    def _same(self, old: _State, result: ExtractResult, blob: bytes) -> bool:
        """Whether the stored result equals `result` (facts aside): same pickle, or equal once
        unpickled (`ran` compares with the one a resident server unpickled ahead itself)."""
        if old.blob == blob:
            return True
        try:
            return bool(self.cache.unpickle(old.blob) == dataclasses.replace(result, facts={}))
        except Exception:  # noqa: BLE001 - unreadable: not the same
            return False

    def ran(
        self,
        name: str,
        chosen: Sequence[Candidate],
        reads: Mapping[str, tuple[int, int] | None],
        priors: set[str],
        result: ExtractResult,
        isolated: bool,
        looked: Looked,
    ) -> None:
        old = self.states.get(name)
        stripped = dataclasses.replace(result, facts={})
        # the last result as a resident server unpickled it ahead: an equal result keeps its pickle
        held = self.cache.held(old.blob) if isinstance(old, _State) else None
        equal = held is not None and bool(held == stripped)
        try:
            blob = (
                old.blob
                if equal and isinstance(old, _State)
                else pickle.dumps(stripped, protocol=pickle.HIGHEST_PROTOCOL)
            )
            facts = tuple(sorted(Facts.pickled(result.facts).items()))
        except Exception:  # noqa: BLE001 - unpicklable facts: nothing to reuse
            blob, facts = b"", ()
        same = isinstance(old, _State) and bool(blob) and (equal if held is not None else self._same(old, result, blob))
        # the facts count: the scan derives records from some (`attribute` reads `manifests.depends`)
        kept = same and isinstance(old, _State) and old.facts == facts
        if not kept:
            self.changed.add(name)
        digest = old.digest if kept and isinstance(old, _State) and old.digest else ""
        if blob and not isolated:
            self.digests[name] = digest = digest or _digest(blob, facts)
        if self.readonly:
            return
        if isolated or not blob or any(not c.mtime_ns for c in chosen):  # a failure may be a timeout: never reused
            if name in self.states:
                self.cache.put(_STATES, name, None)
                self._forget_reads(old)
            return
        before = old.reads if isinstance(old, _State) else None
        state = _State(
            _stamped(chosen),
            pathlists.stamp(self.cache, reads, before),
            self.paths,
            frozenset(priors),
            blob,
            facts,
            looked,
            digest,
        )
        if state != old:
            self.cache.put(_STATES, name, state)
            self._forget_reads(old)

    def _forget_reads(self, old: object) -> None:
        """Drop the list of files `old` read when no extractor's state names it any more."""
        if isinstance(old, _State):
            states = self.states.values()
            pathlists.forget(self.cache, old.reads.key, [s.reads for s in states if isinstance(s, _State)])


def _digest(blob: bytes, facts: Sequence[tuple[str, bytes]]) -> str:
    """An extractor result's digest (`_State.digest`): its pickle and its facts' pickles."""
    h = hashlib.blake2b(blob, digest_size=20)
    for key, value in facts:
        h.update(f"\0{key}\0".encode())
        h.update(value)
    return h.hexdigest()


def _stamped(chosen: Sequence[Candidate]) -> Stamped:
    """The files an extractor is given, with their size and mtime."""
    return Stamped(
        pathlists.key_of([c.path for c in chosen]), pathlists.stats_digest([(c.size, c.mtime_ns) for c in chosen])
    )


def _extract_isolated(
    ex: Extractor,
    files: Sequence[SourceFile],
    context: Callable[[frozenset[str]], RepoContext],
) -> tuple[ExtractResult, bool]:
    """Run one extractor so that one file's failure never costs the others their results.

    A per-file parse that raises or runs over its time budget (`limits.FileFailure`) fails that file
    alone, and the extractor runs again without it (`context(failed)` hides it from `read`). Any other
    exception is pinned on the files that raise it when extracted alone; if none does, all fail.
    """
    failed: dict[str, str] = {}
    todo = list(files)
    while True:
        try:
            result = ex.extract(todo, context(frozenset(failed)))
            break
        except FileFailure as exc:
            if exc.path in failed:  # cannot happen unless the extractor re-reads a hidden file: stop
                result = _all_failed(ex, todo, exc.reason)
                break
            failed[exc.path] = exc.reason
        except Exception as exc:  # noqa: BLE001 - an extractor bug must not lose the other files
            reason = f"internal error in the {ex.name} extractor: {describe(exc)}"
            culprits: dict[str, str] = {}
            for f in todo if len(todo) > 1 else ():
                try:
                    ex.extract([f], context(frozenset(failed)))
                except FileFailure as alone:
                    culprits[alone.path] = alone.reason
                except Exception as alone:  # noqa: BLE001
                    culprits[f.path] = f"internal error in the {ex.name} extractor: {describe(alone)}"
            if not culprits:
                result = _all_failed(ex, todo, reason)
                break
            failed.update(culprits)
        todo = [f for f in todo if f.path not in failed]
    if not failed:
        return result, False
    kept = tuple(r for r in result.files if r.path not in failed)
    lost = tuple(
        FileRecord(path=p, status=FileStatus.FAILED, reason=why, extractor=ex.name) for p, why in failed.items()
    )
    return dataclasses.replace(result, files=kept + lost), True


def _all_failed(ex: Extractor, files: Sequence[SourceFile], reason: str) -> ExtractResult:
    return ExtractResult(
        files=tuple(FileRecord(path=f.path, status=FileStatus.FAILED, reason=reason, extractor=ex.name) for f in files)
    )


_AFTER_SCAN = {
    "select",
    "ignore",
    "fail_on",
    "baseline",
    "waivers",
    "no_inline_waivers",
    "simulate",
    "cache_dir",
    "show_notes",
    "test_paths",
    "example_paths",
    "example_repos",
    "test_code",
    "test_notes",
    "samples_apart",
}


def cache_directory(root: Path, config: Config) -> Path:
    """Where a root's content cache lives: `cache-dir` from config (relative to the root), else the
    `SUBGUARD_CACHE_DIR` environment variable, else `<root>/.subguard_cache`."""
    env_dir = os.environ.get("SUBGUARD_CACHE_DIR")
    directory = Path(config.cache_dir) if config.cache_dir else Path(env_dir) if env_dir else root / ".subguard_cache"
    return directory if directory.is_absolute() else root / directory


@functools.lru_cache(maxsize=1)
def _extractors_code() -> str:
    """`code_stamp` of the packages a scan runs, once per process (`check --base` opens three caches)."""
    pkg = Path(__file__).resolve().parent.parent
    return code_stamp(*(pkg / name for name in ("core", "rocketmq", "deploy", "scan", "extract")))


def open_cache(root: Path, config: Config, key: str = "") -> ContentCache:
    """The content cache of a scan root (`cache_directory`). A directory shared by several roots
    keeps one set of files per root (the root is part of the namespace)."""
    from subguard import __version__

    directory = cache_directory(root, config)
    # fields that only act after the scan (rule selection, waivers, thresholds) do not split the cache
    scan_config = config.model_dump_json(exclude=_AFTER_SCAN)
    # the extractors' code too: a development build at the same version must not reuse stale parses
    code = _extractors_code()
    # a chart is rendered when helm is there: a result read without it (or with another) is stale
    ns = namespace(__version__, scan_config, key, code, str(root), tools.helm_stamp())
    return ContentCache(directory, ns, lambda msg: print(msg, file=sys.stderr))


def _relative(directory: Path, root: Path) -> str:
    """`directory` as a "rel/path/" prefix when it lies inside `root`, else ""."""
    try:
        rel = directory.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return ""
    return "" if rel == "." else rel + "/"


_DISCOVERED: dict[str, Sequence[Candidate]] = {}  # the latest scan_repo's files, by root (`discovered`)
_KEEP_DISCOVERED = 8


def discovered(root: str) -> Sequence[Candidate] | None:
    """The files (with size and mtime) the latest `scan_repo` of this process found under `root`."""
    return _DISCOVERED.get(root)


@gc_paused()
def scan_repo(
    path: Path,
    config: Config,
    repo: str | None = None,
    extractors: Sequence[Extractor] | None = None,
    cache_key: str | None = None,
) -> ScanResult:
    """Discover and extract one scan root (a directory, or a single file).

    With `cache_key` (anything that must invalidate the cache besides version and config, such as a
    hash of the policy set), a directory root uses the content cache.
    """
    base = config_dir(config)

    def exclude(folder: Path) -> Callable[[str], str | None] | None:
        return globs.matcher(config.exclude, globs.root_prefix(str(folder), base))

    found = discover(path, max_size=config.max_file_size, exclude=exclude)
    name = repo if repo is not None else Path(found.root).name
    cache = open_cache(Path(found.root), config, cache_key) if cache_key is not None and path.is_dir() else None
    candidates, skipped = found.candidates, found.skipped
    if cache is not None:  # a `cache-dir` inside the root is not part of the scan (it changes every run)
        inside = _relative(cache.directory, Path(found.root))
        if inside:  # the same tuple when none is inside (the default folder is never listed)
            kept = tuple(c for c in candidates if not c.path.startswith(inside))
            candidates = kept if len(kept) != len(candidates) else candidates
            skipped = tuple(r for r in skipped if not r.path.startswith(inside))
    _DISCOVERED.pop(found.root, None)
    _DISCOVERED[found.root] = candidates
    while len(_DISCOVERED) > _KEEP_DISCOVERED:  # an audit scans many repositories in one process
        del _DISCOVERED[next(iter(_DISCOVERED))]
    prefix = globs.root_prefix(found.root, base)
    result = scan_files(found.root, name, candidates, skipped, config, extractors, cache, prefix)
    if cache is not None:
        afterwards.later(cache.save)  # for the next run: once this one has answered
    return result
