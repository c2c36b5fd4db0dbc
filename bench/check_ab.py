"""Interleaved before/after runs of `subguard check` from two checkouts, on one tree.

    python bench/check_ab.py TREE CHECKOUT_A CHECKOUT_B [--rounds 3] [--edits 3]

Each checkout is installed as `check_speed.py` installs it (not editable, its own cache and user
cache). Every round runs, alternating between the checkouts: a cold check (caches emptied), a warm
check (the run memo answers), then `--edits` edits of `check_speed.edit_target(TREE)` (a line added,
then taken away again; with `--fresh`, a comment never written before added instead; with
`--subscription`, a tag never written before added to the first subscription), each followed by one
check of each checkout: many edits measure the steady state of a day's commits, where the content
cache's appended log has grown and been folded into its snapshot again (`subguard.core.cache`).
Which checkout goes first alternates from round to round and edit to edit. Prints, per checkout and
kind, the median, lowest and highest wall time and CPU seconds (the child's and its children's). On
a shared machine the load moves during a run; alternating puts both sides under the same load.
A checkout older than `check_speed.install` cannot be measured (`git archive REV | tar -x -C DIR`
gives one to compare with).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_speed  # noqa: E402 - the sibling benchmark's install and edit target


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", type=Path)
    ap.add_argument("checkouts", nargs=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--edits", type=int, default=3, help="edits (each checked by both checkouts) per round")
    kind = ap.add_mutually_exclusive_group()
    kind.add_argument("--fresh", action="store_true", help="each edit adds a comment never written before")
    kind.add_argument(
        "--subscription", action="store_true", help="each edit adds a tag never written before to a subscription"
    )
    args = ap.parse_args()
    tree = args.tree.resolve()
    work = Path(tempfile.mkdtemp(prefix="sg-ab-"))
    setups: list[tuple[Path, dict[str, str], list[str]]] = []
    for n, checkout in enumerate(args.checkouts):
        folder = work / f"v{n}"
        folder.mkdir()
        check_speed.__file__ = str(Path(checkout).resolve() / "bench" / "check_speed.py")  # what install() builds
        exe = check_speed.install(folder)
        cfg = folder / "cfg.yaml"
        cfg.write_text(f"cache-dir: {folder / 'cache'}\n", encoding="utf-8")
        env = {**os.environ, "XDG_CACHE_HOME": str(folder / "xdg")}
        cmd = [exe, "check", str(tree), "--config", str(cfg), "--format", "json", "--output", os.devnull]
        setups.append((folder, env, [*cmd, "--fail-on", "none"]))

    def read_tree() -> None:
        subprocess.run(["grep", "-rl", "rocketmq", str(tree)], stdout=subprocess.DEVNULL, check=False)

    target = check_speed.edit_target(tree)
    original, st = target.read_bytes(), target.stat()
    times: dict[tuple[int, str], list[tuple[float, float]]] = {}
    try:
        for r in range(args.rounds):
            # which checkout goes first alternates: the second of a pair runs while the kernel still
            # writes back what the first wrote (a cold run's caches), which made it about 10% slower
            order = list(enumerate(setups)) if r % 2 == 0 else list(reversed(list(enumerate(setups))))
            for n, (folder, env, cmd) in order:
                shutil.rmtree(folder / "cache", ignore_errors=True)
                shutil.rmtree(folder / "xdg" / "subguard", ignore_errors=True)
                read_tree()
                times.setdefault((n, "cold"), []).append(run(cmd, env))
            for n, (_, env, cmd) in order:
                run(cmd, env)
                read_tree()
                times.setdefault((n, "warm"), []).append(run(cmd, env))
            for e in range(args.edits):
                if args.fresh:  # bytes no run has parsed: parsed, then replayed when the parse is the same
                    target.write_bytes(original + b"# edit %d of round %d, bench run %d\n" % (e, r, os.getpid()))
                elif args.subscription:  # another parse: the consumer's group judged anew
                    target.write_bytes(check_speed.subscription_edit(original, r * args.edits + e) or original)
                else:
                    target.write_bytes(original + b"\n" if target.read_bytes() == original else original)
                time.sleep(0.15)  # past the run memo's racy window
                for n, (_, env, cmd) in order if e % 2 == 0 else order[::-1]:
                    read_tree()
                    label = "new edit" if args.fresh else "tag edit" if args.subscription else "1 edit"
                    times.setdefault((n, label), []).append(run(cmd, env))
    finally:
        target.write_bytes(original)
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
        shutil.rmtree(work, ignore_errors=True)
    print(f"tree: {tree}, rounds: {args.rounds}, edits per round: {args.edits}, load average: {os.getloadavg()[0]:.2f}")
    for (n, kind), values in sorted(times.items(), key=lambda item: (item[0][1], item[0][0])):
        walls, cpus = sorted(v[0] for v in values), sorted(v[1] for v in values)
        print(
            f"{args.checkouts[n]:28} {kind:7} wall {statistics.median(walls):.3f} s [{walls[0]:.3f}-{walls[-1]:.3f}]"
            f"  cpu {statistics.median(cpus):.3f} s [{cpus[0]:.3f}-{cpus[-1]:.3f}]  n={len(values)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
