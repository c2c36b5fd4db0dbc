"""Audit speed: `subguard audit` on local[1] and local[2] versus `subguard check` in one process.

    python bench/audit_speed.py [--org DIR] [--scale 0.05] [--out DIR] [--rounds 1] [--no-jvm-archive]
    python bench/audit_speed.py --org DIR --scale 5 --incremental [--change 0.01] [--master local[2]]
    python bench/audit_speed.py --fixed 5 [--master local[2]]

Generates the synthetic org with `audit_org_gen.py` when DIR does not exist, then prints files/s for
each run (median of the rounds), the ratios, and whether every planted conflict was found by the
audit and by check. Each audit runs in its own process (a fresh Spark driver), timed from start to
the last output; check runs in one process (`jobs: 1`), without the simulator and the cache.

Every timed run is preceded by `grep -rl rocketmq` over the org: it brings the files into the page
cache for whichever run comes next (so no run profits from the one before it) and is the reference
printed alongside.

`--incremental` times what a nightly audit costs instead: a full audit, then `--change` (1%) of the
repositories edited (one consumer's tag set and one other file each, see `change_repos`), then an
audit `--since` the full one; it prints both times, their ratio (target <= 0.15) and the peak memory
of the audit's process tree (driver Python, its JVM and the Python workers, RSS polled every 0.2 s),
and the CPU seconds its processes spent (as last polled), a figure the machine's other load does not
move the way it moves wall time.

`--fixed N` times the audit's fixed cost instead: N audits of the bundled example organisation (29
files) in a row, each with its wall and CPU seconds and the seconds of each phase its progress lines
name (session: JVM start; first job: the Python workers' start; extract; groups; outputs), then
the medians, and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def found_planted(findings: list[dict[str, object]], planted: dict[str, list[str]]) -> tuple[int, int]:
    got = {(str(f["rule"]), str(f["group"])) for f in findings}
    wanted = {(rule, group) for group, rules in planted.items() for rule in rules}
    return len(wanted & got), len(wanted)


PHASE = re.compile(r"^\[audit\] (\w[\w ]*?)[:(].*\(\+([0-9.]+) s\)$")
# a phase's own duration, where its progress line states one ("... in 2.1 s", "outputs: 4.1 s for")
DURATION = re.compile(r"^\[audit\] (\w[\w ]*?):.*?\b([0-9.]+) s\b")
FIXED_PHASES = ("session", "first job", "extract", "group tasks done", "outputs")


def tree(root: int) -> dict[int, tuple[int, float]]:
    """pid -> (resident bytes, CPU seconds so far) of process `root` and all its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as fh:
                    parent = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(parent, []).append(int(name))
    out: dict[int, tuple[int, float]] = {}
    todo = [root]
    tick = os.sysconf("SC_CLK_TCK")
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/statm", encoding="ascii") as fh:
                rss = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            out[pid] = (rss, (int(fields[11]) + int(fields[12])) / tick)
        except (OSError, ValueError, IndexError):
            pass
        todo += children.get(pid, [])
    return out


class PeakRss:
    """While the process runs, polled in a thread: the peak of its tree's summed RSS, and each
    process's CPU seconds as last seen (`cpu`: their sum; processes that live less than a poll
    interval, such as Spark's launcher JVM, are missed)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.peak = 0
        self._cpu: dict[int, float] = {}
        self._proc = proc
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while self._proc.poll() is None:
            seen = tree(self._proc.pid)
            self.peak = max(self.peak, sum(rss for rss, _ in seen.values()))
            self._cpu.update({pid: cpu for pid, (_, cpu) in seen.items()})
            time.sleep(0.2)

    def stop(self) -> int:
        self._thread.join()
        return self.peak

    def cpu(self) -> float:
        return sum(self._cpu.values())


def run_audit(
    org: Path,
    out: Path,
    master: str,
    jvm_archive: bool = True,
    since: Path | None = None,
    memory: dict[str, float] | None = None,
) -> tuple[float, dict[str, float]]:
    """Wall seconds, and the seconds since start at which each progress line appeared (`memory`, when
    given, gets `peak`: the process tree's peak RSS in bytes, and `cpu`: its CPU seconds)."""
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
        "--jvm-archive" if jvm_archive else "--no-jvm-archive",
        *(["--since", str(since)] if since is not None else []),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak = PeakRss(proc)
    _, err = proc.communicate()
    wall = time.perf_counter() - t0
    if memory is not None:
        memory["peak"] = peak.stop()
        memory["cpu"] = peak.cpu()
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, cmd, stderr=err)
    marks = {m.group(1): float(m.group(2)) for m in map(PHASE.match, err.splitlines()) if m}
    if memory is not None:
        for m in map(DURATION.match, err.splitlines()):
            if m and m.group(1) in FIXED_PHASES:
                memory[f"phase {m.group(1)}"] = float(m.group(2))
    return wall, marks


