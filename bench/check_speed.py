"""subguard check vs ruff and grep over the same tree, in one run.

    python bench/check_speed.py [TREE] [--rounds 5] [--served]

TREE defaults to the Python standard library (`sysconfig.get_paths()["stdlib"]`, 2,000-odd files
subguard reads once `site-packages` and `__pycache__` are left out, as always).

Runs, several rounds each: `subguard check` cold (content cache, parsed-policy cache, impact memo
and run memo emptied), `subguard check` warm (caches filled, nothing changed: the run memo answers),
`subguard check` after one edit of a file that mentions rocketmq (a blank line added, then taken
away: after the first round both contents' parses are known, and the run memo replays the run, as
after an undo or pre-commit's stash: `subguard.scan.unread.same_parses`), the same with a new comment each
round (bytes never parsed before: the parse is needed, `subguard.scan.ahead` takes it off the
critical path when a second core is free), the same with a tag never written before added to the
file's first subscription each round (its consumer's record changes, so its group is judged and
simulated anew: what a commit that changes a subscription costs), `subguard check` after one edit of ordinary code (a Python file without rocketmq: a statement
added, then taken away; the run memo replays such runs, `subguard.scan.unread`), `ruff check
--no-cache`, `grep -rl rocketmq`, the floor of an unchanged run (`subguard --version`, and a fresh
process that only lists the root as the run memo compares it) and of an edited one (that process,
then libcst's import and the Python extractor's parse of the edited file); with `--served`, the warm and edit rounds again with a
`subguard serve --no-ahead` of the same install running (`subguard.cli.resident`: each run is handed over,
and stamps the tree from the walk the server keeps current, `subguard.scan.watch`), then the edit
rounds with a plain `subguard serve`, each run a second after the edit as a commit follows a save
(the server runs the check ahead meanwhile, `subguard.cli.resident.runahead`); prints medians, ratios against ruff and subguard's peak memory (max RSS of the child process). Every timed run is preceded by an untimed read of the
tree, so each starts with the files in the page cache.

subguard is measured as users run it: installed from this checkout (not editable) into a temporary
virtual environment whose dependencies are the running interpreter's (`--current` measures the
`subguard` beside the running interpreter instead). A development install's editable-import hook
costs about 17 ms at every start, which pip, pre-commit and the GitHub Action never install.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ENV: dict[str, str] = dict(os.environ)


# what an unchanged run cannot do without: list the root as the run memo compares it (`runmemo.root_listing`)
LISTING = "import sys; from subguard.scan import runmemo; runmemo.root_listing(sys.argv[1])"
# what an edited consumer file's run cannot do without besides: its parse (libcst's import, its
# classes made of the code earlier runs kept as the run's own child makes them, and the Python
# extractor's parse of its bytes), whichever core it runs on
PARSED = (
    LISTING
    + "; from subguard.cli import dataclass_code; dataclass_code.install()"
    + "; from subguard.extract.python.parse import parse_full; parse_full(sys.argv[2], open(sys.argv[2], 'rb').read())"
)


def run(cmd: list[str], cwd: Path | None = None) -> tuple[float, int, int]:
    """Wall seconds, exit code and max RSS (KiB) of one child process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd, env=ENV)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - start, proc.returncode, usage.ru_maxrss


def rounds(n: int, cmd: list[str], before: Callable[[], None] = lambda: None) -> tuple[float, int, int]:
    times, rss, code = [], 0, 0
    for _ in range(n):
        before()
        t, code, r = run(cmd)
        times.append(t)
        rss = max(rss, r)
    return statistics.median(times), code, rss


def install(work: Path) -> str:
    """`subguard` built from this checkout and installed, without dependencies, into a new virtual
    environment that finds its dependencies in the running interpreter's site-packages."""
    import site

    checkout = Path(__file__).resolve().parent.parent
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-deps", str(checkout)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    purelib = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "subguard-bench-deps.pth").write_text("\n".join(site.getsitepackages()) + "\n", encoding="utf-8")
    return str(venv / "bin" / "subguard")


