"""The whole evidence run as one function: files (+ declared inventory) -> findings and file stats."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

from subguard.core.model import Finding
from subguard.evidence.classify import classify_groups
from subguard.evidence.correlate import Declared, enrich, live_vs_declared
from subguard.evidence.ledger import Ledger
from subguard.evidence.reader import EvidenceFile, FileStats


@dataclass(frozen=True)
class EvidenceResult:
    findings: tuple[Finding, ...]
    files: tuple[FileStats, ...]
    events: int


def display(path: str, workdir: str) -> str:
    """POSIX path relative to `workdir` when inside it, else as given."""
    rel = os.path.relpath(os.path.abspath(path), workdir)
    return (path if rel.startswith("..") else rel).replace(os.sep, "/")


def analyze(
    paths: Sequence[str],
    declared: Sequence[Declared] = (),
    linked: Sequence[Finding] = (),
    default_group: str = "",
    workdir: str = "",
) -> EvidenceResult:
    """Stream every file into one ledger, classify per group, then compare with `declared` (if any)."""
    base = workdir or os.getcwd()
    ledger = Ledger()
    stats: list[FileStats] = []
    for path in paths:
        reader = EvidenceFile(path, display(path, base), default_group)
        for event in reader.events():
            ledger.add(event)
        stats.append(reader.stats)
    groups = ledger.resolve()
    findings = classify_groups(groups)
    if declared:
        findings = enrich(findings, groups, declared, linked) + live_vs_declared(groups, declared)
    return EvidenceResult(tuple(findings), tuple(stats), ledger.events)
