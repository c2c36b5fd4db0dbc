"""What `check` calls: plan the fixes of a run's findings, attach them to findings (SARIF `fixes`),
and apply or print them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from subguard.core.config import Config
from subguard.core.model import FIX, Finding, Location
from subguard.fix.apply import Outcome, compute, unified_diff, write
from subguard.fix.model import SAFE, Fix
from subguard.fix.plan import plan
from subguard.fix.source import Files
from subguard.scan.extraction import ScanResult


@dataclass
class Run:
    """One pass of `--fix` or `--diff`: the fixes chosen, what they do, and what is left."""

    planned: dict[str, Fix | str]
    outcome: Outcome
    unsafe_left: int = 0
    moved: list[str] = field(default_factory=list)
    fixed_before: int = 0  # fixed by earlier passes of the same `--fix`

    @property
    def fixed(self) -> int:
        return len(self.outcome.applied) if not self.moved else 0

    @property
    def files(self) -> int:
        return sum(1 for src, new in self.outcome.texts.values() if src.text != new) if not self.moved else 0

    def summary(self, verb: str) -> list[str]:
        lines = []
        if self.moved:
            lines.append(f"subguard: nothing fixed: {', '.join(self.moved)} changed since it was read; run again")
        elif self.fixed:
            lines.append(f"subguard: {verb} {self.fixed + self.fixed_before} finding(s) in {self.files} file(s)")
        elif self.fixed_before:
            lines.append(f"subguard: {verb} {self.fixed_before} finding(s)")
        for fix, why in self.outcome.skipped:
            lines.append(f"subguard: fix of {fix.rule} left out: {why}")
        if self.unsafe_left:
            lines.append(f"subguard: {self.unsafe_left} more fix(es) available with --unsafe-fixes")
        return lines


def chosen(planned: dict[str, Fix | str], unsafe: bool) -> list[Fix]:
    return [f for f in planned.values() if isinstance(f, Fix) and (unsafe or f.safety == SAFE)]


def fix(
    results: Sequence[ScanResult], findings: Sequence[Finding], config: Config, *, unsafe: bool, apply: bool
) -> Run:
    """Plan and compute the fixes (safe ones, and unsafe ones with `unsafe`); write them with `apply`."""
    files = Files()
    planned = plan(results, findings, config)
    outcome = compute(chosen(planned, unsafe), files)
    left = 0 if unsafe else sum(1 for f in planned.values() if isinstance(f, Fix) and f.safety != SAFE)
    run = Run(planned, outcome, left)
    if apply and outcome.changed:
        run.moved = write(outcome)
    return run


def diff(run: Run, workdir: Path) -> str:
    return unified_diff(run.outcome, workdir)


def _root_of(file: Path, results: Sequence[ScanResult]) -> ScanResult | None:
    best = None
    for r in results:
        root = Path(r.root).resolve()
        if file.resolve() == root or root in file.resolve().parents:
            if best is None or len(str(root)) > len(str(Path(best.root).resolve())):
                best = r
    return best


def annotate(results: Sequence[ScanResult], findings: Sequence[Finding], config: Config) -> list[Finding]:
    """The findings, each fixable one with its fix under the `fix` property (safe and unsafe alike):
    description, safety, reasons, and each replacement as a deleted region plus inserted text."""
    planned = plan(results, findings, config)
    files = Files()
    out = []
    for f in findings:
        got = planned.get(f.fingerprint) if f.suppressed is None else None
        if not isinstance(got, Fix):
            out.append(f)
            continue
        replacements: list[tuple[Location, str]] = []
        for e in got.edits:
            src = files.get(e.file)
            owner = _root_of(e.file, results)
            if src is None or owner is None:
                break
            (l1, c1), (l2, c2) = src.position(e.start), src.position(e.end)
            loc = Location(path=e.path, line=l1, column=c1, end_line=l2, end_column=c2, repo=owner.repo)
            replacements.append((loc, e.new))
        else:
            value = (
                ("description", got.description),
                ("safety", got.safety),
                ("reasons", got.reasons),
                ("replacements", tuple(replacements)),
            )
            out.append(f.model_copy(update={"properties": (*f.properties, (FIX, value))}))
            continue
        out.append(f)
    return out
