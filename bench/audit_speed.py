"""Audit speed: `subguard audit` on local[1] and local[2] versus `subguard check` in one process.

    python bench/audit_speed.py [--org DIR] [--scale 0.05] [--out DIR] [--rounds 1] [--jvm-archive]

Generates the synthetic org with `audit_org_gen.py` when DIR does not exist, then prints files/s for
each run (median of the rounds), the ratios, and whether every planted conflict was found by the
audit and by check. Each audit runs in its own process (a fresh Spark driver), timed from start to
the last output; check runs in one process (`jobs: 1`), without the simulator and the cache.

Every timed run is preceded by `grep -rl rocketmq` over the org: it brings the files into the page
cache for whichever run comes next (so no run profits from the one before it) and is the reference
printed alongside.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def found_planted(findings: list[dict[str, object]], planted: dict[str, list[str]]) -> tuple[int, int]:
    got = {(str(f["rule"]), str(f["group"])) for f in findings}
    wanted = {(rule, group) for group, rules in planted.items() for rule in rules}
    return len(wanted & got), len(wanted)


PHASE = re.compile(r"^\[audit\] (\w[\w ]*?)[:(].*\(\+([0-9.]+) s\)$")


def run_audit(org: Path, out: Path, master: str, jvm_archive: bool = False) -> tuple[float, dict[str, float]]:
    """Wall seconds, and the seconds since start at which each progress line appeared."""
    t0 = time.perf_counter()
    cmd = [
        sys.executable,
        "-m",
        "subguard.audit.job",
        str(org),
        "--out",
        str(out),
        "--master",
        master,
        "--format",
        "parquet",
        "--format",
        "json",
        "--format",
        "html",
        *(["--jvm-archive"] if jvm_archive else []),
    ]
    proc = subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    marks = {m.group(1): float(m.group(2)) for m in map(PHASE.match, proc.stderr.splitlines()) if m}
    return time.perf_counter() - t0, marks


def run_grep(org: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(["grep", "-rl", "rocketmq", str(org)], check=False, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def run_check(org: Path, out: Path) -> float:
    repos = sorted(str(p) for p in org.iterdir() if p.is_dir())
    config = out.parent / "check-one-process.yaml"
    config.write_text("jobs: 1\n")
    t0 = time.perf_counter()
    cmd = [
        sys.executable,
        "-m",
        "subguard",
        "check",
        *repos,
        "--format",
        "json",
        "--no-simulate",
        "--no-cache",
        "--fail-on",
        "none",
        "--config",
        str(config),
        "-o",
        str(out),
    ]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--org", type=Path, default=Path("/tmp/subguard-bench-org"))
    p.add_argument("--scale", type=float, default=0.05)
    p.add_argument("--out", type=Path, default=Path("/tmp/subguard-bench-out"))
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument(
        "--jvm-archive",
        action="store_true",
        help="audits run with --jvm-archive; one untimed audit first writes the archive",
    )
    a = p.parse_args(argv)
    if not a.org.exists():
        subprocess.run(
            [sys.executable, str(HERE / "audit_org_gen.py"), str(a.org), "--scale", str(a.scale)], check=True
        )
    planted = json.loads((a.org / "planted.json").read_text())
    files = sum(1 for f in a.org.rglob("*") if f.is_file())
    repos = sum(1 for d in a.org.iterdir() if d.is_dir())
    print(f"org: {a.org} ({repos} repos, {files} files, {len(planted)} planted conflicts)")
    a.out.mkdir(parents=True, exist_ok=True)
    times: dict[str, list[float]] = {
        "grep": [],
        "check": [],
        "local[1]": [],
        "local[2]": [],
        "local[1] extract": [],
        "local[2] extract": [],
    }
    if a.jvm_archive:
        run_audit(a.org, a.out / "warm-up", "local[2]", jvm_archive=True)
        print("audits use --jvm-archive (written by one untimed audit before the timed runs)")
    for _ in range(a.rounds):
        times["grep"].append(run_grep(a.org))
        times["check"].append(run_check(a.org, a.out / "check.json"))
        for master in ("local[1]", "local[2]"):
            times["grep"].append(run_grep(a.org))
            secs, marks = run_audit(a.org, a.out / master.replace("[", "").replace("]", ""), master, a.jvm_archive)
            times[master].append(secs)
            # the extraction job alone: from the task plan to the records counted
            times[f"{master} extract"].append(
                marks.get("extract", secs) - marks.get("local folders to list and scan in tasks", 0.0)
            )
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"grep -rl rocketmq (reference): {med['grep']:7.1f} s  {files / med['grep']:8.0f} files/s")
    hit, want = found_planted(json.loads((a.out / "check.json").read_text()), planted)
    print(f"check (1 process): {med['check']:7.1f} s  {files / med['check']:8.0f} files/s  planted found {hit}/{want}")
    for master in ("local[1]", "local[2]"):
        out = a.out / master.replace("[", "").replace("]", "")
        hit, want = found_planted(json.loads((out / "findings.json").read_text()), planted)
        summary = json.loads((out / "summary.json").read_text())
        print(
            f"audit {master}:    {med[master]:7.1f} s  {files / med[master]:8.0f} files/s  planted found {hit}/{want}  "
            f"(files table: {summary['files']['total']} rows; extraction job {med[master + ' extract']:.1f} s, "
            f"{files / med[master + ' extract']:.0f} files/s)"
        )
    per_core_1 = med["check"] / med["local[1]"]
    per_core_2 = med["check"] / (2 * med["local[2]"])
    print(
        f"ratios: per-core throughput vs check: local[1] {per_core_1:.2f}x, local[2] {per_core_2:.2f}x (target >= 0.5); "
        f"local[2]/local[1] speed-up {med['local[1]'] / med['local[2]']:.2f}x (target >= 1.6); "
        f"check vs grep {med['grep'] / med['check']:.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
