#!/usr/bin/env python3
"""Benchmark: `subguard inventory` (in-process scan) against `grep -rl rocketmq` over one tree.

Usage: python bench/inventory_speed.py [TREE] [--rounds N]
TREE defaults to the Python standard library (`sysconfig.get_paths()["stdlib"]`). Both are timed in
the same run; each is run N times and the median wall time is reported. Not part of the test suite.

subguard lists files the way git does inside a work tree, so a TREE that git ignores (the stdlib of
a pyenv checkout, for one) would be scanned as empty; such a tree is first copied to a temporary
directory (without site-packages) and both tools run over the copy.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from subguard.core.config import Config
from subguard.core.inventory import sort_consumers, subscription_rows
from subguard.scan.extraction import ScanResult, scan_repo


def time_inventory(tree: Path, rounds: int) -> tuple[list[float], ScanResult, int]:
    times: list[float] = []
    result: ScanResult | None = None
    nrows = 0
    for _ in range(rounds):
        start = time.perf_counter()
        result = scan_repo(tree, Config())
        nrows = len(subscription_rows(sort_consumers(result.consumers)))
        times.append(time.perf_counter() - start)
    assert result is not None
    return times, result, nrows


def time_grep(tree: Path, rounds: int) -> tuple[list[float], int]:
    times: list[float] = []
    hits = 0
    for _ in range(rounds):
        start = time.perf_counter()
        proc = subprocess.run(["grep", "-rl", "rocketmq", str(tree)], capture_output=True, check=False)
        times.append(time.perf_counter() - start)
        hits = len(proc.stdout.splitlines())
    return times, hits


def _ignored_by_git(tree: Path) -> bool:
    proc = subprocess.run(["git", "-C", str(tree), "check-ignore", "-q", "."], capture_output=True, check=False)
    return proc.returncode == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="?", default=sysconfig.get_paths()["stdlib"])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    tree = Path(args.tree)
    if not tree.is_dir():
        print(f"not a directory: {tree}", file=sys.stderr)
        return 2
    if _ignored_by_git(tree):
        with tempfile.TemporaryDirectory(prefix="subguard-bench-") as tmp:
            copy = Path(tmp) / tree.name
            shutil.copytree(tree, copy, symlinks=True, ignore=shutil.ignore_patterns("site-packages", "__pycache__"))
            print(f"{tree} is ignored by git; measuring a copy at {copy}")
            return _run(copy, args.rounds)
    return _run(tree, args.rounds)


def _run(tree: Path, rounds: int) -> int:
    args = argparse.Namespace(rounds=rounds)
    sg_times, result, nrows = time_inventory(tree, args.rounds)
    grep_times, hits = time_grep(tree, args.rounds)
    counts = result.counts()
    files = sum(counts.values())
    sg, gr = statistics.median(sg_times), statistics.median(grep_times)
    print(f"tree: {tree}")
    print(
        f"files: {files} discovered ({counts['parsed']} parsed, {counts['skipped']} skipped, {counts['failed']} failed); "
        f"{len(result.consumers)} consumers, {nrows} rows; grep matched {hits} files"
    )
    print(
        f"subguard inventory: median {sg:.3f} s over {args.rounds} rounds (min {min(sg_times):.3f} s), {files / sg:,.0f} files/s"
    )
    print(
        f"grep -rl rocketmq:  median {gr:.3f} s over {args.rounds} rounds (min {min(grep_times):.3f} s), {files / gr:,.0f} files/s"
    )
    print(f"ratio subguard/grep: {sg / gr:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