def change_repos(org: Path, share: float, tag: str) -> list[str]:
    """Edit `share` of the repositories (every 1/share-th, by name): the first consumer file found
    gets another tag in its subscription (its group is judged again), and one other file a line.
    `tag` makes each call's edit new. Returns the repositories changed."""
    repos = sorted(p for p in org.iterdir() if p.is_dir())
    step = max(1, round(1 / share))
    changed = []
    for repo in repos[::step]:
        files = sorted((repo / "src").iterdir())
        consumer = next((f for f in files if f.name.startswith("consumer_")), None)
        if consumer is not None:
            consumer.write_text(consumer.read_text().replace('"a||b', f'"a||b||{tag}', 1))
        other = next((f for f in files if f.suffix == ".md"), files[-1])
        other.write_text(other.read_text() + f"\nchanged by the benchmark ({tag})\n")
        changed.append(repo.name)
    return changed


def incremental(a: argparse.Namespace) -> int:
    """A full audit, `--change` of the repositories edited, an audit `--since` the full one."""
    repos = sum(1 for d in a.org.iterdir() if d.is_dir())
    print(f"org: {a.org} ({repos} repos, counting files...)", flush=True)
    files = sum(len(names) for _, _, names in os.walk(a.org))
    print(f"org: {a.org} ({repos} repos, {files} files); audits on {a.master}", flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    warm_archive(a)
    full_out, inc_out = a.out / "full", a.out / "since"
    run_grep(a.org)
    mem_full: dict[str, float] = {}
    full, marks = run_audit(a.org, full_out, a.master, a.jvm_archive, memory=mem_full)
    print(
        f"full audit:        {full:7.1f} s  CPU {mem_full['cpu']:5.0f} s  peak RSS {mem_full['peak'] / 2**20:6.0f} MB  "
        f"{marks}",
        flush=True,
    )
    tag = f"b{int(time.time())}"
    changed = change_repos(a.org, a.change, tag)
    print(f"changed {len(changed)} repositories ({len(changed) / repos:.1%}): {', '.join(changed[:5])}, ...")
    run_grep(a.org)
    mem_inc: dict[str, float] = {}
    inc, marks = run_audit(a.org, inc_out, a.master, a.jvm_archive, since=full_out, memory=mem_inc)
    summary = json.loads((inc_out / "summary.json").read_text())
    print(
        f"incremental audit: {inc:7.1f} s  CPU {mem_inc['cpu']:5.0f} s  peak RSS {mem_inc['peak'] / 2**20:6.0f} MB  "
        f"{marks}"
    )
    print(f"incremental: {summary['incremental']}")
    # wall time swings with whatever else the machine runs; the CPU seconds the audits spent do not
    print(
        f"ratio incremental/full: {inc / full:.2f} wall, {mem_inc['cpu'] / max(1, mem_full['cpu']):.2f} CPU "
        "(target <= 0.15)"
    )
    return 0


def fixed(a: argparse.Namespace) -> int:
    """`--fixed N`: the example organisation audited N times on `--master`; each run's wall, CPU and
    phase seconds, then their medians."""
    org = HERE.parent / "examples" / "org"
    a.out.mkdir(parents=True, exist_ok=True)
    warm_archive(a)
    print(f"load average before: {os.getloadavg()}", flush=True)
    rows: list[dict[str, float]] = []
    for i in range(a.fixed):
        memory: dict[str, float] = {}
        wall, _ = run_audit(org, a.out / "fixed", a.master, a.jvm_archive, memory=memory)
        row = {"wall": wall, "cpu": memory["cpu"], "peak MB": memory["peak"] / 2**20}
        row.update({k.removeprefix("phase "): v for k, v in memory.items() if k.startswith("phase ")})
        rows.append(row)
        print(f"run {i + 1}: " + "  ".join(f"{k} {v:.1f}" for k, v in row.items()), flush=True)
    keys = list(dict.fromkeys(k for row in rows for k in row))
    med = {k: statistics.median(row[k] for row in rows if k in row) for k in keys}
    print("median: " + "  ".join(f"{k} {v:.1f}" for k, v in med.items()))
    print(f"load average after: {os.getloadavg()}")
    return 0


def warm_archive(a: argparse.Namespace) -> None:
    """The audit's default class-data archive (`subguard.audit.jvm`) written by one untimed audit of
    the example organisation, so that no timed run is the one that writes it."""
    if a.jvm_archive:
        run_audit(HERE.parent / "examples" / "org", a.out / "warm-up", "local[2]", jvm_archive=True)
        print("audits map the JVM class-data archive (written by one untimed audit when missing)", flush=True)


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
        action=argparse.BooleanOptionalAction,
        default=True,
        help="audits map the JVM class-data archive (the audit's default); one untimed audit first writes it",
    )
    p.add_argument("--incremental", action="store_true", help="full audit, then --change of the repos, then --since")
    p.add_argument("--change", type=float, default=0.01, help="share of the repositories --incremental edits")
    p.add_argument("--master", default="local[2]", help="the master of --incremental's and --fixed's audits")
    p.add_argument("--fixed", type=int, default=0, metavar="N", help="N audits of examples/org: the fixed cost")
    a = p.parse_args(argv)
    if a.fixed:
        return fixed(a)
    if not a.org.exists():
        subprocess.run(
            [sys.executable, str(HERE / "audit_org_gen.py"), str(a.org), "--scale", str(a.scale)], check=True
        )
    if a.incremental:
        return incremental(a)
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
    warm_archive(a)
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
