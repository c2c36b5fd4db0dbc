"""`subguard check --base` vs a plain warm `check` on a git monorepo with one consumer file changed.

    python bench/base_speed.py [TREE] [--files 20000] [--rounds 5]

Without TREE, generates the monorepo of bench/gen_monorepo.py (20,000 files) in a temporary folder.
The tree is committed to a fresh git repository (the base), then one Python consumer file gets a
tag added to its subscription in the work tree (the head). Every command runs against that same
work tree, with the content cache filled by one untimed plain check first; the run memo is off
(SUBGUARD_NO_RUN_MEMO=1) because `check --base` never replays one, and a replayed plain check would
measure the memo, not the check. Timed, each as the median of several rounds:

- plain warm: `check` (the content cache's whole-repo result answers);
- base, first: `check --base HEAD` with the base's own result cache emptied before each round (the
  base revision is extracted from the per-file cache: unchanged files reuse their parses, only the
  changed file's blob is read from git and parsed);
- base, repeated: `check --base HEAD` again (the base's result is cached per revision tree).

Prints the medians and the ratios against the plain warm check, measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def git(root: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@e",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@e",
    }
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, env=env, check=False)
    took = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", type=Path, nargs="?")
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sg-base-bench-"))
    try:
        root = work / "repo"
        if args.tree is None:
            subprocess.run(
                [sys.executable, str(HERE / "gen_monorepo.py"), str(root), "--files", str(args.files)],
                check=True,
                capture_output=True,
            )
        else:
            shutil.copytree(args.tree, root)
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "base")
        target = next(p for p in sorted(root.rglob("*.py")) if b'expression="' in p.read_bytes())
        text = target.read_text(encoding="utf-8")
        target.write_text(
            re.sub(r'expression="([^"]*)"', r'expression="\1||refunded"', text, count=1), encoding="utf-8"
        )
        env = {**os.environ, "SUBGUARD_NO_RUN_MEMO": "1", "XDG_CACHE_HOME": str(work / "xdg")}
        cache = work / "cache"
        cfg = work / ".subguard.yaml"
        cfg.write_text(f"cache-dir: {cache}\n", encoding="utf-8")
        check = [
            sys.executable,
            "-m",
            "subguard",
            "check",
            str(root),
            "--config",
            str(cfg),
            "--format",
            "json",
            "--output",
            os.devnull,
            "--fail-on",
            "none",
        ]
        base = [*check, "--base", "HEAD"]
        files = sum(1 for _ in root.rglob("*") if _.is_file() and ".git" not in _.parts)
        timed(check, env)  # fill the content cache (head)
        head_results = set(cache.glob("result-*.pickle"))
        timed(base, env)  # and the base's parses

        def drop_base_result() -> None:
            for f in set(cache.glob("result-*.pickle")) - head_results:
                f.unlink()

        plain, first, repeated = [], [], []
        for _ in range(args.rounds):
            plain.append(timed(check, env))
            drop_base_result()
            first.append(timed(base, env))
            repeated.append(timed(base, env))
        p, f, r = (statistics.median(x) for x in (plain, first, repeated))
        print(f"tree: {files} files, one consumer file changed ({target.relative_to(root)}), rounds: {args.rounds}")
        print(f"{'command':44} {'median s':>9} {'vs plain warm':>14}")
        print(f"{'check (plain, warm)':44} {p:9.3f} {'1.00x':>14}")
        print(f"{'check --base HEAD (first run at this base)':44} {f:9.3f} {f / p:13.2f}x")
        print(f"{'check --base HEAD (repeated)':44} {r:9.3f} {r / p:13.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