def _sources(tree: Path) -> list[Path]:
    """The Python and Java files subguard reads (none inside folders the scan skips), by path."""
    from subguard.scan.listing import excluded_dir

    return sorted(
        p
        for p in tree.rglob("*")
        if p.suffix in (".py", ".java")
        and p.is_file()
        and not any(excluded_dir(d) for d in p.relative_to(tree).parts[:-1])
    )


def edit_target(tree: Path) -> Path:
    """The file the edit rounds change: the first (by path) Python or Java file subguard reads that
    mentions rocketmq, else the first such file at all."""
    sources = _sources(tree)
    return next((p for p in sources if b"rocketmq" in p.read_bytes()), sources[0])


def plain_target(tree: Path) -> Path | None:
    """The file the ordinary-code edit rounds change: the first (by path) Python file that does not
    mention rocketmq (what most commits of a large repository edit); None when there is none."""
    return next((p for p in _sources(tree) if p.suffix == ".py" and b"rocketmq" not in p.read_bytes()), None)


_EXPRESSION = re.compile(rb'(expression\s*=\s*"|\.subscribe\(\s*"[^"\n]*"\s*,\s*")([^"\n]*)"')


def subscription_edit(original: bytes, n: int) -> bytes | None:
    """`original` with its first subscription's tag expression (written as a literal) given a tag
    never written before: the consumer's record changes, so its group is judged and simulated anew;
    None when the file writes no such expression."""
    found = _EXPRESSION.search(original)
    if found is None:
        return None
    tags = found.group(2) + b"||BenchTag%d_%d" % (n, os.getpid())
    return original[: found.start(2)] + tags + original[found.end(2) :]


def edit_rounds(
    n: int,
    cmd: list[str],
    target: Path,
    before: Callable[[], None],
    added: bytes = b"\n",
    fresh: bool = False,
    pause: float = 0.15,
    subscription: bool = False,
) -> tuple[float, int, int]:
    """`rounds` where each run follows a real edit of `target` (`added` appended, then taken away
    again; with `fresh`, a comment never written before appended instead, so that no parse of the
    file's bytes can come from the cache; with `subscription`, a tag never written before added to
    its first subscription, `subscription_edit`), `pause` seconds after it; the file's bytes and
    times are restored afterwards."""
    original, st = target.read_bytes(), target.stat()
    count = itertools.count()
    try:

        def edit() -> None:
            current = target.read_bytes()
            changed = subscription_edit(original, next(count)) if subscription else None
            if changed is not None:
                target.write_bytes(changed)
            elif fresh:
                target.write_bytes(original + b"\n# edit %d of bench run %d\n" % (next(count), os.getpid()))
            else:
                target.write_bytes(original + added if current == original else original)
            time.sleep(pause)  # past the run memo's racy window, as after a save in an editor
            before()

        return rounds(n, cmd, edit)
    finally:
        target.write_bytes(original)
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))


COMMIT_PAUSE = 1.0  # seconds between an editor's save and the commit whose hook runs the check


