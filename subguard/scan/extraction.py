"""One repo in, records out: discover -> prefilter -> extract -> service/environment attribution.

`scan_repo` is the single entry point used by the CLI commands and, inside Spark tasks, by the audit,
so one repo gives the same records everywhere.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from subguard.core import tools
from subguard.core.cache import ContentCache, code_stamp, namespace
from subguard.core.config import Config
from subguard.core.limits import FileFailure, describe, guard_memo, scrub
from subguard.core.model import Consumer, Deployment, FileRecord, FileStatus, Finding
from subguard.deploy.service import attribute
from subguard.extract import load_extractors
from subguard.extract.base import Extractor, ExtractResult, RepoContext, SourceFile, no_memo
from subguard.scan import globs
from subguard.scan.discover import Candidate, discover, excluded_record, read_limited
from subguard.scan.parallel import Prefetcher, worker_count


@dataclass(frozen=True)
class ScanResult:
    root: str
    repo: str
    files: tuple[FileRecord, ...]
    consumers: tuple[Consumer, ...]
    deployments: tuple[Deployment, ...]
    findings: tuple[Finding, ...] = ()
    facts: dict[str, object] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in FileStatus}
        for rec in self.files:
            out[rec.status.value] += 1
        return out


NO_EXTRACTOR = "not a file type subguard reads"
KEEP_BYTES = 64 * 1024 * 1024  # contents kept in memory after the prefilter read, for extractors' lazy reads
NO_REFERENCE = "no RocketMQ reference (prefilter)"
UNREADABLE = "cannot read"
EXCLUDED_BY_CONFIG = "excluded by config"  # globs.REASON: counted in --stats, never named file by file


def config_dir(config: Config) -> str | None:
    """The folder `exclude` patterns are relative to: the config file's (None without one)."""
    return os.path.dirname(os.path.abspath(config.source)) if config.source else None


