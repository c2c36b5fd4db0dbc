"""The org map at organisation scale: write a map of 1,000,000 subscriptions across 10,000 repositories,
then time `subguard check --org-map` on a monorepo against the same check without it.

    python bench/orgmap_speed.py MONOREPO [--subscriptions 1000000] [--repos 10000] [--rounds 5] [--spark]

MONOREPO is a tree of `bench/gen_monorepo.py` (its groups are `group-N`, topics `TopicN`, tags
`TagA||TagB`); 200 of the map's consumers are other repositories' members of one group in ten of the
monorepo's (so those groups are shared across services), in one of five of them with tags that
disagree; the rest declare groups of their own.

Prints: the time and size of writing the map (`orgmap.write`, the driver's part of the audit's map;
with `--spark` also `orgmap.write_audit` over a DataFrame of the same consumers, the audit's whole
map step on a local session), and for the monorepo the median wall time and the max RSS of
`check` warm (caches filled, nothing changed: the run memo answers), warm with the memo off (the
content cache answers: what a run after an edit pays), each without and with `--org-map`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from subguard.audit import orgmap  # noqa: E402


def record(repo: str, i: int, group: str, topic: str, tags: tuple[str, ...]) -> str:
    """A consumer's JSON as the audit stores it (defaults left out), built as text: no pydantic here."""
    path = f"svc{i % 7}/consumer_{i}.py"
    loc = {"path": path, "line": 9, "column": 1, "repo": repo}
    expr = "||".join(tags)
    return json.dumps(
        {
            "consumer_id": f"{repo}:{path}:8",
            "group": {"value": group},
            "client": "python-native-4x",
            "repo": repo,
            "service": repo,
            "location": {**loc, "line": 8},
            "subscriptions": [
                {"topic": {"value": topic}, "expression": {"value": expr}, "tags": list(tags), "location": loc}
            ],
        },
        separators=(",", ":"),
    )


def rows(n: int, repos: int, monorepo_groups: int) -> Iterator[orgmap.Row]:
    return (row(i, max(1, n // repos), monorepo_groups) for i in range(n))


def row(i: int, per_repo: int, monorepo_groups: int) -> orgmap.Row:
    repo = f"repo-{i // per_repo:05d}"
    if i % 5000 == 0 and monorepo_groups:  # 200 members of the monorepo's groups: 10 each in 1 group of 10
        g = (i // 5000) % (monorepo_groups // 10) * 10
        group, topic = f"group-{g}", f"Topic{g % 97}"
        tags = ("TagC",) if g % 50 == 0 else ("TagA", "TagB")  # 1 group in 5 of those disagrees
    else:
        group, topic, tags = f"GID_{repo}_{i % per_repo}", f"Topic{i % 97}", ("TagA",)
    path = f"svc{i % 7}/consumer_{i}.py"
    sub = (topic, "||".join(tags), "TAG", json.dumps(list(tags)), path, 9, 1)
    return (
        repo,
        group,
        f"{repo}:{path}:8",
        path,
        8,
        1,
        None,
        None,
        "python-native-4x",
        "CLUSTERING",
        "CONCURRENTLY",
        repo,
        "",
        record(repo, i, group, topic, tags),
        [sub],
    )


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int, int]:
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, os.waitstatus_to_exitcode(status), usage.ru_maxrss


def rounds(n: int, cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int]:
    run(cmd, cwd, env)  # fills the caches (and the memo) for this invocation
    results = [run(cmd, cwd, env) for _ in range(n)]
    return statistics.median(t for t, _, _ in results), max(r for _, _, r in results)


def spark_write(n: int, repos: int, groups: int, out: Path) -> float:
    """`orgmap.write_audit` on a local session over a consumers DataFrame of the same rows."""
    from pyspark.sql import SparkSession

    from subguard.audit import job
    from subguard.audit.output import Output

    spark: SparkSession = job.session("local[*]", app="subguard-orgmap-bench")
    per_repo = max(1, n // repos)
    made = spark.sparkContext.parallelize(range(n), spark.sparkContext.defaultParallelism * 8).map(
        lambda i: (lambda r: (r[0], r[1], r[13], ""))(row(i, per_repo, groups))
    )
    consumers = spark.createDataFrame(made, "repo string, group string, json string, env_hint string").cache()
    consumers.count()
    waivers = spark.createDataFrame([], "repo string, payload string")
    output = Output(str(out))
    output.open_local()
    start = time.perf_counter()
    orgmap.write_audit(consumers, waivers, {}, [], output, ["bench"])
    seconds = time.perf_counter() - start
    output.abandon()
    spark.stop()
    return seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("monorepo", type=Path)
    ap.add_argument("--subscriptions", type=int, default=1_000_000)
    ap.add_argument("--repos", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--groups", type=int, default=200, help="the monorepo's groups (gen_monorepo.py: files * share / 2)"
    )
    ap.add_argument("--spark", action="store_true", help="also time the audit's map step on a local Spark session")
    args = ap.parse_args()
    tree = args.monorepo.resolve()
    groups = args.groups
    work = Path(tempfile.mkdtemp(prefix="sg-orgmap-bench-"))
    omap = work / orgmap.FILE_NAME
    start = time.perf_counter()
    counts = orgmap.write(
        str(omap),
        [orgmap.RepoRow(f"repo-{i:05d}") for i in range(args.repos)],
        rows(args.subscriptions, args.repos, groups),
        [],
        sources=["bench"],
    )
    seconds = time.perf_counter() - start
    print(
        f"map: {counts['subscriptions']:,} subscriptions, {counts['repos']:,} repositories, "
        f"{omap.stat().st_size / 1e6:.0f} MB, written in {seconds:.1f} s (orgmap.write, rows prepared)"
    )
    if args.spark:
        print(
            f"audit map step (write_audit on local[*], {os.cpu_count()} cores): "
            f"{spark_write(args.subscriptions, args.repos, groups, work / 'spark-out'):.1f} s"
        )
    env = {**os.environ}
    exe = str(Path(sys.executable).parent / "subguard")
    plain = [exe, "check", ".", "--fail-on", "none"]
    with_map = [*plain, "--org-map", str(omap)]
    table = []
    for label, extra in (("warm (run memo)", {}), ("warm, memo off (content cache)", {"SUBGUARD_NO_RUN_MEMO": "1"})):
        e = {**env, **extra}
        t0, m0 = rounds(args.rounds, plain, tree, e)
        t1, m1 = rounds(args.rounds, with_map, tree, e)
        table.append((label, t0, t1, m0, m1))
    print(
        f"{'check on ' + tree.name:34} {'without':>9} {'--org-map':>10} {'added':>8} {'RSS without':>12} {'RSS with':>9} {'added':>8}"
    )
    for label, t0, t1, m0, m1 in table:
        print(
            f"{label:34} {t0:8.3f}s {t1:9.3f}s {t1 - t0:+7.3f}s {m0 / 1024:10.0f}MB {m1 / 1024:7.0f}MB {(m1 - m0) / 1024:+6.0f}MB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
