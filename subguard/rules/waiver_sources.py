"""Where a run's waivers come from: files on disk (`check`, the fixture harness) or a repository's
files in memory (the audit's tasks). Each gives `judge` a `WaiverSource`; the waivers themselves are
parsed and applied by `rules.suppress`, the same for both."""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from subguard.core.config import Config
from subguard.core.model import WAIVER_PATTERN, Finding, Location
from subguard.rules import suppress
from subguard.rules.judge import Waivers, WaiverSource
from subguard.scan.discover import read_limited
from subguard.scan.extraction import ScanResult

Reader = Callable[[str], "bytes | None"]  # a repo-relative path -> its content, None when absent


def on_disk(results: Sequence[ScanResult], config: Config, today: dt.date | None = None) -> WaiverSource:
    """Inline waivers of the scanned files (and of every file a finding names), and the config's
    waivers located in its file, read from disk once the findings are known."""

    def source(findings: Sequence[Finding]) -> Waivers:
        inline = suppress.collect_inline(_disk_sources(results, findings, config.max_file_size))
        return Waivers(inline, _disk_config_locations(config, results), today or dt.date.today())

    return source


def in_memory(result: ScanResult, read: Reader, config: Config, today: dt.date) -> WaiverSource:
    """The same for one repository whose files are read through `read` (the audit's tasks)."""
    waivers = Waivers(inline_of(result, read), config_locations(config, read, result.repo), today)
    return lambda findings: waivers


def inline_of(result: ScanResult, read: Reader) -> list[suppress.InlineWaiver]:
    """Inline waivers of the repo's parsed and failed files (what `check` reads for them)."""
    texts = ((rec.path, read(rec.path)) for rec in result.read_files())
    return suppress.collect_inline(
        (result.repo, path, data.decode("utf-8-sig", errors="replace"))
        for path, data in sorted((p, d) for p, d in texts if d is not None)
        if suppress.NEEDLE in data.lower()
    )


def config_locations(config: Config, read: Reader, repo: str) -> list[Location]:
    """Where each config waiver is written in the repo's config file (read through `read`)."""
    if not config.waivers:
        return []
    name = config.source or "<config>"
    text = (read(name) or b"").decode("utf-8", "replace")
    return suppress.locate_config_waivers(config.waivers, name, text, repo)


def _disk_sources(
    results: Sequence[ScanResult], findings: Sequence[Finding], max_size: int
) -> list[tuple[str, str, str]]:
    """(repo, path, text) of every file that may hold an inline waiver: parsed/failed files and finding files."""
    wanted: dict[tuple[str, str], ScanResult] = {}
    for res in results:
        for rec in res.read_files():
            wanted[(res.repo, rec.path)] = res
    scanned = frozenset(wanted)  # what a scan's `marked` answers for
    for f in findings:
        for loc in (f.location, *(r.location for r in f.related)):
            owner = next((r for r in results if r.repo == loc.repo), results[0] if results else None)
            if owner is not None:
                wanted.setdefault((owner.repo, loc.path), owner)
    out: list[tuple[str, str, str]] = []
    needle = _NEEDLE.search
    for (repo, path), res in sorted(wanted.items()):
        if res.marked is not None and path not in res.marked and (repo, path) in scanned:
            continue  # the scan searched it for the needle (a verdict kept by size and mtime): none
        try:
            data = read_limited(os.path.join(res.root, path), max_size)
        except OSError:
            continue
        if needle(data):
            out.append((repo, path, data.decode("utf-8-sig", errors="replace")))
    return out


_NEEDLE = re.compile(WAIVER_PATTERN)


def _disk_config_locations(config: Config, results: Sequence[ScanResult]) -> list[Location]:
    if not config.waivers:
        return []
    source = Path(config.source) if config.source else None
    text, shown, repo = "", source.name if source else "<config>", ""
    if source is not None:
        try:
            text = source.read_text(encoding="utf-8")
        except OSError:
            text = ""
        for res in results:
            try:
                shown, repo = source.resolve().relative_to(Path(res.root)).as_posix(), res.repo
                break
            except ValueError:
                continue
        else:
            shown = str(source)
    return suppress.locate_config_waivers(config.waivers, shown, text, repo)