def exclude_files(
    candidates: Sequence[Candidate], skipped: Sequence[FileRecord], patterns: Sequence[str], prefix: str = "",
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


def _claim(extractors: Sequence[Extractor], path: str) -> Extractor | None:
    for ex in extractors:
        if ex.claims(path):
            return ex
    return None


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
    result = _scan_files(root, repo, candidates, skipped, config, extractors, cache)
    if cache is not None and manifest:
        cache.store_result(manifest, result)
    return result


def _manifest(repo: str, candidates: Sequence[Candidate], skipped: Sequence[FileRecord]) -> str:
    """Hash of every file's path, size and mtime; "" when a file has no mtime (in-memory content)."""
    h = hashlib.sha256(repo.encode("utf-8", "surrogateescape"))
    for c in candidates:
        if not c.mtime_ns or c.data is not None:
            return ""
        h.update(f"\0{c.path}\0{c.size}\0{c.mtime_ns}".encode("utf-8", "surrogateescape"))
    for r in skipped:
        h.update(f"\1{r.path}\0{r.reason}".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _scan_files(
    root: str,
    repo: str,
    candidates: Sequence[Candidate],
    skipped: Sequence[FileRecord],
    config: Config,
    extractors: Sequence[Extractor] | None,
    cache: ContentCache | None,
) -> ScanResult:
    extractors = list(extractors) if extractors is not None else load_extractors()
    records: dict[str, FileRecord] = {r.path: r.model_copy(update={"repo": repo}) for r in skipped}
    by_path = {c.path: c for c in candidates}
    chosen: dict[str, list[SourceFile]] = {ex.name: [] for ex in extractors}
    kept: dict[str, bytes] = {}
    kept_bytes = 0

    def skip(cand: Candidate, reason: str, extractor: str = "") -> None:
        records[cand.path] = FileRecord(
            path=cand.path, status=FileStatus.SKIPPED, reason=reason, extractor=extractor, repo=repo, size=cand.size
        )

    for cand in candidates:
        ex = _claim(extractors, cand.path)
        if ex is None:
            skip(cand, NO_EXTRACTOR)
            continue
        if cache is not None and cache.needle_hit(cand.path, cand.size, cand.mtime_ns) is False and ex.needles:
            skip(cand, NO_REFERENCE, ex.name)
            continue
        try:
            data = _load(cand, config.max_file_size)
        except OSError as exc:
            skip(cand, f"{UNREADABLE}: {exc.strerror or exc}", ex.name)
            continue
        if kept_bytes + len(data) <= KEEP_BYTES:  # extractors' lazy `read` of skipped files: no second read
            kept[cand.path] = data
            kept_bytes += len(data)
        hit = not ex.needles or any(n in data for n in ex.needles)
        if cache is not None:
            cache.record_needle(cand.path, cand.size, cand.mtime_ns, hit)
        if not hit:
            skip(cand, NO_REFERENCE, ex.name)
            continue
        chosen[ex.name].append(SourceFile(cand.path, data))

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
    consumers: list[Consumer] = []
    deployments: list[Deployment] = []
    findings: list[Finding] = []
    facts: dict[str, object] = {}
    paths = frozenset(by_path)
    memo = cache.memo if cache is not None and cache.enabled else no_memo
    known = (lambda k, p, d: cache.has_parse(k, p, d)) if cache is not None and cache.enabled else (lambda *_: False)
    ahead = Prefetcher(memo, worker_count(config.jobs), config.parse_timeout, known)
    guarded = guard_memo(ahead.memo, config.parse_timeout)
    for ex in extractors:
        files = chosen[ex.name]

        def context(failed: frozenset[str]) -> RepoContext:
            def read_ok(wanted: str) -> bytes | None:
                return None if wanted in failed else read(wanted)

            return RepoContext(
                root=root, repo=repo, config=config, paths=paths, read=read_ok, prior=dict(prior), memo=guarded,
                prefetch=ahead.prefetch,
            )

        result = _extract_isolated(ex, files, context)
        prior[ex.name] = result
        given = {f.path for f in files}
        for rec in result.files:
            records[rec.path] = rec.model_copy(update={"repo": repo, "extractor": rec.extractor or ex.name, "size": by_path[rec.path].size if rec.path in by_path else rec.size})
        for path in given - {r.path for r in result.files}:
            records[path] = FileRecord(path=path, status=FileStatus.PARSED, extractor=ex.name, repo=repo, size=by_path[path].size)
        consumers.extend(result.consumers)
        deployments.extend(result.deployments)
        findings.extend(result.findings)
        facts.update({f"{ex.name}.{k}": v for k, v in result.facts.items()})
    consumers_out, deployments_out = attribute(consumers, deployments, paths, repo, config)
    # lone surrogates from escapes in scanned text would crash every UTF-8 writer downstream
    return ScanResult(
        root=root,
        repo=repo,
        files=scrub(tuple(sorted(records.values(), key=lambda r: r.path))),
        consumers=scrub(tuple(consumers_out)),
        deployments=scrub(tuple(deployments_out)),
        findings=scrub(tuple(findings)),
        facts=facts,
    )


def _extract_isolated(ex: Extractor, files: Sequence[SourceFile], context: Callable[[frozenset[str]], RepoContext]) -> ExtractResult:
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
        return result
    kept = tuple(r for r in result.files if r.path not in failed)
    lost = tuple(FileRecord(path=p, status=FileStatus.FAILED, reason=why, extractor=ex.name) for p, why in failed.items())
    return dataclasses.replace(result, files=kept + lost)


def _all_failed(ex: Extractor, files: Sequence[SourceFile], reason: str) -> ExtractResult:
    return ExtractResult(files=tuple(FileRecord(path=f.path, status=FileStatus.FAILED, reason=reason, extractor=ex.name) for f in files))


_AFTER_SCAN = {
    "select", "ignore", "fail_on", "baseline", "waivers", "no_inline_waivers", "simulate", "cache_dir",
    "show_notes", "test_paths", "example_paths", "test_code", "test_notes",
}


def cache_directory(root: Path, config: Config) -> Path:
    """Where a root's content cache lives: `cache-dir` from config (relative to the root), else the
    `SUBGUARD_CACHE_DIR` environment variable, else `<root>/.subguard_cache`."""
    env_dir = os.environ.get("SUBGUARD_CACHE_DIR")
    directory = Path(config.cache_dir) if config.cache_dir else Path(env_dir) if env_dir else root / ".subguard_cache"
    return directory if directory.is_absolute() else root / directory


def open_cache(root: Path, config: Config, key: str = "") -> ContentCache:
    """The content cache of a scan root (`cache_directory`). A directory shared by several roots
    keeps one set of files per root (the root is part of the namespace)."""
    from subguard import __version__

    directory = cache_directory(root, config)
    # fields that only act after the scan (rule selection, waivers, thresholds) do not split the cache
    scan_config = config.model_dump_json(exclude=_AFTER_SCAN)
    # the extractors' code too: a development build at the same version must not reuse stale parses
    pkg = Path(__file__).resolve().parent.parent
    code = code_stamp(*(pkg / name for name in ("core", "rocketmq", "deploy", "scan", "extract")))
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
        if inside:
            candidates = tuple(c for c in candidates if not c.path.startswith(inside))
            skipped = tuple(r for r in skipped if not r.path.startswith(inside))
    prefix = globs.root_prefix(found.root, base)
    result = scan_files(found.root, name, candidates, skipped, config, extractors, cache, prefix)
    if cache is not None:
        cache.save()
    return result
