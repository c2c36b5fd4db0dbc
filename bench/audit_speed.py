"""Audit speed: `subguard audit` on local[1] and local[2] versus `subguard check` in one process.

    python bench/audit_speed.py [--org DIR] [--scale 0.05] [--out DIR]

Generates the synthetic org with `audit_org_gen.py` when DIR does not exist, then prints files/s for
each run, the ratios, and whether every planted conflict was found by the audit and by check.
Each audit runs in its own process (a fresh Spark driver), timed from start to the last output.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def found_planted(findings: list[dict[str, object]], planted: dict[str, list[str]]) -> tuple[int, int]:
    got = {(str(f["rule"]), str(f["group"])) for f in findings}
    wanted = {(rule, group) for group, rules in planted.items() for rule in rules}
    return len(wanted & got), len(wanted)


def run_audit(org: Path, out: Path, master: str) -> float:
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "subguard.audit.job", str(org), "--out", str(out), "--master", master,
           "--format", "parquet", "--format", "json", "--format", "html"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def run_check(org: Path, out: Path) -> float:
    repos = sorted(str(p) for p in org.iterdir() if p.is_dir())
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "subguard", "check", *repos, "--format", "json", "--no-simulate", "--no-cache",
           "--fail-on", "none", "-o", str(out)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--org", type=Path, default=Path("/tmp/subguard-bench-org"))
    p.add_argument("--scale", type=float, default=0.05)
    p.add_argument("--out", type=Path, default=Path("/tmp/subguard-bench-out"))
    a = p.parse_args(argv)
    if not a.org.exists():
        subprocess.run([sys.executable, str(HERE / "audit_org_gen.py"), str(a.org), "--scale", str(a.scale)], check=True)
    planted = json.loads((a.org / "planted.json").read_text())
    files = sum(1 for f in a.org.rglob("*") if f.is_file())
    repos = sum(1 for d in a.org.iterdir() if d.is_dir())
    print(f"org: {a.org} ({repos} repos, {files} files, {len(planted)} planted conflicts)")
    results: dict[str, float] = {}
    for master in ("local[1]", "local[2]"):
        out = a.out / master.replace("[", "").replace("]", "")
        secs = run_audit(a.org, out, master)
        results[master] = secs
        hit, want = found_planted(json.loads((out / "findings.json").read_text()), planted)
        summary = json.loads((out / "summary.json").read_text())
        print(f"audit {master}: {secs:7.1f} s  {files / secs:8.0f} files/s  planted found {hit}/{want}  "
              f"(files table: {summary['files']['total']} rows)")
    check_out = a.out / "check.json"
    secs = run_check(a.org, check_out)
    results["check"] = secs
    hit, want = found_planted(json.loads(check_out.read_text()), planted)
    print(f"check (1 process): {secs:7.1f} s  {files / secs:8.0f} files/s  planted found {hit}/{want}")
    print(f"ratios: local[2]/local[1] speed-up {results['local[1]'] / results['local[2]']:.2f}x; "
          f"local[2] vs check {results['check'] / results['local[2]']:.2f}x; "
          f"local[1] vs check {results['check'] / results['local[1]']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
