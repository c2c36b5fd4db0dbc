"""One repo in, records out: discover -> prefilter -> extract -> service/environment attribution.

`scan_repo` is the single entry point used by the CLI commands and, inside Spark tasks, by the audit,
so one repo gives the same records everywhere.
"""

from __future__ import annotations

import hashlib
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from subguard.cache import ContentCache, namespace
from subguard.config import Config
from subguard.discover import Candidate, discover, read_limited
from subguard.extract import load_extractors
from subguard.extract.base import Extractor, ExtractResult, RepoContext, SourceFile, no_memo
from subguard.model import Consumer, Deployment, FileRecord, FileStatus, Finding
from subguard.service import attribute


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
NO_REFERENCE = "no RocketMQ reference (prefilter)"


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
) -> ScanResult:
    """Run the extractors over already-discovered files of one repo (reusing `cache` when given)."""
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
    h = hashlib.sha256(repo.encode())
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
    for cand in candidates:
        ex = _claim(extractors, cand.path)
        if ex is None:
            records[cand.path] = FileRecord(path=cand.path, status=FileStatus.SKIPPED, reason=NO_EXTRACTOR, repo=repo, size=cand.size)
            continue
        if cache is not None and cache.needle_hit(cand.path, cand.size, cand.mtime_ns) is False and ex.needles:
            records[cand.path] = FileRecord(
                path=cand.path, status=FileStatus.SKIPPED, reason=NO_REFERENCE, extractor=ex.name, repo=repo, size=cand.size
            )
            continue
        try:
            data = _load(cand, config.max_file_size)
        except OSError as exc:
            records[cand.path] = FileRecord(
                path=cand.path, status=FileStatus.SKIPPED, reason=f"cannot read: {exc.strerror or exc}",
                extractor=ex.name, repo=repo, size=cand.size,
            )
            continue
        hit = not ex.needles or any(n in data for n in ex.needles)
        if cache is not None:
            cache.record_needle(cand.path, cand.size, cand.mtime_ns, hit)
        if not hit:
            records[cand.path] = FileRecord(
                path=cand.path, status=FileStatus.SKIPPED, reason=NO_REFERENCE, extractor=ex.name, repo=repo, size=cand.size
            )
            continue
        chosen[ex.name].append(SourceFile(cand.path, data))

    def read(path: str) -> bytes | None:
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
    for ex in extractors:
        files = chosen[ex.name]
        ctx = RepoContext(root=root, repo=repo, config=config, paths=paths, read=read, prior=dict(prior), memo=memo)
        try:
            result = ex.extract(files, ctx)
        except Exception as exc:  # noqa: BLE001 - an extractor bug must not lose the other files
            last = traceback.extract_tb(exc.__traceback__)[-1]
            reason = f"internal error in the {ex.name} extractor: {type(exc).__name__}: {exc} ({Path(last.filename).name}:{last.lineno})"
            result = ExtractResult(
                files=tuple(FileRecord(path=f.path, status=FileStatus.FAILED, reason=reason, extractor=ex.name) for f in files)
            )
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
    return ScanResult(
        root=root,
        repo=repo,
        files=tuple(sorted(records.values(), key=lambda r: r.path)),
        consumers=tuple(consumers_out),
        deployments=tuple(deployments_out),
        findings=tuple(findings),
        facts=facts,
    )


def open_cache(root: Path, config: Config, key: str = "") -> ContentCache:
    """The content cache of a scan root: `cache-dir` from config, else `<root>/.subguard_cache`."""
    from subguard import __version__

    directory = Path(config.cache_dir) if config.cache_dir else root / ".subguard_cache"
    if not directory.is_absolute():
        directory = root / directory
    ns = namespace(__version__, config.model_dump_json(), key)
    return ContentCache(directory, ns, lambda msg: print(msg, file=sys.stderr))


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
    found = discover(path, max_size=config.max_file_size)
    name = repo if repo is not None else Path(found.root).name
    cache = open_cache(Path(found.root), config, cache_key) if cache_key is not None and path.is_dir() else None
    result = scan_files(found.root, name, found.candidates, found.skipped, config, extractors, cache)
    if cache is not None:
        cache.save()
    return result