def served_rounds(
    n: int, subguard: str, check: list[str], tree: Path, before: Callable[[], None], ahead: bool = False
) -> dict[str, tuple[float, int, int]]:
    """The warm and edit rounds again, each `check` handed to a `subguard serve` of the same install
    (started here, stopped after): max RSS is the client's, the served run's memory is the server's.
    Without `ahead` the server runs no check on its own (`--no-ahead`); with it, only the edit
    rounds, each run `COMMIT_PAUSE` seconds after the edit, as a commit follows a save: the server
    has run the check ahead meanwhile (`subguard.cli.resident.runahead`), and the run replays it."""
    flags = [] if ahead else ["--no-ahead"]
    server = subprocess.Popen([subguard, "serve", "--idle", "600", *flags], stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        assert server.stderr is not None
        line = server.stderr.readline()
        if "serving checks" not in line:
            raise SystemExit(f"subguard serve did not start: {line}")
        run(check)  # the server's first run: its forked children have the caches the runs above filled
        time.sleep(1)  # the server loads the cache files and walks the trees that run named
        if ahead:
            out = {
                "1 edit, run ahead": edit_rounds(n, check, edit_target(tree), before, pause=COMMIT_PAUSE),
                "1 new edit, run ahead": edit_rounds(
                    n, check, edit_target(tree), before, fresh=True, pause=COMMIT_PAUSE
                ),
            }
        else:
            out = {
                "warm": rounds(n, check, before),
                "1 edit": edit_rounds(n, check, edit_target(tree), before),
                "1 new edit": edit_rounds(n, check, edit_target(tree), before, fresh=True),
                **subscribed(n, check, tree, before),
            }
        status = subprocess.run([subguard, "serve", "--status"], capture_output=True, text=True, env=ENV, check=False)
        answer = json.loads(status.stdout) if status.returncode == 0 else {}
        runs = len(out) * n + 1
        if answer.get("served", 0) < runs:  # every run, the unchanged ones included
            raise SystemExit(f"subguard serve ran {answer.get('served', 0)} of the {runs} runs")
        if not any(kind == "root" for kind, _ in answer.get("watched", [])):
            raise SystemExit(f"subguard serve watched no tree: {answer}")
        started = answer.get("ahead", {}).get("started", 0)
        if ahead and started < runs - 1:
            raise SystemExit(f"subguard serve ran {started} checks ahead, not one per edit: {answer}")
        if not ahead and started:
            raise SystemExit(f"subguard serve --no-ahead ran {started} checks ahead")
        return out
    finally:
        server.terminate()
        server.wait(timeout=30)


def subscribed(n: int, check: list[str], tree: Path, before: Callable[[], None]) -> dict[str, tuple[float, int, int]]:
    """The rounds after an edit of the edit target's first subscription (`subscription_edit`), when
    it writes one."""
    target = edit_target(tree)
    if subscription_edit(target.read_bytes(), 0) is None:
        return {}
    return {"1 subscription edit": edit_rounds(n, check, target, before, subscription=True)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", type=Path, nargs="?", default=Path(sysconfig.get_paths()["stdlib"]))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--current", action="store_true", help="measure the subguard beside this interpreter as installed")
    ap.add_argument(
        "--served", action="store_true", help="measure the warm and edit runs with `subguard serve` as well"
    )
    args = ap.parse_args()
    tree = args.tree.resolve()
    bindir = Path(sys.executable).parent
    ruff = str(bindir / "ruff") if (bindir / "ruff").exists() else shutil.which("ruff")
    work = Path(tempfile.mkdtemp(prefix="sg-bench-"))
    if args.current:
        subguard = str(bindir / "subguard") if (bindir / "subguard").exists() else "subguard"
    else:
        subguard = install(work)
    cache = work / "cache"
    user_cache = work / "xdg"  # parsed policies and simulated impacts: emptied for cold runs too
    ENV["XDG_CACHE_HOME"] = str(user_cache)
    ENV["XDG_RUNTIME_DIR"] = str(work / "run")  # no server of the user's: only the one `--served` starts
    cfg = work / ".subguard.yaml"
    cfg.write_text(f"cache-dir: {cache}\n", encoding="utf-8")
    check = [
        subguard,
        "check",
        str(tree),
        "--config",
        str(cfg),
        "--format",
        "json",
        "--output",
        os.devnull,
        "--fail-on",
        "none",
    ]
    files = sum(len(f) for _, _, f in os.walk(tree))
    stats = subprocess.run(
        [*check, "--stats", "--no-cache"], capture_output=True, text=True, env=ENV, check=False
    ).stderr
    seen = next((line.split()[1] for line in stats.splitlines() if line.startswith("files: ")), "?")
    print(f"tree: {tree} ({files} files on disk, {seen} discovered by subguard), rounds: {args.rounds}")
    print(f"subguard: {subguard}")

    def read_tree() -> None:
        """Bring the tree into the page cache before every timed run, so that no command profits
        from the one run before it (this VM reclaims page cache quickly)."""
        subprocess.run(
            ["grep", "-rl", "rocketmq", str(tree)], stdout=subprocess.DEVNULL, check=False
        )  # not -q: it stops at the first match

    def empty_caches() -> None:
        shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(user_cache / "subguard", ignore_errors=True)  # parsed policies, impact memo, run memo
        read_tree()

    cold = rounds(args.rounds, check, empty_caches)
    run(check)  # fill the caches
    warm = rounds(args.rounds, check, read_tree)
    edited = edit_rounds(args.rounds, check, edit_target(tree), read_tree)
    fresh = edit_rounds(args.rounds, check, edit_target(tree), read_tree, fresh=True)
    subscription = subscribed(args.rounds, check, tree, read_tree).get("1 subscription edit")
    plain = plain_target(tree)
    plain_edited = edit_rounds(args.rounds, check, plain, read_tree, b"\nEDITED_BY_BENCH = 1\n") if plain else None
    served = served_rounds(args.rounds, subguard, check, tree, read_tree) if args.served else None
    if served is not None:
        served |= served_rounds(args.rounds, subguard, check, tree, read_tree, ahead=True)
    # the floor of an unchanged run: the interpreter and console entry start, then the root's listing
    # (every entry's lstat: what the run memo compares), each timed alone in a fresh process
    started = rounds(args.rounds, [subguard, "--version"], read_tree)
    python = str(Path(subguard).with_name("python")) if not args.current else sys.executable
    listed = rounds(args.rounds, [python, "-c", LISTING, str(tree)], read_tree)
    target = edit_target(tree)
    parsed = (
        rounds(args.rounds, [python, "-c", PARSED, str(tree), str(target)], read_tree)
        if target.suffix == ".py"
        else None
    )
    ruff_cmd = [ruff, "check", "--no-cache", "--exit-zero", "--quiet", str(tree)] if ruff else []
    ruff_r = rounds(args.rounds, ruff_cmd, read_tree) if ruff else None
    grep_r = rounds(args.rounds, ["grep", "-rl", "rocketmq", str(tree)], read_tree)
    shutil.rmtree(work, ignore_errors=True)

    rows = [
        ("subguard check (cold)", cold),
        ("subguard check (warm)", warm),
        ("subguard check (1 edit)", edited),
        ("subguard check (1 new edit)", fresh),
        *([("subguard check (1 subscription edit)", subscription)] if subscription else []),
        *([("subguard check (1 plain edit)", plain_edited)] if plain_edited else []),
        *((f"served: {name}", row) for name, row in (served or {}).items()),
        ("floor: subguard --version", started),
        ("floor: start + tree listing", listed),
        *([("floor: listing + its parse", parsed)] if parsed else []),
        ("grep -rl rocketmq", grep_r),
    ]
    if ruff_r:
        rows.insert(3, ("ruff check --no-cache", ruff_r))
    print(f"{'command':30} {'median s':>9} {'files/s':>10} {'max RSS MB':>11} {'exit':>5}")
    for name, (t, code, rss) in rows:
        print(f"{name:30} {t:9.3f} {files / t:10.0f} {rss / 1024:11.1f} {code:5d}")
    if ruff_r:
        print(f"ratio cold/ruff: {cold[0] / ruff_r[0]:.2f} (target <= 1.0)")
        print(
            f"ratio warm/ruff: {warm[0] / ruff_r[0]:.2f} (target <= 0.3; its floor, start + listing: {listed[0] / ruff_r[0]:.2f})"
        )
        floor = f"; its floor, start + listing + the file's parse: {parsed[0] / ruff_r[0]:.2f}" if parsed else ""
        print(
            f"ratio 1 edit/ruff: {edited[0] / ruff_r[0]:.2f} (a pre-commit run after editing one consumer file"
            " back to bytes a recent run parsed)"
        )
        print(f"ratio 1 new edit/ruff: {fresh[0] / ruff_r[0]:.2f} (bytes never parsed before: the file parsed{floor})")
        if subscription:
            print(
                f"ratio 1 subscription edit/ruff: {subscription[0] / ruff_r[0]:.2f} (a tag added: its group judged anew)"
            )
        if plain_edited:
            print(f"ratio 1 plain edit/ruff: {plain_edited[0] / ruff_r[0]:.2f} (after editing a file without RocketMQ)")
        for name, row in (served or {}).items():
            how = "the check run ahead after the save" if "ahead" in name else "no run ahead"
            print(f"ratio served {name}/ruff: {row[0] / ruff_r[0]:.2f} (with `subguard serve` running: {how})")
    print(f"ratio cold/grep: {cold[0] / grep_r[0]:.2f}")
    peak = max(cold[2], warm[2]) / 1024
    print(f"subguard peak memory: {peak:.0f} MB (target < 300 MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
